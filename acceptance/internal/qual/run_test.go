package qual

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// fakeExec stands in for fio: it returns recorded fio outputs (real ones,
// from fixtures/fio) and the failures a behaviour asks for, and counts
// what it was asked to do.
type fakeExec struct {
	dir      string
	stdout   []byte // what every measurement prints
	measure  error  // the error every measurement returns
	prepare  error  // the error every preparation step returns
	rounds   []float64
	cancel   context.CancelFunc // called during measurements: an interrupt
	prepared []plan.StepKind
	measured []string
}

func (f *fakeExec) RawPath(test string) string {
	return filepath.Join(f.dir, filepath.FromSlash(test)+".json")
}

func (f *fakeExec) Measure(ctx context.Context, test string, _ fiojob.Job, _ *Watch) ([]byte, error) {
	f.measured = append(f.measured, test)
	if f.cancel != nil {
		f.cancel()
		return f.stdout, &record.Failure{Interrupted: true, Message: "fio stopped: " + ctx.Err().Error()}
	}
	return f.stdout, f.measure
}

func (f *fakeExec) Prepare(_ context.Context, st plan.Step, _ []plan.Drive, _ func(string, ...any), _ *Watch) (Prepared, error) {
	f.prepared = append(f.prepared, st.Kind)
	if f.prepare != nil {
		return Prepared{}, f.prepare
	}
	var p Prepared
	for range st.Drives {
		p.Rounds = append(p.Rounds, f.rounds)
	}
	return p, nil
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
	spec, err := specs.Parse("fake.toml", []byte(fakeSpec))
	require.NoError(t, err)
	dir := t.TempDir()
	exec.dir = filepath.Join(dir, "raw")
	cfg := &Config{Drives: []string{"/tmp/fake.img"}, Record: exec.dir, Report: dir, Precondition: plan.Full}
	s := &Suite{Cfg: cfg, Spec: spec, Precondition: plan.Full, single: map[string]float64{}, Exec: exec,
		Report: &report.Run{Mode: "live", Precondition: plan.Full},
		Drives: []plan.Drive{{Info: device.Info{Path: "/tmp/fake.img", Size: 1 << 30, NUMANode: -1}, Capacity: "1GiB"}}}
	s.useSpec(spec, false)
	s.planRun(nil)
	require.NoError(t, s.writeRunInfo())
	s.health = make([]driveHealth, len(s.Drives))
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
			// One purge and fill, one random preconditioning per block size.
			require.Equal(t, []plan.StepKind{plan.StepPurge, plan.StepFill, plan.StepRandom, plan.StepRandom}, f.prepared)
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
