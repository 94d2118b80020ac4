package lot

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// Published one-sided tolerance factors: the 95 %/95 % column of the
// tables in ISO 16269-6 and NIST's e-Handbook §7.2.6.3 (Natrella's
// Table A-7, three decimals), and the handbook-style worked example of a
// 90 % coverage, 99 % confidence bound on 40 figures (k = 1.9017,
// computed from the noncentral t in real-statistics.com's tolerance
// interval example).
func TestKPublished(t *testing.T) {
	for _, tt := range []struct {
		n          int
		cov, conf  float64
		want, plus float64
	}{
		{6, 0.95, 0.95, 3.707, 0.0011},
		{10, 0.95, 0.95, 2.911, 0.0005},
		{24, 0.95, 0.95, 2.309, 0.0005},
		{3, 0.95, 0.95, 7.656, 0.0005},
		{5, 0.95, 0.95, 4.203, 0.0005},
		{15, 0.95, 0.95, 2.566, 0.0005},
		{20, 0.95, 0.95, 2.396, 0.0005},
		{50, 0.95, 0.95, 2.065, 0.0005},
		{40, 0.90, 0.99, 1.9017, 0.00005},
	} {
		k, err := K(tt.n, tt.cov, tt.conf)
		require.NoError(t, err)
		assert.InDelta(t, tt.want, k, tt.plus, "k(n=%d, coverage %v, confidence %v)", tt.n, tt.cov, tt.conf)
	}
}

// The same factors to 1e-9 against SciPy 1.10.1 (Debian's python3-scipy,
// whose noncentral t is Boost's): stats.nct.ppf(conf, n-1,
// stats.norm.ppf(cov)*sqrt(n))/sqrt(n), including samples far beyond
// the tables, where the noncentrality is in the hundreds.
func TestKReference(t *testing.T) {
	for _, tt := range []struct {
		n         int
		cov, conf float64
		want      float64
	}{
		{2, 0.95, 0.95, 26.25967398303447},
		{6, 0.95, 0.95, 3.707683680688687},
		{10, 0.95, 0.95, 2.9109634130781665},
		{24, 0.95, 0.95, 2.3092936224440086},
		{10, 0.90, 0.95, 2.35464013182906},
		{20, 0.90, 0.90, 1.7652063117667032},
		{10, 0.99, 0.99, 5.073725348045277},
		{1000, 0.95, 0.95, 1.7272632696712737},
		{10000, 0.95, 0.95, 1.6703375904195243},
	} {
		k, err := K(tt.n, tt.cov, tt.conf)
		require.NoError(t, err)
		assert.InDelta(t, tt.want, k, 1e-9, "k(n=%d, coverage %v, confidence %v)", tt.n, tt.cov, tt.conf)
	}
	_, err := K(1, 0.95, 0.95)
	assert.Error(t, err, "one figure has no spread")
}

// The series against a computation that shares nothing with it: the
// noncentral t's definition, T = (Z + δ) / √(V/ν), integrated over the
// chi distribution of √V with Gauss–Legendre quadrature,
// F(t) = ∫₀^∞ Φ(t·w/√ν − δ) f_χν(w) dw; and against SciPy's values.
func TestNoncentralTCDF(t *testing.T) {
	for _, tt := range [][4]float64{
		// t, df, delta, SciPy 1.10.1's stats.nct.cdf
		{2, 5, 1, 0.7780746626162148},
		{5, 5, 3, 0.8297254143487997},
		{10, 23, 8, 0.8571269793595366},
		{-1, 4, 0.5, 0.08614956903656279},
		{0.5, 1, 2, 0.06327688747994675},
		{3, 10, -1, 0.9995842968413304},
	} {
		assert.InDelta(t, tt[3], NoncentralTCDF(tt[0], tt[1], tt[2]), 1e-12, "F(%v; %v, %v)", tt[0], tt[1], tt[2])
	}
	for _, df := range []float64{1, 2, 5, 23, 99} {
		for _, delta := range []float64{-2, 0, 1.5, 3.69, 8.06} {
			for _, x := range []float64{-3, -0.5, 0.3, 2, 4.5, 9, 15} {
				chi := distuv.Chi{K: df}
				ref := quad.Fixed(func(w float64) float64 {
					return distuv.UnitNormal.CDF(x*w/math.Sqrt(df)-delta) * chi.Prob(w)
				}, 0, math.Sqrt(df)+12, 4000, nil, 0)
				assert.InDelta(t, ref, NoncentralTCDF(x, df, delta), 1e-9, "F(%v; %v, %v)", x, df, delta)
			}
		}
	}
	assert.InDelta(t, distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 7}.CDF(1.3), NoncentralTCDF(1.3, 7, 0), 1e-13, "δ = 0 is Student's t")
}

// Shapiro–Wilk against SciPy 1.10.1's stats.shapiro (the same AS R94
// algorithm, in single precision: hence 1e-5).
func TestShapiroWilk(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		w, p float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9701647162437439, 0.8923683762550354},
		{[]float64{2.1, 3.4, 1.9, 5.6, 2.2, 2.5}, 0.7819756865501404, 0.04021267220377922},
		{[]float64{1, 2, 4}, 0.9642857313156128, 0.6368856430053711},
		{[]float64{148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236}, 0.7888147830963135, 0.006703833118081093},
		{[]float64{1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 7, 9, 12, 20}, 0.7487238049507141, 0.000868583214469254},
	} {
		w, p, err := ShapiroWilk(tt.xs)
		require.NoError(t, err)
		assert.InDelta(t, tt.w, w, 1e-5, "W of %v", tt.xs)
		assert.InDelta(t, tt.p, p, 1e-5, "p of %v", tt.xs)
	}
	_, _, err := ShapiroWilk([]float64{5, 5, 5, 5})
	assert.Error(t, err)
	_, _, err = ShapiroWilk([]float64{1, 2})
	assert.Error(t, err)
}

func TestZeroFailure(t *testing.T) {
	for _, tt := range []struct {
		r    Rule
		want int
	}{
		{Rule{Coverage: 0.95, Confidence: 0.95}, 59}, {Rule{Coverage: 0.90, Confidence: 0.95}, 29}, {Rule{Coverage: 0.99, Confidence: 0.95}, 299}, {Rule{Coverage: 0.95, Confidence: 0.90}, 45}, {Rule{Coverage: 0.90, Confidence: 0.90}, 22},
	} {
		assert.Equal(t, tt.want, ZeroFailure(tt.r), "%+v", tt.r)
		n := tt.want
		// The rule's own definition: n passing drives of n show coverage
		// at confidence, n − 1 do not.
		assert.LessOrEqual(t, math.Pow(tt.r.Coverage, float64(n)), 1-tt.r.Confidence)
		assert.Greater(t, math.Pow(tt.r.Coverage, float64(n-1)), 1-tt.r.Confidence)
	}
}

// The Clopper–Pearson bound against its closed forms and SciPy.
func TestClopperPearsonUpper(t *testing.T) {
	assert.Equal(t, 1.0, ClopperPearsonUpper(6, 6, 0.95))
	// x = 0: 1 − (1 − C)^(1/n).
	assert.InDelta(t, 1-math.Pow(0.05, 1.0/6), ClopperPearsonUpper(0, 6, 0.95), 1e-12)
	// x = n − 1: C^(1/n).
	assert.InDelta(t, math.Pow(0.95, 1.0/6), ClopperPearsonUpper(5, 6, 0.95), 1e-12)
	// SciPy 1.10.1: stats.beta.ppf(.95, 4, 3), stats.beta.ppf(.95, 5, 2).
	assert.InDelta(t, 0.8468388820247768, ClopperPearsonUpper(3, 6, 0.95), 1e-10)
	assert.InDelta(t, 0.9371501082916456, ClopperPearsonUpper(4, 6, 0.95), 1e-10)
}

var (
	rule95 = Rule{Coverage: 0.95, Confidence: 0.95}
	ruleDF = Rule{Coverage: 0.95, Confidence: 0.95, Method: DistributionFree}
)

func TestJudgeAccepted(t *testing.T) {
	figs := []float64{1010, 995, 1003, 990, 1007, 998}
	j := Judge(figs, 900, false, rule95, nil)
	assert.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.Equal(t, Normal, j.Method)
	assert.Equal(t, 6, j.N)
	assert.InDelta(t, 3.7077, j.K, 1e-4)
	assert.InDelta(t, j.Mean-j.K*j.SD, j.Bound, 1e-9)
	assert.GreaterOrEqual(t, j.Bound, 900.0)
	assert.True(t, j.NormalOK)
}

func TestJudgeInconclusiveNeedsMore(t *testing.T) {
	// Mean 1000, s = √1200 ≈ 34.6: the bound 1000 − 3.708·34.6 ≈ 872 is
	// below the line 900, though every drive passes; d = 100/34.6 ≈ 2.89
	// sits between k(11) = 2.815 and k(10) = 2.911, so 11 drives would
	// accept.
	figs := []float64{1050, 960, 1000, 1030, 970, 990}
	j := Judge(figs, 900, false, rule95, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	d := (j.Mean - 900) / j.SD
	kn, _ := K(j.Need, 0.95, 0.95)
	kprev, _ := K(j.Need-1, 0.95, 0.95)
	assert.True(t, j.NeedAccepts)
	assert.Equal(t, 11, j.Need)
	assert.LessOrEqual(t, kn, d)
	assert.Greater(t, kprev, d)
	// What decides it leads, so that a message cut short keeps it.
	assert.Equal(t, "at this mean and spread 11 drives (5 more) would accept it; 6 of 6 drives pass; normal theory: ",
		j.Reason[:strings.Index(j.Reason, "normal theory: ")+len("normal theory: ")])
	assert.Equal(t, BoundShort, j.Undecided)
}

func TestJudgeInconclusiveWouldReject(t *testing.T) {
	// Mean 960, s 51.5, line 880, every drive passing: d = 1.55, the
	// model's passing share is Φ(1.55) = 94 % < 95 %: more drives would
	// reject, none would accept.
	figs := []float64{960 - 60*1.2, 960 - 60*0.6, 960 - 60*0.2, 960 + 60*0.2, 960 + 60*0.6, 960 + 60*1.2}
	j := Judge(figs, 880, false, rule95, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	require.Equal(t, BoundShort, j.Undecided)
	assert.False(t, j.NeedAccepts)
	require.Positive(t, j.Need)
	share := distuv.UnitNormal.CDF((j.Mean - 880) / j.SD)
	x := int(math.Round(share * float64(j.Need)))
	assert.Less(t, ClopperPearsonUpper(x, j.Need, 0.95), 0.95)
	assert.Contains(t, j.Reason, "would reject it")

	// Against a line of 900 the slowest fails: the normal method accepts
	// no failing drive, and at the observed share, 5 of 6, Need drives
	// would reject the lot (the first sample size that does).
	j = Judge(figs, 900, false, rule95, nil)
	require.Equal(t, Inconclusive, j.Verdict, j.Reason)
	require.Equal(t, Failing, j.Undecided)
	assert.False(t, j.NeedAccepts)
	require.Positive(t, j.Need)
	rejects := func(n int) bool { return ClopperPearsonUpper(int(math.Round(5.0/6*float64(n))), n, 0.95) < 0.95 }
	assert.True(t, rejects(j.Need))
	for n := 7; n < j.Need; n++ {
		assert.False(t, rejects(n), "n = %d decides already", n)
	}
	assert.True(t, strings.HasPrefix(j.Reason, fmt.Sprintf("at the observed passing share (83.33 %%) %d drives (%d more) would reject it; 5 of 6 drives pass; normal theory accepts only", j.Need, j.Need-6)), j.Reason)
}

func TestJudgeRejected(t *testing.T) {
	// 2 of 6 below the line: at most 93.7 % of the lot passes.
	j := Judge([]float64{1000, 980, 870, 1010, 850, 990}, 900, false, rule95, nil)
	assert.Equal(t, Rejected, j.Verdict, j.Reason)
	assert.Equal(t, 4, j.Passing)
	assert.InDelta(t, 0.9371501082916456, j.Upper, 1e-9)
	assert.Contains(t, j.Reason, "4 of 6 drives pass")
}

// One slow drive among 59 makes them not normal. The normal method does
// not judge figures its model does not fit, whatever they are: the lot is
// INCONCLUSIVE, saying so, and the method does not switch to another
// test. The distribution-free method, chosen in the spec, judges the
// count alone: 59 of 59 accepted, 58 of 59 not yet.
func TestJudgeNotNormal(t *testing.T) {
	figs := make([]float64, 59)
	for i := range figs {
		figs[i] = 1000 + float64(i%5)
	}
	figs[0] = 905
	j := Judge(figs, 900, false, rule95, nil)
	assert.False(t, j.NormalOK, "W %v p %v", j.W, j.P)
	assert.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Equal(t, NotNormal, j.Undecided)
	assert.Equal(t, Normal, j.Method)
	assert.Contains(t, j.Reason, "59 of 59 drives pass; the figures are not normal (Shapiro–Wilk W = ")
	assert.Contains(t, j.Reason, "so the normal method, the spec's, does not judge them")

	j = Judge(figs, 900, false, ruleDF, nil)
	assert.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.Equal(t, DistributionFree, j.Method)
	assert.True(t, j.HasBound)
	assert.Equal(t, 905.0, j.Bound, "at 59 drives the bound is the slowest")
	assert.True(t, math.IsNaN(j.P), "no distribution is assumed, none checked")
	assert.Equal(t, "59 of 59 drives pass; distribution-free, assuming no distribution: at 95 % confidence at least 95.05 % of the lot passes (the Clopper–Pearson lower bound of the passing share), at or above the 95 % coverage", j.Reason)
	figs[0] = 850
	j = Judge(figs, 900, false, ruleDF, nil)
	assert.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Equal(t, ShareUnclear, j.Undecided)
	assert.True(t, j.NeedAccepts)
	assert.True(t, strings.HasPrefix(j.Reason, "at the observed passing share (98.31 %) "), j.Reason)
	assert.Contains(t, j.Reason, "58 of 59 drives pass")
	// Too few to test at all.
	j = Judge([]float64{1000, 1001}, 900, false, rule95, nil)
	assert.Equal(t, Inconclusive, j.Verdict)
	assert.Equal(t, Unchecked, j.Undecided)
	assert.Contains(t, j.Reason, "Shapiro–Wilk needs 3")
}

// The two tests are not OR-ed: 59 figures the normal model fits, every
// one passing, but whose normal bound falls just short of the line, are
// not accepted by the normal method on the count (that is the
// distribution-free method's, which a spec chooses before the figures).
// The figures are 59 normal scores of mean 1000 and s 50 with the tails
// trimmed (quantiles of 5 to 95 %, so Shapiro–Wilk keeps the normal
// model), the line just below the slowest drive.
func TestJudgeNormalDoesNotFallBackOnTheCount(t *testing.T) {
	figs := make([]float64, 59)
	for i := range figs {
		q := 0.5 + ((float64(i)+0.5)/59-0.5)*0.9
		figs[i] = 1000 + 50*distuv.UnitNormal.Quantile(q)
	}
	line := figs[0] - 0.5
	j := Judge(figs, line, false, rule95, nil)
	require.True(t, j.NormalOK, "W %v p %v", j.W, j.P)
	require.Less(t, j.Mean-j.K*j.SD, line, "the normal bound is below the line")
	assert.Equal(t, 59, j.Passing)
	assert.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Equal(t, BoundShort, j.Undecided)
	assert.Equal(t, Normal, j.Method)
	// The distribution-free method accepts the same figures; mirrored for
	// a latency too.
	assert.Equal(t, Accepted, Judge(figs, line, false, ruleDF, nil).Verdict)
	lat := make([]float64, len(figs))
	for i, f := range figs {
		lat[i] = 2000 - f
	}
	jl := Judge(lat, 2000-line, true, ruleDF, nil)
	assert.Equal(t, Accepted, jl.Verdict, jl.Reason)
	assert.Equal(t, 2000-figs[0], jl.Bound, "the slowest is the largest latency")
	assert.Equal(t, Inconclusive, Judge(lat, 2000-line, true, rule95, nil).Verdict)
}

// Beyond 5000 figures Shapiro–Wilk has no p-value: the normal model is
// not checked, so not used, and the reason says so rather than quoting a
// test that was not made.
func TestJudgeBeyondShapiroWilk(t *testing.T) {
	figs := make([]float64, 5001)
	for i := range figs {
		figs[i] = 1000 + 10*distuv.UnitNormal.Quantile((float64(i)+0.5)/float64(len(figs)))
	}
	figs[0] = 850
	j := Judge(figs, 900, false, rule95, nil)
	assert.False(t, j.NormalOK)
	assert.Equal(t, Inconclusive, j.Verdict, j.Reason)
	assert.Contains(t, j.Reason, "5001 figures, more than the 5000 Shapiro–Wilk checks the normal model on")
	assert.NotContains(t, j.Reason, "NaN")
}

// A latency passes at or below its line: everything mirrors.
func TestJudgeLowerIsBetter(t *testing.T) {
	j := Judge([]float64{101, 99, 100, 102, 98, 100}, 150, true, rule95, nil)
	assert.Equal(t, Accepted, j.Verdict, j.Reason)
	assert.InDelta(t, j.Mean+j.K*j.SD, j.Bound, 1e-9)
	j = Judge([]float64{101, 160, 100, 170, 98, 100}, 150, true, rule95, nil)
	assert.Equal(t, Rejected, j.Verdict, j.Reason)
}

// BenchmarkJudge times one lot cell's judgment at the sample sizes a run
// gives: a 6- and a 24-drive scaling step, and a fleet of 50 hosts × 24
// drives; the figures are spread so that the normal model holds.
func BenchmarkJudge(b *testing.B) {
	for _, n := range []int{6, 24, 1200} {
		figs := make([]float64, n)
		for i := range figs {
			figs[i] = 1000 + 10*distuv.UnitNormal.Quantile((float64(i)+0.5)/float64(n))
		}
		b.Run(strconv.Itoa(n)+"_drives", func(b *testing.B) {
			for b.Loop() {
				Judge(figs, 900, false, rule95, nil)
			}
		})
	}
}
