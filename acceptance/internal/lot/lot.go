// Package lot judges, by a spec's [lot] rule, what the drives measured say
// about the lot they were drawn from.
//
// A lot is accepted, rejected or not yet decided, at a coverage and
// confidence, by the one method the spec names before any figure is seen
// (choosing it after would not hold the confidence stated):
//
//   - Normal: accepted when every drive passes, the figures pass a
//     Shapiro–Wilk normality check, and the one-sided lower tolerance
//     bound mean − k·s is at or above the pass line, k exact from the
//     noncentral t distribution (ISO 16269-6, NIST e-Handbook §7.2.6.3).
//     Figures Shapiro–Wilk finds not normal leave the lot INCONCLUSIVE:
//     the method does not switch to another test.
//   - DistributionFree: no distribution is assumed. Accepted when the
//     Clopper–Pearson lower confidence bound of the share of passing
//     drives is at or above the coverage (the order-statistic rule: at
//     95 %/95 %, 59 of 59, 101 of 102, 119 of 120).
//
// Under either method a lot is rejected when the Clopper–Pearson upper
// confidence bound of the passing share is below the coverage. For a
// figure where lower is better (a latency) everything is mirrored.
//
// The procedure is monotone by construction: the upper bound only grows
// with a passing drive and the lower bound only falls with a failing one,
// so a passing drive never turns a lot not rejected into rejected, a
// failing drive never turns a lot not accepted into accepted (under
// Normal a failing drive rules acceptance out), and under
// DistributionFree a passing drive never turns an accepted lot into
// anything else. Under Normal a passing drive may leave an accepted lot
// inconclusive (its figures no longer normal, or spread wider than the
// bound allows), never rejected.
//
// Judge decides on a set of figures, WithMissing on what drives without
// a figure of their own leave of it; Cells picks, from a run's judged
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
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// Rule is a spec's [lot] table: the share of the lot that must meet the
// pass line, the confidence the figures must give it with, and the
// method that shows it (Normal when empty).
type Rule struct {
	Coverage   float64 // in (0, 1), e.g. 0.95
	Confidence float64 // in (0, 1), e.g. 0.95
	Method     string  // Normal or DistributionFree
}

// method is r's method, Normal when unset.
func (r Rule) method() string {
	if r.Method == "" {
		return Normal
	}
	return r.Method
}

// Verdicts.
const (
	Accepted     = "accepted"
	Rejected     = "rejected"
	Inconclusive = "inconclusive"
)

// Methods ([lot] method).
const (
	// Normal is the normal-theory bound mean − k·s.
	Normal = "normal"
	// DistributionFree assumes no distribution: the Clopper–Pearson
	// bounds of the share of passing drives.
	DistributionFree = "distribution-free"
)

// Why an inconclusive lot is not decided (Judgement.Undecided).
const (
	NoFigure     = "no figure"      // nothing measured
	Unchecked    = "unchecked"      // normal: too few, all equal or too many figures to check the model
	NotNormal    = "not normal"     // normal: Shapiro–Wilk rejects the model
	Failing      = "failing drives" // normal: a drive below the line rules the bound out
	BoundShort   = "bound short"    // normal: mean − k·s below the line, every drive passing
	ShareUnclear = "share unclear"  // distribution-free: the bounds of the passing share straddle the coverage
	MissingDrive = "missing"        // drives without a figure of their own could decide it either way
)

// NormalityAlpha is the significance level of the normality check: the
// normal method judges the figures unless Shapiro–Wilk's p is below it.
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
	// Undecided, for an inconclusive lot, says why (NotNormal, ...).
	Undecided string
	// Method is the rule's: Normal or DistributionFree.
	Method string
	// N is the number of figures, Passing how many meet Line; Missing
	// how many drives of the lot's cells have no figure of their own
	// (WithMissing).
	N, Passing, Missing int
	Line                float64
	// LowerIsBetter says a figure passes at or below Line (a latency).
	LowerIsBetter bool
	// Mean and SD are the figures' mean and sample standard deviation
	// (n − 1); K the normal-theory factor for N (0 when N < 2, and under
	// DistributionFree).
	Mean, SD, K float64
	// Bound is the tolerance bound of Method: mean − K·SD for Normal (mean
	// + K·SD when lower is better); for DistributionFree the order
	// statistic at least Coverage of the lot is at or above with
	// Confidence, which meets the line exactly when the lot is accepted.
	// HasBound is false when there is none (under DistributionFree, fewer
	// drives than ZeroFailure).
	Bound    float64
	HasBound bool
	// W and P are the Shapiro–Wilk statistic and p-value of the figures
	// under Normal (NaN when they cannot be tested: fewer than 3, all
	// equal, or under DistributionFree); NormalOK says the check did not
	// reject the normal model.
	W, P     float64
	NormalOK bool
	// Lower and Upper are the one-sided Clopper–Pearson bounds, each at
	// Confidence, of the lot's share of passing drives.
	Lower, Upper float64
	// ZeroFailure is how many figures, all passing, the distribution-free
	// rule needs.
	ZeroFailure int
	// Need, for an inconclusive lot, is how many drives would decide it
	// (0: none up to MaxDrives would): under Normal at the sample's mean
	// and spread, under DistributionFree (and for failing drives under
	// Normal) at its passing share. NeedAccepts says they would accept
	// it, else they would reject it.
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

// ClopperPearsonLower is the one-sided lower confidence bound, at
// confidence, of a binomial proportion with x successes in n trials: the
// 1 − confidence quantile of Beta(x, n − x + 1); 0 when x = 0. With x = n
// it is (1 − confidence)^(1/n), so that it reaches a coverage p from n =
// ZeroFailure on: the success-run rule is its zero-failure case.
func ClopperPearsonLower(x, n int, confidence float64) float64 {
	if x <= 0 || n <= 0 {
		return 0
	}
	if x >= n {
		return math.Pow(1-confidence, 1/float64(n))
	}
	return distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(1 - confidence)
}

// Judge judges figures against line by r: Decide, and what the verdict
// rests on and what would change it (Need, Reason). format writes a
// figure in its unit for Reason ("1,234 MB/s"); nil writes the bare
// number.
func Judge(figures []float64, line float64, lowerIsBetter bool, r Rule, format func(float64) string) Judgement {
	if format == nil {
		format = num
	}
	j := Decide(figures, line, lowerIsBetter, r)
	switch {
	case j.Verdict == Rejected:
		j.Reason = fmt.Sprintf("%d of %d drives pass: at %s confidence at most %s of the lot passes (the Clopper–Pearson upper bound of the passing share), below the %s coverage required; no distribution assumed",
			j.Passing, j.N, pct(r.Confidence), pct(j.Upper), pct(r.Coverage))
	case j.Verdict == Accepted:
		j.Reason = j.accepted(r, format)
	case j.Undecided == NoFigure:
		j.Reason = "no figure to judge; the normal method needs at least 3 drives, every one passing"
		if j.Method == DistributionFree {
			j.Reason = fmt.Sprintf("no figure to judge; a zero-failure sample needs %d drives, all passing", j.ZeroFailure)
		}
	default:
		switch j.Undecided {
		case Failing, ShareUnclear:
			j.Need, j.NeedAccepts = shareNeed(j.Passing, j.N, r)
		case BoundShort:
			j.Need, j.NeedAccepts = need(j, r)
		}
		j.Reason = j.inconclusive(r, format)
	}
	return j
}

// Decide is Judge's verdict alone, without Need and Reason, which only
// explain it: what TestLot decides, at the cost of the decision.
func Decide(figures []float64, line float64, lowerIsBetter bool, r Rule) Judgement {
	j := Judgement{N: len(figures), Line: line, LowerIsBetter: lowerIsBetter, Method: r.method(), ZeroFailure: ZeroFailure(r), W: math.NaN(), P: math.NaN()}
	for _, f := range figures {
		if j.passes(f) {
			j.Passing++
		}
	}
	j.Upper = ClopperPearsonUpper(j.Passing, j.N, r.Confidence)
	j.Lower = ClopperPearsonLower(j.Passing, j.N, r.Confidence)
	if j.N == 0 {
		j.Verdict, j.Undecided = Inconclusive, NoFigure
		return j
	}
	j.Mean, j.SD = meanSD(figures)
	if j.Method == DistributionFree {
		j.Bound, j.HasBound = orderBound(figures, j.LowerIsBetter, r)
		j.Verdict, j.Undecided = Inconclusive, ShareUnclear
		if j.Lower >= r.Coverage {
			j.Verdict, j.Undecided = Accepted, ""
		}
	} else {
		j.judgeNormal(figures, r)
	}
	if j.Upper < r.Coverage {
		// Whatever the method: the count alone shows the lot short.
		j.Verdict, j.Undecided = Rejected, ""
	}
	return j
}

// judgeNormal is the normal method: the bound, the normality check, and
// the verdict unless the count rejects the lot.
func (j *Judgement) judgeNormal(figures []float64, r Rule) {
	if j.N >= 2 {
		j.K, _ = K(j.N, r.Coverage, r.Confidence)
		j.Bound, j.HasBound = j.Mean-j.K*j.SD, true
		if j.LowerIsBetter {
			j.Bound = j.Mean + j.K*j.SD
		}
	}
	if j.N >= 3 && j.SD > 0 {
		if w, p, err := ShapiroWilk(figures); err == nil {
			j.W, j.P = w, p
			j.NormalOK = p >= NormalityAlpha
		}
	}
	j.Verdict = Inconclusive
	switch {
	case j.N < 3 || j.SD == 0 || math.IsNaN(j.P):
		j.Undecided = Unchecked
	case !j.NormalOK:
		j.Undecided = NotNormal
	case j.Passing < j.N:
		// A drive below the line is the lot's own evidence: no model's
		// bound outweighs it, and so no failing drive can turn a lot
		// into accepted.
		j.Undecided = Failing
	case !j.passes(j.Bound):
		j.Undecided = BoundShort
	default:
		j.Verdict = Accepted
	}
}

// orderBound is the distribution-free lower tolerance bound of figures
// (the upper, when lower is better): the (f + 1)-th worst figure, f the
// most failing drives of len(figures) whose Clopper–Pearson lower bound
// still reaches the coverage. It meets the line exactly when at most f
// drives fail, that is when the lot is accepted. None below ZeroFailure
// drives.
func orderBound(figures []float64, lowerIsBetter bool, r Rule) (float64, bool) {
	f := failuresAllowed(len(figures), r)
	if f < 0 {
		return 0, false
	}
	sorted := slices.Clone(figures)
	slices.Sort(sorted)
	if lowerIsBetter {
		slices.Reverse(sorted)
	}
	return sorted[f], true
}

// WithMissing is j for a lot whose cells also had missing drives without
// a figure of their own (fio failed on them, or their cell's figure is
// not the drive's): the verdict holds only if it would whatever they
// measured, rejected only were every missing drive to pass, accepted only
// were every one to fail; otherwise INCONCLUSIVE. why says which drives
// they are, for the message, which also gives the verdict of the figures
// alone.
func WithMissing(j Judgement, missing int, r Rule, why string) Judgement {
	if missing <= 0 {
		return j
	}
	j.Missing = missing
	alone := j.Verdict
	switch j.Verdict {
	case Rejected:
		if ClopperPearsonUpper(j.Passing+missing, j.N+missing, r.Confidence) < r.Coverage {
			j.Reason += fmt.Sprintf("; rejected even were the %s without a figure to pass (%s)", counted(missing, "drive"), why)
			return j
		}
	case Accepted:
		// Were every missing drive to fail: only the distribution-free
		// count can still accept (the normal method accepts no failure).
		if j.Method == DistributionFree && ClopperPearsonLower(j.Passing, j.N+missing, r.Confidence) >= r.Coverage {
			j.Reason += fmt.Sprintf("; accepted even were the %s without a figure to fail (%s)", counted(missing, "drive"), why)
			return j
		}
	}
	j.Verdict, j.Undecided, j.Need, j.NeedAccepts = Inconclusive, MissingDrive, 0, false
	j.Reason = "undecided with " + why + "; by the figures alone the lot is " + alone + ": " + j.Reason
	return j
}

// WithFailed is j for a lot that also had failed drives without a
// figure of their own (why names their cells): each counts as a drive
// that does not pass. The count may reject the lot; only the
// distribution-free count can still accept it (the normal method accepts
// no failure); otherwise it is inconclusive.
func WithFailed(j Judgement, failed int, r Rule, why string) Judgement {
	if failed <= 0 {
		return j
	}
	alone, reason := j.Verdict, j.Reason
	j.N += failed
	j.Upper = ClopperPearsonUpper(j.Passing, j.N, r.Confidence)
	j.Lower = ClopperPearsonLower(j.Passing, j.N, r.Confidence)
	counting := fmt.Sprintf("counting the %s that failed (%s) as failing", counted(failed, "drive"), why)
	switch {
	case j.Upper < r.Coverage:
		j.Verdict, j.Undecided, j.Need, j.NeedAccepts = Rejected, "", 0, false
		j.Reason = fmt.Sprintf("%d of %d drives pass, %s: at %s confidence at most %s of the lot passes (the Clopper–Pearson upper bound of the passing share), below the %s coverage required; no distribution assumed",
			j.Passing, j.N, counting, pct(r.Confidence), pct(j.Upper), pct(r.Coverage))
	case alone == Accepted && j.Method == DistributionFree && j.Lower >= r.Coverage:
		j.Reason = fmt.Sprintf("%d of %d drives pass, %s; %s", j.Passing, j.N, counting, reason)
	default:
		j.Verdict, j.Undecided = Inconclusive, Failing
		j.Need, j.NeedAccepts = shareNeed(j.Passing, j.N, r)
		j.Reason = fmt.Sprintf("undecided: %d of %d drives pass, %s; by the figures alone the lot is %s: %s", j.Passing, j.N, counting, alone, reason)
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

// accepted says what an accepted lot's evidence is: how many drives
// pass, the method, and what it assumes.
func (j Judgement) accepted(r Rule, format func(float64) string) string {
	head := fmt.Sprintf("%d of %d drives pass", j.Passing, j.N)
	if j.Method == DistributionFree {
		return fmt.Sprintf("%s; distribution-free, assuming no distribution: at %s confidence at least %s of the lot passes (the Clopper–Pearson lower bound of the passing share), at or above the %s coverage",
			head, pct(r.Confidence), pct(j.Lower), pct(r.Coverage))
	}
	side := "at or above"
	if j.LowerIsBetter {
		side = "at or below"
	}
	return fmt.Sprintf("%s; normal theory: at %s confidence at least %s of the lot meets the pass line (the tolerance bound %s is %s it), assuming normal figures: Shapiro–Wilk p %s did not reject it",
		head, pct(r.Confidence), pct(r.Coverage), format(j.Bound), side, pval(j.P))
}

// inconclusive says why neither verdict holds, and what would decide it.
// What would decide it comes first: a message cut to a CI annotation's
// length (junit.Short) keeps its first clauses, and how many drives the
// lot needs is what the reader acts on.
func (j Judgement) inconclusive(r Rule, format func(float64) string) string {
	counts := fmt.Sprintf("%d of %d drives pass", j.Passing, j.N)
	var decide, why string
	switch j.Undecided {
	case ShareUnclear:
		decide = j.shareDecides(r)
		why = fmt.Sprintf("%s; distribution-free, assuming no distribution: at %s confidence the passing share is at least %s (the Clopper–Pearson lower bound, below the %s coverage) and at most %s",
			counts, pct(r.Confidence), pct(j.Lower), pct(r.Coverage), pct(j.Upper))
	case Failing:
		decide = j.shareDecides(r)
		why = fmt.Sprintf("%s; normal theory accepts only a sample whose every drive passes: a drive below the line is the lot's own evidence, which no model's bound outweighs", counts)
	case BoundShort:
		switch {
		case j.Need > 0:
			decide = fmt.Sprintf("at this mean and spread %d drives (%d more) would accept it; ", j.Need, j.Need-j.N)
			if !j.NeedAccepts {
				decide = fmt.Sprintf("at this mean and spread %d drives (%d more) would reject it; ", j.Need, j.Need-j.N)
			}
		default:
			decide = fmt.Sprintf("at this mean and spread no sample up to %d drives decides it; ", MaxDrives)
		}
		side := "below"
		if j.LowerIsBetter {
			side = "above"
		}
		why = fmt.Sprintf("%s; normal theory: the tolerance bound %s is %s the pass line, assuming normal figures: Shapiro–Wilk p %s did not reject it",
			counts, format(j.Bound), side, pval(j.P))
	case NotNormal:
		why = fmt.Sprintf("%s; the figures are not normal (Shapiro–Wilk W = %.3f, p %s, below %s), so the normal method, the spec's, does not judge them (the method is fixed before the figures are seen; a distribution-free spec judges the count alone)",
			counts, j.W, pval(j.P), trim(NormalityAlpha))
	default: // Unchecked
		switch {
		case j.N < 3:
			why = fmt.Sprintf("%s: too few to check the normal model (Shapiro–Wilk needs 3)", counted(j.N, "drive"))
		case j.N > MaxShapiroWilk:
			why = fmt.Sprintf("%d figures, more than the %d Shapiro–Wilk checks the normal model on, so the normal method does not judge them; %s",
				j.N, MaxShapiroWilk, counts)
		default:
			why = fmt.Sprintf("all %d figures are equal: no spread to check the normal model with", j.N)
		}
	}
	return decide + why
}

// shareDecides says how many drives, at the sample's passing share,
// would decide the lot (Need), or that none would.
func (j Judgement) shareDecides(r Rule) string {
	share := fmt.Sprintf("at the observed passing share (%s) ", pct(float64(j.Passing)/float64(j.N)))
	switch {
	case j.Need > 0 && j.NeedAccepts && j.Passing == j.N:
		return fmt.Sprintf("%d drives (%d more, all passing) would accept it; ", j.Need, j.Need-j.N)
	case j.Need > 0 && j.NeedAccepts:
		return fmt.Sprintf("%s%d drives (%d more) would accept it; ", share, j.Need, j.Need-j.N)
	case j.Need > 0:
		return fmt.Sprintf("%s%d drives (%d more) would reject it; ", share, j.Need, j.Need-j.N)
	case j.Method == Normal:
		// Failing drives under the normal method, at a share at or above
		// the coverage: more drives at it cannot reject, and the method
		// accepts no failure.
		return "no number of drives at the observed passing share decides it under the normal method; "
	case j.Passing*1_000_000 == int(math.Round(r.Coverage*1_000_000))*j.N:
		return share + "is the coverage itself: no number of drives decides it; "
	}
	return fmt.Sprintf("%sno sample up to %d drives decides it; ", share, MaxDrives)
}

// shareNeed is how many drives would decide the lot were its passing
// share what the sample shows, passing/n: the smallest N > n whose
// Clopper–Pearson lower bound of round(share·N) passing drives reaches
// the coverage (accepting; under the normal method, which accepts no
// failure, only with every drive passing), or whose upper bound falls
// below it (rejecting). 0 when no N up to MaxDrives does.
func shareNeed(passing, n int, r Rule) (int, bool) {
	share := float64(passing) / float64(n)
	accepts := share > r.Coverage && (r.method() == DistributionFree || passing == n)
	if !accepts && share >= r.Coverage {
		return 0, false
	}
	if accepts && passing == n {
		return max(ZeroFailure(r), n+1), true
	}
	// The bounds approach the share as N grows, but not monotonically
	// (round(share·N) steps): bisect on a bracket, then take the first N
	// of it that decides.
	decides := func(m int) bool {
		x := int(math.Round(share * float64(m)))
		if accepts {
			return ClopperPearsonLower(x, m, r.Confidence) >= r.Coverage
		}
		return ClopperPearsonUpper(x, m, r.Confidence) < r.Coverage
	}
	if !decides(MaxDrives) {
		return 0, false
	}
	return firstBracketed(n, decides), accepts
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
		if k, err := K(MaxDrives, r.Coverage, r.Confidence); err != nil || k > d {
			return 0, false
		}
		return firstN(j.N, func(n int) bool {
			k, err := K(n, r.Coverage, r.Confidence)
			return err == nil && k <= d
		}, kGuess(d, r)), true
	}
	share := distuv.UnitNormal.CDF(d)
	if share >= r.Coverage {
		return 0, false
	}
	rejects := func(n int) bool {
		return ClopperPearsonUpper(int(math.Round(share*float64(n))), n, r.Confidence) < r.Coverage
	}
	if !rejects(MaxDrives) {
		return 0, false
	}
	// round(share·N) steps, so the bound is not monotone in N: bisect to a
	// bracket, then take its first N that rejects.
	return firstBracketed(j.N, rejects), false
}

// firstBracketed is the first n in (after, MaxDrives] with holds(n), for
// a holds true at MaxDrives but not monotone (a rounded share steps):
// bisection brackets the change to 64 drives, and the bracket is scanned
// from its start for the first n that holds.
func firstBracketed(after int, holds func(int) bool) int {
	lo, hi := after, MaxDrives
	for hi-lo > 64 {
		mid := (lo + hi) / 2
		if holds(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	for n := max(after+1, lo-64); n < hi; n++ {
		if holds(n) {
			return n
		}
	}
	return hi
}

// firstN is the first n in (after, MaxDrives] with ok(n), ok monotone
// (false, then true) and ok(MaxDrives) true, searched for from guess
// outward (galloping), then by bisection: a good guess costs a few ok
// calls where bisection of the whole range costs fourteen.
func firstN(after int, ok func(int) bool, guess int) int {
	guess = min(max(guess, after+1), MaxDrives)
	lo, hi := after, MaxDrives // ok(lo) false (or lo = after), ok(hi) true
	if ok(guess) {
		hi = guess
		for step := 1; ; step *= 2 {
			n := hi - step
			if n <= after {
				break
			}
			if !ok(n) {
				lo = n
				break
			}
			hi = n
		}
	} else {
		lo = guess
		for step := 1; ; step *= 2 {
			n := lo + step
			if n >= MaxDrives {
				break
			}
			if ok(n) {
				hi = n
				break
			}
			lo = n
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// kGuess is about the smallest n whose k(n) is at most d, from the
// Natrella approximation k ≈ (z_p + √(z_p² − a·b)) / a, a = 1 − z_γ² /
// (2(n − 1)), b = z_p² − z_γ² / n: a starting point for the exact search.
func kGuess(d float64, r Rule) int {
	zp := distuv.UnitNormal.Quantile(r.Coverage)
	zg := distuv.UnitNormal.Quantile(r.Confidence)
	approx := func(n int) float64 {
		a := 1 - zg*zg/(2*float64(n-1))
		b := zp*zp - zg*zg/float64(n)
		if a <= 0 || zp*zp-a*b < 0 {
			return math.Inf(1)
		}
		return (zp + math.Sqrt(zp*zp-a*b)) / a
	}
	lo, hi := 2, MaxDrives
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if approx(mid) <= d {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// meanSD is the mean and the sample standard deviation (n − 1) of xs.
// Equal figures have their value as mean and no spread, exactly: summed,
// their mean can differ from them by a rounding, which would give them a
// spread of 1e-12 that Shapiro–Wilk (comparing the figures themselves)
// does not see.
func meanSD(xs []float64) (mean, sd float64) {
	if lo, hi := slices.Min(xs), slices.Max(xs); lo == hi {
		return lo, 0
	}
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
	key := kKey{n, coverage, confidence}
	if k, ok := kCache.Load(key); ok {
		return k.(float64), nil
	}
	k, err := kOf(n, coverage, confidence)
	if err == nil {
		kCache.Store(key, k)
	}
	return k, err
}

// kCache holds the factors computed: k depends on n and the rule alone,
// and a run judges many cells (and a fleet many hosts) at the same n.
var kCache sync.Map // kKey → float64

type kKey struct {
	n                    int
	coverage, confidence float64
}

// kOf is K, computed.
func kOf(n int, coverage, confidence float64) (float64, error) {
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

// noncentralTQuantile is the p-quantile of the noncentral t distribution:
// the CDF is increasing in t, so a bracket is widened until it holds the
// quantile and narrowed by the Illinois variant of regula falsi, which
// keeps the bracket of bisection and converges superlinearly (a handful
// of CDF evaluations where bisection takes forty).
func noncentralTQuantile(p, df, delta float64) (float64, error) {
	lo, hi := delta-1, delta+1
	flo, fhi := NoncentralTCDF(lo, df, delta)-p, NoncentralTCDF(hi, df, delta)-p
	for flo > 0 {
		lo -= 2 * (hi - lo)
		if lo < -1e12 {
			return 0, errors.New("lot: noncentral t quantile out of range")
		}
		flo = NoncentralTCDF(lo, df, delta) - p
	}
	for fhi < 0 {
		hi += 2 * (hi - lo)
		if hi > 1e12 {
			return 0, errors.New("lot: noncentral t quantile out of range")
		}
		fhi = NoncentralTCDF(hi, df, delta) - p
	}
	side := 0
	for range 200 {
		if hi-lo <= 1e-13*max(1, math.Abs(lo)) || flo == 0 || fhi == 0 {
			break
		}
		mid := (lo*fhi - hi*flo) / (fhi - flo)
		if !(mid > lo && mid < hi) {
			mid = (lo + hi) / 2
		}
		fm := NoncentralTCDF(mid, df, delta) - p
		switch {
		case fm == 0:
			return mid, nil
		case fm < 0:
			lo, flo = mid, fm
			if side == -1 {
				fhi /= 2
			}
			side = -1
		default:
			hi, fhi = mid, fm
			if side == 1 {
				flo /= 2
			}
			side = 1
		}
	}
	switch {
	case flo == 0:
		return lo, nil
	case fhi == 0:
		return hi, nil
	}
	return (lo*fhi - hi*flo) / (fhi - flo), nil
}

func pct(f float64) string { return trim(f*100) + " %" }

// pval writes what a p-value is, to 3 decimals without trailing zeros:
// "= 0.41", "= 0.013"; "< 0.001" below that.
func pval(p float64) string {
	if p < 0.0005 {
		return "< 0.001"
	}
	return "= " + strconv.FormatFloat(math.Round(p*1000)/1000, 'f', -1, 64)
}

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

// counted writes "1 drive", "3 drives".
func counted(n int, what string) string {
	return fmt.Sprintf("%d %s%s", n, what, plural(n))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
