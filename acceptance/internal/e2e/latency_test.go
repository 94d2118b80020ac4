package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// (iodepth × jobs) ÷ fio's measured IOPS, within 20 % (within 4 % on a
// quiet machine), or 35 % at a point the run found host-bound (26 % once
// at iodepth 8 and 25 % at iodepth 4 while other packages held both CPUs,
// fio's reaping of completions delayed); no point exceeds the throttle
// (10 % over at most), and the closed-loop points deep enough to saturate
// it (iodepth 4 and up) reach it within 10 % (not asserted, and logged,
// when the run was host-bound: a loaded host's loop worker starves first).
// Open-loop points never exceed their asked rate, those asked less than
// the throttle hold it and their mean latency is under half the saturated
// closed-loop points' at iodepth 16 and 32 (a queue that never builds), and the point asked
// twice the throttle is reported saturated, not as a latency. The target
// the curve meets passes and the run exits 0; replays of the recording
// judge without measuring: against a target no point meets it fails,
// naming the bound, the IOPS at it and min_iops; against a min_iops
// between the curve's fewest IOPS within the bound and its most it
// passes (the highest IOPS within the bound counts, not the lowest); with no target
// and a point's recorded output deleted, TestLatency fails and so does
// the run.
func TestLatencyAtLoad(t *testing.T) {
	testenv.MustHaveFio(t)
	dev := newLoop(t, 64<<20)
	th := testenv.ReadThrottle(t, dev, throttleIOPS)
	// Its writes (the preconditioning) held as every suite's are
	// (loopIOPS): the suite runs above the guests (userPriority), and an
	// uncapped fio there would take the CPU from them.
	th.CapOther(t, loopIOPS)
	rec := filepath.Join(t.TempDir(), "rec")
	spec := testdataFile(t, "latency.toml")
	r := runSuiteVia(context.Background(), t, userPriority(), func(cmd *exec.Cmd) { require.NoError(t, th.Join(cmd.Process.Pid)) }, nil,
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
	maxClosedMean, maxIOPS, qd1 := 0.0, 0.0, 0.0
	var saturatedMeans []float64 // of the saturated points not host-bound
	saturated := 0
	for _, p := range closed {
		require.Equal(t, report.Pass, p.Verdict, "%s: %s", p.Test, p.Error)
		if p.Error != "" {
			t.Logf("%s: %s", p.Test, p.Error)
		}
		require.NotNil(t, p.Read, p.Test)
		little := float64(p.IODepth) * 1 / p.Actual * 1e6 // µs: iodepth × 1 job ÷ fio's measured IOPS
		t.Logf("iodepth %2d: %6.0f IOPS, mean %7.0f µs, p99 %7.0f µs; Little's law %7.0f µs, ratio %.3f",
			p.IODepth, p.Actual, p.Read.Mean, p.Read.P99, little, p.Read.Mean/little)
		assert.LessOrEqual(t, p.Actual, 1.10*throttleIOPS, "%s: never above the throttle", p.Test)
		if p.Cause == report.CauseHostBound {
			// fio's CPUs were busy (other packages beside this one): its
			// reaping of completions lags, which lengthens the latencies it
			// measures (25 % once at iodepth 4 in CI, 61 % at iodepth 16
			// beside make test), and the suite says so: the host, not the
			// throttle, set this point; the law is asserted of the others.
			t.Logf("%s: host-bound: Little's law not asserted", p.Test)
		} else {
			assert.InEpsilon(t, little, p.Read.Mean, 0.20, "%s: mean latency follows Little's law", p.Test)
		}
		if p.IODepth >= 16 {
			// A queue of 8 ms and more (Little's law at the throttle).
			saturated++
			if p.Cause != report.CauseHostBound {
				saturatedMeans = append(saturatedMeans, p.Read.Mean)
			}
		}
		if p.IODepth >= 4 {
			// Deep enough that the throttle, not the queue, sets the rate.
			if p.Cause == report.CauseHostBound {
				t.Logf("%s: host-bound (%s): that it reaches the throttle is not asserted", p.Test, p.Error)
			} else {
				assert.InEpsilon(t, float64(throttleIOPS), p.Actual, 0.10, "%s: a saturated closed-loop point reaches the throttle", p.Test)
			}
		}
		if p.IODepth == 1 {
			qd1 = p.Actual
		}
		maxClosedMean, maxIOPS = max(maxClosedMean, p.Read.Mean), max(maxIOPS, p.Actual)
	}
	t.Logf("the curve's most IOPS: %.0f, %.1f %% of the throttle's %d; QD1 %.0f IOPS; its deepest mean latency %.0f µs", maxIOPS, maxIOPS/throttleIOPS*100, throttleIOPS, qd1, maxClosedMean)
	require.NotZero(t, saturated)
	for _, p := range open {
		t.Logf("rate %4.0f: %6.0f IOPS, mean %7.0f µs, p99 %7.0f µs, saturated %v", p.RateIOPS, p.Actual, p.Read.Mean, p.Read.P99, p.Saturated)
		assert.LessOrEqual(t, p.Actual, 1.10*p.RateIOPS, "%s: fio paces the point at its rate", p.Test)
		if p.RateIOPS > throttleIOPS {
			assert.True(t, p.Saturated, "%s: above the throttle, the point is the saturation", p.Test)
			continue
		}
		if p.Cause != report.CauseHostBound {
			// A host-bound point may not hold its rate: beside the rest
			// of make test, with fio's CPUs busy, 1,000 a second below a
			// throttle of 2,000 completed 847.
			assert.False(t, p.Saturated, "%s: below the throttle, the point holds its rate", p.Test)
		}
		if p.Cause == report.CauseHostBound {
			// fio's CPUs were busy with other work: the host's stalls,
			// not the throttle, set this point's latency, which the
			// suite reports as host-bound. Beside the rest of make test
			// an open-loop mean at 500 a second measured 19.1 ms, p99
			// 209 ms, against 16.6 ms at iodepth 32; at 1,000 a second,
			// 910 completed with a mean of 24.9 ms (its queue growing for
			// the whole run). Not compared.
			t.Logf("%s: host-bound: its latency is the host's, not compared with the curve", p.Test)
			continue
		}
		if len(saturatedMeans) == 0 {
			t.Logf("%s: every saturated point host-bound: compared with the deepest closed-loop mean only", p.Test)
			assert.Less(t, p.Read.Mean, maxClosedMean, "%s: mean latency below the throttle is below the deepest queue's", p.Test)
			continue
		}
		for _, m := range saturatedMeans {
			// Half the throttle or less: no queue builds, where a saturated
			// closed-loop point waits iodepth ÷ 2,000 s (8 ms at iodepth
			// 16); on a quiet host under a tenth of it (295–491 µs). (Not
			// against iodepth 4's 2 ms, nor against half the saturated
			// means: the throttle dispatches in bursts, and beside the rest
			// of make test an open-loop mean at 1,000 IOPS reached 5.3 ms
			// against 9.4 ms at iodepth 16.)
			assert.Less(t, p.Read.Mean, m, "%s: mean latency below the throttle is below a saturated point's", p.Test)
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
	// within (under a 2,000 IOPS throttle more than 1 % of reads wait
	// longer than 100 µs; not 500 µs: the throttle spaces QD1's reads
	// 500 µs apart, and one quiet run's QD1 p99 was 545 µs, another's
	// at most 500). No fio runs: a replay reads what was recorded.
	strict := filepath.Join(t.TempDir(), "strict.toml")
	text, err := os.ReadFile(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(strict, []byte(strings.Replace(string(text), "read_p99_us = 1_000_000", "read_p99_us = 100", 1)), 0o644))
	rr := runSuite(t, []string{"-test.run=TestLatency"}, "-replay="+rec, "-spec="+strict)
	assert.NotEqual(t, 0, rr.Code, "a missed target fails the run")
	replayed := rr.results(t)
	assert.Equal(t, "replay", replayed.Mode)
	for _, res := range replayed.Results {
		if res.Kind == report.KindLatency {
			assert.Equal(t, report.Fail, res.Verdict)
			assert.Contains(t, res.Error, "IOPS at read p99 ≤ 100 µs: no point within it; min_iops 400")
			assert.Contains(t, rr.Stdout, res.Error)
		}
	}

	// A min_iops between the curve's fewest IOPS within the bound and its
	// most: the highest IOPS within the bound meets it, the lowest would
	// not. (The throttle admits one read each 500 µs, and a read takes no
	// longer on the loop device, so QD1 already reaches it: 1,999 IOPS on
	// a quiet machine. The curve's fewest is the open-loop point asked 500.)
	// Both counted as the judge counts them: points that passed, not
	// saturated, within the bound.
	least, most := maxIOPS, 0.0
	for _, p := range append(closed, open...) {
		if !p.Saturated && p.Verdict == report.Pass && p.Read.P99 <= 1_000_000 {
			least, most = min(least, p.Actual), max(most, p.Actual)
		}
	}
	t.Logf("QD1 %.0f IOPS; the fewest IOPS within the bound %.0f, the most %.0f", qd1, least, most)
	require.Greater(t, most, 1.5*least, "a target between the curve's fewest and most IOPS tells max from min")
	mid := filepath.Join(t.TempDir(), "mid.toml")
	require.NoError(t, os.WriteFile(mid, []byte(strings.Replace(string(text), "min_iops    = 400", fmt.Sprintf("min_iops    = %.0f", (least+most)/2), 1)), 0o644))
	rm := runSuite(t, []string{"-test.run=TestLatency"}, "-replay="+rec, "-spec="+mid)
	assert.Equal(t, 0, rm.Code, "a target between QD1 and the peak is met: stdout:\n%s", rm.Stdout)
	assert.Equal(t, report.Pass, rm.verdicts(t)["TestLatency/64MiB/4KB_Random_Read"], rm.Stdout)

	// No target, and one point's recorded output gone: the point fails,
	// and so do TestLatency and the run (not a skip, not QUALIFIED).
	none := filepath.Join(t.TempDir(), "none.toml")
	untargeted := string(text)[:strings.Index(string(text), "[capacity.at_latency.")]
	require.NoError(t, os.WriteFile(none, []byte(untargeted), 0o644))
	require.NoError(t, os.Remove(filepath.Join(rec, "TestLatency", "64MiB", "4KB_Random_Read", "iodepth_8.json")))
	rn := runSuite(t, []string{"-test.run=TestLatency"}, "-replay="+rec, "-spec="+none)
	assert.NotEqual(t, 0, rn.Code, "a failed point fails the run: stdout:\n%s", rn.Stdout)
	assert.Equal(t, report.Fail, rn.verdicts(t)["TestLatency/64MiB/4KB_Random_Read"], rn.Stdout)
	summary, err = os.ReadFile(filepath.Join(rn.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, strings.SplitN(string(summary), "\n", 2)[0], "NOT QUALIFIED", "summary's first line")
}

// userPriority is what runs the suite at nice -10 when this test runs
// at a lower priority (make test's nice 10) and may raise it; nil
// otherwise. Whether it may is tried, as the Makefile tries it for the
// guests: CAP_SYS_NICE in a user namespace is not enough, and busybox's
// nice then fails rather than run the suite. A latency is the
// scheduler's as much as the device's, and the curve's fio, its reads
// throttled to 2,000 a second and its writes to loopIOPS, uses a few
// per cent of a core: above make test's guests at nice -5 it is woken
// when its I/O completes, as on a quiet host. Beside them, at nice 10
// fio's threads woke on some 3 % of a core and every point of the curve
// was host-bound (p99 up to 550 ms); at nice 0 an open-loop point's mean
// at half the throttle came out above the deepest queue's, twice (21.3
// against 20.2 ms; 23.3 against 16.6 ms, p99 692 ms).
func userPriority() []string {
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0) // 20 - nice on Linux
	if err != nil {
		return nil
	}
	// A user whose limit (RLIMIT_NICE) stops short of -10 gets nice 0,
	// a user's run's priority.
	for _, nice := range []int{latencyNice, 0} {
		if 20-prio <= nice {
			return nil
		}
		via := []string{"nice", "-n", strconv.Itoa(prio - 20 + nice)}
		if out, err := exec.Command(via[0], append(via[1:], "nice")...).Output(); err == nil && strings.TrimSpace(string(out)) == strconv.Itoa(nice) {
			return via
		}
	}
	return nil
}

// latencyNice is the nice value userPriority runs the latency curve's
// suite at: above make test's guests (GUEST_NICE, -5).
const latencyNice = -10

// Workloads with bssplit, trims, rate_iops, thinktime and
// buffer_compress_percentage run on a loop device, and the job file fio
// ran holds each key as fio names it.
func TestApplicationKeys(t *testing.T) {
	runParallel(t) // it mostly waits on fio
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
