package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// hostBoundSpec is one sequential read on a 64 MiB loop device, judged
// against a figure no loop device reaches, so that the cell is below
// spec. Not a drive's published figures.
const hostBoundSpec = `model  = "Loop device (host-bound)"
source = "drivequal test data"

[method]
runtime = "2s"

[precondition]
purge       = "discard"
fill_passes = 1

[[workload]]
name    = "128KB Sequential Read"
rw      = "read"
bs      = "128k"
iodepth = 16
numjobs = 1
metric  = "MBps"

[[capacity]]
name  = "64MiB"
bytes = 67108864
[capacity.spec]
"128KB Sequential Read" = 1_000_000
`

// A cell below spec measured while every CPU fio may use is kept busy (a
// busy loop pinned to each CPU, started here and stopped by pid) is
// INCONCLUSIVE host-bound, with the CPUs' figures and the fix, not a
// failure of the drive; the replay of its recording says the same.
func TestHostBoundCellIsInconclusive(t *testing.T) {
	dev := newLoop(t, 64<<20)
	spec := filepath.Join(t.TempDir(), "hostbound.toml")
	require.NoError(t, os.WriteFile(spec, []byte(hostBoundSpec), 0o644))
	for cpu := range runtime.NumCPU() {
		hog := exec.Command("taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
		require.NoError(t, hog.Start())
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}
	r := runSuite(t, nil, "-spec="+spec, "-drives="+dev, "-destructive")
	noFioLeft(t)
	res := byTest(r.results(t))["TestSingleDrive/64MiB/128KB_Sequential_Read"]
	assert.Equal(t, report.Inconclusive, res.Verdict, res.Error)
	assert.Equal(t, report.CauseHostBound, res.Cause)
	assert.Contains(t, res.Error, "% busy")
	assert.Contains(t, res.Error, "give the drive more CPUs or a faster host")
	require.NotNil(t, res.HostCPU)
	assert.GreaterOrEqual(t, res.HostCPU.BusyPct, 95.0)
	assert.NotEqual(t, 0, r.Code, "an inconclusive cell does not qualify")

	replay := runSuite(t, nil, "-replay="+filepath.Join(r.Report, "raw"))
	again := byTest(replay.results(t))["TestSingleDrive/64MiB/128KB_Sequential_Read"]
	assert.Equal(t, [2]string{res.Verdict, res.Cause}, [2]string{again.Verdict, again.Cause})
}
