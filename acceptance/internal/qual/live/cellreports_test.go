package live

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/progress"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// report24 is the bytes of one fio json+ status report of a 24-drive,
// 8-job-a-drive randrw 70/30 cell: fio 3.33, --output-format=json+
// --status-interval=30, 60 s on 24 loop devices (each report 5.0 to 5.4
// MB, 15.9 MB for the cell with its final report).
const report24 = 5_432_497

// watchExec keeps the watch a measurement was given.
type watchExec struct{ w *Watch }

func (e *watchExec) Measure(_ context.Context, _ string, _ fiojob.Job, w *Watch) ([]byte, error) {
	e.w = w
	return nil, nil
}
func (e *watchExec) RawPath(string) string { return "" }
func (e *watchExec) Prepare(context.Context, plan.Step, []plan.Drive, func(string, ...any), *Watch) (Prepared, error) {
	return Prepared{}, nil
}

// A cell's recorded output holds every status report fio printed during
// it, and a replay reads it only up to record.MaxOutput: a long 24-drive
// cell reports seldom enough that its own replay reads it.
func TestLongCellOutputFitsItsReplay(t *testing.T) {
	for _, est := range []time.Duration{61 * time.Second, 5 * time.Minute, 20 * time.Minute, 2 * time.Hour} {
		drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Name: "nvme0n1", Block: true}}}
		exec := &watchExec{}
		r := &Runner{Spec: &specs.Spec{}, Drives: drives, Planner: &plan.Planner{}, Exec: exec, Record: t.TempDir(), Sink: nopSink{},
			Monitor: NewMonitor(nvme.CLI{}, drives, specs.Health{}, []evidence.DriveHealth{{Skip: "no log"}})}
		require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
		st := plan.Step{N: 1, Kind: plan.StepMeasure, Name: "cell", Est: est, Drives: []int{0}}
		r.observe(context.Background(), st, plan.Cell{Test: "TestScaling/24_drives/4KB_Random_Read"}, t.Logf)
		require.NotNil(t, exec.w, "a %s cell is watched", est)
		require.GreaterOrEqual(t, exec.w.Interval, progress.Every)
		reports := int64(est / exec.w.Interval)
		if got := (reports + 1) * report24; got > record.MaxOutput {
			t.Errorf("a %s 24-drive cell reports every %s: %d reports and the final one, about %d bytes, above the %d a replay reads",
				est, exec.w.Interval, reports, got, record.MaxOutput)
		}
	}
}
