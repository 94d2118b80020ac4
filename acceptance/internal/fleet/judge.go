package fleet

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/stats"
	"github.com/drivequal/drivequal/specs"
)

// problem is one reason a cell does not pass.
type problem struct {
	cause string
	text  string
}

// judge fills c's figures, marks its members and gives its verdict, as
// Judge documents.
func judge(c *Cell, tolerance float64) {
	lower := specs.Metric(c.Metric).LowerIsBetter()
	vals := make([]float64, 0, len(c.Members))
	hosts := make(map[string]struct{}, len(c.Members))
	for _, m := range c.Members {
		if m.Counted {
			vals = append(vals, m.Actual)
		}
	}
	c.Drives = len(vals)
	for _, m := range c.Members {
		hosts[m.Host] = struct{}{}
	}
	c.Hosts = len(hosts)
	if len(vals) > 0 {
		st := stats.Of(vals)
		c.Min, c.Max, c.Median, c.Spread = st.Min, st.Max, st.Median, st.Spread()
	}

	var below, outliers, failed, noFigure, unclear []*Member
	for i := range c.Members {
		m := &c.Members[i]
		switch m.Verdict {
		case report.Fail:
			if m.Counted && m.Cause != report.CauseBelowSpec {
				failed = append(failed, m)
			}
		case report.Inconclusive:
			unclear = append(unclear, m)
		}
		if !m.Counted {
			noFigure = append(noFigure, m)
			continue
		}
		tol := tolerance
		if tol < 0 {
			tol = m.tolerance
		}
		if m.spec > 0 {
			if lower {
				m.Below = m.Actual > m.spec*(1+tol)
			} else {
				m.Below = m.Actual < m.spec*(1-tol)
			}
		}
		if c.Drives >= 2 {
			if lower {
				m.Outlier = m.Actual > c.Median*(1+c.FleetTolerance)
			} else {
				m.Outlier = m.Actual < c.Median*(1-c.FleetTolerance)
			}
		}
		if m.Below {
			below = append(below, m)
		}
		if m.Outlier {
			outliers = append(outliers, m)
		}
	}

	var problems []problem
	if len(below) > 0 {
		problems = append(problems, problem{report.CauseBelowSpec, c.belowText(below, lower)})
	}
	if c.Drives >= 2 && c.Spread > c.FleetTolerance {
		problems = append(problems, problem{CauseSpread, c.spreadText(outliers, lower)})
	}
	for _, m := range failed {
		problems = append(problems, problem{CauseMemberFailed,
			fmt.Sprintf("%s failed in its own run (%s)%s", m.Name(), orDash(m.Cause), colon(m.Error))})
	}
	for _, m := range noFigure {
		problems = append(problems, problem{CauseNoFigure,
			fmt.Sprintf("%s has no figure (its own verdict %s, %s)%s", m.Name(), orDash(m.Verdict), orDash(m.Cause), colon(m.Error))})
	}

	head := fmt.Sprintf("%s across %s on %s", c.Workload, plural(len(c.Members), "drive"), plural(c.Hosts, "host"))
	if c.Drives < len(c.Members) {
		head += fmt.Sprintf(" (%d with a figure)", c.Drives)
	}
	switch {
	case len(problems) > 0:
		c.Verdict, c.Cause = report.Fail, problems[0].cause
		texts := make([]string, len(problems))
		for i, p := range problems {
			texts[i] = p.text
		}
		c.Message = head + ": " + strings.Join(texts, "; ")
		if c.Drives > 0 {
			c.Message += "; " + c.stats()
		}
	case len(unclear) > 0:
		c.Verdict, c.Cause = report.Inconclusive, CauseMemberNotClear
		names := make([]string, len(unclear))
		for i, m := range unclear {
			names[i] = fmt.Sprintf("%s (%s)", m.Name(), orDash(m.Cause))
		}
		c.Message = fmt.Sprintf("%s: %d of %d drives inconclusive in their own runs, so their figures may flatter them: %s; first: %s; %s",
			head, len(unclear), len(c.Members), strings.Join(names, ", "), orDash(unclear[0].Error), c.stats())
	case c.Drives < 2:
		c.Verdict, c.Cause = report.Inconclusive, CauseTooFew
		c.Message = fmt.Sprintf("%s: a fleet needs at least 2 drives with a figure to compare", head)
		if c.Drives > 0 {
			c.Message += "; " + c.stats()
		}
	default:
		c.Verdict = report.Pass
		c.Message = fmt.Sprintf("%s: every drive meets spec %s%s and the spread is within %s %%; %s",
			head, report.FormatValue(c.Spec, c.Metric), toleranceText(c.Tolerance), pct(c.FleetTolerance), c.stats())
	}
}

// stats writes the cell's figures: "min …, median …, max … (… % of spec);
// spread … % of the median (limit … %)".
func (c *Cell) stats() string {
	s := fmt.Sprintf("min %s, median %s, max %s", report.FormatValue(c.Min, c.Metric),
		report.FormatValue(c.Median, c.Metric), report.FormatValue(c.Max, c.Metric))
	if c.Spec > 0 {
		s += fmt.Sprintf(" (%.2f–%.2f %% of spec)", c.Min/c.Spec*100, c.Max/c.Spec*100)
	}
	return s + fmt.Sprintf("; spread %.2f %% of the median (limit %s %%)", c.Spread*100, pct(c.FleetTolerance))
}

func (c *Cell) belowText(below []*Member, lower bool) string {
	side := "below"
	if lower {
		side = "above"
	}
	names := make([]string, len(below))
	for i, m := range below {
		names[i] = fmt.Sprintf("%s %s (%.2f %% of spec)", m.Name(), report.FormatValue(m.Actual, c.Metric), m.Ratio*100)
	}
	return fmt.Sprintf("%d of %d drives %s spec %s%s: %s", len(below), len(c.Members), side,
		report.FormatValue(c.Spec, c.Metric), toleranceText(c.Tolerance), strings.Join(names, ", "))
}

func (c *Cell) spreadText(outliers []*Member, lower bool) string {
	s := fmt.Sprintf("spread %.2f %% of the median %s > %s %%", c.Spread*100, report.FormatValue(c.Median, c.Metric), pct(c.FleetTolerance))
	if len(outliers) == 0 {
		// Only drives better than the median are far from it.
		lo, hi := c.extremes(lower)
		return s + fmt.Sprintf(": worst %s %s, best %s %s", lo.Name(), report.FormatValue(lo.Actual, c.Metric), hi.Name(), report.FormatValue(hi.Actual, c.Metric))
	}
	side := "below"
	if lower {
		side = "above"
	}
	names := make([]string, len(outliers))
	for i, m := range outliers {
		names[i] = fmt.Sprintf("%s %s (%.2f %% of the median)", m.Name(), report.FormatValue(m.Actual, c.Metric), m.Actual/c.Median*100)
	}
	return s + fmt.Sprintf(": outliers more than %s %% %s the median: %s", pct(c.FleetTolerance), side, strings.Join(names, ", "))
}

// extremes returns the worst and the best counted member.
func (c *Cell) extremes(lower bool) (worst, best *Member) {
	for i := range c.Members {
		m := &c.Members[i]
		if !m.Counted {
			continue
		}
		if worst == nil || (m.Actual < worst.Actual) != lower {
			worst = m
		}
		if best == nil || (m.Actual > best.Actual) != lower {
			best = m
		}
	}
	return worst, best
}

// toleranceText is " (tolerance t %)" when t > 0.
func toleranceText(t float64) string {
	if t > 0 {
		return " (tolerance " + pct(t) + " %)"
	}
	return ""
}

// pct writes a fraction as a percentage with no trailing zeros: 0.1 → "10".
func pct(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e4, 'f', -1, 64)
}

// plural writes "1 drive", "2 drives".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func colon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
