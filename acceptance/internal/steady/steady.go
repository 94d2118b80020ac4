// Package steady decides whether a drive reached steady state, by the rule
// of the SNIA Solid State Storage Performance Test Specification (PTS).
//
// Over a measurement window of consecutive rounds (5 in the PTS), the
// tracked variable, here a round's mean IOPS, must have
//
//   - a range, max − min, of at most 20 % of the window's mean, and
//   - a best linear fit whose change across the window (the PTS "slope":
//     the fitted line's max − min over the window) is at most 10 % of the
//     window's mean.
//
// A round is a fixed interval of the workload (1 minute in the PTS), chosen
// by the caller. Rounds are whole rounds of one clock, counted from the
// start of the step: round k is fio's runtime ((k−1)·round, k·round].
// Tracker makes them from fio's status reports as fio runs, and decides
// when to stop; the recorded verdict is the same Tracker's, so the window
// that stopped a run is the window recorded. LogRounds makes the same
// rounds from fio's IOPS logs, for a run without status reports. A round
// that fio's reports or logs do not cover closely enough is Unmeasured:
// it says so and is never read as 0 IOPS.
//
// The PTS semantics, as SNIA PTS 2.0.2 §2.1.24 and the public
// implementations read them: steady state is reached at the first round n
// ≥ Window whose trailing window of Window rounds holds both limits, the
// limits inclusive; a run is never judged on fewer than Window whole
// rounds.
//
// fio's own steadystate= option is a different test: its iops_slope limit
// applies to the slope per sample interval (1 s) over ss_dur, not to the
// fitted line's change over the PTS window, and its iops limit bounds the
// largest deviation from the mean, not the range. This package computes
// the PTS figures itself.
package steady

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// Rule is the steady-state criterion. Fractions are of the window's mean
// (0.20 = 20 %).
type Rule struct {
	// Window is the number of consecutive rounds judged together (the PTS
	// measurement window); at least 2.
	Window int
	// MaxRange is the largest allowed max − min of the window's rounds.
	MaxRange float64
	// MaxExcursion is the largest allowed change of the window's
	// least-squares line across the window: |slope| × (Window − 1).
	MaxExcursion float64
}

// DefaultRule is the PTS rule: 5 rounds, range ≤ 20 %, excursion ≤ 10 %.
var DefaultRule = Rule{Window: 5, MaxRange: 0.20, MaxExcursion: 0.10}

// Validate reports what is wrong with r, every problem at once.
func (r Rule) Validate() error {
	var bad []string
	if r.Window < 2 {
		bad = append(bad, fmt.Sprintf("window must be at least 2 rounds, not %d", r.Window))
	}
	if !(r.MaxRange > 0) || math.IsInf(r.MaxRange, 0) {
		bad = append(bad, fmt.Sprintf("range limit must be a fraction > 0, not %v", r.MaxRange))
	}
	if !(r.MaxExcursion > 0) || math.IsInf(r.MaxExcursion, 0) {
		bad = append(bad, fmt.Sprintf("excursion limit must be a fraction > 0, not %v", r.MaxExcursion))
	}
	if len(bad) > 0 {
		return fmt.Errorf("steady-state rule: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Verdict is the rule applied to the last Rule.Window rounds of a series.
type Verdict struct {
	Attained bool
	Rule     Rule
	// Rounds is the number of rounds in the series; the window is its last
	// Rule.Window rounds, numbered First+1 … Rounds from 1.
	Rounds int
	First  int
	// Mean is the window's mean, in IOPS; Range its max − min, in IOPS.
	Mean  float64
	Range float64
	// Slope is the least-squares slope over the window, in IOPS per round;
	// Excursion is |Slope| × (Rule.Window − 1), the fitted line's change
	// across the window, in IOPS.
	Slope     float64
	Excursion float64
	// Note says why the figures were not judged: too few rounds, an
	// invalid rule, a window mean that is not > 0, an Unmeasured round or
	// one that is not a finite number ≥ 0. Empty when they were.
	Note string
}

// RelRange is Range as a fraction of Mean (0 when Mean is 0).
func (v Verdict) RelRange() float64 { return frac(v.Range, v.Mean) }

// RelExcursion is Excursion as a fraction of Mean (0 when Mean is 0).
func (v Verdict) RelExcursion() float64 { return frac(v.Excursion, v.Mean) }

func frac(x, mean float64) float64 {
	if mean == 0 {
		return 0
	}
	return x / mean
}

// String is one line: "steady state reached: window mean 152,300 IOPS,
// range 4.1 % (limit 20 %), excursion 2.0 % (limit 10 %)", or "not reached:
// ..." with the same figures or the Note.
func (v Verdict) String() string {
	head := "not reached: "
	if v.Attained {
		head = "steady state reached: "
	}
	if v.Note != "" {
		return head + v.Note
	}
	return fmt.Sprintf("%swindow mean %s IOPS, range %.1f %% (limit %s %%), excursion %.1f %% (limit %s %%)",
		head, units.Thousands(v.Mean), 100*v.RelRange(), pct(v.Rule.MaxRange), 100*v.RelExcursion(), pct(v.Rule.MaxExcursion))
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'g', 4, 64) }

// Check applies r to the last r.Window rounds (mean IOPS of each round, in
// order). With fewer rounds than the window, or an invalid rule, the
// verdict is not attained and its Note says why.
func (r Rule) Check(rounds []float64) Verdict {
	v := Verdict{Rule: r, Rounds: len(rounds)}
	if err := r.Validate(); err != nil {
		v.Note = err.Error()
		return v
	}
	if len(rounds) < r.Window {
		v.Note = fmt.Sprintf("%d rounds, fewer than the %d-round window", len(rounds), r.Window)
		return v
	}
	v.First = len(rounds) - r.Window
	w := rounds[v.First:]
	for i, y := range w {
		if math.IsNaN(y) {
			v.Note = fmt.Sprintf("round %d was not measured: too few samples of it", v.First+i+1)
			return v
		}
		if math.IsInf(y, 0) || y < 0 {
			v.Note = fmt.Sprintf("round %d is %v IOPS", v.First+i+1, y)
			return v
		}
	}
	n := float64(len(w))
	lo, hi := slices.Min(w), slices.Max(w)
	var sum float64
	for _, y := range w {
		sum += y
	}
	v.Mean = sum / n
	v.Range = hi - lo
	// Least squares over x = 0 … n−1: slope = Σ(x−x̄)(y−ȳ) / Σ(x−x̄)².
	xm := (n - 1) / 2
	var sxy, sxx float64
	for i, y := range w {
		dx := float64(i) - xm
		sxy += dx * (y - v.Mean)
		sxx += dx * dx
	}
	v.Slope = sxy / sxx
	v.Excursion = math.Abs(v.Slope) * (n - 1)
	if !(v.Mean > 0) {
		v.Note = fmt.Sprintf("window mean is %s IOPS", units.Thousands(v.Mean))
		return v
	}
	v.Attained = v.Range <= r.MaxRange*v.Mean && v.Excursion <= r.MaxExcursion*v.Mean
	return v
}

// Track applies r after each round, as a run that stops at steady state
// would: attainedAt is the first round (counted from 1) whose trailing
// window satisfies r, and v that window's verdict; the run took attainedAt
// rounds. When no window does, attainedAt is 0 and v is the verdict of the
// last window (or says there were too few rounds).
func (r Rule) Track(rounds []float64) (attainedAt int, v Verdict) {
	for n := r.Window; n <= len(rounds); n++ {
		if v = r.Check(rounds[:n]); v.Attained {
			return n, v
		}
	}
	return 0, r.Check(rounds)
}
