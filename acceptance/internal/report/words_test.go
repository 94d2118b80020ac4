package report

import (
	"strings"
	"testing"
)

// wordsRun is a run as a newcomer meets it: a smoke run's cell far above
// spec but inconclusive, a cell with the spec's latency limits judged, a
// cell the run was stopped before, and a lot judged from no drive.
func wordsRun() *Run {
	return &Run{Spec: "Test Drive", Mode: "live", Precondition: "none", Workloads: []string{"4KB Random Read", "4KB Random Write", "128KB Sequential Read"},
		Results: []Result{
			{Test: "TestSingleDrive/1.92TB/4KB_Random_Read", Kind: KindSingle, Capacity: "1.92TB", Workload: "4KB Random Read", Drives: 1, Metric: "iops",
				Spec: 100_000, Expected: 100_000, Actual: 280_000, Ratio: 2.8, Verdict: Inconclusive, Cause: CausePrecondition,
				Error: "4KB Random Read: measured with -precondition=none",
				Read:  &Latency{P50: 80, P99: 212, P999: 400, P9999: 1310},
				QoS:   []QoSCheck{{Key: "read_p99_us", LimitUs: 250, Actual: 212, Verdict: Pass}, {Key: "read_p99_99_us", LimitUs: 1000, Actual: 1310, Verdict: Fail}}},
			{Test: "TestSingleDrive/1.92TB/4KB_Random_Write", Kind: KindSingle, Capacity: "1.92TB", Workload: "4KB Random Write", Drives: 1, Metric: "iops",
				Spec: 50_000, Expected: 50_000, Verdict: Inconclusive, Cause: CauseInterrupted,
				Error: "4KB Random Write: not measured: never reached: the run was stopped (interrupted) before this cell"},
			{Test: "TestLot/1.92TB/4KB_Random_Read", Kind: KindLot, Capacity: "1.92TB", Workload: "4KB Random Read", Metric: "MBps", Verdict: Inconclusive,
				Error: "4KB Random Read: lot inconclusive: no drive has a figure of its own",
				Lot:   &LotResult{Coverage: 0.95, Confidence: 0.95, Method: "normal", PassLine: 14500, Verdict: LotInconclusive}},
		}}
}

type summaryRowTest struct {
	what string
	want string // a whole line of summary.md
}

var summaryRowTests = []summaryRowTest{
	{"a figure far above spec says why it is inconclusive in its row, and the spec's latency limits are beside it",
		"| 4KB Random Read | 100,000 IOPS | 280,000 IOPS | 280.00 % | INCONCLUSIVE: not preconditioned: a fresh drive runs above its steady state [^1] | " +
			"read p99 212 µs ≤ 250 µs PASS; read p99.99 1,310 µs > 1,000 µs FAIL | 80 | 212 | 400 | 1,310 | - |"},
	{"a cell never reached is listed as such",
		"| 4KB Random Write | 50,000 IOPS | - | - | NOT REACHED: the run was stopped [^2] | - | - | - | - | - | - |"},
	{"a lot of no drive has no mean, not a mean of 0",
		"| 1.92TB | 4KB Random Read | 0 | 0 | - | - | normal | - | - | 14,500 MB/s | INCONCLUSIVE: no drive has a figure of its own |"},
}

func TestSummaryRowsSayWhy(t *testing.T) {
	got := string(wordsRun().Summary())
	lines := strings.Split(got, "\n")
	for _, tt := range summaryRowTests {
		found := false
		for _, l := range lines {
			found = found || l == tt.want
		}
		if !found {
			t.Errorf("%s: summary.md lacks the line\n%s\ngot:\n%s", tt.what, tt.want, got)
		}
	}
	// The gate counts the cell never reached, as the table lists it.
	if want := "- **1.92TB: INCONCLUSIVE**: 2 of 2 cells inconclusive"; !strings.Contains(got, want) {
		t.Errorf("summary.md lacks %q:\n%s", want, got)
	}
}
