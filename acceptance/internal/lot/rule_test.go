package lot

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// binomialTailP is the p at which P(Bin(n, p) ≥ x) = alpha, by bisection
// on the tail summed term by term in logs: the Clopper–Pearson lower
// bound at 1 − alpha by its definition, sharing nothing with the Beta
// quantile ClopperPearsonLower computes it with.
func binomialTailP(x, n int, alpha float64) float64 {
	tail := func(p float64) float64 {
		var sum float64
		for k := x; k <= n; k++ {
			lc, _ := math.Lgamma(float64(n + 1))
			lk, _ := math.Lgamma(float64(k + 1))
			lnk, _ := math.Lgamma(float64(n - k + 1))
			sum += math.Exp(lc - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		}
		return sum
	}
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if tail(mid) < alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// The Clopper–Pearson lower bound against its closed forms and its
// definition (binomialTailP), and the order-statistic rule it gives at
// 95 %/95 %: 59 of 59, 101 of 102, 119 of 120 and 199 of 200 passing
// drives reach the coverage; 58 of 58, 100 of 102 and 118 of 120 do not.
// The fewest with one drive failing are 92 of 93, with two 122 of 124.
func TestClopperPearsonLower(t *testing.T) {
	assert.Equal(t, 0.0, ClopperPearsonLower(0, 6, 0.95))
	// x = n: (1 − C)^(1/n).
	assert.InDelta(t, math.Pow(0.05, 1.0/59), ClopperPearsonLower(59, 59, 0.95), 1e-12)
	// x = 1: 1 − C^(1/n).
	assert.InDelta(t, 1-math.Pow(0.95, 1.0/6), ClopperPearsonLower(1, 6, 0.95), 1e-12)
	for _, xn := range [][2]int{{101, 102}, {199, 200}, {100, 102}, {3, 6}, {118, 120}, {950, 1000}} {
		assert.InDelta(t, binomialTailP(xn[0], xn[1], 0.05), ClopperPearsonLower(xn[0], xn[1], 0.95), 1e-9, "%d of %d", xn[0], xn[1])
	}
	for _, tt := range []struct {
		x, n int
		ok   bool
	}{{59, 59, true}, {58, 58, false}, {101, 102, true}, {100, 102, false}, {119, 120, true}, {118, 120, false}, {199, 200, true}} {
		assert.Equal(t, tt.ok, ClopperPearsonLower(tt.x, tt.n, 0.95) >= 0.95, "%d of %d", tt.x, tt.n)
	}
	// The fewest drives that accept with one failing: 92 of 93 (91 of 92
	// do not); with two, 122 of 124 (121 of 123 do not), by the definition.
	assert.Equal(t, 92, allowing(ruleDF, 1))
	assert.GreaterOrEqual(t, binomialTailP(92, 93, 0.05), 0.95)
	assert.Less(t, binomialTailP(91, 92, 0.05), 0.95)
	assert.Equal(t, 122, allowing(ruleDF, 2))
	assert.GreaterOrEqual(t, binomialTailP(122, 124, 0.05), 0.95)
	assert.Less(t, binomialTailP(121, 123, 0.05), 0.95)
	assert.Equal(t, 59, allowing(ruleDF, 0))
}

// figuresAt are n figures, tight (±1 %) around mean, the first bad of
// them set to bad.
func figuresAt(n int, mean float64, bad int, at float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + 0.01*float64(i%7-3)/3)
		if i < bad {
			out[i] = at
		}
	}
	return out
}

// Six tight figures at twice the spec (line 90, spec 100, figures ~200):
// accepted by the normal method, saying the count, the method and its
// assumption; INCONCLUSIVE under distribution-free, six being too few to
// show 95 % of the lot without a model, saying 59 drives (53 more, all
// passing) would decide it.
func TestJudgeSixTightFigures(t *testing.T) {
	figs := figuresAt(6, 200, 0, 0)
	j := Judge(figs, 90, false, rule95, nil)
	require.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.Regexp(t, `^6 of 6 drives pass; normal theory: at 95 % confidence at least 95 % of the lot meets the pass line \(the tolerance bound \d+ is at or above it\), assuming normal figures: Shapiro–Wilk p = 0\.\d+ did not reject it$`, j.Reason)
	j = Judge(figs, 90, false, ruleDF, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Equal(t, 59, j.Need)
	assert.True(t, j.NeedAccepts)
	assert.False(t, j.HasBound, "no order statistic bounds 95 % of a lot of 6")
	assert.Equal(t, "59 drives (53 more, all passing) would accept it; 6 of 6 drives pass; distribution-free, assuming no distribution: at 95 % confidence the passing share is at least 60.7 % (the Clopper–Pearson lower bound, below the 95 % coverage) and at most 100 %", j.Reason)
}

// A fleet of 102 figures (17 hosts × 6 drives) under distribution-free:
// one below the line, accepted (101 of 102: at least 95.43 %), the bound
// the second-slowest drive; two below, INCONCLUSIVE, not rejected, saying
// how many drives at the observed share (98.04 %) would accept it. The
// 199 of 200 of the issue are accepted too, however far from normal.
func TestJudgeDistributionFreeAllowsFailures(t *testing.T) {
	j := Judge(figuresAt(102, 200, 1, 80), 90, false, ruleDF, nil)
	require.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.Contains(t, j.Reason, "101 of 102 drives pass; distribution-free, assuming no distribution: at 95 % confidence at least 95.43 % of the lot passes")
	require.True(t, j.HasBound)
	assert.GreaterOrEqual(t, j.Bound, 90.0, "the order statistic meets the line")
	assert.Less(t, j.Bound, 200*0.99+1e-9, "the second-worst drive")
	j = Judge(figuresAt(102, 200, 2, 80), 90, false, ruleDF, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	require.True(t, j.NeedAccepts)
	assert.Greater(t, j.Need, 102)
	assert.Contains(t, j.Reason, "at the observed passing share (98.04 %) ")
	assert.Contains(t, j.Reason, "more) would accept it; 100 of 102 drives pass")
	// The first sample size at that share that accepts.
	accepts := func(n int) bool {
		return ClopperPearsonLower(int(math.Round(100.0/102*float64(n))), n, 0.95) >= 0.95
	}
	assert.True(t, accepts(j.Need))
	for n := 103; n < j.Need; n++ {
		require.False(t, accepts(n), "n = %d accepts already", n)
	}
	j = Judge(figuresAt(200, 200, 1, 20), 90, false, ruleDF, nil)
	assert.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.InDelta(t, binomialTailP(199, 200, 0.05), j.Lower, 1e-9, "the issue's 0.977")
}

// At a passing share equal to the coverage no number of drives decides a
// lot (the bounds close on the share from either side), and the message
// says so rather than naming a sample size.
func TestJudgeAtTheCoverageNothingDecides(t *testing.T) {
	j := Judge(figuresAt(100, 200, 5, 80), 90, false, ruleDF, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Equal(t, 0, j.Need)
	assert.Contains(t, j.Reason, "at the observed passing share (95 %) is the coverage itself: no number of drives decides it; 95 of 100 drives pass")
	// Just above it: more than 10,000 drives would be needed.
	j = Judge(figuresAt(1000, 200, 49, 80), 90, false, ruleDF, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Contains(t, j.Reason, "no sample up to 10000 drives decides it")
}

// Missing drives: a verdict stands only if it would whatever they
// measured.
func TestWithMissing(t *testing.T) {
	// 4 of 6 pass: rejected (at most 93.7 %); with six missing, 10 of 12
	// were they to pass: not rejected.
	j := Judge([]float64{1000, 980, 870, 1010, 850, 990}, 900, false, rule95, nil)
	require.Equal(t, Rejected, j.Verdict)
	require.GreaterOrEqual(t, ClopperPearsonUpper(10, 12, 0.95), 0.95)
	w := WithMissing(j, 6, rule95, "1 drive without a figure (x)")
	assert.Equal(t, Inconclusive, w.Verdict)
	assert.Equal(t, MissingDrive, w.Undecided)
	assert.True(t, len(w.Reason) > 0 && w.Reason[:len("undecided with 1 drive without a figure (x); by the figures alone the lot is rejected: 4 of 6")] == "undecided with 1 drive without a figure (x); by the figures alone the lot is rejected: 4 of 6", w.Reason)
	// 2 of 12 pass: rejected even with six missing (8 of 18: at most 62 %).
	figs := append(figuresAt(10, 800, 0, 0), 1000, 1000)
	j = Judge(figs, 900, false, rule95, nil)
	require.Equal(t, Rejected, j.Verdict)
	w = WithMissing(j, 6, rule95, "6 drives (y)")
	assert.Equal(t, Rejected, w.Verdict)
	assert.Contains(t, w.Reason, "rejected even were the 6 drives without a figure to pass (6 drives (y))")
	// 120 of 120 under distribution-free: accepted even with one missing
	// (120 of 121 were it to fail), not with three (120 of 123).
	j = Judge(figuresAt(120, 200, 0, 0), 90, false, ruleDF, nil)
	require.Equal(t, Accepted, j.Verdict)
	assert.Equal(t, Accepted, WithMissing(j, 1, ruleDF, "z").Verdict)
	assert.Equal(t, Inconclusive, WithMissing(j, 3, ruleDF, "z").Verdict)
	// The normal method accepts no failure, so no missing drive.
	j = Judge(figuresAt(6, 200, 0, 0), 90, false, rule95, nil)
	require.Equal(t, Accepted, j.Verdict)
	assert.Equal(t, Inconclusive, WithMissing(j, 1, rule95, "z").Verdict)
}

// No figure at all: the message says what the spec's method needs, the
// zero-failure sample only under distribution-free (the normal method
// never accepts by the count).
func TestJudgeNoFigure(t *testing.T) {
	j := Judge(nil, 90, false, rule95, nil)
	require.Equal(t, Inconclusive, j.Verdict)
	assert.Equal(t, NoFigure, j.Undecided)
	assert.Equal(t, "no figure to judge; the normal method needs at least 3 drives, every one passing", j.Reason)
	j = Judge(nil, 90, false, ruleDF, nil)
	require.Equal(t, Inconclusive, j.Verdict)
	assert.Equal(t, "no figure to judge; a zero-failure sample needs 59 drives, all passing", j.Reason)
}

// Figures all equal whose mean is not exactly their value in floating
// point (24 drives of a 24-drive step whose shares are one total's 24th,
// as a reconstructed recording gives them): no spread, said so, not
// mistaken for a sample too large for Shapiro–Wilk.
func TestJudgeEqualFiguresWithRoundingNoise(t *testing.T) {
	for _, v := range []float64{14416.666666666666, 2391666.6666666665, 4250.1, 0.1} {
		figs := make([]float64, 24)
		for i := range figs {
			figs[i] = v
		}
		j := Judge(figs, v*0.9, false, rule95, nil)
		assert.Equal(t, Inconclusive, j.Verdict)
		assert.Equal(t, 0.0, j.SD, "%v", v)
		assert.Equal(t, v, j.Mean)
		assert.Contains(t, j.Reason, "all 24 figures are equal", "%v", v)
		assert.NotContains(t, j.Reason, "5000")
	}
}
