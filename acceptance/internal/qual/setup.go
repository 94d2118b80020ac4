package qual

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/overtime"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/qual/absent"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/models"
	"github.com/drivequal/drivequal/acceptance/internal/qual/powertest"
	"github.com/drivequal/drivequal/acceptance/internal/qual/purgerun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/qual/runreport"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Setup validates everything a run needs before any subtest starts: the
// spec, the drives and their safety, the replay directory and the plan's
// duration against timeout (0: none). It returns the suite that says what
// the run will do, and every problem found.
func Setup(ctx context.Context, cfg *cmdline.Config, timeout time.Duration, sys device.System, runner fiojob.Runner) (*Run, []error) {
	if len(cfg.Baselines) > 0 {
		return setupWithBaseline(ctx, cfg, timeout, sys, runner)
	}
	if len(cfg.Replays) > 1 {
		return setupFleet(ctx, cfg)
	}
	b := &builder{cfg: cfg, sys: sys, fio: runner, live: cfg.Live()}
	s, errs := b.build(ctx, timeout)
	if s == nil {
		return nil, errs
	}
	return only(s), errs
}

// builder sets up one run: a live run on drives, or a replay of one
// recording.
type builder struct {
	cfg  *cmdline.Config
	sys  device.System
	fio  fiojob.Runner
	live bool
	s    *Suite
	// infos are the drives as inspected; guard holds them.
	infos []device.Info
	guard live.Guard
	exec  *live.Fio
	// online are the host's online CPUs, which fio's jobs are spread over.
	online []int
	// modelChecks says, by drive path, how its model was checked.
	modelChecks map[string]string
	// matched is how a resumed run's drives were matched to the recorded
	// ones (see matchResume); nil before, and for a run not resumed.
	matched   *match.Match
	matchErrs []error
	// absent are the -drives of a resume where nothing is, and
	// Inspect's error of each: drives that may not have come back after
	// the host's power cut (matchResume); refused unless matched so.
	absent     []string
	absentErrs []error
}

func (b *builder) build(ctx context.Context, timeout time.Duration) (*Suite, []error) {
	cfg := b.cfg
	var errs []error
	if b.live && !cfg.SpecGiven && len(specs.BuiltIn()) > 1 {
		// Several built-in specs: the one that names the drives' model.
		var names []string
		for _, p := range cfg.Drives {
			if in, err := b.sys.Inspect(p); err == nil && in.Block && in.Controller != "" {
				names = append(names, in.Model)
			}
		}
		if name, ok := models.ChooseBuiltin(specs.BuiltIn(), specs.Load, names); ok && name != cfg.Spec {
			fmt.Fprintf(os.Stderr, "drivequal: -spec not given: using the built-in spec %s, whose models match the drives (%s)\n", name, strings.Join(names, ", "))
			cfg.Spec = name
		}
	}
	spec, err := specs.Load(cfg.Spec)
	if err != nil {
		var list specs.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				errs = append(errs, e)
			}
		} else {
			errs = append(errs, fmt.Errorf("parsing -spec: %w", err))
		}
		if b.live {
			// The drives' own problems are listed too, with the spec's.
			b.s = &Suite{Cfg: cfg, Report: &report.Run{}}
			errs = append(errs, b.drives(ctx)...)
		}
		return nil, errs
	}
	s := newSuite(cfg, spec)
	b.s = s
	if err := fwrun.Check(cfg, spec); err != nil && b.live {
		errs = append(errs, err)
	}
	s.Report.Started = time.Now().UTC().Format(time.RFC3339)
	if b.live {
		s.Report.Mode = "live"
		if cfg.Capacity != "" {
			if _, ok := spec.Capacity(cfg.Capacity); !ok {
				errs = append(errs, fmt.Errorf("parsing -capacity: %q is not a capacity of %s: use one of %s", cfg.Capacity, spec.File, capacityList(spec)))
			}
		}
		errs = append(errs, b.drives(ctx)...)
		if cfg.Resume && len(errs) == 0 {
			errs = append(errs, b.loadResume()...)
		}
		if !cfg.Resume {
			errs = append(errs, b.checkRecord()...)
		}
	} else {
		s.useSpec(spec, cfg.SpecGiven)
		s.Report.Mode = "replay"
		errs = append(errs, b.replay()...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	b.plan()
	errs = append(errs, PowerLoss(s).Problems()...)
	if err := b.checkScaling(); err != nil {
		errs = append(errs, err)
	}
	if b.live && timeout > 0 {
		if est := s.Estimate().Total + PowerLoss(s).Estimate(); est > timeout {
			err := fmt.Errorf("parsing -timeout: the plan takes about %s but -timeout is %s: run with -timeout=%s",
				est.Round(time.Second), timeout, suggestTimeout(est))
			if cfg.DryRun {
				s.Warnings = append(s.Warnings, "a real run needs a longer -timeout: "+strings.TrimPrefix(err.Error(), "parsing -timeout: "))
			} else {
				errs = append(errs, err)
			}
		}
	}
	b.reportDrives()
	return s, errs
}

// newSuite is a suite judging with spec, before its drives are known.
func newSuite(cfg *cmdline.Config, spec *specs.Spec) *Suite {
	s := &Suite{Cfg: cfg, Spec: spec, Precondition: cfg.Precondition, Report: &report.Run{Precondition: cfg.Precondition}, single: map[string]float64{}}
	s.out = &runreport.Reporter{Run: s.Report, Dir: cfg.Report, DryRun: cfg.DryRun}
	if !cfg.DryRun {
		s.charts = &overtime.Drawer{Dir: func() string { return cmp.Or(cfg.Replay, cfg.Record) }, Report: cfg.Report}
	}
	s.readBacks = &ledger{out: s.out}
	s.useSpec(spec, true)
	return s
}

// drives inspects and checks the drives of a live run, reads their
// health and holds them.
func (b *builder) drives(ctx context.Context) []error {
	s, cfg := b.s, b.cfg
	var errs []error
	version, err := b.fio.Version(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	s.Report.FioVersion = version
	h := host.Identify(ctx)
	h.FioVersion = version
	if v, err := (nvme.CLI{}).Version(ctx); err == nil {
		h.NvmeVersion = v
	}
	s.Report.Host = &h
	b.online, _ = b.sys.OnlineCPUs()
	b.awaitReturn(ctx)
	for _, p := range cfg.Drives {
		info, err := b.sys.Inspect(p)
		if err != nil {
			if cfg.Resume && b.sys.Nothing(p) {
				b.absent, b.absentErrs = append(b.absent, p), append(b.absentErrs, err)
				continue
			}
			errs = append(errs, fmt.Errorf("parsing -drives: %w", err))
			continue
		}
		b.infos = append(b.infos, info)
		d := plan.Drive{Info: info, Capacity: cfg.Capacity}
		switch {
		case s.Spec == nil:
		case d.Capacity == "":
			name, err := device.MatchCapacity(info.Size, deviceCapacities(s.Spec))
			if err != nil {
				errs = append(errs, fmt.Errorf("parsing -drives: %s: %w", p, err))
			}
			d.Capacity = name
		default:
			// -capacity names a capacity: a drive smaller than it is
			// refused, a larger one warned about (device.CheckForced).
			if c, ok := s.Spec.Capacity(cfg.Capacity); ok {
				warn, err := device.CheckForced(info.Size, device.Capacity{Name: c.Name, Bytes: c.Bytes}, deviceCapacities(s.Spec))
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("parsing -capacity: %s: %w", p, err))
				case warn != "":
					s.Warnings = append(s.Warnings, p+" "+warn)
				}
			}
		}
		s.Drives = append(s.Drives, d)
	}
	if s.Spec != nil {
		// A drive of another model is refused before anything is checked
		// further or written.
		checks, anyway, merrs := models.Check(s.Spec, b.infos, cfg.AnyModel)
		b.modelChecks, s.Report.AnyModel = checks, anyway
		errs = append(errs, merrs...)
	}
	if cfg.Resume && len(errs) == 0 {
		// In the recorded order before anything is read or held by index.
		b.matchResume()
	}
	for k, p := range b.absent {
		if b.matched == nil || !slices.Contains(slices.Collect(maps.Values(b.matched.Absent)), p) {
			errs = append(errs, fmt.Errorf("parsing -drives: %w", b.absentErrs[k]))
		}
	}
	// What is there: an absent drive is neither checked, identified,
	// purged, flashed nor held.
	infos := absent.Present(b.infos, s.Drives)
	opt := device.Options{Destructive: cfg.Destructive || cfg.DryRun, WipeSignatures: cfg.WipeSignatures}
	for _, r := range b.sys.Check(infos, opt) {
		errs = append(errs, r)
	}
	if s.Spec != nil && len(errs) == 0 {
		// A format or sanitize reaches further than one namespace on many
		// controllers: read what each controller says before planning it.
		method := s.Spec.Precondition.Purge
		if method == purge.Format || method == purge.Sanitize {
			ctrls, idErrs := purge.Identify(ctx, nvme.CLI{}, infos)
			for _, e := range idErrs {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%v; its namespaces are discarded instead of %s", e, method))
			}
			s.ctrls = ctrls
		}
		_, perrs := purge.Plan(infos, method, s.ctrls)
		errs = append(errs, perrs...)
		// A firmware commit reaches every namespace of its controller.
		errs = append(errs, fwrun.Refuse(cfg, s.Spec, infos)...)
		if cfg.Firmware != "" && s.Spec.Firmware != nil && s.Spec.Firmware.Slot != 0 {
			// The slot is checked against what each controller says; one
			// that does not answer is not checked (its commands fail).
			ctrls := s.ctrls
			if ctrls == nil {
				ctrls, _ = purge.Identify(ctx, nvme.CLI{}, infos)
			}
			errs = append(errs, fwrun.CheckSlots(cfg, s.Spec, infos, ctrls)...)
		}
	}
	var monitor *live.Monitor
	if s.Spec != nil && len(errs) == 0 {
		// A drive with a critical warning is refused before anything is
		// written to it.
		var herrs []error
		if cfg.Resume {
			// A resumed run has written to its drives: one that raised a
			// critical warning is disqualified (the recording holds the
			// warning as its failure, or the run records it), not refused,
			// and the others go on.
			monitor, herrs = live.ReadHealthResumed(ctx, nvme.CLI{}, s.Drives, s.Spec.Health)
		} else {
			monitor, herrs = live.ReadHealth(ctx, nvme.CLI{}, s.Drives, s.Spec.Health)
		}
		errs = append(errs, herrs...)
	}
	if len(errs) == 0 && !cfg.DryRun {
		// Own the drives for the whole run: the kernel refuses a second
		// exclusive opener (another drivequal run) and a mount from now on.
		holds, refusals := b.sys.Hold(infos)
		for _, r := range refusals {
			errs = append(errs, r)
		}
		if holds != nil {
			b.guard = live.Hold(b.sys, holds)
		}
	}
	if cfg.DryRun && !cfg.Destructive {
		s.Warnings = append(s.Warnings, "a real run needs -destructive: everything on the drives above is destroyed")
	}
	s.guard = b.guard
	b.exec = &live.Fio{Dir: cfg.Record, Runner: b.fio, Ctrls: s.ctrls, Discarder: b.guard}
	s.runner = &live.Runner{Spec: s.Spec, Drives: s.Drives, Exec: b.exec,
		Record: cfg.Record, Sys: b.sys, Guard: b.guard, Monitor: monitor, Ctrls: s.ctrls, Sink: s.out, ReadBack: s.readBacks.judge}
	s.evidence = s.runner
	return errs
}

// awaitReturn waits (absent.Await), on a resume of a run that cuts the
// host's power, for each -drives path where nothing is yet.
func (b *builder) awaitReturn(ctx context.Context) {
	cfg, spec := b.cfg, b.s.Spec
	if cfg.Resume && cfg.PowerCutHost && spec != nil && spec.PowerLoss != nil && !cfg.DryRun {
		absent.Await(ctx, b.sys, cfg.Drives, spec.PowerLoss.ReadyWithin, os.Stderr)
	}
}

// replay reads the recording a replay judges: its run.json, the spec
// recorded with it and its drives.
func (b *builder) replay() []error {
	s, cfg := b.s, b.cfg
	if cfg.Replay == "" {
		cfg.Replay = filepath.Join(cfg.Root, "fixtures", s.Spec.Name)
		if st, err := os.Stat(cfg.Replay); err != nil || !st.IsDir() {
			return []error{fmt.Errorf("parsing -replay: spec %s has no recorded outputs at %s: give -drives to measure drives, or -replay=DIR with a directory written by -record", s.Spec.Name, cfg.Replay)}
		}
	}
	s.reader = &recording.Reader{Dir: cfg.Replay}
	s.evidence = s.reader
	if st, err := os.Stat(cfg.Replay); err != nil || !st.IsDir() {
		return nil // -replay's own check has said so
	}
	if !recdir.HasRecordings(cfg.Replay) && !recdir.HasVerify(cfg.Replay) && !record.Exists(cfg.Replay, powertest.Dir+"/") && !fwrun.Recorded(cfg.Replay) {
		if sub := recdir.Within(cfg.Replay); sub != "" {
			return []error{fmt.Errorf("parsing -replay: %s holds no recorded outputs, %s does: give -replay=%s", cfg.Replay, sub, sub)}
		}
		return []error{fmt.Errorf("parsing -replay: %s holds no recorded outputs (no TestSingleDrive/**.json or TestScaling/**.json, no verify pass in run.json, no power-loss cycle, no %s): give a directory written by -record", cfg.Replay, fwrun.File)}
	}
	info := record.Run{Precondition: plan.Full}
	path := filepath.Join(cfg.Replay, "run.json")
	if data, err := record.ReadFile(cfg.Replay, "run.json"); err == nil {
		if err := json.Unmarshal(data, &info); err != nil {
			return []error{fmt.Errorf("parsing -replay: %s: %v: fix or remove the file", path, err)}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return []error{fmt.Errorf("parsing -replay: %w", err)}
	}
	escapeRecorded(&info)
	if info.Format > record.Format {
		return []error{fmt.Errorf("parsing -replay: %s has format %d, newer than this drivequal reads (%d): replay it with the drivequal that recorded it", path, info.Format, record.Format)}
	}
	switch info.Precondition {
	case plan.Full, plan.Quick, plan.None:
	default:
		return []error{fmt.Errorf("parsing -replay: %s: precondition %q is not full, quick or none", path, info.Precondition)}
	}
	if info.SpecText != "" && !cfg.SpecGiven {
		// A replay judges with the spec the run was made with.
		spec, err := specs.Parse(path+": spec_text ("+info.SpecFile+")", []byte(info.SpecText))
		if err != nil {
			return []error{fmt.Errorf("parsing -replay: the spec recorded in %s does not load: %v: give -spec to judge with another", path, err)}
		}
		spec.Name, spec.File = info.SpecName, info.SpecFile
		s.useSpec(spec, false)
	}
	s.reader.Info = info
	s.recorded = info
	if info.Mode == "record" && !info.Reconstructed {
		s.checkFiles(cfg.Replay, info)
	}
	// A replay judges what was recorded: its preconditioning decides.
	s.Precondition = info.Precondition
	r := s.Report
	r.Precondition, r.FioVersion, r.SteadyState, r.Resumptions = info.Precondition, info.FioVersion, info.Steady, info.Resumptions
	if info.Host.Name() != "" {
		h := info.Host
		r.Host = &h
	}
	if !cfg.SpecGiven {
		// Judged with the recorded spec: the drives -any-model let
		// through are still not of its models.
		r.AnyModel = info.AnyModel
	}
	r.Reconstructed = info.Reconstructed
	if info.Reconstructed {
		r.ReconstructedFrom = info.ReconstructedFrom
		if r.ReconstructedFrom == "" {
			r.ReconstructedFrom = s.Spec.Source
		}
	}
	for _, d := range info.Drives {
		s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: d.Path, Model: d.Model, Serial: d.Serial,
			Firmware: d.Firmware, Size: d.Bytes, NUMANode: d.NUMANode}, Capacity: d.Capacity})
	}
	// Recorded outputs with no drive identity still replay, on placeholders.
	for _, c := range s.Spec.Capacities {
		if len(s.drivesOf(c.Name)) == 0 {
			s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: "recorded " + c.Name + " drive", NUMANode: -1, Size: c.Bytes}, Capacity: c.Name, Placeholder: true})
		}
	}
	if sc := s.Spec.Scaling.Capacity; sc != "" {
		have := len(s.drivesOf(sc))
		want := slices.Max(append([]int{0}, s.Spec.Scaling.Drives...))
		for i := have; i < want; i++ {
			s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: fmt.Sprintf("recorded %s drive %d", sc, i+1), NUMANode: -1}, Capacity: sc, Placeholder: true})
		}
	}
	return nil
}

// plan makes what running the cells needs once the spec, the drives and
// the evidence are known: the planner and, for a live run, the plan of
// the cells -run and -skip select.
func (b *builder) plan() {
	s := b.s
	s.Planner = &plan.Planner{Spec: s.Spec, Precondition: s.Precondition, Runtime: s.Cfg.Runtime, Drives: s.Drives, Online: b.online}
	if s.readBacks != nil {
		s.readBacks.drives = s.Drives
	}
	if !b.live {
		r := s.reader
		r.Drives, r.Planner, r.Cells = s.Drives, s.Planner, s.allCells
		s.has, s.recordedOnly = r.Has, true
		return
	}
	if !s.Cfg.DryRun {
		// Each fill's pattern is this run's alone (plan.FillID).
		s.Planner.Seed = rand.Uint64()
	}
	var cells []plan.Cell
	for _, c := range s.allCells() {
		if s.Cfg.Selected(c.Test) {
			cells = append(cells, c)
		}
	}
	s.Planner.Verify = s.verifyDrives()
	s.Plan = s.Planner.Build(cells)
	if s.Precondition != plan.None && s.Spec.Precondition.FillPasses > 0 {
		s.Planner.AddVerify(&s.Plan, s.verifyDrives())
	}
	fwrun.Add(&s.Plan, s.Cfg, s.Spec, s.Drives)
	s.Planner.AddPurgeProof(&s.Plan, purgerun.Mode(s.Cfg, s.Spec, s.Drives), purgerun.Selected(s.Cfg, s.Drives))
	s.Warnings = append(s.Warnings, s.steadyWarnings()...)
	if s.resume != nil {
		b.resumePlan()
		if b.exec != nil {
			b.exec.PrepareDir = s.resume.prepareDir()
			b.exec.SanitizeSent = s.resume.prior.SanitizeSent
		}
	}
	if r := s.runner; r != nil {
		r.Precondition, r.Planner, r.Plan = s.Precondition, s.Planner, s.Plan
		if s.resume != nil {
			r.Resume = s.resume.evidence()
		}
	}
}

// checkScaling refuses drive counts the run cannot do.
func (b *builder) checkScaling() error {
	s := b.s
	if s.Cfg.Scaling == nil || !b.live {
		return nil
	}
	sc := s.Spec.Scaling.Capacity
	if sc == "" {
		return fmt.Errorf("parsing -scaling: spec %s has no [scaling] section: drop -scaling or add one to the spec", s.Spec.File)
	}
	if have, want := len(s.drivesOf(sc)), slices.Max(s.Cfg.Scaling); want > have {
		return fmt.Errorf("parsing -scaling: %d drives asked for but -drives has %d of capacity %s: give more drives or smaller counts", want, have, sc)
	}
	return nil
}

// reportDrives lists the run's drives in the report: their identity, a
// live drive's PCIe link and the CPUs its fio jobs are pinned to.
func (b *builder) reportDrives() {
	s := b.s
	s.Report.Drives = nil
	for i, d := range s.Drives {
		if d.Placeholder {
			continue
		}
		rd := report.Drive{Path: d.Path, Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Bytes: d.Size,
			Capacity: d.Capacity, NUMANode: d.NUMANode, ModelCheck: b.modelChecks[d.Path]}
		rd.Transport, rd.Address, rd.Subsystem = d.Transport, d.Address, d.Subsystem
		for _, p := range d.Paths {
			rd.Paths = append(rd.Paths, p.String())
		}
		if !b.live {
			// A replay names what the run checked of the drive's model
			// and kept of it for its supplier, as the run did.
			for _, rec := range s.recorded.Drives {
				if rec.Path == d.Path {
					rd.ModelCheck, rd.Failure = rec.ModelCheck, rec.Failure
				}
			}
		}
		if b.live {
			if p, ok, _ := b.sys.PCIePath(d.Controller); ok && !d.Fabric() {
				rd.PCI, rd.Link = p[0].PCI, p.String()
			}
			mine := s.drivesOf(d.Capacity)
			if t := s.Planner.Targets(mine); len(t) > 0 {
				rd.CPUs = t[slices.Index(mine, i)].CPUs
			}
		}
		s.Report.Drives = append(s.Report.Drives, rd)
	}
}

// useSpec makes spec the one the run judges with; given says it was chosen
// with -spec (or measured live) rather than recorded with the run.
func (s *Suite) useSpec(spec *specs.Spec, given bool) {
	s.Spec = spec
	judgedBy(s.Report, spec, given)
}

// judgedBy says in r that spec judges the run; given says it was chosen
// with -spec (or measured live) rather than recorded with the run.
func judgedBy(r *report.Run, spec *specs.Spec, given bool) {
	r.Spec, r.Source = spec.Model, spec.Source
	r.JudgedBy = &report.SpecRef{Model: spec.Model, File: spec.File, SHA256: spec.SHA256(), Recorded: !given}
	r.Workloads, r.Capacities, r.Scaling = nil, nil, nil
	for _, w := range spec.Workloads {
		r.Workloads = append(r.Workloads, w.Name)
	}
	for _, c := range spec.Capacities {
		r.Capacities = append(r.Capacities, c.Name)
	}
	if sc := spec.Scaling; sc.Capacity != "" {
		r.Scaling = &report.Scaling{Capacity: sc.Capacity, Baseline: sc.Baseline, Tolerance: sc.Tolerance, Drives: sc.Drives}
	}
}

func deviceCapacities(spec *specs.Spec) []device.Capacity {
	out := make([]device.Capacity, len(spec.Capacities))
	for i, c := range spec.Capacities {
		out[i] = device.Capacity{Name: c.Name, Bytes: c.Bytes}
	}
	return out
}

func capacityList(spec *specs.Spec) string {
	var names []string
	for _, c := range spec.Capacities {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// suggestTimeout rounds est plus a quarter up to a whole hour, or to 10
// minutes for short plans.
func suggestTimeout(est time.Duration) time.Duration {
	want := est + est/4 + time.Minute
	step := time.Hour
	if want < 2*time.Hour {
		step = 10 * time.Minute
	}
	return (want + step - 1).Truncate(step)
}

// verifyDrives lists the drives whose TestIntegrity subtest is selected.
func (s *Suite) verifyDrives() []int {
	var drives []int
	for i, d := range s.Drives {
		if s.Cfg.Selected(verdict.IntegrityTest(d.Path)) {
			drives = append(drives, i)
		}
	}
	return drives
}

// steadyWarnings says when the spec's bounds leave no room to show steady
// state: the random cells would all be INCONCLUSIVE.
func (s *Suite) steadyWarnings() []string {
	if s.Precondition == plan.None {
		return nil
	}
	for _, st := range s.Plan.Steps {
		if st.Kind != plan.StepRandom && st.Kind != plan.StepTopUp {
			continue
		}
		if need := time.Duration(st.Rule.Window) * st.Round; st.Est < need {
			key := "random_runtime"
			if st.Kind == plan.StepTopUp {
				key = "topup_runtime"
			}
			return []string{fmt.Sprintf("%s: step %d (%s) is bounded at %s, shorter than the steady-state window of %d rounds of %s (%s): steady state cannot be shown and its cells will be INCONCLUSIVE; raise %s",
				s.Spec.File, st.N, st.Name, st.Est, st.Rule.Window, st.Round, need, key)}
		}
	}
	return nil
}

// escapeRecorded escapes the control characters (report.Escape) of the
// names a recording gives that are printed in the test log, the
// testcases' attributes and junit.xml: its host's, its drives' and its
// tools' versions.
func escapeRecorded(info *record.Run) {
	h := &info.Host
	for _, f := range []*string{&h.Hostname, &h.MachineID, &h.ProductSerial, &h.Kernel, &h.CPUModel, &h.FioVersion, &h.NvmeVersion,
		&info.FioVersion, &info.SpecName, &info.SpecFile, &info.BootID} {
		*f = report.Escape(*f)
	}
	for i := range info.Drives {
		d := &info.Drives[i]
		for _, f := range []*string{&d.Path, &d.Model, &d.Serial, &d.Firmware, &d.Capacity} {
			*f = report.Escape(*f)
		}
	}
}
