// Package lot judges, by a spec's [lot] rule, what the drives measured say
// about the lot they were drawn from.
//
// A lot is accepted, rejected or not yet decided, at a coverage and
// confidence. It is accepted when the one-sided lower tolerance bound of
// its figures (the value at least Coverage of the lot exceeds, with
// Confidence) is at or above the pass line. When the figures pass a
// Shapiro–Wilk normality check the bound is normal theory, mean − k·s,
// with k exact from the noncentral t distribution (ISO 16269-6, NIST
// e-Handbook §7.2.6.3); otherwise, or when that bound falls short, it is
// distribution-free: every figure passes and there are at least
// ln(1 − Confidence) / ln(Coverage) of them (the success-run rule, which
// assumes no model). A lot is rejected when the Clopper–Pearson
// upper confidence bound of the share of passing drives is below
// Coverage. For a figure where lower is better (a latency) everything is
// mirrored: the bound is mean + k·s, at or below the line.
//
// Judge decides on a set of figures; Cells picks, from a run's judged
// results, the figures of each capacity and workload and judges them as
// TestLot cells; Drives and WritePlan say what a plan gives the rule.
// The package only computes: it reads no file, and writes only to the
// writer WritePlan is given.
package lot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"
)

// Rule is a spec's [lot] table: the share of the lot that must meet the
// pass line, and the confidence the figures must give it with.
type Rule struct {
	Coverage   float64 // in (0, 1), e.g. 0.95
	Confidence float64 // in (0, 1), e.g. 0.95
}

// Verdicts.
const (
	Accepted     = "accepted"
	Rejected     = "rejected"
	Inconclusive = "inconclusive"
)

// Methods of a bound.
const (
	// Normal is the normal-theory bound mean − k·s.
	Normal = "normal"
	// DistributionFree is the smallest figure, a bound at (Coverage,
	// Confidence) only when every figure passes and there are at least
	// ZeroFailure(rule) of them.
	DistributionFree = "distribution-free"
)

// NormalityAlpha is the significance level of the normality check: the
// normal model is used unless Shapiro–Wilk's p is below it.
const NormalityAlpha = 0.05

// MaxShapiroWilk is the largest sample Royston's Shapiro–Wilk p-value
// holds for.
const MaxShapiroWilk = 5000

// MaxDrives bounds the search for how many drives would decide an
// inconclusive lot: a sample larger than this is not a sample.
const MaxDrives = 10_000

// Judgement is what a sample of figures says about the lot.
type Judgement struct {
	Verdict string // Accepted, Rejected or Inconclusive
	// Method is how Bound was found: Normal or DistributionFree.
	Method string
	// N is the number of figures, Passing how many meet Line.
	N, Passing int
	Line       float64
	// LowerIsBetter says a figure passes at or below Line (a latency).
	LowerIsBetter bool
	// Mean and SD are the figures' mean and sample standard deviation
	// (n − 1); K the normal-theory factor for N (0 when N < 2).
	Mean, SD, K float64
	// Bound is the tolerance bound of Method: mean − K·SD for Normal (mean
	// + K·SD when lower is better), the worst figure for DistributionFree.
	Bound float64
	// W and P are the Shapiro–Wilk statistic and p-value of the figures
	// (NaN when they cannot be tested: fewer than 3, or all equal);
	// NormalOK says the normal model was used.
	W, P     float64
	NormalOK bool
	// Upper is the Clopper–Pearson upper bound, at Confidence, of the
	// lot's share of passing drives.
	Upper float64
	// ZeroFailure is how many figures, all passing, the
	// distribution-free rule needs.
	ZeroFailure int
	// Need, for an inconclusive lot, is how many drives would decide it
	// if the lot's mean and spread stayed what they are (0: none up to
	// MaxDrives would); NeedAccepts says they would accept it, else they
	// would reject it.
	Need        int
	NeedAccepts bool
	// Reason says in one sentence why the verdict is what it is.
	Reason string
}

// ZeroFailure is the smallest sample whose figures, all passing, show at
// Confidence that at least Coverage of the lot passes:
// ⌈ln(1 − Confidence) / ln(Coverage)⌉ (59 at 95 % / 95 %).
func ZeroFailure(r Rule) int {
	n := math.Log(1-r.Confidence) / math.Log(r.Coverage)
	// A ratio that is an integer up to rounding is that integer.
	if f := math.Round(n); math.Abs(n-f) < 1e-9 {
		return int(f)
	}
	return int(math.Ceil(n))
}

// ClopperPearsonUpper is the one-sided upper confidence bound, at
// confidence, of a binomial proportion with x successes in n trials: the
// confidence quantile of Beta(x + 1, n − x); 1 when x = n.
func ClopperPearsonUpper(x, n int, confidence float64) float64 {
	if x >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(confidence)
}

// Judge judges figures against line by r. format writes a figure in its
// unit for Reason ("1,234 MB/s"); nil writes the bare number.
func Judge(figures []float64, line float64, lowerIsBetter bool, r Rule, format func(float64) string) Judgement {
	if format == nil {
		format = num
	}
	j := Judgement{N: len(figures), Line: line, LowerIsBetter: lowerIsBetter, ZeroFailure: ZeroFailure(r), W: math.NaN(), P: math.NaN()}
	for _, f := range figures {
		if j.passes(f) {
			j.Passing++
		}
	}
	j.Upper = ClopperPearsonUpper(j.Passing, j.N, r.Confidence)
	if j.N == 0 {
		j.Verdict, j.Method = Inconclusive, DistributionFree
		j.Reason = fmt.Sprintf("no figure to judge; a zero-failure sample needs %d drives", j.ZeroFailure)
		return j
	}
	j.Mean, j.SD = meanSD(figures)
	if j.N >= 2 {
		j.K, _ = K(j.N, r.Coverage, r.Confidence)
	}
	if j.N >= 3 && j.SD > 0 {
		if w, p, err := ShapiroWilk(figures); err == nil {
			j.W, j.P = w, p
			j.NormalOK = p >= NormalityAlpha
		}
	}
	if j.NormalOK {
		j.Method = Normal
		j.Bound = j.Mean - j.K*j.SD
		if lowerIsBetter {
			j.Bound = j.Mean + j.K*j.SD
		}
	} else {
		j.Method = DistributionFree
		j.Bound = slices.Min(figures)
		if lowerIsBetter {
			j.Bound = slices.Max(figures)
		}
	}
	switch {
	case j.Upper < r.Coverage:
		j.Verdict = Rejected
		j.Reason = fmt.Sprintf("%d of %d drives pass: at %s confidence at most %s of the lot passes, below the %s coverage required",
			j.Passing, j.N, pct(r.Confidence), pct(j.Upper), pct(r.Coverage))
	case j.NormalOK && j.passes(j.Bound):
		j.Verdict = Accepted
		side := "at or above"
		if lowerIsBetter {
			side = "at or below"
		}
		j.Reason = fmt.Sprintf("normal theory: at %s confidence at least %s of the lot meets the pass line (the tolerance bound %s is %s it)",
			pct(r.Confidence), pct(r.Coverage), format(j.Bound), side)
	case j.Passing == j.N && j.N >= j.ZeroFailure:
		// The success-run rule assumes no model, so it holds for figures
		// the normal model fits too, when their normal bound falls short.
		j.Verdict, j.Method = Accepted, DistributionFree
		j.Bound = slices.Min(figures)
		if lowerIsBetter {
			j.Bound = slices.Max(figures)
		}
		j.Reason = fmt.Sprintf("all %d drives pass and %d are enough for the distribution-free bound: at %s confidence at least %s of the lot passes",
			j.N, j.ZeroFailure, pct(r.Confidence), pct(r.Coverage))
	default:
		j.Verdict = Inconclusive
		j.Need, j.NeedAccepts = need(j, r)
		j.Reason = j.inconclusive(format)
	}
	return j
}

// passes reports whether a figure meets the line.
func (j Judgement) passes(f float64) bool {
	if j.LowerIsBetter {
		return f <= j.Line
	}
	return f >= j.Line
}

// inconclusive says why neither verdict holds, and what would decide it.
func (j Judgement) inconclusive(format func(float64) string) string {
	var why string
	switch {
	case j.NormalOK:
		side := "below"
		if j.LowerIsBetter {
			side = "above"
		}
		why = fmt.Sprintf("normal-theory tolerance bound %s is %s the pass line, but %d of %d drives pass", format(j.Bound), side, j.Passing, j.N)
	case j.N < 3:
		why = fmt.Sprintf("%d drive%s: too few to check the normal model (Shapiro–Wilk needs 3)", j.N, plural(j.N))
	case j.SD == 0:
		why = fmt.Sprintf("all %d figures are equal: no spread to check the normal model with", j.N)
	case j.N > MaxShapiroWilk:
		why = fmt.Sprintf("%d figures, more than the %d Shapiro–Wilk checks the normal model on, so only the distribution-free bound applies, and %d of %d drives pass",
			j.N, MaxShapiroWilk, j.Passing, j.N)
	default:
		why = fmt.Sprintf("the figures are not normal (Shapiro–Wilk W = %.3f, p = %.3f < %s), so only the distribution-free bound applies, and %d of %d drives pass",
			j.W, j.P, trim(NormalityAlpha), j.Passing, j.N)
	}
	// What would decide it comes first: a message cut to a CI
	// annotation's length (junit.Short) keeps its first clauses, and how
	// many drives the lot needs is what the reader acts on.
	var decide string
	switch {
	case j.Need > 0 && j.NeedAccepts:
		decide = fmt.Sprintf("at this mean and spread %d drives (%d more) would accept it; ", j.Need, j.Need-j.N)
	case j.Need > 0:
		decide = fmt.Sprintf("at this mean and spread %d drives (%d more) would reject it; ", j.Need, j.Need-j.N)
	case j.NormalOK:
		decide = fmt.Sprintf("at this mean and spread no sample up to %d drives decides it; ", MaxDrives)
	}
	zero := fmt.Sprintf("a zero-failure sample needs %d drives", j.ZeroFailure)
	if j.Passing == j.N && j.N < j.ZeroFailure {
		zero += fmt.Sprintf(" (%d more, all passing)", j.ZeroFailure-j.N)
	}
	return decide + zero + "; " + why
}

// need is how many drives would decide the lot were its mean and spread
// what the sample shows: the smallest N whose k(N) puts the normal bound
// at the line (accepting), or, when no N can (the model's passing share
// is below coverage), the smallest N whose expected passing count the
// Clopper–Pearson bound rejects. 0 when the normal model does not hold
// or no N up to MaxDrives decides.
func need(j Judgement, r Rule) (int, bool) {
	if !j.NormalOK || j.SD <= 0 {
		return 0, false
	}
	d := (j.Mean - j.Line) / j.SD
	if j.LowerIsBetter {
		d = -d
	}
	zp := distuv.UnitNormal.Quantile(r.Coverage)
	if d > zp {
		// k(N) falls toward z_p as N grows: bisect for the first N with
		// k(N) ≤ d.
		lo, hi := j.N, MaxDrives // k(lo) > d
		if k, err := K(hi, r.Coverage, r.Confidence); err != nil || k > d {
			return 0, false
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if k, err := K(mid, r.Coverage, r.Confidence); err == nil && k <= d {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi, true
	}
	share := distuv.UnitNormal.CDF(d)
	if share >= r.Coverage {
		return 0, false
	}
	for n := j.N + 1; n <= MaxDrives; n++ {
		x := int(math.Round(share * float64(n)))
		if ClopperPearsonUpper(x, n, r.Confidence) < r.Coverage {
			return n, false
		}
	}
	return 0, false
}

// meanSD is the mean and the sample standard deviation (n − 1) of xs.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// K is the one-sided normal tolerance factor: with n figures of mean m
// and standard deviation s, m − K·s is below at least coverage of the
// population with probability confidence. It is exact:
// K = t'⁻¹(confidence; n − 1, z_coverage·√n) / √n, the quantile of the
// noncentral t distribution, found by bisection on NoncentralTCDF.
func K(n int, coverage, confidence float64) (float64, error) {
	if n < 2 {
		return 0, fmt.Errorf("lot: a tolerance factor needs at least 2 figures, got %d", n)
	}
	if !(coverage > 0 && coverage < 1) || !(confidence > 0 && confidence < 1) {
		return 0, errors.New("lot: coverage and confidence must be in (0, 1)")
	}
	df := float64(n - 1)
	delta := distuv.UnitNormal.Quantile(coverage) * math.Sqrt(float64(n))
	t, err := noncentralTQuantile(confidence, df, delta)
	if err != nil {
		return 0, err
	}
	return t / math.Sqrt(float64(n)), nil
}

// noncentralTQuantile is the p-quantile of the noncentral t distribution,
// by bisection: the CDF is increasing in t.
func noncentralTQuantile(p, df, delta float64) (float64, error) {
	lo, hi := delta-1, delta+1
	for NoncentralTCDF(lo, df, delta) > p {
		lo -= 2 * (hi - lo)
		if lo < -1e12 {
			return 0, errors.New("lot: noncentral t quantile out of range")
		}
	}
	for NoncentralTCDF(hi, df, delta) < p {
		hi += 2 * (hi - lo)
		if hi > 1e12 {
			return 0, errors.New("lot: noncentral t quantile out of range")
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if NoncentralTCDF(mid, df, delta) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*max(1, math.Abs(mid)) {
			break
		}
	}
	return (lo + hi) / 2, nil
}

func pct(f float64) string { return trim(f*100) + " %" }

// trim writes f with at most 2 decimals and no trailing zeros.
func trim(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

func num(f float64) string {
	if math.Abs(f) >= 100 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.4g", f)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
