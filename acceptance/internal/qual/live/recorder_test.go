package live

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A sidecar that cannot be written (here the steady-state one, its path
// taken by a directory) is said, and the cell's other findings are still
// kept beside its recording: a replay judges the heat, the PCIe links
// and the CPU load the live run saw.
func TestASidecarThatFailsKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	const test = "TestSingleDrive/1.92TB/4KB_Random_Read"
	blocked := record.Base(dir, test) + record.SteadyExt
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "taken"), 0o755))
	r := &recorder{dir: dir}
	errs := r.sidecars(test, []report.Steady{{Drive: "/dev/nvme0n1", Attained: true}},
		record.Thermal{Throttled: "/dev/nvme0n1: throttled"},
		record.Link{Degraded: "/dev/nvme0n1: x2"}, &record.CPU{CPUs: "0-95", N: 96, Busy: 0.2})
	require.Len(t, errs, 1, "the steady-state sidecar's failure is said")
	var th record.Thermal
	found, err := record.ReadJSON(dir, test, record.ThermalExt, &th)
	require.NoError(t, err)
	require.True(t, found, "the heat findings are kept")
	require.Equal(t, "/dev/nvme0n1: throttled", th.Throttled)
	var l record.Link
	found, err = record.ReadJSON(dir, test, record.LinkExt, &l)
	require.NoError(t, err)
	require.True(t, found, "the PCIe findings are kept")
	var cpu record.CPU
	found, err = record.ReadJSON(dir, test, record.CPUExt, &cpu)
	require.NoError(t, err)
	require.True(t, found, "the CPU load is kept")
	require.Equal(t, 96, cpu.N)
}
