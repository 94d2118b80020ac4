package qual

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/dryrun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// fakeExec stands in for fio: it returns recorded fio outputs (real ones,
// from fixtures/fio) and the failures a behaviour asks for, and counts
// what it was asked to do.
type fakeExec struct {
	dir     string
	stdout  []byte // what every measurement prints
	measure error  // the error every measurement returns
	prepare error  // the error every preparation step returns
	// verify, when set, is what fio prints for a verify pass: Prepare
	// records it and returns it to be judged, as the live executor does.
	verify []byte
	rounds []float64
	// status, when set, is a recorded fio stdout whose status reports a
	// random step's watch reads, as it reads a live fio's.
	status []byte
	// during, when set, is called during every measurement (a drive's
	// state changing while fio runs).
	during   func()
	cancel   context.CancelFunc // called during measurements: an interrupt
	prepared []plan.StepKind
	measured []string
}

func (f *fakeExec) RawPath(test string) string {
	return filepath.Join(f.dir, filepath.FromSlash(test)+".json")
}

func (f *fakeExec) Measure(ctx context.Context, test string, _ fiojob.Job, _ *live.Watch) ([]byte, error) {
	f.measured = append(f.measured, test)
	if f.during != nil {
		f.during()
	}
	if f.cancel != nil {
		f.cancel()
		return f.stdout, &record.Failure{Interrupted: true, Message: "fio stopped: " + ctx.Err().Error()}
	}
	return f.stdout, f.measure
}

// Prepare feeds a random step's watch, as fio's status reports would, six
// reports a round in which every drive does f.rounds' IOPS, and stops when
// the watch says so.
func (f *fakeExec) Prepare(_ context.Context, st plan.Step, _ []plan.Drive, _ func(string, ...any), w *live.Watch) (live.Prepared, error) {
	f.prepared = append(f.prepared, st.Kind)
	if f.prepare != nil {
		return live.Prepared{}, f.prepare
	}
	if st.Kind == plan.StepVerify && f.verify != nil {
		raw := filepath.Join(f.dir, "prepare", fmt.Sprintf("%03d-verify.json", st.N))
		if err := os.MkdirAll(filepath.Dir(raw), 0o755); err != nil {
			return live.Prepared{}, err
		}
		return live.Prepared{Raw: raw}, os.WriteFile(raw, f.verify, 0o644)
	}
	if w == nil || st.Round <= 0 {
		return live.Prepared{}, nil
	}
	if f.status != nil {
		stopped := false
		err := fiojob.WatchStatus(bytes.NewReader(f.status), func(p fiojob.Progress) {
			stopped = stopped || w.Report(p)
		})
		return live.Prepared{Stopped: stopped}, err
	}
	var ios float64
	for k, iops := range f.rounds {
		for j := 1; j <= 6; j++ {
			ios += iops * st.Round.Seconds() / 6
			at := time.Duration(k)*st.Round + time.Duration(j)*st.Round/6
			var p fiojob.Progress
			for g := range st.Drives {
				p.Groups = append(p.Groups, fiojob.Result{GroupID: g, Runtime: at, Write: fiojob.Direction{TotalIOs: int64(ios)}})
			}
			if w.Report(p) {
				return live.Prepared{Stopped: true}, nil
			}
		}
	}
	return live.Prepared{}, nil
}

const fakeSpec = `model  = "Fake"
source = "drivequal test data"

[method]
runtime = "1s"

[precondition]
purge          = "discard"
fill_passes    = 1
random_runtime = "2s"
steady_round   = "200ms"

[[workload]]
name    = "4KB Random Read"
rw      = "randread"
bs      = "4k"
iodepth = 16
numjobs = 8
metric  = "iops"

[[workload]]
name    = "8KB Random Read"
rw      = "randread"
bs      = "8k"
iodepth = 16
numjobs = 8
metric  = "iops"

[[capacity]]
name  = "1GiB"
bytes = 1073741824
[capacity.spec]
"4KB Random Read" = 500
"8KB Random Read" = 500
`

// liveSuite is a live suite of fakeSpec on one regular file, run through
// exec: everything Setup does after checking the drives.
func liveSuite(t *testing.T, exec *fakeExec) *Suite {
	t.Helper()
	return liveSuiteOf(t, exec, fakeSpec)
}

// liveSuiteOf is liveSuite with the spec text given.
func liveSuiteOf(t *testing.T, exec *fakeExec, text string) *Suite {
	t.Helper()
	spec, err := specs.Parse("fake.toml", []byte(text))
	require.NoError(t, err)
	dir := t.TempDir()
	exec.dir = filepath.Join(dir, "raw")
	drives := []plan.Drive{{Info: device.Info{Path: "/tmp/fake.img", Size: 1 << 30, NUMANode: -1}, Capacity: "1GiB"}}
	return testSuite(t, spec, drives, exec, exec.dir, dir, nil)
}

// testSuite is a live suite of spec on drives, run through exec and
// recorded in record, its report in report, its drives' health watched
// by monitor (nil: not read), set up as Setup sets up a live run once the
// drives are checked; s.runner.Sys reads their PCIe paths.
func testSuite(t *testing.T, spec *specs.Spec, drives []plan.Drive, exec live.Executor, record, report string, monitor *live.Monitor) *Suite {
	t.Helper()
	var paths []string
	for _, d := range drives {
		paths = append(paths, d.Path)
	}
	cfg := &cmdline.Config{Drives: paths, Record: record, Report: report, Precondition: plan.Full}
	s := newSuite(cfg, spec)
	s.Report.Mode, s.Drives = "live", drives
	if monitor == nil {
		monitor = live.NewMonitor(nvme.CLI{}, drives, spec.Health, nil)
	}
	s.runner = &live.Runner{Spec: spec, Drives: drives, Exec: exec, Record: record, Monitor: monitor, Sink: s.out, ReadBack: s.readBacks.judge}
	s.evidence = s.runner
	(&builder{cfg: cfg, live: true, s: s}).plan()
	require.NoError(t, s.start())
	return s
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "fio", name))
	require.NoError(t, err)
	return data
}

// steadyRounds reach steady state at once; risingRounds never do.
var (
	steadyRounds = []float64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	risingRounds = []float64{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000}
)

type runTest struct {
	name  string
	exec  func(t *testing.T, cancel context.CancelFunc) *fakeExec
	want  [2]string // verdict and cause of the first cell
	then  [2]string // of the second (the other block size: its own preconditioning)
	error string    // in the first cell's error
	check func(t *testing.T, f *fakeExec)
}

var runTests = []runTest{
	{
		name: "passes",
		exec: func(t *testing.T, _ context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
		},
		want: [2]string{report.Pass, ""}, then: [2]string{report.Pass, ""},
		check: func(t *testing.T, f *fakeExec) {
			// One purge, fill and verify pass, one random preconditioning per block size.
			require.Equal(t, []plan.StepKind{plan.StepPurge, plan.StepFill, plan.StepVerify, plan.StepRandom, plan.StepRandom}, f.prepared)
		},
	},
	{
		name: "fio fails",
		exec: func(t *testing.T, _ context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "error-bs1000.json"), measure: &fiojob.ExitError{Code: 1}, rounds: steadyRounds}
		},
		want: [2]string{report.Fail, report.CauseFioFailed}, then: [2]string{report.Fail, report.CauseFioFailed},
		error: "fio exited with status 1",
	},
	{
		name: "job errors with exit 0",
		exec: func(t *testing.T, _ context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "error-bs1000.json"), rounds: steadyRounds}
		},
		want: [2]string{report.Fail, report.CauseFioFailed}, then: [2]string{report.Fail, report.CauseFioFailed},
		error: "errno 22",
	},
	{
		name: "preparation fails",
		exec: func(t *testing.T, _ context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), prepare: errors.New("fio: Input/output error")}
		},
		want: [2]string{report.Fail, report.CausePreparation}, then: [2]string{report.Fail, report.CausePreparation},
		error: "Input/output error",
		check: func(t *testing.T, f *fakeExec) {
			require.Equal(t, []plan.StepKind{plan.StepPurge}, f.prepared, "a drive that failed is not prepared again")
			require.Empty(t, f.measured, "nor measured")
		},
	},
	{
		name: "not steady",
		exec: func(t *testing.T, _ context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: risingRounds}
		},
		want: [2]string{report.Inconclusive, report.CauseNotSteady}, then: [2]string{report.Inconclusive, report.CauseNotSteady},
		error: "did not reach steady state",
	},
	{
		name: "interrupted",
		exec: func(t *testing.T, cancel context.CancelFunc) *fakeExec {
			return &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds, cancel: cancel}
		},
		want: [2]string{report.Inconclusive, report.CauseInterrupted}, then: [2]string{report.Inconclusive, report.CauseInterrupted},
		error: "not finished",
		check: func(t *testing.T, f *fakeExec) {
			require.Len(t, f.measured, 1, "nothing runs once the run is stopped")
		},
	},
}

// Each fake fio behaviour gives its verdict and cause, in-process.
func TestRunVerdicts(t *testing.T) {
	for _, tt := range runTests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			exec := tt.exec(t, cancel)
			s := liveSuite(t, exec)
			cells := s.SingleCells()[0].Cells
			require.Len(t, cells, 2)
			var got [][2]string
			for _, c := range cells {
				o, err := s.Run(ctx, c, t.Logf)
				require.NoError(t, err)
				got = append(got, [2]string{o.Result.Verdict, o.Result.Cause})
				if len(got) == 1 && tt.error != "" {
					require.Contains(t, o.Result.Error, tt.error)
				}
			}
			require.Equal(t, [][2]string{tt.want, tt.then}, got)
			if tt.check != nil {
				tt.check(t, exec)
			}
			// Every finished result is on disk.
			data, err := os.ReadFile(filepath.Join(s.Cfg.Report, "results.json"))
			require.NoError(t, err)
			require.Equal(t, 2, strings.Count(string(data), `"test": "TestSingleDrive/1GiB/`))
		})
	}
}

// A real fio run at the PTS's 1-minute round (fixtures/fio/precondition-1m.json,
// its status reports every 10 s) read by the suite's own watch: with a
// rule the loop device holds, steady state is recorded on rounds 1-5, at
// 300 s, never earlier, and the cells are judged; with the PTS's limits,
// which that run does not meet, the cells are INCONCLUSIVE with the
// figures of the last window.
func TestSteadyAtTheDefaultRound(t *testing.T) {
	for _, tt := range []struct {
		name, limits string
		want         [2]string
	}{
		{"held", "steady_range = 1.5\nsteady_slope = 1.5\n", [2]string{report.Pass, ""}},
		{"not held", "", [2]string{report.Inconclusive, report.CauseNotSteady}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := strings.Replace(fakeSpec, "random_runtime = \"2s\"\nsteady_round   = \"200ms\"\n",
				"random_runtime = \"30m\"\n"+tt.limits, 1)
			require.NotEqual(t, fakeSpec, spec)
			exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), status: fixture(t, "precondition-1m.json")}
			s := liveSuiteOf(t, exec, spec)
			require.Equal(t, time.Minute, s.Spec.Precondition.SteadyRound, "the built-in method's round")
			o, err := s.Run(context.Background(), s.SingleCells()[0].Cells[0], t.Logf)
			require.NoError(t, err)
			require.Equal(t, tt.want, [2]string{o.Result.Verdict, o.Result.Cause}, o.Result.Error)
			require.NotEmpty(t, s.Report.SteadyState)
			st := s.Report.SteadyState[0]
			require.Equal(t, "fio status reports", st.Source)
			if tt.want[0] == report.Pass {
				require.True(t, st.Attained)
				require.Equal(t, [3]int{5, 1, 5}, [3]int{st.Rounds, st.FirstRound, st.LastRound})
				require.Equal(t, 300.0, st.Seconds)
				require.Len(t, st.RoundIOPS, 5)
				require.InDelta(t, 52776.7, *st.RoundIOPS[0], 0.1)
				return
			}
			require.False(t, st.Attained)
			require.Equal(t, [3]int{7, 3, 7}, [3]int{st.Rounds, st.FirstRound, st.LastRound})
			require.InDelta(t, 53.57, st.RangePct, 0.01)
			require.Contains(t, o.Result.Error, "range 53.6 % (limit 20 %)")
		})
	}
}

// A drive that does fall idle past the limit before a random write (here
// the limit is lowered after the plan was made, as a -run subset or a slow
// step would leave it) is topped up before it is measured.
func TestUnplannedTopUp(t *testing.T) {
	spec := strings.Replace(fakeSpec, `name    = "8KB Random Read"
rw      = "randread"`, `name    = "4KB Random Write"
rw      = "randwrite"`, 1)
	spec = strings.Replace(strings.Replace(spec, `bs      = "8k"`, `bs      = "4k"`, 1), `"8KB Random Read" = 500`, `"4KB Random Write" = 500`, 1)
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
	s := liveSuiteOf(t, exec, spec)
	for _, st := range s.Plan.Steps {
		require.NotEqual(t, plan.StepTopUp, st.Kind, "the plan expects no idle drive")
	}
	s.Spec.Precondition.IdleLimit = time.Nanosecond
	for _, c := range s.SingleCells()[0].Cells {
		o, err := s.Run(context.Background(), c, t.Logf)
		require.NoError(t, err)
		require.Equal(t, report.Pass, o.Result.Verdict, o.Result.Error)
	}
	require.Contains(t, exec.prepared, plan.StepTopUp)
}

// pcieTree is a fake sysfs root where NVMe controller nvme0's PCI
// function trained at speed GT/s × width lanes of a 32.0 GT/s x4 device,
// as Linux 6.x shows it.
func pcieTree(t *testing.T, speed string, width int) device.System {
	t.Helper()
	root := t.TempDir()
	fn := filepath.Join(root, "sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0")
	require.NoError(t, os.MkdirAll(filepath.Join(fn, "nvme", "nvme0"), 0o755))
	for name, v := range map[string]string{"current_link_speed": speed + " GT/s PCIe", "current_link_width": strconv.Itoa(width),
		"max_link_speed": "32.0 GT/s PCIe", "max_link_width": "4"} {
		require.NoError(t, os.WriteFile(filepath.Join(fn, name), []byte(v+"\n"), 0o644))
	}
	require.NoError(t, os.Symlink("../../../0000:02:00.0", filepath.Join(fn, "nvme", "nvme0", "device")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/nvme"), 0o755))
	require.NoError(t, os.Symlink("../../devices/pci0000:00/0000:00:03.0/0000:02:00.0/nvme/nvme0", filepath.Join(root, "sys/class/nvme/nvme0")))
	return device.System{Root: root}
}

// A drive whose PCIe link trained below its device's maximum has every
// cell INCONCLUSIVE, naming both links, and a replay of the recording says
// the same; at full speed and width nothing changes. A spec that states
// the slower link it was measured on judges the cells.
func TestPCIeLinkDegraded(t *testing.T) {
	for _, tt := range []struct {
		name, speed string
		width       int
		pcie        string
		want        [2]string
	}{
		{"full", "32.0", 4, "", [2]string{report.Pass, ""}},
		{"degraded", "16.0", 2, "", [2]string{report.Inconclusive, report.CausePCIeLink}},
		{"as the spec states", "16.0", 2, "[pcie]\nspeed = 16\nwidth = 2\n", [2]string{report.Pass, ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
			s := liveSuiteOf(t, exec, fakeSpec+tt.pcie)
			s.runner.Sys = pcieTree(t, tt.speed, tt.width)
			s.Drives[0].Controller = "nvme0"
			for _, c := range s.SingleCells()[0].Cells {
				o, err := s.Run(context.Background(), c, t.Logf)
				require.NoError(t, err)
				require.Equal(t, tt.want, [2]string{o.Result.Verdict, o.Result.Cause}, o.Result.Error)
				if tt.want[0] == report.Pass {
					continue
				}
				require.Contains(t, o.Result.Error, "/tmp/fake.img: PCIe link 16.0 GT/s x2 of 32.0 GT/s x4 (0000:02:00.0)")
				var l record.Link
				_, err = record.ReadJSON(exec.dir, c.Test, record.LinkExt, &l)
				require.NoError(t, err)
				require.Equal(t, "/tmp/fake.img: PCIe link 16.0 GT/s x2 of 32.0 GT/s x4 (0000:02:00.0)",
					l.Degraded, "the finding is recorded for a replay to judge")
			}
		})
	}

	// A link that retrains down while a cell is measured is found after it.
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
	s := liveSuite(t, exec)
	s.runner.Sys = pcieTree(t, "32.0", 4)
	s.Drives[0].Controller = "nvme0"
	fn := filepath.Join(s.runner.Sys.Root, "sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0")
	exec.during = func() {
		require.NoError(t, os.WriteFile(filepath.Join(fn, "current_link_width"), []byte("1\n"), 0o644))
	}
	o, err := s.Run(context.Background(), s.SingleCells()[0].Cells[0], t.Logf)
	require.NoError(t, err)
	require.Equal(t, report.CausePCIeLink, o.Result.Cause)
	require.Contains(t, o.Result.Error, "PCIe link 32.0 GT/s x1 of 32.0 GT/s x4")
}

// A step's CPUs read a drive's each up to four drives, and each distinct
// set once with its count past that, so a 24-drive step's plan line does
// not list 24 sets.
func TestCPUSets(t *testing.T) {
	require.Equal(t, "0 | 1", dryrun.CPUSets([]string{"0", "1"}))
	require.Equal(t, "0-23 | 24-47 | 0-23 | 24-47", dryrun.CPUSets([]string{"0-23", "24-47", "0-23", "24-47"}))
	var cpus []string
	for i := range 24 {
		cpus = append(cpus, []string{"0-47", "48-95", "96-143", "144-191"}[i/6])
	}
	require.Equal(t, "0-47 (6 drives), 48-95 (6 drives), 96-143 (6 drives), 144-191 (6 drives)", dryrun.CPUSets(cpus))
	require.Equal(t, "0 (3 drives), 1 (2 drives)", dryrun.CPUSets([]string{"0", "1", "0", "1", "0"}))
}
