// Package stats is the one home of the statistics drivequal judges by.
//
// It computes the median, mean and extremes of a set of figures (per-drive
// actuals of a scaling step, a fleet's drives). Judges compute with it;
// reports render what the judges returned.
package stats

import (
	"math"
	"slices"
)

// Summary describes a set of figures.
type Summary struct {
	N                      int
	Min, Median, Mean, Max float64
}

// Of summarises vals, leaving out NaN and ±Inf; the zero Summary when none
// is left.
func Of(vals []float64) Summary {
	var ok []float64
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			ok = append(ok, v)
		}
	}
	if len(ok) == 0 {
		return Summary{}
	}
	slices.Sort(ok)
	s := Summary{N: len(ok), Min: ok[0], Max: ok[len(ok)-1]}
	var sum float64
	for _, v := range ok {
		sum += v
	}
	s.Mean = sum / float64(len(ok))
	if n := len(ok); n%2 == 1 {
		s.Median = ok[n/2]
	} else {
		s.Median = (ok[n/2-1] + ok[n/2]) / 2
	}
	return s
}

// Median is the median of vals (see Of).
func Median(vals []float64) float64 { return Of(vals).Median }

// Spread is (max − min) / median: how far apart the figures are, as a
// fraction of their median; 0 when the median is not positive. It is the
// one spread drivequal reports, for scaling steps and fleets alike. The
// median, not the mean, because outliers are named by their distance
// below the median: one slow drive pulls the mean toward itself and would
// shrink the very spread it causes, while the median stays with the
// drives that agree.
func (s Summary) Spread() float64 {
	if s.Median <= 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median
}
