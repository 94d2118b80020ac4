package qual

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/timelog"
	"github.com/drivequal/drivequal/fiojob"
)

// writeLog packs a per-second log of one drive's two jobs for secs
// seconds at iops each, as a live run keeps it, at base+record.LogExt.
func writeLog(t *testing.T, base string, secs int, iops int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(base), 0o755))
	pre := base + ".drive0"
	for job := 1; job <= 2; job++ {
		var lines, bw strings.Builder
		for k := 1; k <= secs; k++ {
			fmt.Fprintf(&lines, "%d, %d, 1, 0, 0\n", k*1000+job, iops)
			fmt.Fprintf(&bw, "%d, %d, 1, 0, 0\n", k*1000+job, iops*4)
		}
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s_iops.%d.log", pre, job), []byte(lines.String()), 0o644))
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s_bw.%d.log", pre, job), []byte(bw.String()), 0o644))
	}
	wrote, err := timelog.Pack(base+record.LogExt, []fiojob.Target{{IOPSLog: pre, BWLog: pre}}, timelog.Interval)
	require.NoError(t, err)
	require.True(t, wrote)
}

// A replay of a recording made before the per-second logs were kept
// still judges its cell, draws its latency from the recorded bins, and
// says in summary.md that the charts over time are absent; with the
// cell's and the preconditioning's logs, it draws the consistency and
// write saturation charts, the window drawn, and links each.
func TestReplayChartsOverTime(t *testing.T) {
	dir := recordedRun(t, true)
	o, s := replayCell(t, dir)
	assert.Equal(t, report.Pass, o.Result.Verdict)
	summary := string(s.Report.Summary())
	assert.Contains(t, summary, "Charts over time absent for 1 cell: the recording holds no per-second log of it")
	assert.Contains(t, summary, "![256MiB, 4KB Random Read: latency exceedance](charts/latency-TestSingleDrive-256MiB-4KB_Random_Read.svg)")
	assert.NotContains(t, summary, "consistency-")
	svg, err := os.ReadFile(filepath.Join(s.Cfg.Report, "charts", "latency-TestSingleDrive-256MiB-4KB_Random_Read.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "Loop device · date not recorded · live")

	dir = recordedRun(t, true)
	var info record.Run
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	info.Steady[0].FirstRound, info.Steady[0].LastRound = 5, 9
	writeJSON(t, filepath.Join(dir, "run.json"), info)
	writeLog(t, filepath.Join(dir, "TestSingleDrive", "256MiB", "4KB_Random_Read"), 60, 20000)
	writeLog(t, filepath.Join(dir, "prepare", "003-random_preconditioning"), 9*2/10+2, 20500)
	o, s = replayCell(t, dir)
	assert.Equal(t, report.Pass, o.Result.Verdict)
	summary = string(s.Report.Summary())
	assert.NotContains(t, summary, "absent")
	for _, f := range []string{"wsat-time-step3.svg", "wsat-written-step3.svg", "consistency-TestSingleDrive-256MiB-4KB_Random_Read.svg"} {
		assert.Contains(t, summary, "(charts/"+f+")")
		svg, err := os.ReadFile(filepath.Join(s.Cfg.Report, "charts", f))
		require.NoError(t, err)
		if strings.HasPrefix(f, "wsat") {
			assert.Contains(t, string(svg), "steady window", f)
		} else {
			assert.Contains(t, string(svg), "mean "+report.Thousands(o.Result.Actual)+" IOPS") // the judged figure
			assert.Contains(t, string(svg), "spec 500 IOPS")
		}
	}
}
