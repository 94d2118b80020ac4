package qual

import (
	"context"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"slices"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/overtime"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/purgerun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/qual/runreport"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/sweep"
	"github.com/drivequal/drivequal/specs"
)

// Suite is one run's qualification: the spec that judges it, its drives,
// its plan, the evidence its cells are judged from (a live run's runner or
// a recording's reader) and the report its verdicts go to.
type Suite struct {
	Cfg     *cmdline.Config
	Spec    *specs.Spec
	Drives  []plan.Drive
	Planner *plan.Planner
	// Plan is what a live run executes, step by step, for the cells the
	// -run pattern selects.
	Plan         plan.Plan
	Report       *report.Run
	Precondition string // the preconditioning the measurements had
	// Warnings are things the operator should know that do not stop the run.
	Warnings []string

	// evidence is what the cells are judged from: runner (a live run) or
	// reader (a replay).
	evidence evidence.Evidence
	runner   *live.Runner
	reader   *recording.Reader
	// has says whether the evidence holds test; recordedOnly, that a
	// capacity with nothing recorded is not listed.
	has          func(test string) bool
	recordedOnly bool
	// guard holds every target exclusively from setup until Close.
	guard live.Guard
	ctrls map[string]nvme.Controller // identify data of the drives' NVMe controllers
	// recorded is run.json: a replay's as read, a live run's as written
	// at Start.
	recorded record.Run
	// resume is what a resumed run (-resume) took over; nil otherwise.
	resume *resumeState
	// replacing, when set, says the run replaces the recording in its
	// -record directory.
	replacing string
	out       *runreport.Reporter
	charts    *overtime.Drawer // nil in a dry run

	mu     sync.Mutex
	single map[string]float64 // "capacity/workload" → single-drive actual
	// readBacks judges each verify pass once, for TestIntegrity.
	readBacks *ledger
}

// ledger judges each verify pass once into the report, and keeps each
// drive's verdict for TestIntegrity: a live run's as the pass is read
// back, whichever test the plan ran it for.
type ledger struct {
	drives []plan.Drive
	out    *runreport.Reporter

	mu        sync.Mutex
	seen      map[string]bool
	integrity []verdict.IntegrityDrive
}

// judge judges rb, unless it was.
func (l *ledger) judge(rb evidence.ReadBack) {
	key := fmt.Sprintf("%s\x00%s\x00%d\x00%d", rb.Dir, rb.Pass.Raw, rb.Pass.Step, rb.Pass.Resume)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	for _, d := range verdict.ReadBack(rb, l.drives) {
		l.out.Add(d.Result)
		l.integrity = append(l.integrity, d.IntegrityDrive)
	}
}

// verdicts are the drives' verdicts judged so far.
func (l *ledger) verdicts() []verdict.IntegrityDrive {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.integrity)
}

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

// start writes what a live run records before its first cell (run.json
// and the health logs on receipt); a replay records nothing.
func (s *Suite) start() error {
	if s.runner == nil || s.Cfg.DryRun {
		return nil
	}
	info := s.runInfo()
	if s.resume != nil {
		info = s.resume.info(s)
		if err := purgerun.Moved(s.Cfg.Record, s.resume.moved, info.Files); err != nil {
			return fmt.Errorf("parsing -resume: %w", err)
		}
		s.Report.Resumptions = info.Resumptions
		// Started is the run's first start, which a recording made before
		// run.json kept it does not say; each resume's is in Resumptions.
		s.Report.Started = info.Started
		s.Report.SteadyState = append(slices.Clone(s.resume.prior.Steady), s.Report.SteadyState...)
	}
	s.recorded = info
	if err := s.runner.Start(info); err != nil {
		return fmt.Errorf("parsing -record: %w", err)
	}
	return nil
}

// runInfo is run.json of a new live run, before its first cell.
func (s *Suite) runInfo() record.Run {
	info := record.Run{Format: record.Format, Spec: s.Spec.Model, SpecName: s.Spec.Name, SpecFile: s.Spec.File,
		SpecSHA256: s.Spec.SHA256(), SpecText: string(s.Spec.Text), Mode: "record", Started: s.Report.Started,
		FioVersion: s.Report.FioVersion, Precondition: s.Precondition, Drives: s.Report.Drives,
		AnyModel: s.Report.AnyModel}
	if s.Report.Host != nil {
		info.Host = *s.Report.Host
	}
	// What -resume checks besides the drives and the spec.
	info.Devices = make([]string, len(s.Drives))
	info.LBASizes = make([]int, len(s.Drives))
	for i, d := range s.Drives {
		info.Devices[i] = match.DevNumber(d)
		info.LBASizes[i] = d.LogicalBlockSize
	}
	info.Runtime = runtimeFlag(s.Cfg.Runtime)
	info.PurgeAfter, info.PurgeDrives = purgerun.Asked(s.Cfg, s.Spec, s.Drives)
	info.Firmware = fwrun.Asking(nil, s.Plan, s.Cfg)
	info.Identities, info.BootID = match.Identities(s.Drives), match.BootID()
	return info
}

// Run judges cell from its evidence: a live run first executes the plan
// up to and including the cell's measurement (preparing drives, and
// measuring the cells planned before it, which later subtests judge); a
// replay reads the cell's recorded output. logf receives progress lines.
func (s *Suite) Run(ctx context.Context, cell plan.Cell, logf func(string, ...any)) (Outcome, error) {
	m := s.evidence.Cell(ctx, cell, logf)
	if m.Skip != "" {
		return Outcome{Skip: m.Skip}, nil
	}
	var base verdict.Baseline
	if cell.Kind == report.KindScaling {
		base.PerDrive, base.Err = s.baseline(cell)
	}
	j := verdict.Run{Spec: s.Spec, Precondition: s.Precondition, Drives: s.Drives}.Cell(ctx, cell, m, base)
	// A drive's failure outranks what the cell says for itself (see
	// verdict.Precede), live, replayed and resumed alike.
	j = verdict.PrecedeDrives(j, cell, s.Drives, s.driveFailures())
	// A figure the recording overflowed (a latency mean of +Inf) is the
	// cell's failure, never a number the report cannot hold.
	if report.FailNonFinite(&j.Result) {
		j.Message, j.Figure = j.Result.Error, false
	}
	if j.Figure {
		key := cell.Capacity.Name + "/" + cell.Workload.Name
		if cell.Kind == report.KindScaling {
			key = "scaling/" + key
		}
		if cell.Kind == report.KindSingle || len(cell.Drives) == 1 {
			s.mu.Lock()
			s.single[key] = j.Result.Actual
			s.mu.Unlock()
		}
	}
	version := j.FioVersion
	if version != "" && s.Report.FioVersion == "" {
		s.Report.FioVersion = version
	}
	if version == "" {
		version = s.Report.FioVersion
	}
	if s.charts != nil && s.out.Fleet == nil && m.NotRun == "" {
		paths := make([]string, len(cell.Drives))
		for i, d := range cell.Drives {
			paths[i] = s.Drives[d].Path
		}
		s.charts.Judged(overtime.Suite{Report: s.Report, Lock: &s.out.Mutex, Recorded: func() record.Run { return s.recorded }}, m.Raw, j.Result, m.Total, paths, logf)
	}
	err := s.out.Add(j.Result)
	o := s.outcome(j.Result, cell, version)
	o.Message = j.Message
	return o, err
}

// RunLatency judges TestLatency's target tg of s from its points'
// evidence (sweep.Run), each point and the target a result of the report;
// a drive's failure outranks a point's own verdict as it does a cell's.
func RunLatency(ctx context.Context, s *Suite, tg sweep.Target, logf func(string, ...any)) (Outcome, error) {
	j, err := sweep.Run(ctx, tg, verdict.Run{Spec: s.Spec, Precondition: s.Precondition, Drives: s.Drives}, s.driveFailures,
		func(c plan.Cell) *evidence.Measured { return s.evidence.Cell(ctx, c, logf) }, s.out.Add)
	return Outcome{Result: j.Result, Message: j.Message, Skip: j.Skip, Attrs: j.Attrs}, err
}

// NotReached records cell of s as never reached, the run stopped before it
// (why): an inconclusive result, so that every report lists the cell.
func NotReached(ctx context.Context, s *Suite, cell plan.Cell, why string) error {
	base := verdict.Baseline{PerDrive: cell.Capacity.Spec[cell.Workload.Name]}
	m := evidence.NotMeasured("never reached: the run was stopped ("+why+") before this cell", report.CauseInterrupted)
	return s.out.Add(verdict.Run{Spec: s.Spec, Precondition: s.Precondition, Drives: s.Drives}.Cell(ctx, cell, m, base).Result)
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

// JudgeIntegrity judges each drive's last read-back (a live run executes
// the plan through its last verify pass first) and returns each drive's
// verdict for TestIntegrity; when there is nothing to judge, it says why.
func (s *Suite) JudgeIntegrity(ctx context.Context, logf func(string, ...any)) ([]verdict.IntegrityDrive, string) {
	passes, why := s.evidence.ReadBacks(ctx, logf)
	if why != "" {
		return nil, why
	}
	for _, rb := range passes {
		s.readBacks.judge(rb)
	}
	drives := s.readBacks.verdicts()
	if len(drives) == 0 {
		return nil, "no verify pass ran: the run was stopped, or the purge or fill before it failed on every drive (their cells say why)"
	}
	return drives, ""
}

// JudgeHealth judges every drive's health after the run (a live run reads
// it now) against its health before and the spec's [health] rules. The
// checks go to the report. A replay of a recording that holds no health
// logs at all returns none, and why.
func (s *Suite) JudgeHealth(ctx context.Context) ([]verdict.HealthDrive, string) {
	of, why := s.evidence.Health(ctx)
	if why != "" {
		return nil, why
	}
	out, checks := verdict.Health(s.Drives, of, s.Spec.Health)
	s.out.Checks(func(r *report.Run) *[]report.HealthCheck { return &r.Health }, checks)
	return out, ""
}

// JudgeReceipt inspects every drive as it arrived: its SMART log read
// before anything was written against the spec's [receipt] limits. A
// drive without a health log is skipped, saying why; a replay of a
// recording without health logs returns none, and why.
func (s *Suite) JudgeReceipt() ([]verdict.HealthDrive, string) {
	of, why := s.evidence.Receipt()
	if why != "" {
		return nil, why
	}
	out, checks := verdict.Receipt(s.Drives, of, s.Spec.Receipt)
	s.out.Checks(func(r *report.Run) *[]report.HealthCheck { return &r.Receipt }, checks)
	return out, ""
}

// close lets the drives go, once the report is written.
func (s *Suite) close() error {
	if s.guard == nil {
		return nil
	}
	err := s.guard.Close()
	s.guard = nil
	return err
}

// JudgePurge is each drive's TestPurge verdict of s (package purgerun),
// each added to the report; why says why there is none.
func JudgePurge(ctx context.Context, s *Suite, logf func(string, ...any)) ([]purgeproof.Result, string) {
	in := purgerun.In{Drives: s.Drives, Plan: s.Plan, Record: s.Cfg.Record, Resumed: s.resume != nil, Ctrls: s.ctrls, Discarder: s.guard, Reader: s.reader, Writing: func(st plan.Step) { live.PurgingAtTheEnd(s.runner, st) }}
	if s.runner != nil {
		in.Landed = func() error { return live.Recorder(s.runner).Landed(kept.File, true) }
	}
	rs, why := purgerun.Judge(ctx, in, logf)
	for _, r := range rs {
		s.out.Add(purgerun.Report(r, s.Drives))
	}
	return rs, why
}

// JudgeFirmware is each drive's TestFirmware steps of s (package fwrun),
// each added to the report; why says why there are none.
func JudgeFirmware(ctx context.Context, s *Suite, logf func(string, ...any)) ([]firmware.Result, string) {
	in := fwrun.In{Drives: s.Drives, Plan: s.Plan, Spec: s.Spec, Results: s.Report.Results, Record: s.Cfg.Record, Resumed: s.resume != nil, Writing: func(st plan.Step) { live.PurgingAtTheEnd(s.runner, st) }}
	if s.reader != nil {
		in.Replay, in.Asked = s.reader.Dir, s.reader.Info.Firmware
	} else {
		in.RunJSON = live.RunJSON(s.runner)
	}
	if s.resume != nil {
		in.Asked = s.resume.prior.Firmware
	}
	rs, why := fwrun.Judge(ctx, in, logf)
	for _, r := range rs {
		s.out.Add(fwrun.Report(r, s.Drives))
	}
	return rs, why
}

// purgeCommands returns what the purge step st sends, exactly as the run
// executes it: st's drives widened by live.PurgeReach, planned with the
// identify data read at setup.
func (s *Suite) purgeCommands(st plan.Step) ([]purge.Step, []error) {
	var infos []device.Info
	for _, d := range live.PurgeReach(s.Drives, st.Drives, st.Purge, s.ctrls) {
		infos = append(infos, s.Drives[d].Info)
	}
	return purge.Plan(infos, st.Purge, s.ctrls)
}

// driveFailures is run.json's drive failures: a live run's so far, a
// replay's as recorded.
func (s *Suite) driveFailures() []record.DriveFailure {
	switch {
	case s.runner != nil:
		return s.runner.Failures()
	case s.reader != nil:
		return s.reader.Info.Failures
	}
	return nil
}
