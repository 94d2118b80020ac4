// Package live runs a qualification's plan on the drives, recording every
// output as it goes.
//
// A Runner is the live implementation of evidence.Evidence: it executes
// the plan's steps in order as the tests ask for the cells and read-backs
// they judge, owns each drive's state, its top-ups and why it must not be
// used again, watches the drives' health, heat and PCIe links around each
// cell, and writes every output, sidecar and run.json atomically, so that
// a replay of the recording (package recording) judges it the same way.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/probe"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/progress"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
	"github.com/drivequal/drivequal/specs"
)

// Sink receives what the runner did for the report: each step as it ends
// and each drive's steady-state verdict.
type Sink interface {
	Step(report.Step)
	Steady(report.Steady)
}

// Runner executes a live run's plan.
type Runner struct {
	Spec         *specs.Spec
	Precondition string
	Drives       []plan.Drive
	Planner      *plan.Planner
	Plan         plan.Plan
	Exec         Executor
	// Record is the -record directory.
	Record string
	// Sys reads the drives' PCIe paths; Guard holds them (nil: nothing
	// is held, as in a test on regular files).
	Sys   device.System
	Guard Guard
	// Monitor watches the drives' health; Ctrls is their controllers'
	// identify data, which decides how far a purge reaches.
	Monitor *Monitor
	Ctrls   map[string]nvme.Controller
	// Resume, when set, is the recording this run resumes.
	Resume *Resume
	Sink   Sink
	// ReadBack, when set, is given each verify pass to judge as it is read
	// back, whichever test the plan ran it for (a pass a resumed run takes
	// over, before the run's own).
	ReadBack func(evidence.ReadBack)
	// Progress, when set, is the operator's terminal.
	Progress io.Writer

	once      sync.Once
	priorOnce sync.Once
	mu        sync.Mutex
	cursor    int
	// done holds each measured cell's evidence until its subtest judges it.
	done      map[string]*evidence.Measured
	readBacks []evidence.ReadBack
	drives    *drives
	rec       *runjson.Recorder
	facts     *facts
	lines     *lines
	probe     probe.Host
}

// Resume is what a resumed run takes over from its recording.
type Resume struct {
	Dir   string
	Prior record.Run
	// Kept says, by test, that its recording is whole and judged again.
	Kept map[string]bool
	// Disqualified says why each drive that failed in the interrupted
	// run (run.json's failures, or a recorded read-back that failed) is
	// not used again; Causes is the report cause its cells fail with
	// (report.CauseIntegrity when none is given).
	Disqualified map[int]string
	Causes       map[int]string
}

func (r *Runner) init() {
	r.once.Do(func() {
		r.done = map[string]*evidence.Measured{}
		r.drives = newDrives(r.Drives, r.Guard, r.Sys)
		r.rec = runjson.New(r.Record)
		r.lines = &lines{&progress.Lines{Out: r.Progress, Plan: &r.Plan, Drives: r.Drives}}
		r.probe = probe.Host{Sys: &r.Sys, Drives: r.Drives, Spec: r.Spec, Online: r.Planner.Online}
		if r.Monitor == nil {
			r.Monitor = NewMonitor(nvme.CLI{}, r.Drives, r.Spec.Health, nil)
		}
		if r.Resume != nil {
			for d, why := range r.Resume.Disqualified {
				cause := r.Resume.Causes[d]
				if cause == "" {
					cause = report.CauseIntegrity
				}
				r.drives.breakWith(d, unusable{cause: cause, text: why}, false)
			}
		}
		r.facts = &facts{rec: r.rec, drives: r.drives, list: r.Drives, lines: r.lines, ctrls: r.Ctrls, record: r.Record, resumed: r.Resume != nil}
		r.Monitor.peak = r.facts.peak
		r.drives.onChanged = func(d int, text string) {
			if r.Record != "" {
				r.facts.recordFailure(d, report.CauseDriveChanged, "a check that it is still the drive set up", "", text)
			}
		}
	})
}

// Start writes run.json (info) and the health logs read on receipt into
// the record directory, before the first cell, so that a replay knows the
// drives, the fio version and the preconditioning. A resumed run's
// recording keeps what the interrupted run recorded; info is its run.json
// with this resumption.
func (r *Runner) Start(info record.Run) error {
	r.init()
	if r.Resume == nil {
		_, _, info.MaxTempK = r.Monitor.skips()
		if err := r.rec.Start(info); err != nil {
			return err
		}
		samples{r}.setup()
		if err := r.Monitor.keep(r.Record, false); err != nil {
			return err
		}
		return r.rec.Landed("health", true)
	}
	// The interrupted run's peak temperatures stay the peaks until a
	// higher one is read.
	r.Monitor.seedPeaks(info.MaxTempK)
	_, _, info.MaxTempK = r.Monitor.skips()
	if err := r.rec.Update(func(i *record.Run) { *i = info }); err != nil {
		return err
	}
	samples{r}.setup()
	r.Monitor.resumed(r.Resume.Dir, r.Resume.Prior.Host.NvmeVersion)
	if err := r.facts.recordSetupWarnings(r.Monitor); err != nil {
		return err
	}
	if err := r.Monitor.keep(r.Resume.Dir, true); err != nil {
		return err
	}
	return r.rec.Landed("health", false)
}

// Recorder is r's run.json, for a test that writes beside the plan.
func Recorder(r *Runner) *runjson.Recorder { return r.rec }

// Finish marks the recording as a run that ran to its end: a new run in
// its directory may replace it. An interrupted run is not marked.
func (r *Runner) Finish() error {
	r.init()
	return r.rec.Finished(time.Now())
}

// Cell implements evidence.Evidence: it runs the plan's steps up to and
// including cell's measurement, and returns that measurement. Cells
// measured on the way are kept for their own subtests.
func (r *Runner) Cell(ctx context.Context, cell plan.Cell, logf func(string, ...any)) *evidence.Measured {
	r.init()
	if m, ok := r.done[cell.Test]; ok {
		return m
	}
	if r.Resume != nil && r.Resume.Kept[cell.Test] {
		// Recorded whole before the run was resumed: read as a replay reads it.
		return recording.Read(ctx, recording.Files{Dir: r.Resume.Dir, Shared: r.Resume.Prior.Shared}, cell, r.Planner.Measure(cell))
	}
	idx, ok := r.Plan.Measures[cell.Test]
	if why := r.drives.unusable(cell); !ok && why.text != "" {
		// A drive of the cell is disqualified (a resumed run plans nothing
		// for it): it fails unmeasured, as measure fails it.
		r.failUnmeasured(why, []plan.Cell{cell}, logf)
		return evidence.NotMeasured(why.text, why.cause)
	}
	if !ok {
		idx = r.unplanned(cell, logf)
	}
	r.runTo(ctx, idx, logf)
	if m, ok := r.done[cell.Test]; ok {
		return m
	}
	return evidence.NotMeasured("the plan ended before its measurement", report.CauseInterrupted)
}

// unplanned plans cell on its own, after the plan: it was not selected
// when the plan was made (a -run pattern read differently from go test).
// It returns the index of the cell's measurement.
func (r *Runner) unplanned(cell plan.Cell, logf func(string, ...any)) int {
	logf("%s was not in the plan: preparing its drives for it alone", cell.Test)
	extra := r.Planner.Build([]plan.Cell{cell})
	base := len(r.Plan.Steps)
	for _, st := range extra.Steps {
		st.N = base + st.N
		r.Plan.Steps = append(r.Plan.Steps, st)
	}
	r.Plan.Total += extra.Total
	idx := base + extra.Measures[cell.Test]
	r.Plan.Measures[cell.Test] = idx
	r.cursor = base
	return idx
}

// runTo runs the plan's steps up to and including step index last.
func (r *Runner) runTo(ctx context.Context, last int, logf func(string, ...any)) {
	for r.cursor <= last && r.cursor < len(r.Plan.Steps) {
		st := r.Plan.Steps[r.cursor]
		r.cursor++
		r.runStep(ctx, st, logf)
	}
}

// failUnmeasured lists cells in run.json as failed unmeasured when a
// drive of theirs failed a verify pass (a mismatch, or fio's error
// reading the drive back, the only causes it marks a drive broken with),
// so that a replay fails them from the recorded pass.
func (r *Runner) failUnmeasured(why unusable, cells []plan.Cell, logf func(string, ...any)) {
	if !verdict.Disqualifying(why.cause) {
		return
	}
	tests := make([]string, len(cells))
	for i, c := range cells {
		tests[i] = c.Test
	}
	if err := r.rec.Unmeasured(tests); err != nil && logf != nil {
		logf("%s: %v", r.Record, err)
	}
}

// runStep runs one step of the plan and records it in the report.
func (r *Runner) runStep(ctx context.Context, st plan.Step, logf func(string, ...any)) {
	start := time.Now()
	rec := report.Step{N: st.N, Kind: st.Kind.String(), Name: st.Name, EstimatedSeconds: st.Est.Seconds()}
	skipped := r.execStep(ctx, &st, logf)
	samples{r}.after(ctx, st, skipped, logf)
	if st.Kind != plan.StepMeasure && st.Kind != plan.StepPurge {
		// What the step kept under prepare/ is listed with its sha256
		// once fio has ended.
		if err := r.rec.Landed(record.PrepareDir(r.rec.Resumptions()), false); err != nil && logf != nil {
			logf("%s: %v", r.Record, err)
		}
	}
	rec.Drives = pathsOf(r.Drives, st.Drives)
	rec.ActualSeconds = time.Since(start).Seconds()
	rec.Skipped = skipped
	rec.WAF = ocpRun{r}.stepWAF(st.N)
	r.Sink.Step(rec)
}

// execStep runs st; it returns why it did not run, or "".
func (r *Runner) execStep(ctx context.Context, st *plan.Step, logf func(string, ...any)) string {
	if st.Kind == plan.StepMeasure {
		return r.measure(ctx, *st, logf)
	}
	// A drive that raised a critical warning since setup is written no
	// more, whatever the step: read its log before each one.
	if ctx.Err() == nil {
		r.warned(r.Monitor.snapshot(ctx, r.drives.present(st.Drives)), "before "+st.Name)
	}
	// A drive that failed an earlier step is not prepared again.
	var drives []int
	for _, d := range st.Drives {
		if r.drives.brokenText(d) == "" {
			drives = append(drives, d)
		}
	}
	if st.Kind == plan.StepTopUp {
		drives = r.drives.idle(drives, st.Idle)
		if len(drives) == 0 {
			logf("step %d of %d: no drive idle for more than %s: no top-up", st.N, len(r.Plan.Steps), st.Idle)
			return "no drive idle for longer than the limit"
		}
	}
	if len(drives) == 0 {
		return "every drive of the step failed earlier"
	}
	planned := *st
	for {
		*st = planned
		if len(drives) != len(planned.Drives) {
			*st = r.Planner.Narrow(planned, drives)
		}
		if ctx.Err() != nil {
			return "the run was stopped"
		}
		if st.Kind == plan.StepPurge {
			st.Drives = PurgeReach(r.Drives, st.Drives, st.Purge, r.Ctrls)
		}
		// A drive pulled late in the step before (its node still there
		// when that step ended) fails as disappeared, recorded so in
		// run.json, as one noticed during a step does.
		r.drives.vanished(st.Drives, "before "+st.Name)
		changed, err := r.drives.recheck(st.Drives)
		for _, d := range st.Drives {
			if gone := r.drives.changed(d); gone != "" && !slices.Contains(changed, d) {
				changed = append(changed, d)
				if err == nil {
					err = errors.New(gone)
				}
			}
		}
		if err == nil {
			break
		}
		// A drive that is no longer the one set up (pulled, replaced) is
		// left out and the step goes on with the others: a good drive
		// never fails because its neighbour vanished. The step stops
		// only when no drive is left, or when the changed drive is one
		// it reaches without being given it (a format's other
		// namespaces).
		r.drives.reset(changed)
		rest := slices.DeleteFunc(slices.Clone(drives), func(d int) bool { return slices.Contains(changed, d) })
		if len(rest) == 0 || len(rest) == len(drives) {
			r.lines.progress(logf, "%s", r.lines.stepLine(*st))
			r.drives.reset(st.Drives)
			return fmt.Sprintf("before %s: %v", st.Name, err)
		}
		logf("before step %d (%s): %v: it goes on without %s", st.N, st.Name, err, r.lines.drivesLine(changed))
		drives = rest
	}
	r.lines.progress(logf, "%s", r.lines.stepLine(*st))
	return r.prepare(ctx, st, logf)
}

// prepare runs the preparation step st (a purge, fill, verify pass,
// random preconditioning or top-up) on its drives, checked and narrowed.
func (r *Runner) prepare(ctx context.Context, st *plan.Step, logf func(string, ...any)) string {
	start := time.Now()
	var (
		w     *Watch
		track *steady.Tracker
	)
	if st.Kind == plan.StepRandom || st.Kind == plan.StepTopUp {
		track = steady.NewTracker(st.Rule, st.Round, len(st.Drives))
	}
	if st.Kind != plan.StepPurge {
		w = r.watch(*st, start, track, logf)
	}
	if st.Kind == plan.StepVerify {
		return r.verifyStep(ctx, st, logf, w)
	}
	if st.Kind == plan.StepPurge || st.Kind == plan.StepFill {
		// What the drive holds is no longer what its last read-back read:
		// said before the first byte is written, so that a resume after a
		// kill purges and fills it again.
		r.facts.markWritten(*st)
	}
	samples{r}.writing(*st)
	ocp := ocpRun{r}.ocpBeforeStep(ctx, *st)
	prep, err := r.Exec.Prepare(ctx, *st, r.Drives, logf, w)
	prepErr := err
	if err != nil {
		// The drives' state is unknown now: the next cell starts over.
		r.drives.reset(st.Drives)
		if why := r.drives.vanished(st.Drives, "during "+st.Name); why != "" {
			err = fmt.Errorf("preparing %s: %s failed: %s", r.lines.drivesLine(st.Drives), st.Name, why)
		} else {
			err = fmt.Errorf("preparing %s: %s failed: %w", r.lines.drivesLine(st.Drives), st.Name, err)
		}
		if ctx.Err() == nil && !verdict.Killed(strings.TrimPrefix(prepErr.Error(), "fio failed: ")) {
			// A fio stopped by a signal from outside (the OOM killer) is
			// an interruption: the step runs again on resume.
			failed := failedDrives(st.Drives, prepErr)
			if len(failed) < len(st.Drives) && st.Kind == plan.StepFill {
				// fio names the drives whose jobs failed: the others
				// finished their part, and go on filled.
				err = fmt.Errorf("preparing %s: %s failed: %w", r.lines.drivesLine(failed), st.Name, prepErr)
				done := *st
				done.Drives = slices.DeleteFunc(slices.Clone(st.Drives), func(d int) bool { return slices.Contains(failed, d) })
				r.drives.applied(done, time.Now())
			}
			if named(prepErr) {
				// A drive that vanished during the step is recorded as
				// disappeared (vanished): what fio made of its removal
				// (ENOSPC or EIO once its capacity is 0) is no failure of
				// its media.
				own := slices.DeleteFunc(slices.Clone(failed), func(d int) bool { return r.drives.changed(d) != "" })
				r.facts.failDrives(own, report.CausePreparation, *st, err)
			} else {
				// fio named no drive (it did not start, its report did not
				// parse, or this host could not write what fio reported:
				// a full recording disk): not a drive's failure to keep
				// for good. The drives fail this run's cells; a resume
				// runs the step again.
				r.drives.markBroken(st.Drives, report.CausePreparation, "a preparation step", err)
			}
		}
		logf("%v", err)
		return err.Error()
	}
	if st.Kind == plan.StepPurge {
		r.facts.sanitized(*st)
	}
	ocpRun{r}.ocpAfterStep(ctx, *st, ocp, logf)
	now := time.Now()
	r.drives.applied(*st, now)
	if st.Kind == plan.StepRandom || st.Kind == plan.StepTopUp {
		r.judgeSteady(*st, prep, track, now.Sub(start), logf)
	}
	return ""
}

// warned marks each drive of snap that raised a new critical warning (see
// Monitor.warned): its remaining cells fail naming the warning, and
// nothing more is written to it; the other drives go on. It returns what
// it found, "" for nothing.
func (r *Runner) warned(snap map[int]nvme.SmartLog, when string) string {
	drives, why := r.Monitor.warned(snap, when)
	for i, d := range drives {
		// Recorded before anything else is written to the drive: a
		// resume, a replay and a retry keep it.
		test, _ := strings.CutPrefix(when, "after ")
		if test == when {
			test = ""
		}
		r.facts.disqualify(d, report.CauseCriticalWarning, "its health log check (read "+when+")", test, why[i])
	}
	return strings.Join(why, "; ")
}

// measure runs a measurement step and keeps its output for each of its
// cells.
func (r *Runner) measure(ctx context.Context, st plan.Step, logf func(string, ...any)) string {
	owner := st.Cells[0]
	keep := func(m *evidence.Measured) {
		for _, c := range st.Cells {
			r.done[c.Test] = m
		}
	}
	notRun := func(why, cause, skipped string) string {
		keep(evidence.NotMeasured(why, cause))
		return skipped
	}
	if why := r.drives.unusable(owner); why.text != "" {
		r.failUnmeasured(why, st.Cells, logf)
		return notRun(why.text, why.cause, why.text)
	}
	if why := r.drives.vanished(st.Drives, "before "+owner.Test); why != "" {
		return notRun(why, report.CauseDriveChanged, why)
	}
	if ctx.Err() != nil {
		return notRun(verdict.StoppedBy(ctx.Err())+" before the measurement", report.CauseInterrupted, "the run was stopped")
	}
	if r.Precondition != plan.None {
		// The preparation this cell depends on failed or was skipped.
		if path := r.drives.notIn(st.Drives, st.State); path != "" {
			return notRun(fmt.Sprintf("%s is not in the state %q the cell needs (its preparation did not finish)", path, st.State),
				report.CausePreparation, "its preparation did not finish")
		}
	}
	if owner.Workload.Writes() {
		if strings.HasPrefix(st.State, "rand:") && r.Precondition != plan.None {
			// Whatever the estimate said, drives idle for too long by now
			// are topped up first.
			if idle := r.drives.idle(st.Drives, r.Spec.Precondition.IdleLimit); len(idle) > 0 {
				top := r.Planner.TopUp(idle, owner.Twin)
				top.N = st.N
				top.Name = "unplanned " + top.Name
				r.execStep(ctx, &top, logf)
			}
		}
		if _, err := r.drives.recheck(st.Drives); err != nil {
			return notRun(err.Error(), report.CauseDriveChanged, err.Error())
		}
	}
	for _, c := range st.Cells {
		// Unlisted first: a kill in between leaves files run.json does
		// not vouch for, never a listing of files that are gone.
		if err := r.rec.Forget(c.Test); err != nil {
			return notRun(err.Error(), report.CauseBadRecording, err.Error())
		}
		if err := record.Forget(r.Record, c.Test); err != nil {
			return notRun(err.Error(), report.CauseBadRecording, err.Error())
		}
	}
	var basis []report.Steady
	if strings.HasPrefix(st.State, "rand:") {
		basis = r.drives.basisOf(st.Drives)
	}
	names := make([]string, len(st.Cells))
	for i, c := range st.Cells {
		names[i] = c.Test
	}
	r.lines.progress(logf, "%s", r.lines.measureLine(st, names))
	samples{r}.writing(st)
	m, why := r.observe(ctx, st, owner, logf)
	if why != "" {
		keep(m)
		return why
	}
	m.Steady = basis
	if owner.Workload.Writes() {
		r.drives.wrote(st.Drives, time.Now())
	}
	for i, c := range st.Cells {
		var cpu *record.CPU
		if i == 0 {
			cpu = &m.CPU
		}
		if errs := r.rec.Sidecars(c.Test, basis, record.Thermal{Throttled: m.Thermal, CriticalWarning: m.Hot},
			record.Link{Degraded: m.Link, Unknown: m.LinkUnknown, Shared: m.Shared, Fabric: m.Fabric}, cpu); errs != nil {
			// Listed, the cell would replay or resume without the
			// finding its sidecar holds: it is measured again instead.
			logf("%s: %v: %s is not listed in run.json", r.Record, errors.Join(errs...), c.Test)
			continue
		}
		shares := ""
		if i > 0 {
			shares = owner.Test
		}
		ocpRun{r}.recordWAF(c.Test, m.WAF, logf)
		if err := r.rec.Recorded(c.Test, shares); err != nil {
			logf("%s: %v", r.Record, err)
		}
	}
	keep(m)
	return ""
}

// observe runs the measurement st of owner with everything read around
// it: the drives' SMART logs (critical warnings, heat), their PCIe links
// and the load of the CPUs fio runs on. why, when set, says the cell was
// not measured (m says so too).
func (r *Runner) observe(ctx context.Context, st plan.Step, owner plan.Cell, logf func(string, ...any)) (m *evidence.Measured, why string) {
	before := r.Monitor.snapshot(ctx, r.drives.present(st.Drives))
	if why := r.warned(before, "before "+owner.Test); why != "" {
		return evidence.NotMeasured(why, report.CauseCriticalWarning), why
	}
	linksBefore := r.probe.ReadLinks(st.Drives)
	fabricBefore := r.probe.Fabric(st.Drives)
	cpus, cpuBefore := r.probe.AllowedCPUs(st.Job), probe.ReadCPUTimes()
	ocpBefore := r.Monitor.readOCP(ctx, st.Drives, true)
	start := time.Now()
	raw := r.Exec.RawPath(owner.Test)
	watch := r.watch(st, start, nil, logf)
	if watch.Interval > 0 {
		watch.Interval = cellReportEvery(watch.Interval, st.Est)
	}
	lines, named := verdict.NewStderrIOErrors(r.facts.list, st.Drives), sync.WaitGroup{}
	watch.Stderr = func(line string) { // a pulled drive's I/Os fail before it is gone: judged a second later
		if found := lines.Next(line); len(found) > 0 {
			named.Go(func() { time.Sleep(time.Second); r.facts.ioErrors(owner, found, logf) })
		}
	}
	stdout, runErr := r.Exec.Measure(ctx, owner.Test, st.Job, watch)
	named.Wait()
	if why := r.drives.vanished(st.Drives, "during "+owner.Test); why != "" {
		// What fio made of a missing device ("you need to specify
		// size=", errno 22) is not the drive's figure, nor fio's fault.
		m := evidence.NotMeasured(why+"; fio's output is kept in "+raw, report.CauseDriveChanged)
		m.Raw, m.Job = raw, st.Job
		return m, why
	}
	// An I/O error fio's jobs met on a drive is the drive's failure:
	// recorded before anything else is read from or written to it.
	r.facts.ioErrors(owner, verdict.MeasurementIOErrors(r.facts.list, st.Drives, stdout), logf)
	after := r.Monitor.snapshot(ctx, r.drives.present(st.Drives))
	if why := r.warned(after, "after "+owner.Test); why != "" {
		logf("%s", why)
	}
	m = &evidence.Measured{Stdout: stdout, RunErr: runErr, Raw: raw, Job: st.Job,
		Thermal: r.Monitor.throttled(before, after), Hot: r.Monitor.hot(before, after)}
	var ocpHot string
	m.WAF, ocpHot = ocpRun{r}.cellOCP(st, owner, ocpBefore, r.Monitor.readOCP(ctx, st.Drives, true))
	m.Thermal = strings.Trim(m.Thermal+"; "+ocpHot, "; ")
	if m.Hot != "" {
		logf("%s", m.Hot)
	}
	l := probe.Around(linksBefore, r.probe.ReadLinks(st.Drives))
	m.Link, m.LinkUnknown, m.Shared = l.Degraded, l.Unknown, l.Shared
	m.Fabric = probe.Carried(fabricBefore, r.probe.Fabric(st.Drives))
	if m.LinkUnknown != "" {
		logf("%s", m.LinkUnknown)
	}
	m.CPU = probe.CPUUse(cpus, cpuBefore, probe.ReadCPUTimes())
	if m.CPU.N > 0 {
		for _, t := range st.Job.Targets {
			m.CPU.Pinned = append(m.CPU.Pinned, t.CPUs)
		}
	}
	return m, ""
}

// ReadBacks implements evidence.Evidence: the verify passes the
// interrupted run recorded (a resumed run's), each drive's last one,
// those of the drives this run reads back again being this run's; then
// this run's, running the plan through its last verify pass.
func (r *Runner) ReadBacks(ctx context.Context, logf func(string, ...any)) ([]evidence.ReadBack, string) {
	r.init()
	prior := r.PriorReadBacks()
	r.priorOnce.Do(func() {
		for _, rb := range prior {
			r.readBack(rb)
		}
	})
	last := -1
	for i, st := range r.Plan.Steps {
		if st.Kind == plan.StepVerify {
			last = i
		}
	}
	if last < 0 && len(prior) > 0 {
		return prior, "" // read back before the run was resumed
	}
	if last < 0 {
		why := "no verify pass in the plan: nothing selected needs a fill"
		switch {
		case r.Precondition == plan.None:
			why = "no verify pass: -precondition=none writes nothing to read back"
		case r.Spec.Precondition.FillPasses == 0:
			why = "no verify pass: " + r.Spec.File + " sets fill_passes = 0, so nothing is written to read back"
		}
		return nil, why
	}
	r.runTo(ctx, last, logf)
	r.mu.Lock()
	out := append(prior, r.readBacks...)
	r.mu.Unlock()
	if len(out) == 0 {
		return nil, "no verify pass ran: the run was stopped, or the purge or fill before it failed on every drive (their cells say why)"
	}
	return out, ""
}

// PriorReadBacks are the verify passes a resumed run's recording holds,
// each for the drives whose last read-back it is and that this run does
// not read back again; none for a run that is not resumed.
func (r *Runner) PriorReadBacks() []evidence.ReadBack {
	if r.Resume == nil {
		return nil
	}
	again := map[string]bool{}
	for _, st := range r.Plan.Steps {
		if st.Kind == plan.StepVerify {
			for _, d := range st.Drives {
				again[r.Drives[d].Path] = true
			}
		}
	}
	var out []evidence.ReadBack
	passes := r.Resume.Prior.Verify
	last := verdict.LastReadBack(passes)
	for i, rec := range passes {
		only := map[string]bool{}
		for p := range last[i] {
			if !again[p] {
				only[p] = true
			}
		}
		if len(only) > 0 {
			out = append(out, evidence.ReadBack{Dir: r.Resume.Dir, Pass: rec, Only: only, Disappeared: verdict.Disappeared(r.Resume.Prior.Failures)})
		}
	}
	return out
}

// Health implements evidence.Evidence: every drive's SMART log read now,
// after the run, kept with the recording.
func (r *Runner) Health(ctx context.Context) ([]evidence.DriveHealth, string) {
	r.init()
	out := r.Monitor.after(ctx, r.drives.lost())
	if r.Record == "" {
		return out, ""
	}
	skips, lost, temps := r.Monitor.skips()
	// A recording that lost them replays saying no health log was
	// recorded; the operator is told now.
	if err := r.rec.Update(func(i *record.Run) { i.HealthSkips, i.HealthLost, i.MaxTempK = skips, lost, temps }); err != nil {
		r.lines.progress(nil, "rewriting run.json: %v", err)
	}
	if err := r.Monitor.keep(r.Record, false); err != nil {
		r.lines.progress(nil, "keeping nvme-cli's outputs in %s: %v", r.Record, err)
	}
	if err := r.rec.Landed("health", true); err != nil {
		r.lines.progress(nil, "%s: %v", r.Record, err)
	}
	return out, ""
}

// Receipt implements evidence.Evidence: each drive's log as read at setup.
func (r *Runner) Receipt() ([]evidence.Received, string) {
	r.init()
	return r.Monitor.receipt(), ""
}

func (r *Runner) readBack(rb evidence.ReadBack) {
	if r.ReadBack != nil {
		r.ReadBack(rb)
	}
}

// PurgeReach widens a purge of drives (indices into all) to every drive
// that the purge erases too: the other namespaces of a controller that
// formats or sanitizes as a whole. Their state is then reset like the
// drives'.
func PurgeReach(all []plan.Drive, drives []int, method string, ctrls map[string]nvme.Controller) []int {
	if len(ctrls) == 0 {
		return drives
	}
	var infos []device.Info
	group := map[string]bool{}
	for _, d := range drives {
		if g := all[d].PurgeGroup(); g != "" {
			group[g] = true
		}
	}
	index := map[string]int{}
	for i, d := range all {
		if slices.Contains(drives, i) || group[d.PurgeGroup()] && d.PurgeGroup() != "" {
			infos = append(infos, d.Info)
			index[d.Path] = i
		}
	}
	steps, _ := purge.Plan(infos, method, ctrls)
	out := slices.Clone(drives)
	for _, st := range steps {
		touches := false
		for _, t := range st.Targets {
			if slices.Contains(drives, index[t]) {
				touches = true
			}
		}
		if !touches || !st.ControllerWide {
			continue
		}
		for _, t := range st.Targets {
			if i, ok := index[t]; ok && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}

var _ evidence.Evidence = (*Runner)(nil)
