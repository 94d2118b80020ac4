package qual

import (
	"context"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/record"
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

// Run judges cell: a live run first executes the plan up to and including
// the cell's measurement (preparing drives, and measuring the cells planned
// before it, which later subtests judge); a replay reads the cell's
// recorded output. logf receives progress lines.
func (s *Suite) Run(ctx context.Context, cell plan.Cell, logf func(string, ...any)) (Outcome, error) {
	w := cell.Workload
	spec := cell.Capacity.Spec[w.Name]
	res := report.Result{Test: cell.Test, Kind: cell.Kind, Capacity: cell.Capacity.Name, Workload: w.Name,
		Drives: len(cell.Drives), Metric: string(w.Metric), Spec: spec, Expected: spec, Tolerance: s.Spec.Method.Tolerance}
	var m *measured
	if s.Cfg.Live() {
		m = s.advance(ctx, cell, logf)
	} else {
		m = s.replayedCell(ctx, cell)
		if errors.Is(m.runErr, record.ErrNotRecorded) {
			// Not measured because a drive failed the read-back: it fails
			// as it did live.
			why := s.replayUnusable(cell)
			if why.text == "" {
				return Outcome{Skip: m.runErr.Error()}, nil
			}
			m = &measured{notRun: why.text, cause: why.cause}
		}
	}
	res.Steady = m.steady
	// A 1-drive scaling cell with a measured baseline is its own baseline.
	selfBaseline := false
	if cell.Kind == report.KindScaling {
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
	if m.notRun != "" {
		res.Verdict, res.Cause = report.Fail, m.cause
		if m.cause == report.CauseInterrupted {
			res.Verdict = report.Inconclusive
		}
		res.Error = fmt.Sprintf("%s: not measured: %s", w.Name, m.notRun)
		return s.finish(res, cell, "")
	}
	runErr, raw := m.runErr, m.raw
	res.Raw = raw
	if interrupted(ctx, runErr) {
		// Stopped by the operator or the -timeout, not by the drive: what
		// fio measured until then is kept but judges nothing.
		res.Verdict, res.Cause = report.Inconclusive, report.CauseInterrupted
		res.Error = fmt.Sprintf("%s: not finished: %s while fio ran (%v); its partial output is kept in %s",
			w.Name, stoppedBy(ctx.Err()), runErr, raw)
		return s.finish(res, cell, "")
	}
	if runErr != nil {
		out, _ := m.parse()
		res.Verdict, res.Cause = report.Fail, report.CauseFioFailed
		res.Error = fioFailure(w.Name, runErr, out)
		return s.finish(res, cell, "")
	}
	out, err := m.parse()
	if err != nil {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: %v", w.Name, raw, err)
		return s.finish(res, cell, "")
	}
	if s.Report.FioVersion == "" {
		s.Report.FioVersion = out.Version
	}
	groups := m.groups
	if len(groups) != len(cell.Drives) {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: fio reported %d drive groups, the step ran on %d drives", w.Name, raw, len(groups), len(cell.Drives))
		return s.finish(res, cell, out.Version)
	}
	total := m.total
	if total.Read.P99Ns+total.Write.P99Ns > 0 {
		res.P99Us = max(total.Read.P99Ns, total.Write.P99Ns) / 1e3
		res.P999Us = max(total.Read.P999Ns, total.Write.P999Ns) / 1e3
	}
	res.Read, res.Write = judge.Latency(total.Read), judge.Latency(total.Write)
	var j judge.Judgement
	if cell.Kind == report.KindSingle {
		res.Actual = value(groups[0], w.Metric)
		j = judge.Single(w.Name, w.Metric, res.Actual, spec, res.Tolerance, notAPass(s.Precondition))
		if len(total.Errors) > 0 {
			j.Verdict, j.Message = report.Fail, fioFailure(w.Name, nil, out)
		}
		s.mu.Lock()
		s.single[cell.Capacity.Name+"/"+w.Name] = res.Actual
		s.mu.Unlock()
	} else {
		shares := make([]judge.DriveShare, len(groups))
		for i, g := range groups {
			d := s.Drives[cell.Drives[i]]
			shares[i] = judge.DriveShare{Path: d.Path, Serial: d.Serial, Actual: value(g, w.Metric), Err: strings.Join(g.Errors, "; ")}
			if i < len(m.job.Targets) {
				shares[i].CPUs = m.job.Targets[i].CPUs
			}
			res.Actual += shares[i].Actual
		}
		if selfBaseline {
			res.Expected = res.Actual
		}
		sj := judge.Scaling(w.Name, w.Metric, shares, res.Expected, spec, res.Tolerance, notAPass(s.Precondition))
		if len(total.Errors) > 0 {
			sj.Verdict, sj.Message = report.Fail, fioFailure(fmt.Sprintf("%s on %d drives", w.Name, len(shares)), nil, out)
		}
		res.PerDrive, res.Spread, res.Min, res.Median, res.Max = sj.PerDrive, sj.Spread, sj.Min, sj.Median, sj.Max
		j = sj.Judgement
		if len(cell.Drives) == 1 {
			s.mu.Lock()
			s.single["scaling/"+cell.Capacity.Name+"/"+w.Name] = res.Actual
			s.mu.Unlock()
		}
	}
	res.Ratio, res.Verdict = j.Ratio, j.Verdict
	res.Cause = causeOf(j, len(total.Errors) > 0)
	if res.QoS = judge.QoS(cell.Capacity.QoS[w.Name], res.Read, res.Write); len(res.QoS) > 0 {
		var over []string
		for _, q := range res.QoS {
			if q.Verdict == report.Fail {
				over = append(over, fmt.Sprintf("%s: %s %s latency %s µs > limit %s µs", w.Name, strings.SplitN(q.Key, "_", 2)[0],
					judge.PercentileName(q.Key), report.Thousands(q.Actual), report.Thousands(q.LimitUs)))
			}
		}
		if len(over) > 0 && j.Verdict != report.Fail {
			j.Verdict, j.Message = report.Fail, strings.Join(over, "; ")+" ("+j.Message+")"
			res.Verdict, res.Cause = report.Fail, report.CauseLatency
		} else if len(over) > 0 {
			j.Message += "; " + strings.Join(over, "; ")
		}
	}
	if m.cpu.N > 0 {
		paths, cpus := make([]string, len(cell.Drives)), make([]string, len(cell.Drives))
		for i, d := range cell.Drives {
			paths[i] = s.Drives[d].Path
			if i < len(m.job.Targets) {
				cpus[i] = m.job.Targets[i].CPUs
			}
		}
		res.HostCPU = judge.HostCPU(m.cpu.CPUs, m.cpu.N, m.cpu.Busy, total.CPUSeconds, total.Runtime.Seconds(), m.job.NumJobs*len(m.job.Targets),
			judge.DrivesCPU(out, paths, cpus, m.job.NumJobs))
	}
	var short []string // the drives of a multi-drive cell below spec
	for _, d := range res.PerDrive {
		if d.Verdict == report.Fail && d.Error == "" {
			short = append(short, d.Path)
		}
	}
	if why := judge.HostBoundFor(res.HostCPU, short); why != "" && res.Verdict == report.Fail && res.Cause == report.CauseBelowSpec {
		// Short of the figure while the CPUs were saturated: the host may
		// be what fell short. A pass stays a pass, and carries the figures.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, why)
		res.Verdict, res.Cause = report.Inconclusive, report.CauseHostBound
	}
	if m.thermal != "" && s.Spec.Health.ThermalThrottle != specs.ThrottleIgnore && j.Verdict != report.Inconclusive {
		// A figure measured while the drive throttled on heat says more
		// about the airflow than the drive, whichever way it went.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, "thermally throttled during the cell: "+m.thermal+"; check airflow and rerun")
		res.Verdict, res.Cause = report.Inconclusive, report.CauseThrottled
	}
	if m.hot != "" {
		// A drive over its temperature threshold is first the chassis's
		// airflow, whichever way the figure went: the cell is not judged,
		// and the drive goes on once the bit clears. A cell already
		// inconclusive for another cause says so too.
		j.Message += "; " + m.hot
		if j.Verdict != report.Inconclusive {
			j.Verdict = report.Inconclusive
			res.Verdict, res.Cause = report.Inconclusive, report.CauseThrottled
		}
	}
	if m.link != "" && j.Verdict != report.Inconclusive {
		// A figure measured through a slower link than the spec's (or the
		// drive's) says more about the slot than the drive.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, m.link+
			": the link, not the drive, bounds this figure; reseat the drive or use a slot that trains to its full speed and width, or state the link the spec expects in [pcie]")
		res.Verdict, res.Cause = report.Inconclusive, report.CausePCIeLink
	}
	if m.linkUnknown != "" {
		// A link sysfs does not know is not judged, and the cell says so:
		// a figure short of spec may be that link's, not the drive's.
		j.Message += "; " + m.linkUnknown
	}
	if res.Verdict == report.Fail && res.Cause == report.CauseBelowSpec && cell.Kind == report.KindScaling {
		// Short of the figure through a switch uplink the drives share by
		// design, which was full: the host's topology bounds the cell.
		if why := boundBy(m.shared, w, spec, res); why != "" {
			j.Verdict, j.Message = report.Inconclusive, j.Message+"; "+why+
				": the host's PCIe topology, not the drives, bounds this figure; scale drives that do not share that link to judge them"
			res.Verdict, res.Cause = report.Inconclusive, report.CausePCIeBound
		}
	}
	if j.Verdict == report.Pass {
		// A figure measured on a drive that was not shown to be in steady
		// state proves nothing, whichever way it went.
		if why := judge.NotSteady(m.steady); why != "" {
			j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, why)
			res.Verdict, res.Cause = report.Inconclusive, report.CauseNotSteady
		}
	}
	res.Error = errorText(j)
	o, err := s.finish(res, cell, out.Version)
	o.Message = j.Message
	return o, err
}

// withCause is msg with why, the cause of its verdict, right after its
// verdict row (the part before the first "; ") and before the clauses
// that detail the row (drives below the median, below linear), so that
// a message cut short (a JUnit message is at most 300 characters) still
// says why.
func withCause(msg, why string) string {
	row, rest, ok := strings.Cut(msg, "; ")
	if !ok {
		return msg + "; " + why
	}
	return row + "; " + why + "; " + rest
}

// notAPass says why a value that meets its spec still does not pass.
func notAPass(precondition string) string {
	if precondition != plan.Full {
		return "measured with -precondition=" + precondition + "; preconditioning only lowers a drive's figures, so this is not a pass"
	}
	return ""
}

// stoppedBy says why a run's context ended.
func stoppedBy(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the -timeout is near"
	}
	return "the run was interrupted"
}

// causeOf is the cause of a judged cell's verdict.
func causeOf(j judge.Judgement, jobErrors bool) string {
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
func errorText(j judge.Judgement) string {
	if j.Verdict == report.Pass {
		return ""
	}
	return j.Message
}

// finish records res in the report (rewritten at once, so an interrupted
// run keeps every finished result) and builds the outcome.
func (s *Suite) finish(res report.Result, cell plan.Cell, fioVersion string) (Outcome, error) {
	if fioVersion == "" {
		fioVersion = s.Report.FioVersion
	}
	s.mu.Lock()
	s.Report.Results = append(s.Report.Results, res)
	s.Report.Finished = time.Now().UTC().Format(time.RFC3339)
	var err error
	if s.parent == nil {
		err = s.writeReport()
	}
	s.mu.Unlock()
	if s.parent != nil {
		c := res
		c.PerDrive, c.Steady = slices.Clone(res.PerDrive), slices.Clone(res.Steady)
		s.toParent(c)
	}
	o := Outcome{Result: res, Message: res.Error}
	unit := "IOPS"
	if res.Metric == string(specs.MBps) {
		unit = "MB/s"
	}
	// Identity of every drive of the cell, in the order of "drive".
	join := func(f func(plan.Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			v = append(v, f(s.Drives[i]))
		}
		return strings.Join(v, ",")
	}
	// Model and firmware once each when the drives agree.
	distinct := func(f func(plan.Drive) string) string {
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
		{"serial", join(func(d plan.Drive) string { return d.Serial })},
		{"model", distinct(func(d plan.Drive) string { return d.Model })},
		{"firmware", distinct(func(d plan.Drive) string { return d.Firmware })},
		{"size", join(func(d plan.Drive) string { return strconv.FormatInt(d.Size, 10) })},
		{"fio_version", fioVersion},
		{"precondition", s.Precondition},
	}
	if res.Raw != "" {
		o.Attrs = append(o.Attrs, [2]string{"raw", res.Raw})
	}
	if len(res.Steady) > 0 {
		o.Attrs = append(o.Attrs, [2]string{"steady_state", report.SteadyLine(res.Steady)})
	}
	return o, err
}

// WriteReport writes results.json, summary.md and the charts now; for a
// fleet replay, each host's report too.
func (s *Suite) WriteReport() error {
	var errs []error
	for _, m := range s.Members {
		errs = append(errs, m.Suite.WriteReport())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(append(errs, s.writeReport())...)
}

func (s *Suite) writeReport() error {
	if s.Cfg.DryRun {
		return nil
	}
	// Nothing new since the last write: the files on disk are current.
	// (Results, health checks and fleet cells are only ever added.)
	state := [3]int{len(s.Report.Results), len(s.Report.Health), len(s.Report.SteadyState)}
	if s.written == state && s.wroteOnce {
		return nil
	}
	s.written, s.wroteOnce = state, true
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
func (s *Suite) baseline(cell plan.Cell) (float64, error) {
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

// shortPaths is paths for a few drives, else the first and last and how
// many: "/dev/nvme0n1 … /dev/nvme23n1 (24 drives)".
func (s *Suite) shortPaths(drives []int) string {
	if len(drives) <= 2 {
		return s.paths(drives)
	}
	return fmt.Sprintf("%s … %s (%d drives)", s.Drives[drives[0]].Path, s.Drives[drives[len(drives)-1]].Path, len(drives))
}

func (s *Suite) paths(drives []int) string {
	var p []string
	for _, d := range drives {
		p = append(p, s.Drives[d].Path)
	}
	return strings.Join(p, ",")
}

func value(r fiojob.Result, m specs.Metric) float64 {
	switch m {
	case specs.MBps:
		return r.MBps()
	case specs.LatUS:
		// fio's mean total latency (lat_ns), reads and writes together.
		n := r.Read.LatN + r.Write.LatN
		if n == 0 {
			return 0
		}
		return (r.Read.LatMeanNs*float64(r.Read.LatN) + r.Write.LatMeanNs*float64(r.Write.LatN)) / float64(n) / 1e3
	}
	return r.IOPS
}

func describeJob(j fiojob.Job) string {
	s := fmt.Sprintf("rw=%s bs=%d iodepth=%d numjobs=%d", j.RW, j.BS, j.IODepth, j.NumJobs)
	if j.RWMixRead >= 0 && fiojob.IsMixed(j.RW) {
		s += fmt.Sprintf(" rwmixread=%d", j.RWMixRead)
	}
	return s
}

// allCells lists every cell of the run in the order the tests run them:
// single-drive cells, then scaling.
func (s *Suite) allCells() []plan.Cell {
	var out []plan.Cell
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

// Estimate is the plan seen as lines of text, with its total duration
// and bytes written per drive.
func (s *Suite) Estimate() Estimate {
	e := Estimate{Total: s.Plan.Total, Bytes: s.Plan.Bytes}
	for _, st := range s.Plan.Steps {
		what := st.Name
		if st.Kind == plan.StepMeasure {
			var names []string
			for _, c := range st.Cells {
				names = append(names, c.Test)
			}
			what = strings.Join(names, " + ")
		}
		line := fmt.Sprintf("  %3d %-12s %-28s %-60s %s%s", st.N, st.Kind, s.shortPaths(st.Drives), what, estMark(st.Kind), st.Est.Round(time.Second))
		var cpus []string
		if st.Kind == plan.StepMeasure {
			for _, t := range st.Job.Targets {
				if t.CPUs != "" {
					cpus = append(cpus, t.CPUs)
				}
			}
		}
		if len(cpus) > 0 {
			line += "  cpus " + cpuSets(cpus)
		}
		e.Lines = append(e.Lines, line)
	}
	return e
}

// cpuSets names the CPUs a step's drives are pinned to, a drive's each
// in drive order ("0 | 1 | 0 | 1"), or past four drives each distinct set
// once with its count of drives ("0 (12 drives), 1 (12 drives)"), so
// that a 24-drive step stays one readable line; the job file the dry run
// prints gives each drive's own cpus_allowed.
func cpuSets(cpus []string) string {
	if len(cpus) <= 4 {
		return strings.Join(cpus, " | ")
	}
	var order []string
	count := map[string]int{}
	for _, c := range cpus {
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s (%s)", c, plural(count[c], "drive"))
	}
	return strings.Join(parts, ", ")
}

// estMark is "≤" for a step whose estimate is its bound, "~" otherwise.
func estMark(k plan.StepKind) string {
	if k == plan.StepRandom || k == plan.StepTopUp {
		return "≤"
	}
	return "~"
}

// PrintPlan writes the dry run: each drive's identity, every step with its
// estimate, every fio job file, the bytes written per drive and the total.
func (s *Suite) PrintPlan(w io.Writer) {
	fmt.Fprintf(w, "drivequal dry run: spec %s (%s), precondition %s\n\n", s.Spec.Model, s.Spec.File, s.Precondition)
	if !s.Cfg.Live() {
		// A replay runs no fio and writes to no drive: its plan is the
		// recordings it would judge.
		fmt.Fprintf(w, "replay of %s: no fio runs and nothing is written; the recordings of %d cells would be judged\n",
			s.Cfg.Replay, len(s.allCells()))
		s.printLot(w)
		return
	}
	fmt.Fprintln(w, "drives:")
	for _, d := range s.Drives {
		fmt.Fprintf(w, "  %s -> %s  model %q serial %q firmware %q  %s bytes  as %s  NUMA node %d\n",
			d.Path, d.Resolved, d.Model, d.Serial, d.Firmware, report.Thousands(float64(d.Size)), d.Capacity, d.NUMANode)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	s.printResume(w)
	e := s.Estimate()
	fmt.Fprintln(w, "\nplan (~ estimate, ≤ bound: preconditioning ends at steady state):")
	for _, l := range e.Lines {
		fmt.Fprintln(w, l)
	}
	for _, st := range s.Plan.Steps {
		if st.Kind != plan.StepPurge {
			continue
		}
		// What the purge sends to each block device, and every namespace
		// it erases (a regular file is deallocated, as the step says).
		cmds, errs := s.purgeCommands(st)
		var lines []string
		for _, c := range cmds {
			if c.Kind != purge.PunchHole {
				lines = append(lines, "  "+c.String())
			}
		}
		for _, err := range errs {
			lines = append(lines, "  refused: "+err.Error())
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\nstep %d, purge (%s), sends:\n%s\n", st.N, st.Purge, strings.Join(lines, "\n"))
		}
	}
	fmt.Fprintln(w, "\nfio job files:")
	for _, st := range s.Plan.Steps {
		if st.Kind == plan.StepPurge {
			continue
		}
		fmt.Fprintf(w, "# step %d, %s: %s\n%s\n", st.N, st.Kind, st.Name, st.Job.File())
	}
	fmt.Fprintln(w, "bytes written per drive (estimate):")
	// The drives table above lists every drive; here three or more that
	// write as much are one line, named in short.
	for i := 0; i < len(s.Drives); {
		j := i + 1
		for j < len(s.Drives) && e.Bytes[j] == e.Bytes[i] {
			j++
		}
		if j-i < 3 {
			j = i + 1
			fmt.Fprintf(w, "  %s: %s bytes\n", s.Drives[i].Path, report.Thousands(float64(e.Bytes[i])))
		} else {
			var paths []string
			for _, d := range s.Drives[i:j] {
				paths = append(paths, d.Path)
			}
			// Every drive named (no "… and N more"): this is the only
			// place the estimate says which drives write this much.
			fmt.Fprintf(w, "  %d drives: %s: %s bytes each\n", len(paths), report.CompactDrives(paths, 0), report.Thousands(float64(e.Bytes[i])))
		}
		i = j
	}
	fmt.Fprintf(w, "estimated duration: %s\n", e.Total.Round(time.Second))
	s.printLot(w)
}
