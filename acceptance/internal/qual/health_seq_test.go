package qual

import (
	"context"
	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// heatSuite is a live suite of fakeSpec whose drive's SMART log is read
// by nvme-cli's stand-in (acceptance/internal/e2e/testdata/nvme-standin.sh,
// a shell script run as nvme-cli is), serving the file log returns: the
// test writes a real nvme-cli 2.3 output there (fixtures/nvme) to change
// what the next read shows.
func heatSuite(t *testing.T, exec *fakeExec) (s *Suite, log string) {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("..", "e2e", "testdata", "nvme-standin.sh"))
	require.NoError(t, err)
	bin := filepath.Join(dir, "nvme")
	require.NoError(t, os.WriteFile(bin, script, 0o755))
	t.Setenv("NVME_STANDIN_DIR", dir)
	log = filepath.Join(dir, "smart-log.1.json")
	serve(t, log, "smart-log-v2.3-quoted-decimal.json")
	spec, err := specs.Parse("fake.toml", []byte(fakeSpec))
	require.NoError(t, err)
	cli := nvme.CLI{Binary: bin}
	drives := []plan.Drive{{Info: device.Info{Path: "/tmp/fake.img", Size: 1 << 30, NUMANode: -1}, Capacity: "1GiB"}}
	l, err := cli.SmartLog(context.Background(), drives[0].Path)
	require.NoError(t, err)
	monitor := live.NewMonitor(cli, drives, spec.Health, []evidence.DriveHealth{{Before: l, Last: l, MaxTempK: l.Temperature}})
	exec.dir = filepath.Join(dir, "raw")
	return testSuite(t, spec, drives, exec, exec.dir, dir, monitor), log
}

// serve makes the stand-in print fixtures/nvme/fixture from its next read.
func serve(t *testing.T, log, fixture string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "nvme", fixture))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log, data, 0o644))
}

// SMART-log sequences around the suite's two cells (4KB Random Read, then
// 8KB Random Read after its own random preconditioning): a temperature
// critical warning raised during the first cell makes it INCONCLUSIVE
// (thermal) and, cleared before the second, leaves the second judged; one
// that stays set makes both INCONCLUSIVE and never stops the drive; the
// spare bit raised during the first stops writes, so the second fails
// unmeasured, naming it. A replay judges the heat the same way.
func TestHeatSequenceCells(t *testing.T) {
	const hotMsg = "/tmp/fake.img: temperature critical warning after the cell: critical_warning 0x02: temperature is outside a threshold (composite 85 °C); check airflow and rerun"
	for _, tt := range []struct {
		name   string
		during string // the log the first cell's measurement raises
		then   string // the log served once the first cell is judged
		want   [2][2]string
		error  [2]string
	}{
		{"transient temperature bit", "smart-log-v2.3-temperature-warning.json", "smart-log-v2.3-quoted-decimal.json",
			[2][2]string{{report.Inconclusive, report.CauseThrottled}, {report.Pass, ""}}, [2]string{hotMsg, ""}},
		{"temperature bit stays set", "smart-log-v2.3-temperature-warning.json", "smart-log-v2.3-temperature-warning.json",
			[2][2]string{{report.Inconclusive, report.CauseThrottled}, {report.Inconclusive, report.CauseThrottled}},
			[2]string{hotMsg, "/tmp/fake.img: temperature critical warning before and after the cell"}},
		{"spare bit", "smart-log-v2.3-spare-warning.json", "smart-log-v2.3-spare-warning.json",
			[2][2]string{{report.Pass, ""}, {report.Fail, report.CauseCriticalWarning}},
			[2]string{"", "/tmp/fake.img raised critical_warning 0x01: available spare is below its threshold, read after TestSingleDrive/1GiB/4KB_Random_Read: nothing more is written to it"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
			s, log := heatSuite(t, exec)
			first := true
			exec.during = func() {
				if first {
					serve(t, log, tt.during)
					first = false
				}
			}
			cells := s.SingleCells()[0].Cells
			require.Len(t, cells, 2)
			for k, c := range cells {
				o, err := s.Run(context.Background(), c, t.Logf)
				require.NoError(t, err)
				assert.Equal(t, tt.want[k], [2]string{o.Result.Verdict, o.Result.Cause}, "cell %d: %s", k, o.Result.Error)
				assert.Contains(t, o.Result.Error, tt.error[k], "cell %d", k)
				if k == 0 {
					serve(t, log, tt.then)
				}
			}
			if tt.want[1][1] == report.CauseCriticalWarning {
				assert.Len(t, exec.measured, 1, "nothing more is measured on the drive")
			} else {
				assert.Len(t, exec.measured, 2, "the drive goes on")
			}
			var th record.Thermal
			_, err := record.ReadJSON(exec.dir, cells[0].Test, record.ThermalExt, &th)
			require.NoError(t, err)
			hot := th.CriticalWarning
			if tt.want[0][0] == report.Inconclusive {
				assert.Equal(t, hotMsg, hot, "recorded for a replay to judge")
			} else {
				assert.Empty(t, hot)
			}
		})
	}
}
