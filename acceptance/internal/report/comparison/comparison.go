// Package comparison is one figure of a cell compared with the
// baseline's (TestBaseline): its two samples, the test's verdict, and the
// words summary.md and junit.xml give it.
package comparison

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// Comparison verdicts (Comparison.Verdict), as benchstat reads them.
const (
	Regressed = "regressed" // worse beyond the tolerance: the cell fails
	Worse     = "worse"     // significantly worse, within the tolerance
	Same      = "~"         // no difference the data can show
	Improved  = "improved"  // significantly better (or beyond the tolerance, with too few samples)
)

// Comparison is one figure of a cell compared with the baseline's: the
// cell's metric, or a latency percentile.
type Comparison struct {
	// Figure names what is compared: the cell's metric ("iops", "MBps",
	// "lat_us") or a latency percentile ("read_p99_us", "write_p99_99_us").
	Figure string `json:"figure"`
	// LowerIsBetter says a rise is the worse direction (latencies).
	LowerIsBetter bool   `json:"lower_is_better,omitempty"`
	Baseline      Sample `json:"baseline"`
	This          Sample `json:"this"`
	// Delta is This.Median / Baseline.Median − 1 (−0.10 is 10 % lower).
	Delta float64 `json:"delta"`
	// P is the two-sided Mann–Whitney U test's p-value of the two samples
	// (1 when they cannot be told apart at all).
	P float64 `json:"p"`
	// Tested says the samples are large enough for P to fall below Alpha;
	// when false the comparison is judged by Tolerance alone.
	Tested    bool    `json:"tested"`
	Alpha     float64 `json:"alpha"`
	Tolerance float64 `json:"tolerance"`
	// Verdict is Regressed, Worse, Same or Improved.
	Verdict string `json:"verdict"`
	// Note says why the test was not made ("1 sample", "n=3+3: too few
	// for p < 0.05").
	Note string `json:"note,omitempty"`
}

// Sample is one side's figures for a comparison: one per drive (a
// scaling step's drives, every host's drive) per recorded run, in the
// figure's unit (latencies in µs).
type Sample struct {
	N      int       `json:"n"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// FigureName is the figure as people read it: "iops", "read p99.99 µs".
func (c Comparison) FigureName() string {
	if !strings.HasSuffix(c.Figure, "_us") || c.Figure == "lat_us" {
		return c.Figure
	}
	dir, rest, _ := strings.Cut(strings.TrimSuffix(c.Figure, "_us"), "_")
	return dir + " " + strings.ReplaceAll(rest, "_", ".") + " µs"
}

// Value is v in the figure's unit: "2,400,000 IOPS", "2,000 µs".
func (c Comparison) Value(v float64) string {
	if strings.HasSuffix(c.Figure, "_us") && c.Figure != "lat_us" {
		return units.Thousands(v) + " µs"
	}
	s := units.Thousands(v)
	if u := units.Unit(c.Figure); u != "" {
		s += " " + u
	}
	return s
}

// DeltaText is benchstat's delta column: "~" when the data show no
// difference (with the medians' change beside it when there is one),
// else the change of the medians, "-10.00 %".
func (c Comparison) DeltaText() string {
	if c.Verdict == Same {
		if c.Delta == 0 {
			return "~"
		}
		return fmt.Sprintf("~ (%+.2f %%)", c.Delta*100)
	}
	return fmt.Sprintf("%+.2f %%", c.Delta*100)
}

// PText is the p column: "p=0.000 n=24", or why no test was made ("1 sample").
func (c Comparison) PText() string {
	if c.Note == "1 sample" {
		return "1 sample"
	}
	n := fmt.Sprintf("n=%d+%d", c.Baseline.N, c.This.N)
	if c.Baseline.N == c.This.N {
		n = fmt.Sprintf("n=%d", c.This.N)
	}
	if !c.Tested {
		return n + ", too few for a test"
	}
	return fmt.Sprintf("p=%.3f %s", c.P, n)
}

// VerdictText is the verdict column: "**REGRESSED**", "~".
func (c Comparison) VerdictText() string {
	switch c.Verdict {
	case Regressed:
		return "**REGRESSED**"
	case Worse:
		return "worse, within tolerance"
	case Improved:
		return "improved"
	}
	return "~"
}

// Line is the comparison in one line, for a testcase's system-out:
// "2,160,000 IOPS vs baseline 2,400,000 IOPS: -10.00 % (p=0.000 n=24): regressed".
func (c Comparison) Line() string {
	return fmt.Sprintf("%s vs baseline %s: %s (%s): %s", c.Value(c.This.Median), c.Value(c.Baseline.Median),
		c.DeltaText(), c.PText(), strings.Trim(c.VerdictText(), "*"))
}
