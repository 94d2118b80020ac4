package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// throttleIOPS is the read rate the kernel's throttle holds the loop
// device to.
const throttleIOPS = 2000

// A 4 KiB random-read sweep on a loop device whose reads the kernel
// throttles to 2,000 IOPS follows the physics of a queue: at every
// closed-loop point the mean latency is Little's law's, outstanding I/Os
// (iodepth × jobs) ÷ IOPS, within 30 % (within 1.2 % on a quiet machine;
// 26 % once at iodepth 8 while other tests held both CPUs, fio's reaping
// of completions delayed), and no point exceeds the throttle
// (10 % over at most). Open-loop points never exceed their asked rate,
// and the point asked twice the throttle is reported saturated, not as a
// latency. The target the curve meets passes and the run exits 0; a
// replay of the recording against a target no point meets fails it
// without measuring, naming the bound, the IOPS at it and min_iops, and
// exits non-zero.
//
// That the curve reaches the throttle (within 10 %) is logged, not
// asserted: on a quiet machine it does from iodepth 2 up (1,905 to 2,011
// IOPS), but on a loaded 2-CPU machine the loop device's own worker
// starves first and the curve flattens below the throttle (1,269 IOPS at
// iodepth 32 in one run), while Little's law held within 1.1 % at every
// point of both runs.
func TestLatencyAtLoad(t *testing.T) {
	testenv.MustHaveFio(t)
	dev := newLoop(t, 64<<20)
	th := testenv.ReadThrottle(t, dev, throttleIOPS)
	rec := filepath.Join(t.TempDir(), "rec")
	spec := testdataFile(t, "latency.toml")
	r := runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) { require.NoError(t, th.Join(cmd.Process.Pid)) }, nil,
		[]string{"-test.run=TestLatency"}, "-spec="+spec, "-drives="+dev, "-capacity=64MiB", "-destructive", "-record="+rec)
	noFioLeft(t)
	reads, err := th.Writes()
	require.NoError(t, err)
	require.Positive(t, reads, "the suite's reads went through the throttle")
	run := r.results(t)
	var closed, open []report.Result
	var target *report.Result
	for i, res := range run.Results {
		switch {
		case res.Kind == report.KindSweep && res.RateIOPS > 0:
			open = append(open, res)
		case res.Kind == report.KindSweep:
			closed = append(closed, res)
		case res.Kind == report.KindLatency:
			target = &run.Results[i]
		}
	}
	require.Len(t, closed, 6, "stdout:\n%s", r.Stdout)
	require.Len(t, open, 3)
	maxClosedMean, maxIOPS := 0.0, 0.0
	for _, p := range closed {
		require.Equal(t, report.Pass, p.Verdict, "%s: %s", p.Test, p.Error)
		if p.Error != "" {
			t.Logf("%s: %s", p.Test, p.Error)
		}
		require.NotNil(t, p.Read, p.Test)
		little := float64(p.IODepth) * 1 / p.Actual * 1e6 // µs: iodepth × 1 job ÷ IOPS
		t.Logf("iodepth %2d: %6.0f IOPS, mean %7.0f µs, p99 %7.0f µs; Little's law %7.0f µs, ratio %.3f",
			p.IODepth, p.Actual, p.Read.Mean, p.Read.P99, little, p.Read.Mean/little)
		assert.LessOrEqual(t, p.Actual, 1.10*throttleIOPS, "%s: never above the throttle", p.Test)
		assert.InEpsilon(t, little, p.Read.Mean, 0.30, "%s: mean latency follows Little's law", p.Test)
		maxClosedMean, maxIOPS = max(maxClosedMean, p.Read.Mean), max(maxIOPS, p.Actual)
	}
	t.Logf("the curve's most IOPS: %.0f, %.1f %% of the throttle's %d; its deepest mean latency %.0f µs", maxIOPS, maxIOPS/throttleIOPS*100, throttleIOPS, maxClosedMean)
	for _, p := range open {
		t.Logf("rate %4.0f: %6.0f IOPS, mean %7.0f µs, p99 %7.0f µs, saturated %v", p.RateIOPS, p.Actual, p.Read.Mean, p.Read.P99, p.Saturated)
		assert.LessOrEqual(t, p.Actual, 1.10*p.RateIOPS, "%s: fio paces the point at its rate", p.Test)
		if p.RateIOPS > throttleIOPS {
			assert.True(t, p.Saturated, "%s: above the throttle, the point is the saturation", p.Test)
		}
	}
	require.NotNil(t, target)
	assert.Equal(t, report.Pass, target.Verdict, target.Error)
	assert.Equal(t, 0, r.Code, "the target is met: stdout:\n%s", r.Stdout)
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Latency at load")
	assert.Contains(t, string(summary), "saturated: ")
	assert.FileExists(t, filepath.Join(r.Report, "charts", "sweep-64MiB-4KB_Random_Read.svg"))
	assert.FileExists(t, filepath.Join(rec, "TestLatency", "64MiB", "4KB_Random_Read", "iodepth_8.json"))

	// The same recording against a target it misses: a bound no point is
	// within (under a 2,000 IOPS throttle no 1 % of reads waits less than
	// 500 µs). No fio runs: a replay reads what was recorded.
	strict := filepath.Join(t.TempDir(), "strict.toml")
	text, err := os.ReadFile(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(strict, []byte(strings.Replace(string(text), "read_p99_us = 100_000", "read_p99_us = 500", 1)), 0o644))
	rr := runSuite(t, []string{"-test.run=TestLatency"}, "-replay="+rec, "-spec="+strict)
	assert.NotEqual(t, 0, rr.Code, "a missed target fails the run")
	replayed := rr.results(t)
	assert.Equal(t, "replay", replayed.Mode)
	for _, res := range replayed.Results {
		if res.Kind == report.KindLatency {
			assert.Equal(t, report.Fail, res.Verdict)
			assert.Contains(t, res.Error, "IOPS at read p99 ≤ 500 µs: no point within it; min_iops 400")
			assert.Contains(t, rr.Stdout, res.Error)
		}
	}
}

// Workloads with bssplit, trims, rate_iops, thinktime and
// buffer_compress_percentage run on a loop device, and the job file fio
// ran holds each key as fio names it.
func TestApplicationKeys(t *testing.T) {
	testenv.MustHaveFio(t)
	dev := newLoop(t, 64<<20)
	rec := filepath.Join(t.TempDir(), "rec")
	r := runSuite(t, []string{"-test.run=TestSingleDrive/64MiB/App_"}, "-spec="+testdataFile(t, "appkeys.toml"),
		"-drives="+dev, "-capacity=64MiB", "-destructive", "-record="+rec)
	noFioLeft(t)
	for name, lines := range map[string][]string{
		"App_Trims":  {"rw=randtrim", "bssplit=4096/60:16384/30:131072/10", "rate_iops=200", "thinktime=100"},
		"App_Writes": {"rw=randwrite", "bssplit=4096/50:65536/50", "rate_iops=100", "buffer_compress_percentage=50"},
	} {
		assert.Equal(t, report.Pass, r.verdicts(t)["TestSingleDrive/64MiB/"+name], "%s: stdout:\n%s", name, r.Stdout)
		job, err := os.ReadFile(filepath.Join(rec, "TestSingleDrive", "64MiB", name+".fio"))
		require.NoError(t, err)
		for _, line := range lines {
			assert.Contains(t, strings.Split(string(job), "\n"), line, "%s: the job file:\n%s", name, job)
		}
	}
}
