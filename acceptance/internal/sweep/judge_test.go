package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// point is a measured closed-loop point at qd: iops, and its read p99 in µs.
func point(qd int, iops, p99 float64) report.Result {
	p := report.Result{Kind: report.KindSweep, Test: "TestLatency/1.92TB/RR/iodepth_" + string(rune('0'+qd)), Verdict: report.Pass,
		Actual: iops, Read: &report.Latency{P50: p99 / 2, P99: p99, Max: p99 * 2, Mean: p99 / 3}}
	p.IODepth = qd
	return p
}

func open(rate, iops, p99 float64) report.Result {
	p := point(0, iops, p99)
	p.IODepth, p.RateIOPS, p.Saturated = 0, rate, iops < HoldShare*rate
	return p
}

func with(p report.Result, f func(*report.Result)) report.Result { f(&p); return p }

type judgeTest struct {
	name      string
	points    []report.Result
	min       float64
	tolerance float64
	verdict   string
	actual    float64
	says      string // in the message
}

var judgeTests = []judgeTest{
	{"met", []report.Result{point(1, 500, 900), point(2, 1000, 1500), point(4, 1900, 2100), point(8, 2000, 9000)},
		1800, 0, report.Pass, 1900, "IOPS at read p99 ≤ 2,500 µs: 1,900 IOPS (iodepth 4); min_iops 1,800"},
	{"missed", []report.Result{point(1, 500, 900), point(2, 1000, 1500), point(4, 1900, 2600)},
		1800, 0, report.Fail, 1000, "1,000 IOPS (iodepth 2); min_iops 1,800"},
	{"within tolerance", []report.Result{point(2, 1700, 1500)}, 1800, 0.10, report.Pass, 1700, "pass line 1,620"},
	{"no point within the bound", []report.Result{point(1, 500, 3000)}, 100, 0, report.Fail, 0, "no point within it; min_iops 100"},
	{"a saturated open-loop point is no latency figure", []report.Result{open(1000, 1000, 800), open(4000, 2000, 1000)},
		1800, 0, report.Fail, 1000, "1,000 IOPS (1,000 IOPS asked)"},
	{"a throttled point with more IOPS leaves a miss inconclusive",
		[]report.Result{point(1, 500, 900), with(point(4, 1900, 2000), func(p *report.Result) {
			p.Verdict, p.Cause, p.Error = report.Inconclusive, report.CauseThrottled, "throttled"
		})}, 1800, 0, report.Inconclusive, 500, "not judged by: iodepth 4 (1,900 IOPS): throttled"},
	{"an inconclusive point does not undo a pass",
		[]report.Result{point(1, 1900, 900), with(point(4, 2500, 2000), func(p *report.Result) { p.Verdict = report.Inconclusive })},
		1800, 0, report.Pass, 1900, ""},
	{"a host-bound point counts, but leaves a miss inconclusive",
		[]report.Result{point(1, 1000, 900), with(point(4, 1500, 2000), func(p *report.Result) {
			p.Cause, p.Error = report.CauseHostBound, "host-bound"
		})}, 1800, 0, report.Inconclusive, 1500, "1,500 IOPS (iodepth 4)"},
	{"a host-bound point that meets the target passes it",
		[]report.Result{with(point(4, 1900, 2000), func(p *report.Result) { p.Cause, p.Error = report.CauseHostBound, "host-bound" })},
		1800, 0, report.Pass, 1900, ""},
	{"a failed point fails the target", []report.Result{point(1, 1900, 900), with(point(4, 0, 0), func(p *report.Result) {
		p.Verdict, p.Error, p.Read = report.Fail, "RR: fio failed", nil
	})}, 1800, 0, report.Fail, 1900, "RR: fio failed"},
}

func TestJudge(t *testing.T) {
	at := specs.AtLatency{Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	for _, tt := range judgeTests {
		at.MinIOPS = tt.min
		res, msg := Judge("TestLatency/1.92TB/RR", specs.Capacity{Name: "1.92TB"}, specs.Workload{Name: "RR"}, at, tt.points, tt.tolerance)
		if res.Verdict != tt.verdict || res.Actual != tt.actual || !strings.Contains(msg, tt.says) {
			t.Errorf("%s: Judge = %s, %v IOPS, %q; want %s, %v, containing %q", tt.name, res.Verdict, res.Actual, msg, tt.verdict, tt.actual, tt.says)
		}
		if (res.Verdict == report.Pass) != (res.Error == "") {
			t.Errorf("%s: Judge verdict %s with error %q: a pass has none, every other verdict says why", tt.name, res.Verdict, res.Error)
		}
		if res.Kind != report.KindLatency || res.Spec != tt.min || len(res.QoS) != 1 || res.QoS[0].LimitUs != 2500 {
			t.Errorf("%s: Judge = kind %q spec %v qos %+v, want latency, %v, the bound 2500 µs", tt.name, res.Kind, res.Spec, res.QoS, tt.min)
		}
	}
}

// TestJudgeMonotone: a point with more IOPS within the bound never makes
// the verdict worse.
func TestJudgeMonotone(t *testing.T) {
	at := specs.AtLatency{MinIOPS: 1500, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	rank := map[string]int{report.Fail: 0, report.Inconclusive: 1, report.Pass: 2}
	base := []report.Result{point(1, 500, 900)}
	for iops := 100.0; iops < 3000; iops += 100 {
		before, _ := Judge("T", specs.Capacity{}, specs.Workload{}, at, base, 0)
		after, _ := Judge("T", specs.Capacity{}, specs.Workload{}, at, append(base[:1:1], point(2, iops, 2000)), 0)
		if rank[after.Verdict] < rank[before.Verdict] || after.Actual < before.Actual {
			t.Errorf("adding a point of %v IOPS within the bound: %s (%v) → %s (%v)", iops, before.Verdict, before.Actual, after.Verdict, after.Actual)
		}
	}
}

func TestSaturated(t *testing.T) {
	for _, tt := range []struct {
		achieved, rate, secs float64
		want                 bool
	}{
		{1000, 1000, 2, false},
		{985, 1000, 2, false},     // 30 short of 2,000: within 3 × √2000 = 134
		{930, 1000, 2, true},      // 140 short
		{2000, 4000, 2, true},     // the throttle's rate, half what was asked
		{990_000, 1e6, 60, false}, // exactly 99 %
		{985_000, 1e6, 60, true},  // 900,000 short of 60 M: far beyond √60 M
		{0, 1000, 0, true},
	} {
		if got := Saturated(tt.achieved, tt.rate, tt.secs); got != tt.want {
			t.Errorf("Saturated(%v, %v, %v) = %v, want %v", tt.achieved, tt.rate, tt.secs, got, tt.want)
		}
	}
}

// An inconclusive point with fewer IOPS than the best passing one could
// not have raised the IOPS at the bound: the miss is a FAIL.
func TestInconclusiveBelowBest(t *testing.T) {
	at := specs.AtLatency{MinIOPS: 3000, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	pts := []report.Result{point(4, 1900, 900), with(point(1, 500, 800), func(p *report.Result) {
		p.Verdict, p.Cause, p.Error = report.Inconclusive, report.CauseNotSteady, "not steady"
	})}
	res, _ := Judge("T", specs.Capacity{}, specs.Workload{Name: "RR"}, at, pts, 0)
	if res.Verdict != report.Fail {
		t.Errorf("verdict %s, want FAIL", res.Verdict)
	}
}

// A point the drive failed with an I/O error fails the target with the
// drive's cause, not fio's.
func TestIOErrorCause(t *testing.T) {
	at := specs.AtLatency{MinIOPS: 1000, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	pts := []report.Result{point(1, 1900, 900), with(point(4, 0, 0), func(p *report.Result) {
		p.Verdict, p.Cause, p.Error, p.Read = report.Fail, report.CauseIOError, "RR: I/O error (EIO)", nil
	})}
	res, _ := Judge("T", specs.Capacity{}, specs.Workload{Name: "RR"}, at, pts, 0)
	if res.Cause != report.CauseIOError {
		t.Errorf("cause %q", res.Cause)
	}
}

// A sweep interrupted after its first points is not judged whole: a
// target the measured points meet is INCONCLUSIVE, naming what is missing.
func TestInterruptedSweepInconclusive(t *testing.T) {
	at := specs.AtLatency{MinIOPS: 1000, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	for _, cause := range []string{report.CauseInterrupted, report.CauseNotRecorded} {
		pts := []report.Result{point(1, 1900, 900), with(point(8, 0, 0), func(p *report.Result) {
			p.Verdict, p.Cause, p.Error, p.Read = report.Inconclusive, cause, "RR: not measured", nil
		})}
		res, msg := Judge("T", specs.Capacity{}, specs.Workload{Name: "RR"}, at, pts, 0)
		if res.Verdict != report.Inconclusive || res.Cause != cause || !strings.Contains(msg, "not measured: iodepth 8 ("+cause+")") {
			t.Errorf("%s: Judge = %s (%s) %q, want INCONCLUSIVE (%s) naming iodepth 8", cause, res.Verdict, res.Cause, msg, cause)
		}
	}
}

// A host-bound point within the bound when no point passed (a nearly hung
// drive whose fio CPUs were saturated) leaves the target INCONCLUSIVE: a
// faster host might have met it. It must not crash the judge.
func TestHostBoundWithNoPassingPoint(t *testing.T) {
	at := specs.AtLatency{MinIOPS: 1000, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	pts := []report.Result{with(point(1, 0.5, 900), func(p *report.Result) {
		p.Verdict, p.Cause, p.Error = report.Inconclusive, report.CauseHostBound, "host-bound"
	})}
	res, _ := Judge("T", specs.Capacity{}, specs.Workload{Name: "RR"}, at, pts, 0)
	if res.Verdict != report.Inconclusive {
		t.Errorf("verdict %s, want INCONCLUSIVE", res.Verdict)
	}
}
