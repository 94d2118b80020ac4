package baseline

import (
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
