package qual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Suite is one qualification run: a validated configuration, the drives,
// the plan and the report being written.
type Suite struct {
	Cfg     *Config
	Spec    *specs.Spec
	Drives  []plan.Drive
	Planner *plan.Planner
	// Plan is what a live run executes, step by step, for the cells the
	// -run pattern selects.
	Plan plan.Plan
	// Progress, when set, receives progress lines on long steps (the
	// operator's terminal).
	Progress     io.Writer
	Exec         Executor
	Report       *report.Run
	Precondition string // the preconditioning the measurements had
	// Warnings are things the operator should know that do not stop the run.
	Warnings []string
	// Members are the hosts' runs of a fleet replay (-replay=DIR1,DIR2,...),
	// each judged as its own suite; nil for one run.
	Members []Member
	// Baselines are the runs of -baseline, each set up as a replay; nil
	// without it.
	Baselines []BaselineRun
	// parent is the fleet suite of a member, hostName its name there.
	parent   *Suite
	hostName string

	// guard holds every target exclusively from setup until Close.
	guard Guard

	mu     sync.Mutex
	states []plan.State
	// cursor is the next step of Plan to run; done holds each measured
	// cell's output until its subtest judges it.
	cursor int
	done   map[string]*measured
	// lastWrite is when each drive last wrote; basis the steady-state
	// records of its current state.
	lastWrite []time.Time
	basis     [][]report.Steady
	// prefetched says, by cell kind, that a replay has read and parsed
	// those recordings ahead;
	// written and wroteOnce what the report files on disk hold.
	prefetched map[string]bool
	written    [3]int
	wroteOnce  bool
	// logf is where progress goes outside a subtest.
	logf   func(string, ...any)
	single map[string]float64 // "capacity/workload" → single-drive actual
	// broken says why a drive must not be used again (a failed
	// preparation step, a changed identity); indexed like Drives.
	broken []unusableDrive
	info   record.Run                 // run.json of a live run, rewritten as tests finish
	ctrls  map[string]nvme.Controller // identify data of the drives' NVMe controllers
	sys    device.System
	// nvme reads the drives' health; health and healthRaw are what it
	// read (raw: nvme-cli's outputs, kept with the recording).
	nvme      nvme.CLI
	health    []driveHealth
	healthRaw map[string][]byte
	// integrity is each drive's verify verdict so far, for TestIntegrity.
	integrity []IntegrityDrive
	// replayBroken marks, once, the drives that failed a replay's
	// recorded verify passes.
	replayBroken sync.Once
	// resume is what a resumed run (-resume) took over; nil otherwise.
	resume *resumeState
}

// Setup validates everything a run needs before any subtest starts: the
// spec, the drives and their safety, the replay directory and the plan's
// duration against timeout (0: none). It returns every problem found.
func Setup(ctx context.Context, cfg *Config, timeout time.Duration, sys device.System, runner fiojob.Runner) (*Suite, []error) {
	if len(cfg.Baselines) > 0 {
		return setupWithBaseline(ctx, cfg, timeout, sys, runner)
	}
	if len(cfg.Replays) > 1 {
		return setupFleet(ctx, cfg)
	}
	var errs []error
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
		if cfg.Live() {
			// The drives' own problems are listed too, with the spec's.
			s := &Suite{Cfg: cfg, Report: &report.Run{}}
			errs = append(errs, s.setupLive(ctx, sys, runner)...)
		}
		return nil, errs
	}
	s := &Suite{Cfg: cfg, Spec: spec, Precondition: cfg.Precondition, single: map[string]float64{}}
	if cfg.Capacity != "" && cfg.Live() {
		if _, ok := spec.Capacity(cfg.Capacity); !ok {
			errs = append(errs, fmt.Errorf("parsing -capacity: %q is not a capacity of %s: use one of %s", cfg.Capacity, spec.File, capacityList(spec)))
		}
	}
	s.Report = &report.Run{Precondition: cfg.Precondition}
	s.useSpec(spec, !cfg.Live() && cfg.SpecGiven)
	s.Report.Started = time.Now().UTC().Format(time.RFC3339)
	if cfg.Live() {
		s.Report.Mode = "live"
		errs = append(errs, s.setupLive(ctx, sys, runner)...)
		if cfg.Resume && len(errs) == 0 {
			errs = append(errs, s.loadResume()...)
		}
	} else {
		s.Report.Mode = "replay"
		errs = append(errs, s.setupReplay()...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var online []int
	if cfg.Live() {
		online, _ = sys.OnlineCPUs()
	}
	s.planRun(online)
	if s.resume != nil {
		s.resumePlan()
	}
	if err := s.checkScaling(); err != nil {
		errs = append(errs, err)
	}
	if cfg.Live() && timeout > 0 {
		if est := s.Estimate().Total; est > timeout {
			err := fmt.Errorf("parsing -timeout: the plan takes about %s but -timeout is %s: run with -timeout=%s",
				est.Round(time.Second), timeout, suggestTimeout(est))
			if cfg.DryRun {
				s.Warnings = append(s.Warnings, "a real run needs a longer -timeout: "+strings.TrimPrefix(err.Error(), "parsing -timeout: "))
			} else {
				errs = append(errs, err)
			}
		}
	}
	s.fillReportDrives()
	return s, errs
}

// planRun sets up what running the cells needs once the spec, the drives
// and the executor are known: the planner, each drive's state and, for a
// live run, the plan of the cells -run and -skip select.
func (s *Suite) planRun(online []int) {
	s.Planner = &plan.Planner{Spec: s.Spec, Precondition: s.Precondition, Runtime: s.Cfg.Runtime, Drives: s.Drives, Online: online}
	if s.Cfg.Live() && !s.Cfg.DryRun {
		// Each fill's pattern is this run's alone (plan.FillID).
		s.Planner.Seed = rand.Uint64()
	}
	s.states = make([]plan.State, len(s.Drives))
	s.lastWrite = make([]time.Time, len(s.Drives))
	s.basis = make([][]report.Steady, len(s.Drives))
	s.done = map[string]*measured{}
	if r, ok := s.Exec.(Replay); ok {
		r.Shared = s.info.Shared
		s.Exec = r
	}
	if s.Cfg.Live() {
		var cells []plan.Cell
		for _, c := range s.allCells() {
			if s.Cfg.Selected(c.Test) {
				cells = append(cells, c)
			}
		}
		s.Planner.Verify = s.verifyDrives()
		s.Plan = s.Planner.Build(cells)
		s.addVerify()
		s.Warnings = append(s.Warnings, s.steadyWarnings()...)
	}
}

// useSpec makes spec the one the run judges with; given says it was chosen
// with -spec rather than recorded with the run.
func (s *Suite) useSpec(spec *specs.Spec, given bool) {
	s.Spec = spec
	s.Report.Spec, s.Report.Source = spec.Model, spec.Source
	s.Report.JudgedBy = &report.SpecRef{Model: spec.Model, File: spec.File, SHA256: spec.SHA256(), Recorded: !s.Cfg.Live() && !given}
	if s.Cfg.Live() {
		s.Report.JudgedBy.Recorded = false
	}
	s.Report.Workloads, s.Report.Capacities, s.Report.Scaling = nil, nil, nil
	for _, w := range spec.Workloads {
		s.Report.Workloads = append(s.Report.Workloads, w.Name)
	}
	for _, c := range spec.Capacities {
		s.Report.Capacities = append(s.Report.Capacities, c.Name)
	}
	if sc := spec.Scaling; sc.Capacity != "" {
		s.Report.Scaling = &report.Scaling{Capacity: sc.Capacity, Baseline: sc.Baseline, Tolerance: sc.Tolerance, Drives: sc.Drives}
	}
}

// Start is called once every check has passed, before the first cell: a
// live run writes run.json into the record directory, so that a replay of
// it knows the drives, the fio version and the preconditioning.
func (s *Suite) Start() error {
	if !s.Cfg.Live() || s.Cfg.DryRun {
		return nil
	}
	if s.resume != nil {
		if err := s.startResume(); err != nil {
			return fmt.Errorf("parsing -record: %w", err)
		}
		return nil
	}
	if err := s.writeRunInfo(); err != nil {
		return fmt.Errorf("parsing -record: %w", err)
	}
	if err := s.writeHealthRecords(); err != nil {
		return fmt.Errorf("parsing -record: %w", err)
	}
	return nil
}

func (s *Suite) writeRunInfo() error {
	s.info = record.Run{Format: record.Format, Spec: s.Spec.Model, SpecName: s.Spec.Name, SpecFile: s.Spec.File,
		SpecSHA256: s.Spec.SHA256(), SpecText: string(s.Spec.Text), Mode: "record",
		FioVersion: s.Report.FioVersion, Precondition: s.Precondition, Drives: s.Report.Drives}
	if s.Report.Host != nil {
		s.info.Host = *s.Report.Host
	}
	s.identityRecord()
	if err := os.MkdirAll(s.Cfg.Record, 0o755); err != nil {
		return err
	}
	// The preparation records of an older run in the same directory are not
	// this run's: run.json no longer describes them.
	for _, dir := range []string{"prepare", "health"} {
		if err := os.RemoveAll(filepath.Join(s.Cfg.Record, dir)); err != nil {
			return err
		}
	}
	return s.saveRunInfo()
}

// saveRunInfo rewrites run.json; callers hold s.mu or run before the cells.
func (s *Suite) saveRunInfo() error {
	data, err := json.MarshalIndent(s.info, "", "  ")
	if err != nil {
		return err
	}
	return report.WriteFileAtomic(filepath.Join(s.Cfg.Record, "run.json"), append(data, '\n'))
}

// forget removes what an older run recorded for test, before this run
// records it again.
func (s *Suite) forget(test string) error { return record.Forget(s.Cfg.Record, test) }

// recorded adds test to run.json's tests once its output is on disk.
func (s *Suite) recorded(test string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.info.Tests, test) {
		return nil
	}
	s.info.Tests = append(s.info.Tests, test)
	return s.saveRunInfo()
}

func (s *Suite) setupLive(ctx context.Context, sys device.System, runner fiojob.Runner) []error {
	var errs []error
	cfg := s.Cfg
	version, err := runner.Version(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	s.Report.FioVersion = version
	h := host.Identify(ctx)
	h.FioVersion = version
	if v, err := s.nvme.Version(ctx); err == nil {
		h.NvmeVersion = v
	}
	s.Report.Host = &h
	s.sys = sys
	var infos []device.Info
	for _, p := range cfg.Drives {
		info, err := sys.Inspect(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("parsing -drives: %w", err))
			continue
		}
		infos = append(infos, info)
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
			if c, ok := s.Spec.Capacity(cfg.Capacity); ok && !device.Comparable(info.Size, c.Bytes) {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s holds %s bytes, not the %s bytes of %s: its figures are not comparable with the spec's",
					p, report.Thousands(float64(info.Size)), report.Thousands(float64(c.Bytes)), c.Name))
			}
		}
		s.Drives = append(s.Drives, d)
	}
	opt := device.Options{Destructive: cfg.Destructive || cfg.DryRun, WipeSignatures: cfg.WipeSignatures}
	for _, r := range sys.Check(infos, opt) {
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
	}
	if s.Spec != nil && len(errs) == 0 {
		// A drive with a critical warning is refused before anything is
		// written to it.
		errs = append(errs, s.readHealth(ctx)...)
	}
	if len(errs) == 0 && !cfg.DryRun {
		// Own the drives for the whole run: the kernel refuses a second
		// exclusive opener (another drivequal run) and a mount from now on.
		holds, refusals := sys.Hold(infos)
		for _, r := range refusals {
			errs = append(errs, r)
		}
		if holds != nil {
			s.guard = held{sys: sys, holds: holds}
		}
	}
	s.Exec = &Live{Dir: cfg.Record, Runner: runner, Ctrls: s.ctrls, Discarder: s.guard}
	if cfg.DryRun && !cfg.Destructive {
		s.Warnings = append(s.Warnings, "a real run needs -destructive: everything on the drives above is destroyed")
	}
	return errs
}

func (s *Suite) setupReplay() []error {
	cfg := s.Cfg
	if cfg.Replay == "" {
		cfg.Replay = filepath.Join(cfg.Root, "fixtures", s.Spec.Name)
		if st, err := os.Stat(cfg.Replay); err != nil || !st.IsDir() {
			return []error{fmt.Errorf("parsing -replay: spec %s has no recorded outputs at %s: give -drives to measure drives, or -replay=DIR with a directory written by -record", s.Spec.Name, cfg.Replay)}
		}
	}
	s.Exec = Replay{Dir: cfg.Replay}
	if st, err := os.Stat(cfg.Replay); err != nil || !st.IsDir() {
		return nil // -replay's own check has said so
	}
	if !hasRecordings(cfg.Replay) && !hasVerify(cfg.Replay) {
		return []error{fmt.Errorf("parsing -replay: %s holds no recorded outputs (no TestSingleDrive/**.json or TestScaling/**.json, no verify pass in run.json): give a directory written by -record", cfg.Replay)}
	}
	info := record.Run{Precondition: plan.Full}
	path := filepath.Join(cfg.Replay, "run.json")
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &info); err != nil {
			return []error{fmt.Errorf("parsing -replay: %s: %v: fix or remove the file", path, err)}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return []error{fmt.Errorf("parsing -replay: %w", err)}
	}
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
	s.info = info
	// A replay judges what was recorded: its preconditioning decides.
	s.Precondition = info.Precondition
	s.Report.Precondition = info.Precondition
	s.Report.FioVersion = info.FioVersion
	s.Report.SteadyState = info.Steady
	s.Report.Resumptions = info.Resumptions
	if info.Host.Name() != "" {
		h := info.Host
		s.Report.Host = &h
	}
	s.Report.Reconstructed = info.Reconstructed
	if info.Reconstructed {
		s.Report.ReconstructedFrom = info.ReconstructedFrom
		if s.Report.ReconstructedFrom == "" {
			s.Report.ReconstructedFrom = s.Spec.Source
		}
	}
	for _, d := range info.Drives {
		s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: d.Path, Model: d.Model, Serial: d.Serial,
			Firmware: d.Firmware, Size: d.Bytes, NUMANode: d.NUMANode}, Capacity: d.Capacity})
	}
	// Recorded outputs with no drive identity still replay, on placeholders.
	for _, c := range s.Spec.Capacities {
		if len(s.drivesOf(c.Name)) == 0 {
			s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: "recorded " + c.Name + " drive", NUMANode: -1, Size: c.Bytes}, Capacity: c.Name})
		}
	}
	if sc := s.Spec.Scaling.Capacity; sc != "" {
		have := len(s.drivesOf(sc))
		want := slices.Max(append([]int{0}, s.Spec.Scaling.Drives...))
		for i := have; i < want; i++ {
			s.Drives = append(s.Drives, plan.Drive{Info: device.Info{Path: fmt.Sprintf("recorded %s drive %d", sc, i+1), NUMANode: -1}, Capacity: sc})
		}
	}
	return nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// hasRecordings reports whether dir holds at least one recorded measurement.
// hasVerify reports whether dir's run.json lists a verify pass: a run
// whose drives all failed the read-back measured nothing, and its
// recording is still the evidence of TestIntegrity.
func hasVerify(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return false
	}
	var info struct {
		Verify []json.RawMessage `json:"verify"`
	}
	return json.Unmarshal(data, &info) == nil && len(info.Verify) > 0
}

func hasRecordings(dir string) bool {
	found := false
	for _, top := range []string{"TestSingleDrive", "TestScaling"} {
		filepath.WalkDir(filepath.Join(dir, top), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				found = true
				return fs.SkipAll
			}
			return nil
		})
	}
	return found
}

// checkScaling refuses drive counts the run cannot do.
func (s *Suite) checkScaling() error {
	if s.Cfg.Scaling == nil || !s.Cfg.Live() {
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

func (s *Suite) fillReportDrives() {
	s.Report.Drives = nil
	for i, d := range s.Drives {
		if !s.Cfg.Live() && strings.HasPrefix(d.Path, "recorded ") {
			continue
		}
		rd := report.Drive{Path: d.Path, Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Bytes: d.Size,
			Capacity: d.Capacity, NUMANode: d.NUMANode}
		if s.Cfg.Live() {
			if p, ok, _ := s.sys.PCIePath(d.Controller); ok {
				rd.PCI, rd.Link = p[0].PCI, p.String()
			}
		}
		if s.Planner != nil && s.Cfg.Live() {
			if t := s.Planner.Targets(s.drivesOf(d.Capacity)); len(t) > 0 {
				for j, idx := range s.drivesOf(d.Capacity) {
					if idx == i {
						rd.CPUs = t[j].CPUs
					}
				}
			}
		}
		s.Report.Drives = append(s.Report.Drives, rd)
	}
}

// drivesOf lists the indices of the drives judged as capacity name.
func (s *Suite) drivesOf(name string) []int {
	var out []int
	for i, d := range s.Drives {
		if d.Capacity == name {
			out = append(out, i)
		}
	}
	return out
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

// CapacityCells is one capacity's single-drive cells in plan order.
type CapacityCells struct {
	Capacity specs.Capacity
	// Skip, when set, says why the capacity is not measured.
	Skip  string
	Cells []plan.Cell
}

// SingleCells lists TestSingleDrive's cells, capacity by capacity in the
// spec's order, each capacity's workloads in plan order.
func (s *Suite) SingleCells() []CapacityCells {
	var out []CapacityCells
	for _, c := range s.Spec.Capacities {
		cc := CapacityCells{Capacity: c}
		drives := s.drivesOf(c.Name)
		if len(drives) == 0 {
			cc.Skip = fmt.Sprintf("no drive given is a %s drive (drives: %s); use -capacity=%s to judge a drive as this capacity", c.Name, s.driveSummary(), c.Name)
			out = append(out, cc)
			continue
		}
		for _, w := range s.Planner.Order(s.Spec.Workloads) {
			need, twin := s.Planner.Need(w)
			test := "TestSingleDrive/" + c.Name + "/" + specs.SubtestName(w.Name)
			if !s.inRecording(test) {
				continue
			}
			cc.Cells = append(cc.Cells, plan.Cell{Kind: report.KindSingle, Test: test,
				Capacity: c, Workload: w, Drives: drives[:1], Need: need, Twin: twin, Skip: s.noFigure(c, w)})
		}
		if len(cc.Cells) == 0 && !s.Cfg.Live() {
			continue // a replay lists only what was recorded
		}
		out = append(out, cc)
	}
	return out
}

// ScalingStep is one drive count's cells.
type ScalingStep struct {
	N     int
	Cells []plan.Cell
}

// ScalingCells lists TestScaling's cells: for each drive count, each workload
// in plan order with the spec's scaling overrides.
func (s *Suite) ScalingCells() []ScalingStep {
	sc, ok := s.Spec.Capacity(s.Spec.Scaling.Capacity)
	if !ok {
		return nil
	}
	drives := s.drivesOf(sc.Name)
	counts := s.Cfg.Scaling
	if counts == nil {
		for _, n := range s.Spec.Scaling.Drives {
			if n <= len(drives) {
				counts = append(counts, n)
			}
		}
	}
	var out []ScalingStep
	for _, n := range counts {
		if n > len(drives) {
			continue
		}
		st := ScalingStep{N: n}
		for _, w := range s.Planner.Order(s.Spec.Workloads) {
			need, twin := s.Planner.Need(w)
			test := fmt.Sprintf("TestScaling/%d_drives/%s", n, specs.SubtestName(w.Name))
			if !s.inRecording(test) {
				continue
			}
			skip := s.noFigure(sc, w)
			if w.Metric.LowerIsBetter() {
				skip = fmt.Sprintf("%s: a latency is judged drive by drive, not summed over N drives: its cells are in TestSingleDrive", w.Name)
			}
			st.Cells = append(st.Cells, plan.Cell{Kind: report.KindScaling, Test: test,
				Capacity: sc, Workload: s.Spec.ForScaling(w), Drives: drives[:n], Need: need, Twin: twin, Skip: skip})
		}
		if len(st.Cells) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// inRecording reports whether a replay holds test: listed in run.json's
// tests (format 2), or else recorded on disk. A live run holds every test.
func (s *Suite) inRecording(test string) bool {
	r, ok := s.Exec.(Replay)
	if !ok {
		return true
	}
	if slices.Contains(s.info.Unmeasured, test) {
		return true // failed unmeasured: the replay fails it the same way
	}
	if len(s.info.Tests) > 0 {
		return slices.Contains(s.info.Tests, test)
	}
	_, err := os.Stat(r.RawPath(test))
	return err == nil
}

// noFigure says why workload w is not measured at capacity c, or "".
func (s *Suite) noFigure(c specs.Capacity, w specs.Workload) string {
	if _, ok := c.Spec[w.Name]; ok {
		return ""
	}
	return fmt.Sprintf("%s: %s gives no figure for %s at %s, so the cell is not measured", w.Name, s.Spec.File, w.Name, c.Name)
}

func (s *Suite) driveSummary() string {
	var parts []string
	for _, d := range s.Drives {
		parts = append(parts, d.Path+" as "+d.Capacity)
	}
	return strings.Join(parts, ", ")
}

// steadyWarnings says when the spec's bounds leave no room to show steady
// state: the random cells would all be INCONCLUSIVE.
func (s *Suite) steadyWarnings() []string {
	if s.Precondition == plan.None {
		return nil
	}
	var out []string
	for _, st := range s.Plan.Steps {
		if st.Kind != plan.StepRandom && st.Kind != plan.StepTopUp {
			continue
		}
		if need := time.Duration(st.Rule.Window) * st.Round; st.Est < need {
			key := "random_runtime"
			if st.Kind == plan.StepTopUp {
				key = "topup_runtime"
			}
			out = append(out, fmt.Sprintf("%s: step %d (%s) is bounded at %s, shorter than the steady-state window of %d rounds of %s (%s): steady state cannot be shown and its cells will be INCONCLUSIVE; raise %s",
				s.Spec.File, st.N, st.Name, st.Est, st.Rule.Window, st.Round, need, key))
			break
		}
	}
	return out
}

// Close lets the drives go, once the report is written.
func (s *Suite) Close() error {
	if s.guard == nil {
		return nil
	}
	err := s.guard.Close()
	s.guard = nil
	return err
}
