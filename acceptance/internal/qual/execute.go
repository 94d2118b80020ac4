package qual

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
	"github.com/drivequal/drivequal/fiojob"
)

// measured is what a cell is judged from: its fio output, or why it was
// not measured, and the steady-state evidence of its drives.
type measured struct {
	stdout []byte
	runErr error
	raw    string
	job    fiojob.Job
	// notRun, when set, says why the cell was not measured; cause is its
	// report cause.
	notRun, cause string
	steady        []report.Steady
	// thermal, when set, says a drive throttled on heat during the
	// measurement; link, that a drive's PCIe link was below what the cell
	// needs before or after it.
	thermal, link string
	// hot, when set, says a drive had its temperature critical warning
	// bit set before or after the measurement.
	hot string
	// linkUnknown names the links on drives' PCIe paths that sysfs does
	// not know, which are therefore not judged.
	linkUnknown string
	// shared are the links two or more of the step's drives share, as
	// they trained (see Suite.sharedLinks).
	shared []record.SharedLink
	// cpu is the CPUs fio was allowed and how busy they were during the
	// measurement (N 0: not read).
	cpu record.CPU
	// pooled says stdout is a buffer of readRecording, recycled once
	// parsed.
	pooled bool
	// out and parseErr are stdout parsed, once parsed is set; groups
	// and total are out's Groups and Total, aggregated with it (in a
	// replay's prefetch, on every CPU, rather than as each cell is
	// judged).
	parsed   bool
	out      *fiojob.Output
	parseErr error
	groups   []fiojob.Result
	total    fiojob.Result
}

// parse is fiojob.Parse of the measurement's stdout, parsed once. The
// stdout is let go then: a replay prefetches a run's cells of one kind
// at once, and a live 24-drive cell's json+ with its status reports is
// about 10 MB.
func (m *measured) parse() (*fiojob.Output, error) {
	if !m.parsed {
		m.out, m.parseErr = fiojob.Parse(m.stdout)
		if m.pooled {
			// Parse's output refers to none of its input.
			recycleRecording(m.stdout)
		}
		m.parsed, m.stdout = true, nil
		if m.parseErr == nil {
			m.groups, m.total = m.out.Groups(), m.out.Total()
		}
	}
	return m.out, m.parseErr
}

// replayedCell is cell's recording, read and parsed. The first call for a
// kind of cell (single-drive, scaling) reads and parses every cell of that
// kind at once, on as many workers as there are CPUs, and each cell's
// recording is let go once judged: a fleet replay, which judges every
// host's single-drive cells before any host's scaling cells, holds one
// run's cells of one kind in memory at a time.
func (s *Suite) replayedCell(ctx context.Context, cell plan.Cell) *measured {
	s.mu.Lock()
	if s.prefetched == nil {
		s.prefetched = map[string]bool{}
	}
	if !s.prefetched[cell.Kind] {
		s.prefetched[cell.Kind] = true
		s.mu.Unlock()
		s.prefetch(ctx, cell.Kind)
		s.mu.Lock()
	}
	m, ok := s.done[cell.Test]
	delete(s.done, cell.Test)
	s.mu.Unlock()
	if ok {
		return m
	}
	return s.replayed(ctx, cell)
}

// prefetch reads and parses every cell of a replay of kind in parallel.
func (s *Suite) prefetch(ctx context.Context, kind string) {
	cells := make(chan plan.Cell)
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range cells {
				m := s.replayed(ctx, c)
				m.parse()
				s.mu.Lock()
				s.done[c.Test] = m
				s.mu.Unlock()
			}
		}()
	}
	for _, c := range s.allCells() {
		if c.Skip == "" && c.Kind == kind {
			cells <- c
		}
	}
	close(cells)
	wg.Wait()
}

// replayed reads cell's recording.
func (s *Suite) replayed(ctx context.Context, cell plan.Cell) *measured {
	return s.readRecorded(ctx, s.Exec.(Replay), cell)
}

// readRecorded reads cell's recording in r with every sidecar a live run
// judged it by: a replay and a resumed run's kept cells read the same.
func (s *Suite) readRecorded(ctx context.Context, r Replay, cell plan.Cell) *measured {
	job := s.Planner.Measure(cell)
	stdout, err := r.Measure(ctx, cell.Test, job, nil)
	m := &measured{stdout: stdout, pooled: stdout != nil, runErr: err, raw: r.RawPath(cell.Test), job: job}
	if err == nil || !errors.Is(err, record.ErrNotRecorded) {
		st, serr := r.Steady(cell.Test)
		if serr != nil {
			m.notRun, m.cause = serr.Error(), report.CauseBadRecording
		}
		m.steady = st
		m.thermal, m.hot = r.thermal(cell.Test)
		m.link, m.linkUnknown = r.link(cell.Test)
		m.shared = r.shared(cell.Test)
		_, _ = record.ReadJSON(r.Dir, r.owner(cell.Test), record.CPUExt, &m.cpu)
	}
	return m
}

// advance runs the plan's steps up to and including cell's measurement,
// and returns that measurement. Cells measured on the way are kept for
// their own subtests.
func (s *Suite) advance(ctx context.Context, cell plan.Cell, logf func(string, ...any)) *measured {
	if m, ok := s.done[cell.Test]; ok {
		return m
	}
	if m := s.keptCell(ctx, cell); m != nil {
		return m // recorded whole before the run was resumed
	}
	idx, ok := s.Plan.Measures[cell.Test]
	if why := s.unusable(cell); !ok && why.text != "" {
		// A drive of the cell is disqualified (a resumed run plans nothing
		// for it): it fails unmeasured, as measure fails it.
		if why.cause == report.CauseIntegrity || why.cause == report.CauseFioFailed {
			s.unmeasured([]plan.Cell{cell}, logf)
		}
		return &measured{notRun: why.text, cause: why.cause}
	}
	if !ok {
		// Not selected when the plan was made (a -run pattern this suite
		// read differently from go test): plan it on its own.
		logf("%s was not in the plan: preparing its drives for it alone", cell.Test)
		extra := s.Planner.Build([]plan.Cell{cell})
		base := len(s.Plan.Steps)
		for _, st := range extra.Steps {
			st.N = base + st.N
			s.Plan.Steps = append(s.Plan.Steps, st)
		}
		s.Plan.Total += extra.Total
		idx = base + extra.Measures[cell.Test]
		s.Plan.Measures[cell.Test] = idx
		s.cursor = base
	}
	for s.cursor <= idx && s.cursor < len(s.Plan.Steps) {
		st := s.Plan.Steps[s.cursor]
		s.cursor++
		s.runStep(ctx, st, logf)
	}
	if m, ok := s.done[cell.Test]; ok {
		return m
	}
	return &measured{notRun: "the plan ended before its measurement", cause: report.CauseInterrupted}
}

// runStep runs one step of the plan and records it in the report.
func (s *Suite) runStep(ctx context.Context, st plan.Step, logf func(string, ...any)) {
	start := time.Now()
	rec := report.Step{N: st.N, Kind: st.Kind.String(), Name: st.Name, Drives: s.pathList(st.Drives), EstimatedSeconds: st.Est.Seconds()}
	skipped := s.execStep(ctx, &st, logf)
	rec.Drives = s.pathList(st.Drives)
	rec.ActualSeconds = time.Since(start).Seconds()
	rec.Skipped = skipped
	s.mu.Lock()
	s.Report.Steps = append(s.Report.Steps, rec)
	s.mu.Unlock()
}

// execStep runs st; it returns why it did not run, or "".
func (s *Suite) execStep(ctx context.Context, st *plan.Step, logf func(string, ...any)) string {
	if st.Kind == plan.StepMeasure {
		return s.measure(ctx, *st, logf)
	}
	// A drive that raised a critical warning since setup is written no
	// more, whatever the step: read its log before each one.
	if ctx.Err() == nil {
		s.warned(s.snapshot(ctx, st.Drives), "before "+st.Name)
	}
	// A drive that failed an earlier step is not prepared again.
	var drives []int
	for _, d := range st.Drives {
		if s.brokenText(d) == "" {
			drives = append(drives, d)
		}
	}
	if st.Kind == plan.StepTopUp {
		drives = s.idle(drives, st.Idle)
		if len(drives) == 0 {
			logf("step %d of %d: no drive idle for more than %s: no top-up", st.N, len(s.Plan.Steps), st.Idle)
			return "no drive idle for longer than the limit"
		}
	}
	if len(drives) == 0 {
		return "every drive of the step failed earlier"
	}
	if len(drives) != len(st.Drives) {
		*st = s.Planner.Narrow(*st, drives)
	}
	if ctx.Err() != nil {
		return "the run was stopped"
	}
	if st.Kind == plan.StepPurge {
		st.Drives = s.purgeReach(st.Drives, st.Purge)
	}
	s.progress(logf, "%s", s.stepLine(*st))
	if err := s.recheck(st.Drives); err != nil {
		s.resetStates(st.Drives)
		return fmt.Sprintf("before %s: %v", st.Name, err)
	}
	start := time.Now()
	var (
		w     *Watch
		track *steady.Tracker
	)
	if st.Kind == plan.StepRandom || st.Kind == plan.StepTopUp {
		track = steady.NewTracker(st.Rule, st.Round, len(st.Drives))
	}
	if st.Kind != plan.StepPurge {
		w = s.watch(*st, start, track, logf)
	}
	if st.Kind == plan.StepVerify {
		return s.verifyStep(ctx, st, logf, w)
	}
	prep, err := s.Exec.Prepare(ctx, *st, s.Drives, logf, w)
	if err != nil {
		// The drives' state is unknown now: the next cell starts over.
		s.resetStates(st.Drives)
		if why := s.vanished(st.Drives, "during "+st.Name); why != "" {
			err = fmt.Errorf("preparing %s: %s failed: %s", s.drivesLine(st.Drives), st.Name, why)
		} else {
			err = fmt.Errorf("preparing %s: %s failed: %w", s.drivesLine(st.Drives), st.Name, err)
		}
		if ctx.Err() == nil {
			s.markBroken(st.Drives, report.CausePreparation, "a preparation step", err)
		}
		logf("%v", err)
		return err.Error()
	}
	now := time.Now()
	s.mu.Lock()
	plan.Apply(s.states, *st)
	for _, d := range st.Drives {
		s.lastWrite[d] = now
		if st.Kind == plan.StepPurge || st.Kind == plan.StepFill {
			s.basis[d] = nil
		}
	}
	s.mu.Unlock()
	if st.Kind == plan.StepRandom || st.Kind == plan.StepTopUp {
		s.judgeSteady(*st, prep, track, now.Sub(start), logf)
	}
	return ""
}

func boundWord(k plan.StepKind) string {
	if k == plan.StepRandom || k == plan.StepTopUp {
		return "at most"
	}
	return "about"
}

// judgeSteady records each drive's steady-state verdict for a random
// step: the rounds track made of fio's status reports, which decided when
// to stop the step, or, for a drive without a whole round from them, the
// rounds of fio's IOPS logs.
func (s *Suite) judgeSteady(st plan.Step, prep Prepared, track *steady.Tracker, took time.Duration, logf func(string, ...any)) {
	results := track.Results()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, d := range st.Drives {
		res, source := results[i], "fio status reports"
		if len(res.Rounds) == 0 && i < len(prep.Logs) {
			// The trailing window, as the Tracker judges: the drive's
			// state when the step stopped.
			rounds := steady.LogRounds(prep.Logs[i], st.Job.LogInterval, st.Round)
			res, source = steady.Result{Rounds: rounds, Verdict: st.Rule.Check(rounds)}, "fio iops log"
			if res.Verdict.Attained {
				res.At = len(rounds)
			}
		}
		rec := steadyRecord(st, s.Drives[d].Path, res, source)
		if s.resume != nil {
			// A resume's plan numbers its steps from 1 again.
			rec.Resume = len(s.info.Resumptions)
		}
		rec.Seconds = took.Seconds()
		if res.At > 0 {
			// fio's runtime when the window that held ended.
			rec.Seconds = (time.Duration(res.At) * st.Round).Seconds()
		}
		if st.Kind == plan.StepRandom {
			s.basis[d] = []report.Steady{rec}
		} else {
			s.basis[d] = append(s.basis[d], rec)
		}
		s.Report.SteadyState = append(s.Report.SteadyState, rec)
		s.info.Steady = append(s.info.Steady, rec)
		logf("step %d: %s: %s", st.N, s.Drives[d].Path, windowText(res))
	}
	if err := s.saveRunInfo(); err != nil {
		logf("%s: %v", s.Cfg.Record, err)
	}
}

// windowText is res's verdict with the rounds of its window: "rounds 1-5
// of 6: steady state reached: ...".
func windowText(res steady.Result) string {
	v := res.Verdict
	if v.Note != "" {
		return v.String()
	}
	return fmt.Sprintf("rounds %d-%d of %d: %s", v.First+1, v.First+v.Rule.Window, len(res.Rounds), v)
}

// steadyRecord is res as the report keeps it.
func steadyRecord(st plan.Step, drive string, res steady.Result, source string) report.Steady {
	v := res.Verdict
	rec := report.Steady{Step: st.N, Name: st.Name, Kind: st.Kind.String(), Twin: st.Twin.Name, Drive: drive,
		Attained: v.Attained, BoundSeconds: st.Est.Seconds(), RoundSeconds: st.Round.Seconds(), Rounds: len(res.Rounds),
		Window: v.Rule.Window, Mean: v.Mean, RangePct: 100 * v.RelRange(), RangeLimitPct: 100 * v.Rule.MaxRange,
		ExcursionPct: 100 * v.RelExcursion(), ExcursionLimitPct: 100 * v.Rule.MaxExcursion, Source: source, Note: v.Note}
	if v.Note == "" {
		rec.FirstRound, rec.LastRound = v.First+1, v.First+v.Rule.Window
	}
	rec.RoundIOPS = make([]*float64, len(res.Rounds))
	for k, x := range res.Rounds {
		if !math.IsNaN(x) {
			rec.RoundIOPS[k] = &x
		}
	}
	return rec
}

// watch follows a running step: progress lines at most every
// progressEvery (on the terminal and through logf, into the subtest's log
// and so its JUnit), and for random steps track, fed every status report,
// which stops the step once every drive holds the steady-state rule.
func (s *Suite) watch(st plan.Step, start time.Time, track *steady.Tracker, logf func(string, ...any)) *Watch {
	interval := progressEvery
	if track != nil {
		interval = min(interval, steady.ReportEvery(st.Round))
	} else if st.Est <= progressMin {
		return nil
	}
	last := start
	return &Watch{Interval: interval, Report: func(p fiojob.Progress) bool {
		stop := track != nil && track.Report(p)
		if now := time.Now(); st.Est > progressMin && now.Sub(last) >= progressEvery-time.Second/2 {
			last = now
			s.progress(logf, "%s", s.progressLine(st, now.Sub(start), p))
		}
		return stop
	}}
}

// Progress is shown for steps longer than progressMin, at most every
// progressEvery.
var (
	progressMin   = time.Minute
	progressEvery = 30 * time.Second
)

// progressLine is "step k of n (what): elapsed, ETA step and run, fio's rate".
func (s *Suite) progressLine(st plan.Step, elapsed time.Duration, p fiojob.Progress) string {
	var rest time.Duration
	for _, later := range s.Plan.Steps[min(st.N, len(s.Plan.Steps)):] {
		rest += later.Est
	}
	left := max(st.Est-elapsed, 0)
	var iops, mbps float64
	for _, r := range p.Interval {
		iops += r.IOPS()
		mbps += r.MBps()
	}
	// The step's name, else its last part (a measurement's workload), else
	// none: whichever fits a terminal line with fio's figures at their
	// widest ("12,345,678 IOPS, 14,500 MB/s").
	figures := fmt.Sprintf("%s elapsed, step ETA %s, run ETA %s; fio now %s IOPS, %s MB/s",
		elapsed.Round(time.Second), left.Round(time.Second), (left + rest).Round(time.Second), report.Thousands(iops), report.Thousands(mbps))
	widest := len("drivequal: 15:04:05 ") + utf8.RuneCountInString(figures) + max(0, 10-len(report.Thousands(iops))) + max(0, 6-len(report.Thousands(mbps)))
	name := shortStep(st.Name)
	line := ""
	for _, n := range []string{name, name[strings.LastIndexByte(name, '/')+1:]} {
		if line = fmt.Sprintf("step %d of %d (%s): %s", st.N, len(s.Plan.Steps), n, figures); widest+utf8.RuneCountInString(line)-utf8.RuneCountInString(figures) <= MaxProgressLine {
			return line
		}
	}
	return fmt.Sprintf("step %d of %d: %s", st.N, len(s.Plan.Steps), figures)
}

// progress writes a progress line to the operator's terminal and, when
// logf is set, to the subtest's log.
func (s *Suite) progress(logf func(string, ...any), format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, "%s\n", fitLine(fmt.Sprintf("drivequal: %s %s", time.Now().Format("15:04:05"), line), MaxProgressLine))
	}
	if logf != nil {
		logf("%s", line)
	} else if s.logf != nil {
		s.logf("%s", line)
	}
}

// MaxProgressLine is the most characters a progress line has on the
// terminal: one line of a wide terminal, drives named in short.
const MaxProgressLine = 160

// fitLine is line cut to max characters, ending "…" when cut.
func fitLine(line string, max int) string {
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	return string([]rune(line)[:max-1]) + "…"
}

// shortStep is a step's name without its bounds, which its line says:
// "random preconditioning (4KB Random Write)" for "random
// preconditioning (4KB Random Write, until steady state, at most 30m0s)".
func shortStep(name string) string {
	if i := strings.Index(name, ", "); i > 0 && strings.HasSuffix(name, ")") && strings.Contains(name[:i], " (") {
		return name[:i] + ")"
	}
	return name
}

// drivesLine names a step's drives for a person: the path of one drive,
// "24 drives: nvme0n1–nvme23n1" for several (report.DrivesLine).
func (s *Suite) drivesLine(drives []int) string {
	p := make([]string, len(drives))
	for i, d := range drives {
		p[i] = s.Drives[d].Path
	}
	return report.DrivesLine(p)
}

// stepLine is the progress line that starts a preparation step.
func (s *Suite) stepLine(st plan.Step) string {
	name := st.Name
	if utf8.RuneCountInString(name) > 70 {
		// The bound is said after the drives.
		name = shortStep(name)
	}
	return fmt.Sprintf("step %d of %d: %s on %s (%s %s)", st.N, len(s.Plan.Steps), name, s.drivesLine(st.Drives),
		boundWord(st.Kind), st.Est.Round(time.Second))
}

// measureLine is the progress line that starts a measurement step of the
// cells names.
// cells names, the job and the drives, the longest of those that fits a
// terminal line: every cell and the job, else the first cell and the job,
// else the first cell (the job is in the recording's .fio file).
func (s *Suite) measureLine(st plan.Step, names []string) string {
	head := fmt.Sprintf("step %d of %d: measuring ", st.N, len(s.Plan.Steps))
	on := " on " + s.drivesLine(st.Drives)
	first := names[0]
	if len(names) > 1 {
		first += fmt.Sprintf(" and %d more", len(names)-1)
	}
	var line string
	for _, l := range []string{
		head + strings.Join(names, " and ") + on + fmt.Sprintf(" (%s, %s)", describeJob(st.Job), st.Job.Runtime),
		head + first + on + fmt.Sprintf(" (%s, %s)", describeJob(st.Job), st.Job.Runtime),
		head + first + on + fmt.Sprintf(" (%s)", st.Job.Runtime),
	} {
		if line = l; utf8.RuneCountInString(l)+len("drivequal: 15:04:05 ") <= MaxProgressLine {
			break
		}
	}
	return line
}

// measure runs a measurement step and keeps its output for each of its
// cells.
func (s *Suite) measure(ctx context.Context, st plan.Step, logf func(string, ...any)) string {
	owner := st.Cells[0]
	keep := func(m *measured) {
		for _, c := range st.Cells {
			s.done[c.Test] = m
		}
	}
	if why := s.unusable(owner); why.text != "" {
		keep(&measured{notRun: why.text, cause: why.cause})
		// A failed verify pass (a mismatch, or fio's error reading the
		// drive back, the only causes it marks a drive broken with): a
		// replay fails these cells from the recorded pass.
		if why.cause == report.CauseIntegrity || why.cause == report.CauseFioFailed {
			s.unmeasured(st.Cells, logf)
		}
		return why.text
	}
	if why := s.vanished(st.Drives, "before "+owner.Test); why != "" {
		keep(&measured{notRun: why, cause: report.CauseDriveChanged})
		return why
	}
	if ctx.Err() != nil {
		keep(&measured{notRun: stoppedBy(ctx.Err()) + " before the measurement", cause: report.CauseInterrupted})
		return "the run was stopped"
	}
	if s.Precondition != plan.None {
		// The preparation this cell depends on failed or was skipped.
		for _, d := range st.Drives {
			if s.states[d].Last != st.State {
				keep(&measured{notRun: fmt.Sprintf("%s is not in the state %q the cell needs (its preparation did not finish)", s.Drives[d].Path, st.State),
					cause: report.CausePreparation})
				return "its preparation did not finish"
			}
		}
	}
	if owner.Workload.Writes() {
		if strings.HasPrefix(st.State, "rand:") && s.Precondition != plan.None {
			// Whatever the estimate said, drives idle for too long by now
			// are topped up first.
			if idle := s.idle(st.Drives, s.Spec.Precondition.IdleLimit); len(idle) > 0 {
				top := s.Planner.TopUp(idle, owner.Twin)
				top.N = st.N
				top.Name = "unplanned " + top.Name
				s.execStep(ctx, &top, logf)
			}
		}
		if err := s.recheck(st.Drives); err != nil {
			keep(&measured{notRun: err.Error(), cause: report.CauseDriveChanged})
			return err.Error()
		}
	}
	for _, c := range st.Cells {
		if err := s.forget(c.Test); err != nil {
			keep(&measured{notRun: err.Error(), cause: report.CauseBadRecording})
			return err.Error()
		}
	}
	s.mu.Lock()
	var basis []report.Steady
	if strings.HasPrefix(st.State, "rand:") {
		for _, d := range st.Drives {
			basis = append(basis, s.basis[d]...)
		}
	}
	s.mu.Unlock()
	names := make([]string, len(st.Cells))
	for i, c := range st.Cells {
		names[i] = c.Test
	}
	s.progress(logf, "%s", s.measureLine(st, names))
	before := s.snapshot(ctx, st.Drives)
	if why := s.warned(before, "before "+owner.Test); why != "" {
		keep(&measured{notRun: why, cause: report.CauseCriticalWarning})
		return why
	}
	paths := s.pciePaths()
	linkBefore, unknownBefore := s.linkDegradedOn(paths, st.Drives)
	sharedBefore := s.sharedLinks(paths, st.Drives)
	cpus, cpuBefore := s.allowedCPUs(st.Job), readCPUTimes()
	start := time.Now()
	stdout, runErr := s.Exec.Measure(ctx, owner.Test, st.Job, s.watch(st, start, nil, logf))
	if why := s.vanished(st.Drives, "during "+owner.Test); why != "" {
		// What fio made of a missing device ("you need to specify
		// size=", errno 22) is not the drive's figure, nor fio's fault.
		keep(&measured{notRun: why + "; fio's output is kept in " + s.Exec.RawPath(owner.Test), cause: report.CauseDriveChanged,
			raw: s.Exec.RawPath(owner.Test), job: st.Job})
		return why
	}
	after := s.snapshot(ctx, st.Drives)
	if why := s.warned(after, "after "+owner.Test); why != "" {
		logf("%s", why)
	}
	m := &measured{stdout: stdout, runErr: runErr, raw: s.Exec.RawPath(owner.Test), job: st.Job, steady: basis,
		thermal: s.throttled(before, after), hot: s.hot(before, after)}
	if m.hot != "" {
		logf("%s", m.hot)
	}
	paths = s.pciePaths()
	linkAfter, unknownAfter := s.linkDegradedOn(paths, st.Drives)
	m.link, m.linkUnknown = joinDistinct(linkBefore, linkAfter), joinDistinct(unknownBefore, unknownAfter)
	m.shared = slowerOf(sharedBefore, s.sharedLinks(paths, st.Drives))
	if m.linkUnknown != "" {
		logf("%s", m.linkUnknown)
	}
	m.cpu = cpuUse(cpus, cpuBefore, readCPUTimes())
	if owner.Workload.Writes() {
		now := time.Now()
		s.mu.Lock()
		for _, d := range st.Drives {
			s.lastWrite[d] = now
		}
		s.mu.Unlock()
	}
	for i, c := range st.Cells {
		if err := s.recordSteady(c.Test, basis); err != nil {
			logf("%s: %v", s.Cfg.Record, err)
		}
		if err := s.recordThermal(c.Test, m.thermal, m.hot); err != nil {
			logf("%s: %v", s.Cfg.Record, err)
		}
		if err := s.recordLink(c.Test, m.link, m.linkUnknown, m.shared); err != nil {
			logf("%s: %v", s.Cfg.Record, err)
		}
		if i == 0 && m.cpu.N > 0 {
			if err := record.WriteJSON(s.Cfg.Record, c.Test, record.CPUExt, m.cpu); err != nil {
				logf("%s: %v", s.Cfg.Record, err)
			}
		}
		if i > 0 {
			s.mu.Lock()
			if s.info.Shared == nil {
				s.info.Shared = map[string]string{}
			}
			s.info.Shared[c.Test] = owner.Test
			s.mu.Unlock()
		}
		if err := s.recorded(c.Test); err != nil {
			logf("%s: %v", s.Cfg.Record, err)
		}
	}
	keep(m)
	return ""
}

// recordSteady keeps the steady-state evidence of test beside its
// recording, for a replay to judge it by.
func (s *Suite) recordSteady(test string, recs []report.Steady) error {
	if len(recs) == 0 {
		return nil
	}
	return record.WriteJSON(s.Cfg.Record, test, record.SteadyExt, recs)
}

// idle lists those of drives that have written nothing for longer than limit.
func (s *Suite) idle(drives []int, limit time.Duration) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	now := time.Now()
	for _, d := range drives {
		if t := s.lastWrite[d]; !t.IsZero() && now.Sub(t) > limit {
			out = append(out, d)
		}
	}
	return out
}

func (s *Suite) resetStates(drives []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range drives {
		s.states[d] = plan.State{}
		s.basis[d] = nil
	}
}

func (s *Suite) brokenText(d int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d < len(s.broken) {
		return s.broken[d].text
	}
	return ""
}

func (s *Suite) pathList(drives []int) []string {
	out := make([]string, len(drives))
	for i, d := range drives {
		out[i] = s.Drives[d].Path
	}
	return out
}

// allowedCPUs lists the CPUs job's targets may run on (their cpus_allowed),
// or every online CPU when a target is not pinned; nil when unknown.
func (s *Suite) allowedCPUs(job fiojob.Job) []int {
	set := map[int]bool{}
	for _, t := range job.Targets {
		if t.CPUs == "" {
			if s.Planner == nil {
				return nil
			}
			return slices.Clone(s.Planner.Online)
		}
		cpus, err := device.ParseCPUList(t.CPUs)
		if err != nil {
			return nil
		}
		for _, c := range cpus {
			set[c] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// readCPUTimes reads /proc/stat; nil when it cannot.
func readCPUTimes() host.CPUTimes {
	t, err := host.ReadCPUTimes()
	if err != nil {
		return nil
	}
	return t
}

// cpuUse is how busy cpus were between two readings, as the recording
// keeps it; N 0 when cpus is unknown, Busy -1 when the readings say
// nothing of them.
func cpuUse(cpus []int, before, after host.CPUTimes) record.CPU {
	if len(cpus) == 0 {
		return record.CPU{}
	}
	busy, ok := host.Busy(before, after, cpus)
	if !ok {
		busy = -1
	}
	return record.CPU{CPUs: device.FormatCPUList(cpus), N: len(cpus), Busy: busy}
}
