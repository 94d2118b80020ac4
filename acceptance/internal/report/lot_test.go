package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lotRun is a run with a scaling step and its three TestLot outcomes, as
// the suite's judge leaves them (figures written here, the judge tested
// in package lot and in qual on recordings).
func lotRun() *Run {
	lotOf := func(verdict string, n, passing int, mean, sd, k, bound float64) *LotResult {
		l := &LotResult{Coverage: 0.95, Confidence: 0.95, Method: "normal", N: n, Passing: passing, K: k, Mean: mean, SD: sd,
			Bound: bound, PassLine: 90, PassingShareUpper: 1, ZeroFailure: 59, Verdict: verdict,
			Normality: &Normality{Test: "shapiro-wilk", W: 0.95, P: 0.7, Alpha: 0.05, Normal: true}}
		for i := range n {
			v := mean + float64(i%3-1)*sd
			l.Figures = append(l.Figures, LotFigure{Drive: "/dev/loop" + string(rune('0'+i)), Value: v, Test: "TestScaling/6_drives/W", Pass: v >= 90})
		}
		return l
	}
	return &Run{Spec: "Loop device", Mode: "replay", Capacities: []string{"64MiB"}, Workloads: []string{"R", "W", "M"},
		Results: []Result{
			{Test: "TestSingleDrive/64MiB/R", Kind: KindSingle, Capacity: "64MiB", Workload: "R", Drives: 1, Metric: "MBps",
				Spec: 100, Expected: 100, Actual: 300, Ratio: 3, Tolerance: 0.1, Verdict: Pass},
			{Test: "TestLot/64MiB/R", Kind: KindLot, Capacity: "64MiB", Workload: "R", Drives: 6, Metric: "MBps", Spec: 100,
				Expected: 100, Actual: 292, Tolerance: 0.1, Verdict: Pass, Lot: lotOf(LotAccepted, 6, 6, 300, 2, 3.7077, 292.6)},
			{Test: "TestLot/64MiB/W", Kind: KindLot, Capacity: "64MiB", Workload: "W", Drives: 6, Metric: "MBps", Spec: 100,
				Expected: 100, Actual: 80, Tolerance: 0.1, Verdict: Inconclusive, Cause: CauseLotUndecided,
				Error: "W: lot inconclusive at coverage 95 %, confidence 95 %: bound below; at this mean and spread 10 drives (4 more) would accept it",
				Lot:   lotOf(LotInconclusive, 6, 6, 200, 30, 3.7077, 88.8)},
			{Test: "TestLot/64MiB/M", Kind: KindLot, Capacity: "64MiB", Workload: "M", Drives: 6, Metric: "MBps", Spec: 100,
				Expected: 100, Actual: 10, Tolerance: 0.1, Verdict: Fail, Cause: CauseLotRejected,
				Error: "M: lot rejected at coverage 95 %, confidence 95 %: 4 of 6 drives pass; n = 6 (TestScaling/6_drives/M), mean 96 MB/s", Lot: lotOf(LotRejected, 6, 4, 96, 23, 3.7077, 10)},
		}}
}

// The lot cells make a gate of their own, out of the capacity's.
func TestLotGate(t *testing.T) {
	gates := map[string]Gate{}
	for _, g := range lotRun().Gates() {
		gates[g.Name] = g
	}
	require.Contains(t, gates, LotGate)
	g := gates[LotGate]
	assert.Equal(t, NotQualified, g.Verdict)
	assert.Equal(t, [4]int{3, 1, 1, 1}, [4]int{g.Cells, g.Passed, g.Failed, g.Inconclusive})
	assert.Contains(t, g.Reason, "M: lot rejected")
	assert.Equal(t, 1, gates["64MiB"].Cells, "the capacity's gate holds its own cell only")
	assert.Equal(t, NotQualified, lotRun().Overall().Verdict)
}

// summary.md's lot section: the rule, one row per cell, the chart; the
// capacity's table does not list the lot cells.
func TestLotSummary(t *testing.T) {
	s := string(lotRun().Summary())
	require.Contains(t, s, "## Lot acceptance")
	assert.Contains(t, s, "at least 95 % of the lot meets each cell's pass line, with 95 % confidence, by the method the spec names (normal). "+
		"Normal theory, assuming normal figures: accepted when every drive passes")
	// The method is the spec's, never a fall-back on another test.
	assert.NotContains(t, s, "or when that bound falls short, distribution-free")
	run := lotRun()
	for i := range run.Results {
		if l := run.Results[i].Lot; l != nil {
			l.Method = "distribution-free"
		}
	}
	free := string(run.Summary())
	assert.Contains(t, free, "by the method the spec names (distribution-free). Distribution-free, assuming no distribution: "+
		"accepted when the Clopper–Pearson lower bound of the passing share is at or above the coverage (every drive passing needs 59 of them")
	assert.NotContains(t, free, "Normal theory")
	assert.Contains(t, s, "| 64MiB | R | 6 | 6 | 300 MB/s | 2 MB/s | normal (W 0.950, p 0.700) | 3.708 | 293 MB/s | 90 MB/s | ACCEPTED |")
	assert.Contains(t, s, "| INCONCLUSIVE: bound below; at this mean and spread 10 drives (4 more) would accept it |")
	assert.Contains(t, s, "| REJECTED: 4 of 6 drives pass |")
	assert.Contains(t, s, "![lot](charts/lot.svg)")
	capacity := s[strings.Index(s, "## 64MiB"):strings.Index(s, "## Lot acceptance")]
	assert.NotContains(t, capacity, "lot")
	assert.NotContains(t, string((&Run{}).Summary()), "Lot acceptance")
}

func TestLotChart(t *testing.T) {
	var cells []Result
	for _, r := range lotRun().Results {
		if r.Kind == KindLot {
			cells = append(cells, r)
		}
	}
	svg, err := LotChartSVG(cells)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	assert.Contains(t, string(svg), "tolerance bound")
	_, err = LotChartSVG(nil)
	assert.Error(t, err)
}

// results.json carries the lot judgment under "lot".
func TestLotJSON(t *testing.T) {
	js, err := lotRun().JSON()
	require.NoError(t, err)
	for _, key := range []string{`"kind": "lot"`, `"lot": {`, `"method": "normal"`, `"n": 6`, `"k": 3.7077`, `"mean": 300`,
		`"s": 2`, `"bound": 292.6`, `"pass_line": 90`, `"verdict": "accepted"`, `"zero_failure_n": 59`, `"test": "shapiro-wilk"`} {
		assert.Contains(t, string(js), key)
	}
}

// A lot of one drive has no normal bound (no standard deviation): its row
// shows none, and the chart does not draw a bound of 0 for it.
func TestLotSummaryOneDriveNoBound(t *testing.T) {
	run := lotRun()
	one := &LotResult{Coverage: 0.95, Confidence: 0.95, Method: "normal", N: 1, Passing: 1, Mean: 300, PassLine: 90,
		PassingShareUpper: 1, ZeroFailure: 59, Verdict: LotInconclusive,
		Figures: []LotFigure{{Drive: "/dev/loop30", Value: 300, Test: "TestSingleDrive/32MiB/R", Pass: true}}}
	assert.False(t, one.HasBound())
	run.Results = append(run.Results, Result{Test: "TestLot/32MiB/R", Kind: KindLot, Capacity: "32MiB", Workload: "R", Drives: 1,
		Metric: "MBps", Spec: 100, Expected: 100, Tolerance: 0.1, Verdict: Inconclusive, Cause: CauseLotUndecided,
		Error: "R: lot inconclusive at coverage 95 %, confidence 95 % (normal): 1 drive: too few", Lot: one})
	assert.Contains(t, string(run.Summary()), "| 32MiB | R | 1 | 1 | 300 MB/s | - | normal | - | - | 90 MB/s | INCONCLUSIVE", "one figure has no s: missing, not 0")
	assert.True(t, lotRun().Results[1].Lot.HasBound(), "six figures have one")
	assert.False(t, (&LotResult{Method: "distribution-free", N: 6}).HasBound(), "fewer than 59 distribution-free")
}
