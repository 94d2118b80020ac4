// Package baseline compares a run with earlier runs of the same cells (the
// -baseline recordings), the way benchstat compares two sets of benchmark
// results.
//
// Each side is a sample of figures, one per drive per recorded run; the
// centre is the median; the difference is tested with the Mann–Whitney U
// test (golang.org/x/perf's benchmath, as benchstat uses it) for the
// changes within the tolerance; a median drop larger than the tolerance is
// a regression whatever the test says.
//
// The package only judges values: it never reads recordings, runs a
// process or prints. Chart is the one function that writes a file.
package baseline

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchmath"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/stats"
	"github.com/drivequal/drivequal/specs"
)

// Thresholds are the limits of a comparison (the spec's [baseline]).
type Thresholds struct {
	// Tolerance is the largest worsening, a fraction of the baseline's
	// median, that is never a regression; in [0, 1).
	Tolerance float64
	// LatencyTolerance is Tolerance for the latency percentiles.
	LatencyTolerance float64
	// Alpha is the significance level: p < Alpha is a real difference.
	Alpha float64
}

// DefaultThresholds are the spec's defaults: 5 % and α = 0.05.
var DefaultThresholds = Thresholds{Tolerance: specs.DefaultBaselineTolerance, LatencyTolerance: specs.DefaultBaselineTolerance, Alpha: specs.DefaultBaselineAlpha}

// Of is the thresholds the spec sets.
func Of(s *specs.Spec) Thresholds {
	return Thresholds{Tolerance: s.Baseline.Tolerance, LatencyTolerance: s.Baseline.LatencyTolerance, Alpha: s.Baseline.Alpha}
}

// Compare judges this run's figures against the baseline's. lower says a
// smaller figure is the better one (a latency). Figures that are NaN, ±Inf
// or not positive are left out.
//
// The rule, with worse the fraction by which this run's median is worse
// than the baseline's, is monotone in the change: a larger drop never
// reads better, and one more figure a side never turns a regression into
// a pass.
//   - worse > Tolerance is Regressed, and better by more than it
//     Improved, whatever p: the U test says whether the samples differ,
//     not by how much, so a large p (a spread, one outlying drive) never
//     passes a median drop the tolerance rejects;
//   - within the tolerance, p decides when the samples are large enough
//     for a test (its smallest possible two-sided p, 2 / C(n1+n2, n1),
//     below Alpha: 4 figures a side at α = 0.05): p < Alpha and worse > 0
//     is Worse (a real drop within the tolerance), p < Alpha and better
//     Improved, else Same ("~");
//   - with fewer figures (one drive a side: "1 sample") no test is made,
//     Note says so, and a change within the tolerance is Same.
func Compare(base, this []float64, lower bool, th Thresholds) report.Comparison {
	b, t := clean(base), clean(this)
	c := report.Comparison{LowerIsBetter: lower, Baseline: sample(b), This: sample(t), Alpha: th.Alpha, Tolerance: th.Tolerance, P: 1}
	if c.Baseline.N == 0 || c.This.N == 0 {
		c.Verdict = report.Same
		c.Note = "no figure to compare"
		return c
	}
	c.Delta = c.This.Median/c.Baseline.Median - 1
	worse := -c.Delta
	if lower {
		worse = c.Delta
	}
	bt := benchmath.Thresholds{CompareAlpha: th.Alpha}
	cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(b), &bt), benchmath.NewSample(slices.Clone(t), &bt))
	c.P = cmp.P
	c.Tested = minP(len(b), len(t)) < th.Alpha
	if !c.Tested {
		c.Note = tooFew(len(b), len(t), th.Alpha)
	}
	switch {
	case worse > th.Tolerance:
		c.Verdict = report.Regressed
	case -worse > th.Tolerance:
		c.Verdict = report.Improved
	case !c.Tested || c.P >= th.Alpha || worse == 0:
		c.Verdict = report.Same
	case worse > 0:
		c.Verdict = report.Worse
	default:
		c.Verdict = report.Improved
	}
	return c
}

// minP is the smallest two-sided p-value the Mann–Whitney U test can give
// for samples of n1 and n2 figures: every figure of one side below every
// figure of the other, 2 / C(n1+n2, n1).
func minP(n1, n2 int) float64 {
	lg1, _ := math.Lgamma(float64(n1 + n2 + 1))
	lg2, _ := math.Lgamma(float64(n1 + 1))
	lg3, _ := math.Lgamma(float64(n2 + 1))
	return math.Min(1, 2/math.Exp(lg1-lg2-lg3))
}

// tooFew says why a comparison of n1 and n2 figures is judged by the
// tolerance alone.
func tooFew(n1, n2 int, alpha float64) string {
	if n1 == 1 && n2 == 1 {
		return "1 sample"
	}
	return fmt.Sprintf("n=%d+%d: too few for p < %s", n1, n2, strconv.FormatFloat(alpha, 'f', -1, 64))
}

func clean(vals []float64) []float64 {
	var out []float64
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

func sample(vals []float64) report.Sample {
	st := stats.Of(vals)
	s := report.Sample{N: st.N, Median: st.Median, Min: st.Min, Max: st.Max, Values: slices.Clone(vals)}
	if s.Values == nil {
		s.Values = []float64{}
	}
	return s
}
