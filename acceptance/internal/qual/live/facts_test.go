package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
