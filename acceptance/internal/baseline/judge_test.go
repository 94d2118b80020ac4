package baseline

import (
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A cell whose throughput holds but whose read p99 rose 15 %: one
// recording a side, so judged by the tolerance alone; the latency's own
// tolerance decides.
func TestJudgeLatency(t *testing.T) {
	cell := func(p99 float64) report.Result {
		return report.Result{Test: "TestSingleDrive/1.92TB/4KB_Random_Read", Kind: report.KindSingle, Capacity: "1.92TB",
			Workload: "4KB Random Read", Drives: 1, Metric: "iops", Actual: 1e6, Verdict: report.Pass,
			Read: &report.Latency{P99: p99, P9999: 2 * p99}}
	}
	tests := []struct {
		latencyTolerance float64
		verdict          string
	}{{0.05, report.Fail}, {0.20, report.Pass}}
	for _, tt := range tests {
		th := DefaultThresholds
		th.LatencyTolerance = tt.latencyTolerance
		got := Judge([]report.Result{cell(100)}, []report.Result{cell(115)}, th)
		if len(got) != 1 {
			t.Fatalf("Judge = %d cells, want 1", len(got))
		}
		c := got[0]
		if c.Test != "TestBaseline/1.92TB/4KB_Random_Read" || c.Verdict != tt.verdict {
			t.Errorf("latency_tolerance %v: Judge = %s %s (%s), want %s", tt.latencyTolerance, c.Test, c.Verdict, c.Error, tt.verdict)
		}
		if n := len(c.Baseline.Latency); n != 2 {
			t.Errorf("latency comparisons = %d, want read p99 and p99.99", n)
		}
		if c.Baseline.Metric.Verdict != report.Same {
			t.Errorf("metric verdict = %q, want ~", c.Baseline.Metric.Verdict)
		}
		if tt.verdict == report.Fail && c.Error != "4KB Random Read read p99 latency: 115 µs vs baseline 100 µs: +15.00 % (1 sample): regressed beyond the 5 % tolerance (judged by tolerance alone); 4KB Random Read read p99.99 latency: 230 µs vs baseline 200 µs: +15.00 % (1 sample): regressed beyond the 5 % tolerance (judged by tolerance alone)" {
			t.Errorf("Error = %q", c.Error)
		}
	}
}

// A cell whose figure on either side was bound by something other than
// the drive is not compared: the case (this run host-bound at
// -41 % against an idle baseline) reads "not comparable: host-bound" and
// is inconclusive, not regressed; so do the link, heat, steady-state and
// preconditioning causes, on either side. A cell that failed below spec
// on its own figures is compared.
func TestJudgeNotComparable(t *testing.T) {
	cell := func(actual float64, verdict, cause, msg string) report.Result {
		return report.Result{Test: "TestSingleDrive/128MiB/4KB_Random_Read", Kind: report.KindSingle, Capacity: "128MiB",
			Workload: "4KB Random Read", Drives: 1, Metric: "iops", Actual: actual, Verdict: verdict, Cause: cause, Error: msg}
	}
	idle := cell(13_428, report.Pass, "", "")
	for _, tt := range []struct {
		name       string
		base, this report.Result
		verdict    string
		want       string
	}{
		{"host-bound this run", idle,
			cell(7_894, report.Inconclusive, report.CauseHostBound, "4KB Random Read: actual 7,894 IOPS < spec 1,000,000 IOPS (0.79 % of spec); fio's 8 jobs on CPUs 0-1 (2) were 100 % busy"),
			report.Inconclusive, "4KB Random Read: not comparable: host-bound on this run (TestSingleDrive/128MiB/4KB_Random_Read: 4KB Random Read: actual 7,894 IOPS < spec 1,000,000 IOPS (0.79 % of spec); fio's 8 jobs on CPUs 0-1 (2) were 100 % busy): the figure is not the drive's alone"},
		{"pcie link on the baseline", cell(13_428, report.Inconclusive, report.CausePCIeLink, "link x2 of x4"), cell(7_894, report.Fail, report.CauseBelowSpec, "below"),
			report.Inconclusive, "not comparable: pcie link degraded on the baseline"},
		{"pcie bound this run", idle, cell(7_894, report.Inconclusive, report.CausePCIeBound, "6 of this cell's drives share switch port 0000:09:00.0"),
			report.Inconclusive, "not comparable: pcie bound on this run"},
		{"thermal", idle, cell(7_894, report.Inconclusive, report.CauseThrottled, "throttled"), report.Inconclusive, "not comparable: thermal throttle on this run"},
		{"not steady", idle, cell(7_894, report.Inconclusive, report.CauseNotSteady, "not steady"), report.Inconclusive, "not comparable: not steady on this run"},
		{"not preconditioned", idle, cell(13_500, report.Inconclusive, report.CausePrecondition, "quick"), report.Inconclusive, "not comparable: not preconditioned on this run"},
		{"both sides", cell(13_428, report.Inconclusive, report.CauseNotSteady, "ns"), cell(7_894, report.Inconclusive, report.CauseHostBound, "hb"),
			report.Inconclusive, "not comparable: host-bound on this run (TestSingleDrive/128MiB/4KB_Random_Read: hb); not steady on the baseline (TestSingleDrive/128MiB/4KB_Random_Read: ns)"},
		{"below spec on its own figures", idle, cell(7_894, report.Fail, report.CauseBelowSpec, "below spec"),
			report.Fail, "4KB Random Read: 7,894 IOPS vs baseline 13,428 IOPS: -41.21 % (1 sample): regressed beyond the 5 % tolerance (judged by tolerance alone)"},
	} {
		got := Judge([]report.Result{tt.base}, []report.Result{tt.this}, DefaultThresholds)
		if len(got) != 1 {
			t.Fatalf("%s: Judge = %d cells, want 1", tt.name, len(got))
		}
		c := got[0]
		if c.Verdict != tt.verdict || !strings.Contains(c.Error, tt.want) {
			t.Errorf("%s: Judge = %s %q, want %s containing %q", tt.name, c.Verdict, c.Error, tt.verdict, tt.want)
		}
		if tt.verdict == report.Inconclusive {
			if c.Cause != report.CauseNotComparable || c.Baseline.Metric.Verdict == report.Regressed {
				t.Errorf("%s: cause %q, metric verdict %q; want not comparable, not regressed", tt.name, c.Cause, c.Baseline.Metric.Verdict)
			}
		}
	}
	// The baseline gate is then INCONCLUSIVE, not NOT QUALIFIED.
	run := report.Run{Results: Judge([]report.Result{idle}, []report.Result{cell(7_894, report.Inconclusive, report.CauseHostBound, "hb")}, DefaultThresholds)}
	found := false
	for _, g := range run.Gates() {
		if g.Name == report.BaselineGate {
			found = true
			if g.Verdict != report.CapacityInconclusive {
				t.Errorf("baseline gate %s, want INCONCLUSIVE", g)
			}
		}
	}
	if !found {
		t.Errorf("Gates() = %+v, want a baseline gate", run.Gates())
	}
}

// A result whose figure is not the drive's is left out of its side, not
// the whole cell: a baseline of four hosts, one of whose cells was not
// steady, still compares this run's -41 % with the other three and fails
// it as regressed (the message says what was left out); a run of two
// hosts, one host-bound, is compared on the other. Only a side left with
// no result of the drive's own is not comparable.
func TestJudgeLeavesOutWhatIsNotTheDrives(t *testing.T) {
	cell := func(host string, actual float64, verdict, cause string) report.Result {
		return report.Result{Test: "TestSingleDrive/128MiB/4KB_Random_Read", Host: host, Kind: report.KindSingle, Capacity: "128MiB",
			Workload: "4KB Random Read", Drives: 1, Metric: "iops", Actual: actual, Verdict: verdict, Cause: cause, Error: cause}
	}
	fleet := []report.Result{cell("a", 13_428, report.Pass, ""), cell("b", 13_500, report.Pass, ""), cell("c", 13_390, report.Pass, ""),
		cell("d", 6_000, report.Inconclusive, report.CauseNotSteady)}
	for _, tt := range []struct {
		name       string
		base, this []report.Result
		verdict    string
		want       string
		n          [2]int // figures compared: baseline, this run
	}{
		{"one baseline host not steady", fleet, []report.Result{cell("x", 7_894, report.Fail, report.CauseBelowSpec)},
			report.Fail, "regressed beyond the 5 % tolerance (judged by tolerance alone) (left out as not the drive's: not steady on the baseline (d: ", [2]int{3, 1}},
		{"one host of this run host-bound", fleet[:3], []report.Result{cell("x", 7_894, report.Fail, report.CauseBelowSpec), cell("y", 7_000, report.Inconclusive, report.CauseHostBound)},
			report.Fail, "left out as not the drive's: host-bound on this run (y: ", [2]int{3, 1}},
		{"within the tolerance once the stray host is left out", fleet, []report.Result{cell("x", 13_300, report.Pass, "")},
			report.Pass, "", [2]int{3, 1}},
		{"every baseline host not steady", fleet[3:], []report.Result{cell("x", 7_894, report.Fail, report.CauseBelowSpec)},
			report.Inconclusive, "not comparable: not steady on the baseline", [2]int{1, 1}},
	} {
		got := Judge(tt.base, tt.this, DefaultThresholds)
		if len(got) != 1 {
			t.Fatalf("%s: Judge = %d cells, want 1", tt.name, len(got))
		}
		c := got[0]
		if c.Verdict != tt.verdict || !strings.Contains(c.Error, tt.want) {
			t.Errorf("%s: Judge = %s %q, want %s containing %q", tt.name, c.Verdict, c.Error, tt.verdict, tt.want)
		}
		if n := [2]int{c.Baseline.Metric.Baseline.N, c.Baseline.Metric.This.N}; n != tt.n {
			t.Errorf("%s: compared %d + %d figures, want %d + %d", tt.name, n[0], n[1], tt.n[0], tt.n[1])
		}
	}
}
