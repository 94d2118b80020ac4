package live

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// seenExec reads run.json as each preparation step starts.
type seenExec struct {
	dir  string
	seen record.Run
}

func (e *seenExec) Measure(context.Context, string, fiojob.Job, *Watch) ([]byte, error) {
	return nil, nil
}
func (e *seenExec) RawPath(test string) string { return "" }
func (e *seenExec) Prepare(_ context.Context, st plan.Step, _ []plan.Drive, _ func(string, ...any), _ *Watch) (Prepared, error) {
	data, err := os.ReadFile(filepath.Join(e.dir, "run.json"))
	if err == nil {
		_ = json.Unmarshal(data, &e.seen)
	}
	return Prepared{}, nil
}

type nopSink struct{}

func (nopSink) Step(report.Step)     {}
func (nopSink) Steady(report.Steady) {}

// A purge of one namespace that reaches its sibling (a sanitize, and a
// format of a controller whose FNA bit 0 formats every namespace) marks
// both written since their last read-back in run.json before it is sent,
// and a sanitize's controller as sent one until the purge has ended.
func TestPurgeMarksEveryNamespaceItReaches(t *testing.T) {
	d := func(name string, siblings ...string) plan.Drive {
		return plan.Drive{Info: device.Info{Path: "/dev/" + name, Name: name, Block: true, Controller: "nvme0", Siblings: siblings}}
	}
	drives := []plan.Drive{d("nvme0n1", "nvme0n2"), d("nvme0n2", "nvme0n1")}
	for _, tt := range []struct {
		method string
		ctrl   nvme.Controller
		sent   []string
	}{
		{"sanitize", nvme.Controller{OACS: 1 << 1, SANICAP: 1 << 1}, []string{"/dev/nvme0"}},
		{"format", nvme.Controller{OACS: 1 << 1, FNA: 1}, nil},
	} {
		t.Run(tt.method, func(t *testing.T) {
			dir := t.TempDir()
			exec := &seenExec{dir: dir}
			health := []evidence.DriveHealth{{Skip: "no log"}, {Skip: "no log"}}
			r := &Runner{Spec: &specs.Spec{}, Drives: drives, Planner: &plan.Planner{}, Exec: exec, Record: dir, Sink: nopSink{},
				Ctrls:   map[string]nvme.Controller{"nvme0": tt.ctrl},
				Monitor: NewMonitor(nvme.CLI{}, drives, specs.Health{}, health),
				Plan:    plan.Plan{Steps: []plan.Step{{N: 1, Kind: plan.StepPurge, Name: "purge", Purge: tt.method, Drives: []int{0}}}}}
			require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
			r.runTo(context.Background(), 0, t.Logf)
			require.Equal(t, []bool{true, true}, exec.seen.WrittenSinceReadBack, "both namespaces marked before the %s", tt.method)
			require.Equal(t, tt.sent, exec.seen.SanitizeSent)
			after, ok := readRunJSON(t, dir)
			require.True(t, ok)
			require.Empty(t, after.SanitizeSent, "the purge ended: no sanitize is pending")
			require.Equal(t, []bool{true, true}, after.WrittenSinceReadBack, "nothing was read back since")
		})
	}
}

func readRunJSON(t *testing.T, dir string) (record.Run, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return record.Run{}, false
	}
	var r record.Run
	require.NoError(t, json.Unmarshal(data, &r))
	return r, true
}

// failExec fails every preparation step with err.
type failExec struct {
	seenExec
	err error
}

func (e *failExec) Prepare(context.Context, plan.Step, []plan.Drive, func(string, ...any), *Watch) (Prepared, error) {
	return Prepared{}, e.err
}

// A fill that fio reports failed on one drive's jobs records that drive's
// failure, not its neighbour's; a fill whose failure names no drive (fio
// did not start, or this host could not write fio's report: a full
// recording disk) fails this run's cells but is no drive's failure to
// keep: a resume fills the drives again instead of disqualifying all of
// them for good.
func TestOnlyAFillErrorFioNamesADriveForIsRecorded(t *testing.T) {
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/loop0", Name: "loop0", Block: true}}, {Info: device.Info{Path: "/dev/loop1", Name: "loop1", Block: true}}}
	for _, tt := range []struct {
		name string
		err  error
		want []int
	}{
		{"fio named drive 1", &TargetsFailed{Targets: []int{1}, Err: errors.New("fio: job drive1: errno 5 (Input/output error)")}, []int{1}},
		{"no drive named", &TargetsFailed{Err: errors.New("writing report/raw/prepare/002-fill.json: no space left on device")}, nil},
		{"fio did not start", errors.New(`exec: "fio": executable file not found in $PATH`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			health := []evidence.DriveHealth{{Skip: "no log"}, {Skip: "no log"}}
			r := &Runner{Spec: &specs.Spec{}, Drives: drives, Planner: &plan.Planner{}, Exec: &failExec{err: tt.err}, Record: dir, Sink: nopSink{},
				Monitor: NewMonitor(nvme.CLI{}, drives, specs.Health{}, health),
				Plan:    plan.Plan{Steps: []plan.Step{{N: 1, Kind: plan.StepFill, Name: "sequential fill", Drives: []int{0, 1}}}}}
			require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
			r.runTo(context.Background(), 0, t.Logf)
			run, ok := readRunJSON(t, dir)
			require.True(t, ok)
			var got []int
			for _, f := range run.Failures {
				got = append(got, f.Drive)
			}
			require.Equal(t, tt.want, got, "%+v", run.Failures)
			for d := range drives {
				want := tt.want == nil || slices.Contains(tt.want, d)
				require.Equal(t, want, r.drives.brokenText(d) != "", "drive %d failed in this run: %q", d, r.drives.brokenText(d))
			}
		})
	}
}
