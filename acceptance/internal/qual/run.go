package qual

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Outcome is what a cell's subtest reports.
type Outcome struct {
	Result report.Result
	// Skip, when set, says why the cell was not judged (nothing recorded).
	Skip string
	// Message is the verdict in one line, like a row of the brief.
	Message string
	// Attrs are the testcase's properties, in order.
	Attrs [][2]string
}

// Run prepares the cell's drives as its plan says (live runs only), runs or
// replays its measurement, judges it and writes the report. logf receives
// progress lines.
func (s *Suite) Run(ctx context.Context, cell Cell, logf func(string, ...any)) (Outcome, error) {
	w := cell.Workload
	spec := cell.Capacity.Spec[w.Name]
	res := report.Result{Test: cell.Test, Kind: cell.Kind, Capacity: cell.Capacity.Name, Workload: w.Name,
		Drives: len(cell.Drives), Metric: string(w.Metric), Spec: spec, Expected: spec, Tolerance: s.Spec.Method.Tolerance}
	// A 1-drive scaling cell with a measured baseline is its own baseline.
	selfBaseline := false
	if cell.Kind == KindScaling {
		res.Tolerance = s.Spec.Scaling.Tolerance
		base, err := s.baseline(cell)
		switch {
		case err != nil && len(cell.Drives) == 1:
			selfBaseline = true
		case err != nil:
			res.Verdict, res.Cause, res.Error = report.Inconclusive, report.CauseNoBaseline, err.Error()
			return s.finish(res, cell, "")
		default:
			res.Expected = float64(len(cell.Drives)) * base
		}
	}
	if why := s.unusable(cell); why.text != "" {
		res.Verdict, res.Cause = report.Fail, why.cause
		res.Error = fmt.Sprintf("%s: not measured: %s", w.Name, why.text)
		return s.finish(res, cell, "")
	}
	if err := s.prepare(ctx, cell, logf); err != nil {
		res.Error = fmt.Sprintf("%s: not measured: %v", w.Name, err)
		var changed *DriveChangedError
		switch {
		case ctx.Err() != nil:
			// Stopped by the operator or the -timeout, not by the drive.
			res.Verdict, res.Cause = report.Inconclusive, report.CauseInterrupted
		case errors.As(err, &changed):
			res.Verdict, res.Cause = report.Fail, report.CauseDriveChanged
		default:
			res.Verdict, res.Cause = report.Fail, report.CausePreparation
		}
		return s.finish(res, cell, "")
	}
	job := s.Planner.Measure(cell)
	if s.Cfg.Live() {
		if cell.Workload.Writes() {
			if err := s.recheck(cell.Drives); err != nil {
				res.Verdict, res.Cause = report.Fail, report.CauseDriveChanged
				res.Error = fmt.Sprintf("%s: not measured: %v", w.Name, err)
				return s.finish(res, cell, "")
			}
		}
		if err := s.forget(cell.Test); err != nil {
			return s.finish(res, cell, "")
		}
	}
	raw := s.Exec.RawPath(cell.Test)
	logf("measuring %s on %s (%s, %s)", w.Name, s.paths(cell.Drives), describeJob(job), job.Runtime)
	stdout, runErr := s.Exec.Measure(ctx, cell.Test, job)
	if errors.Is(runErr, ErrNotRecorded) {
		return Outcome{Skip: runErr.Error()}, nil
	}
	res.Raw = raw
	if s.Cfg.Live() {
		if err := s.recorded(cell.Test); err != nil {
			logf("%s: %v", s.Cfg.Record, err)
		}
	}
	if interrupted(ctx, runErr) {
		// Stopped by the operator or the -timeout, not by the drive: what
		// fio measured until then is kept but judges nothing.
		res.Verdict, res.Cause = report.Inconclusive, report.CauseInterrupted
		res.Error = fmt.Sprintf("%s: not finished: %s while fio ran (%v); its partial output is kept in %s",
			w.Name, stoppedBy(ctx.Err()), runErr, raw)
		return s.finish(res, cell, "")
	}
	if runErr != nil {
		out, _ := fiojob.Parse(stdout)
		res.Verdict, res.Cause = report.Fail, report.CauseFioFailed
		res.Error = fioFailure(w.Name, runErr, out)
		return s.finish(res, cell, "")
	}
	out, err := fiojob.Parse(stdout)
	if err != nil {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: %v", w.Name, raw, err)
		return s.finish(res, cell, "")
	}
	if s.Report.FioVersion == "" {
		s.Report.FioVersion = out.Version
	}
	groups := out.Groups()
	if len(groups) != len(cell.Drives) {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: fio reported %d drive groups, the step ran on %d drives", w.Name, raw, len(groups), len(cell.Drives))
		return s.finish(res, cell, out.Version)
	}
	total := out.Total()
	if total.Read.P99Ns+total.Write.P99Ns > 0 {
		res.P99Us = max(total.Read.P99Ns, total.Write.P99Ns) / 1e3
		res.P999Us = max(total.Read.P999Ns, total.Write.P999Ns) / 1e3
	}
	if cell.Kind == KindSingle {
		res.Actual = value(groups[0], w.Metric)
		j := JudgeSingle(w.Name, w.Metric, res.Actual, spec, res.Tolerance, s.Precondition)
		if len(total.Errors) > 0 {
			j.Verdict, j.Message = report.Fail, fioFailure(w.Name, nil, out)
		}
		res.Ratio, res.Verdict, res.Cause = j.Ratio, j.Verdict, causeOf(j, len(total.Errors) > 0)
		res.Error = errorText(j)
		s.mu.Lock()
		s.single[cell.Capacity.Name+"/"+w.Name] = res.Actual
		s.mu.Unlock()
		o, err := s.finish(res, cell, out.Version)
		o.Message = j.Message
		return o, err
	}
	shares := make([]DriveShare, len(groups))
	for i, g := range groups {
		d := s.Drives[cell.Drives[i]]
		shares[i] = DriveShare{Path: d.Path, Serial: d.Serial, Actual: value(g, w.Metric), Err: strings.Join(g.Errors, "; ")}
		if i < len(job.Targets) {
			shares[i].CPUs = job.Targets[i].CPUs
		}
		res.Actual += shares[i].Actual
	}
	if selfBaseline {
		res.Expected = res.Actual
	}
	j := JudgeScaling(w.Name, w.Metric, shares, res.Expected, spec, res.Tolerance, s.Precondition)
	if len(total.Errors) > 0 {
		j.Verdict, j.Message = report.Fail, fioFailure(fmt.Sprintf("%s on %d drives", w.Name, len(shares)), nil, out)
	}
	res.Ratio, res.Verdict, res.PerDrive, res.Spread = j.Ratio, j.Verdict, j.PerDrive, j.Spread
	res.Cause = causeOf(j.Judgement, len(total.Errors) > 0)
	res.Error = errorText(j.Judgement)
	if len(cell.Drives) == 1 {
		s.mu.Lock()
		s.single["scaling/"+cell.Capacity.Name+"/"+w.Name] = res.Actual
		s.mu.Unlock()
	}
	o, err := s.finish(res, cell, out.Version)
	o.Message = j.Message
	return o, err
}

// stoppedBy says why a run's context ended.
func stoppedBy(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the -timeout is near"
	}
	return "the run was interrupted"
}

// causeOf is the cause of a judged cell's verdict.
func causeOf(j Judgement, jobErrors bool) string {
	switch {
	case j.Verdict == report.Pass:
		return ""
	case jobErrors:
		return report.CauseFioFailed
	case j.Verdict == report.Inconclusive:
		return report.CausePrecondition
	}
	return report.CauseBelowSpec
}

// fioFailure is the message of a cell whose fio failed: how fio ended,
// each job's error and what fio printed before its JSON, in fio's words.
func fioFailure(name string, runErr error, out *fiojob.Output) string {
	var parts []string
	if runErr != nil {
		parts = append(parts, runErr.Error())
	}
	if out != nil {
		if errs := out.Total().Errors; len(errs) > 0 {
			parts = append(parts, "fio reported job errors: "+strings.Join(errs, "; "))
		}
		var said []string
		for _, n := range out.Notes {
			if strings.HasPrefix(n, "fio:") || strings.HasPrefix(n, "note:") || strings.Contains(n, "err=") {
				said = append(said, n)
			}
		}
		if len(said) > 3 {
			said = append(said[:3], fmt.Sprintf("(%d more lines in the recording)", len(said)-3))
		}
		if len(said) > 0 {
			parts = append(parts, "fio printed: "+strings.Join(said, " | "))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "fio failed without saying why")
	}
	return name + ": fio failed: " + strings.Join(parts, "; ")
}

// errorText is what results.json keeps as "error": empty for a pass.
func errorText(j Judgement) string {
	if j.Verdict == report.Pass {
		return ""
	}
	return j.Message
}

// finish records res in the report (rewritten at once, so an interrupted
// run keeps every finished result) and builds the outcome.
func (s *Suite) finish(res report.Result, cell Cell, fioVersion string) (Outcome, error) {
	if fioVersion == "" {
		fioVersion = s.Report.FioVersion
	}
	s.mu.Lock()
	s.Report.Results = append(s.Report.Results, res)
	s.Report.Finished = time.Now().UTC().Format(time.RFC3339)
	err := s.writeReport()
	s.mu.Unlock()
	o := Outcome{Result: res, Message: res.Error}
	unit := "IOPS"
	if res.Metric == string(specs.MBps) {
		unit = "MB/s"
	}
	// Identity of every drive of the cell, in the order of "drive".
	join := func(f func(Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			v = append(v, f(s.Drives[i]))
		}
		return strings.Join(v, ",")
	}
	// Model and firmware once each when the drives agree.
	distinct := func(f func(Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			if x := f(s.Drives[i]); !slices.Contains(v, x) {
				v = append(v, x)
			}
		}
		return strings.Join(v, ",")
	}
	o.Attrs = [][2]string{
		{"verdict", res.Verdict},
		{"spec", strconv.FormatFloat(res.Spec, 'f', -1, 64)},
		{"expected", strconv.FormatFloat(res.Expected, 'f', -1, 64)},
		{"actual", fmt.Sprintf("%.0f", res.Actual)},
		{"ratio", fmt.Sprintf("%.4f", res.Ratio)},
		{"unit", unit},
		{"drives", fmt.Sprint(len(cell.Drives))},
		{"drive", s.paths(cell.Drives)},
		{"serial", join(func(d Drive) string { return d.Serial })},
		{"model", distinct(func(d Drive) string { return d.Model })},
		{"firmware", distinct(func(d Drive) string { return d.Firmware })},
		{"size", join(func(d Drive) string { return strconv.FormatInt(d.Size, 10) })},
		{"fio_version", fioVersion},
		{"precondition", s.Precondition},
	}
	if res.Raw != "" {
		o.Attrs = append(o.Attrs, [2]string{"raw", res.Raw})
	}
	return o, err
}

// WriteReport writes results.json, summary.md and the charts now.
func (s *Suite) WriteReport() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeReport()
}

func (s *Suite) writeReport() error {
	if s.Cfg.DryRun {
		return nil
	}
	if err := s.Report.Write(s.Cfg.Report); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := junit.Write(s.Cfg.Report, s.Report); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// baseline is one drive's expected value for a scaling cell: the spec, or
// the single drive measured in this run.
func (s *Suite) baseline(cell Cell) (float64, error) {
	w := cell.Workload
	if s.Spec.Scaling.Baseline != "single" {
		return cell.Capacity.Spec[w.Name], nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The 1-drive scaling cell ran with the scaling overrides (e.g. a lower
	// queue depth), so it is the fairer baseline when there is one.
	if v, ok := s.single["scaling/"+cell.Capacity.Name+"/"+w.Name]; ok {
		return v, nil
	}
	if v, ok := s.single[cell.Capacity.Name+"/"+w.Name]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("%s: baseline = \"single\" needs TestSingleDrive/%s/%s or TestScaling/1_drives/%s measured first in the same run",
		w.Name, cell.Capacity.Name, specs.SubtestName(w.Name), specs.SubtestName(w.Name))
}

// prepare runs the preparation steps the cell's drives need.
func (s *Suite) prepare(ctx context.Context, cell Cell, logf func(string, ...any)) error {
	if !s.Cfg.Live() {
		return nil
	}
	s.mu.Lock()
	acts := s.Planner.Prepare(s.states, cell)
	s.mu.Unlock()
	for _, a := range acts {
		if a.Kind == ActPurge {
			a.Drives = s.purgeReach(a.Drives, a.Purge)
		}
		logf("preparing %s: %s (about %s)", s.paths(a.Drives), a.Name, a.Est.Round(time.Second))
		if err := s.recheck(a.Drives); err != nil {
			return fmt.Errorf("before %s: %w", a.Name, err)
		}
		if err := s.Exec.Prepare(ctx, a, s.Drives, logf); err != nil {
			// The drives' state is unknown now: the next cell starts over.
			s.mu.Lock()
			for _, d := range a.Drives {
				s.states[d] = State{}
			}
			s.mu.Unlock()
			err = fmt.Errorf("preparing %s: %s failed: %w", s.paths(a.Drives), a.Name, err)
			if ctx.Err() == nil {
				s.markBroken(a.Drives, report.CausePreparation, "a preparation step", err)
			}
			return err
		}
		s.mu.Lock()
		Apply(s.states, a)
		s.mu.Unlock()
	}
	return nil
}

func (s *Suite) paths(drives []int) string {
	var p []string
	for _, d := range drives {
		p = append(p, s.Drives[d].Path)
	}
	return strings.Join(p, ",")
}

func value(r fiojob.Result, m specs.Metric) float64 {
	if m == specs.MBps {
		return r.MBps()
	}
	return r.IOPS
}

func describeJob(j fiojob.Job) string {
	s := fmt.Sprintf("rw=%s bs=%d iodepth=%d numjobs=%d", j.RW, j.BS, j.IODepth, j.NumJobs)
	if j.RWMixRead >= 0 && (j.RW == "rw" || j.RW == "randrw" || j.RW == "readwrite") {
		s += fmt.Sprintf(" rwmixread=%d", j.RWMixRead)
	}
	return s
}

// allCells lists every cell of the run in the order the tests run them:
// single-drive cells, then scaling.
func (s *Suite) allCells() []Cell {
	var out []Cell
	for _, cc := range s.SingleCells() {
		out = append(out, cc.Cells...)
	}
	for _, st := range s.ScalingCells() {
		out = append(out, st.Cells...)
	}
	return out
}

// Estimate is the plan's duration and bytes written, step by step.
type Estimate struct {
	Total time.Duration
	// Bytes is the estimated bytes written per drive, by drive index.
	Bytes []int64
	Lines []string
}

// Estimate simulates the whole run (single-drive cells, then scaling) from
// fresh drives and adds up what each step takes.
func (s *Suite) Estimate() Estimate {
	e := Estimate{Bytes: make([]int64, len(s.Drives))}
	states := make([]State, len(s.Drives))
	step := func(cell Cell) {
		if cell.Skip != "" {
			return
		}
		for _, a := range s.Planner.Prepare(states, cell) {
			Apply(states, a)
			e.Total += a.Est
			for _, d := range a.Drives {
				e.Bytes[d] += a.Bytes
			}
			e.Lines = append(e.Lines, fmt.Sprintf("  prepare  %-28s %-60s ~%s", s.paths(a.Drives), a.Name, a.Est.Round(time.Second)))
		}
		m := s.Planner.MeasureEstimate(cell)
		e.Total += m
		if cell.Workload.IsWriteOnly() || cell.Workload.RW == "rw" || cell.Workload.RW == "randrw" {
			for _, d := range cell.Drives {
				e.Bytes[d] += writtenBytes(cell, s.Planner.MeasureRuntime(cell.Workload))
			}
		}
		line := fmt.Sprintf("  measure  %-28s %-60s ~%s", s.paths(cell.Drives), cell.Test, m.Round(time.Second))
		var cpus []string
		for _, t := range s.Planner.Measure(cell).Targets {
			if t.CPUs != "" {
				cpus = append(cpus, t.CPUs)
			}
		}
		if len(cpus) > 0 {
			line += "  cpus " + strings.Join(cpus, " | ")
		}
		e.Lines = append(e.Lines, line)
	}
	for _, c := range s.allCells() {
		step(c)
	}
	return e
}

// writtenBytes estimates what a measurement writes per drive from its spec.
func writtenBytes(cell Cell, rt time.Duration) int64 {
	v := cell.Capacity.Spec[cell.Workload.Name]
	frac := 1.0
	if cell.Workload.RWMixRead >= 0 && !cell.Workload.IsWriteOnly() {
		frac = float64(100-cell.Workload.RWMixRead) / 100
	}
	if cell.Workload.Metric == specs.MBps {
		return int64(v * 1e6 * rt.Seconds() * frac)
	}
	return int64(v * float64(cell.Workload.BS) * rt.Seconds() * frac)
}

// PrintPlan writes the dry run: each drive's identity, every step with its
// estimate, every fio job file, the bytes written per drive and the total.
func (s *Suite) PrintPlan(w io.Writer) {
	fmt.Fprintf(w, "drivequal dry run: spec %s (%s), precondition %s\n\n", s.Spec.Model, s.Spec.File, s.Precondition)
	fmt.Fprintln(w, "drives:")
	for _, d := range s.Drives {
		fmt.Fprintf(w, "  %s -> %s  model %q serial %q firmware %q  %s bytes  as %s  NUMA node %d\n",
			d.Path, d.Resolved, d.Model, d.Serial, d.Firmware, report.Thousands(float64(d.Size)), d.Capacity, d.NUMANode)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	e := s.Estimate()
	fmt.Fprintln(w, "\nplan:")
	for _, l := range e.Lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, "\nfio job files:")
	states := make([]State, len(s.Drives))
	show := func(cell Cell) {
		if cell.Skip != "" {
			return
		}
		for _, a := range s.Planner.Prepare(states, cell) {
			Apply(states, a)
			if a.Kind != ActPurge {
				fmt.Fprintf(w, "# prepare: %s\n%s\n", a.Name, a.Job.File())
			}
		}
		fmt.Fprintf(w, "# %s\n%s\n", cell.Test, s.Planner.Measure(cell).File())
	}
	for _, c := range s.allCells() {
		show(c)
	}
	fmt.Fprintln(w, "bytes written per drive (estimate):")
	for i, d := range s.Drives {
		fmt.Fprintf(w, "  %s: %s bytes\n", d.Path, report.Thousands(float64(e.Bytes[i])))
	}
	fmt.Fprintf(w, "estimated duration: %s\n", e.Total.Round(time.Second))
}
