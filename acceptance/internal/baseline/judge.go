package baseline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Key is the cell a result is compared as: its group and workload,
// without the host of a fleet replay ("TestSingleDrive/1.92TB/4KB_Random_Read",
// "TestScaling/24_drives/4KB_Random_Read"); "" for a result that is not a
// measured cell (fleet, baseline, ...).
func Key(res report.Result) string {
	switch res.Kind {
	case report.KindSingle:
		return "TestSingleDrive/" + res.Capacity + "/" + specs.SubtestName(res.Workload)
	case report.KindScaling:
		return "TestScaling/" + strconv.Itoa(res.Drives) + "_drives/" + specs.SubtestName(res.Workload)
	}
	return ""
}

// TestName is the TestBaseline cell of key: "TestBaseline/1.92TB/4KB_Random_Read",
// "TestBaseline/24_drives/4KB_Random_Read".
func TestName(key string) string {
	_, rest, _ := strings.Cut(key, "/")
	return "TestBaseline/" + rest
}

// noFigure are the causes of a result that measured nothing to compare.
var noFigure = map[string]bool{
	report.CauseFioFailed: true, report.CauseBadRecording: true, report.CauseNotRecorded: true,
	report.CausePreparation: true, report.CauseDriveChanged: true, report.CauseInterrupted: true,
	report.CauseNoBaseline: true,
}

// A result whose figure is not the drive's (report.NotTheDrives) is left
// out of its side's sample, and a cell left with none on a side is not
// compared.

// notComparable says why the cell of these sides is not compared: each
// cause outside the drive on each side, with the first such result's
// message; "" when every result is the drive's.
func notComparable(base, this []report.Result) string {
	var why []string
	for _, side := range []struct {
		name string
		rs   []report.Result
	}{{"this run", this}, {"the baseline", base}} {
		var causes []string
		first := ""
		for _, r := range side.rs {
			if report.NotTheDrives(r) {
				if !slices.Contains(causes, r.Cause) {
					causes = append(causes, r.Cause)
				}
				if first == "" {
					first = r.Test
					if r.Host != "" {
						first = r.Host + ": " + first
					}
					if msg := strings.SplitN(r.Error, "\n", 2)[0]; msg != "" {
						first += ": " + msg
					}
				}
			}
		}
		if len(causes) > 0 {
			why = append(why, fmt.Sprintf("%s on %s (%s)", strings.Join(causes, ", "), side.name, first))
		}
	}
	return strings.Join(why, "; ")
}

// Figures is a side's sample of a cell: one figure per drive of each
// result (a scaling step's drives without an error), or the result's
// actual when it has no per-drive figures. A result that measured nothing
// (fio failed, not recorded, ...) adds none.
func Figures(rs []report.Result) []float64 {
	var out []float64
	for _, r := range rs {
		if noFigure[r.Cause] {
			continue
		}
		if len(r.PerDrive) == 0 {
			out = append(out, r.Actual)
			continue
		}
		for _, d := range r.PerDrive {
			if d.Error == "" {
				out = append(out, d.Actual)
			}
		}
	}
	return out
}

// percentiles are the latency percentiles compared, per direction.
var percentiles = []struct {
	p   float64
	key string
}{{99, "p99"}, {99.99, "p99_99"}}

// latencies compares each direction's p99 and p99.99 when both sides
// have it: one figure per result (a cell's latency is of all its drives
// together).
func latencies(base, this []report.Result, th Thresholds) []report.Comparison {
	var out []report.Comparison
	for _, dir := range []string{"read", "write"} {
		for _, pc := range percentiles {
			get := func(rs []report.Result) []float64 {
				var v []float64
				for _, r := range rs {
					l := r.Read
					if dir == "write" {
						l = r.Write
					}
					if l != nil && !noFigure[r.Cause] && l.Percentile(pc.p) > 0 {
						v = append(v, l.Percentile(pc.p))
					}
				}
				return v
			}
			b, t := get(base), get(this)
			if len(b) == 0 || len(t) == 0 {
				continue
			}
			lt := th
			lt.Tolerance = th.LatencyTolerance
			c := Compare(b, t, true, lt)
			c.Figure = dir + "_" + pc.key + "_us"
			out = append(out, c)
		}
	}
	return out
}

// Judge compares every cell of this run that the baseline has: this and
// base are the results of each side (every recorded run's, every host's),
// matched by Key. It returns one TestBaseline result per compared cell, in
// the order this run's results first name them. A cell fails (cause
// CauseRegressed) when its metric or a latency percentile Regressed; it
// is inconclusive when a side has no figure for its metric.
func Judge(base, this []report.Result, th Thresholds) []report.Result {
	baseBy := map[string][]report.Result{}
	for _, r := range base {
		if k := Key(r); k != "" {
			baseBy[k] = append(baseBy[k], r)
		}
	}
	var order []string
	thisBy := map[string][]report.Result{}
	for _, r := range this {
		k := Key(r)
		if k == "" || baseBy[k] == nil {
			continue
		}
		if thisBy[k] == nil {
			order = append(order, k)
		}
		thisBy[k] = append(thisBy[k], r)
	}
	var out []report.Result
	for _, k := range order {
		out = append(out, judgeCell(k, baseBy[k], thisBy[k], th))
	}
	return out
}

// drivesOwn is rs without the results whose figure is not the drive's
// (report.NotTheDrives), and how many it left out.
func drivesOwn(rs []report.Result) (kept []report.Result, left int) {
	for _, r := range rs {
		if report.NotTheDrives(r) {
			left++
			continue
		}
		kept = append(kept, r)
	}
	return kept, left
}

func judgeCell(key string, base, this []report.Result, th Thresholds) report.Result {
	first := this[0]
	metric := specs.Metric(first.Metric)
	// A result whose figure is not the drive's is left out of its side;
	// the others (every other host's, every other recorded run's) are
	// still compared, so one host-bound or not-steady baseline recording
	// does not hide a regression the rest of the fleet shows.
	keptBase, leftBase := drivesOwn(base)
	keptThis, leftThis := drivesOwn(this)
	all := notComparable(base, this)
	if len(keptBase) > 0 && len(keptThis) > 0 {
		base, this = keptBase, keptThis
	}
	c := Compare(Figures(base), Figures(this), metric.LowerIsBetter(), th)
	c.Figure = first.Metric
	br := &report.BaselineResult{Test: TestName(key), Group: first.Capacity, Metric: c, Latency: latencies(base, this, th)}
	if first.Kind == report.KindScaling {
		br.Group = report.ScalingGate
	}
	res := report.Result{Test: br.Test, Kind: report.KindBaseline, Capacity: first.Capacity, Workload: first.Workload,
		Drives: first.Drives, Metric: first.Metric, Spec: first.Spec, Expected: c.Baseline.Median, Actual: c.This.Median,
		Tolerance: th.Tolerance, Verdict: report.Pass, Baseline: br}
	if c.Baseline.Median > 0 {
		res.Ratio = c.This.Median / c.Baseline.Median
	}
	if why := all; why != "" && (len(keptBase) == 0 || len(keptThis) == 0) {
		// Not the drive's figures: no verdict on the drive, either way.
		res.Verdict, res.Cause = report.Inconclusive, report.CauseNotComparable
		res.Error = fmt.Sprintf("%s: not comparable: %s: the figure is not the drive's alone, so it is not compared with the baseline", first.Workload, why)
		for _, x := range append([]*report.Comparison{&br.Metric}, pointers(br.Latency)...) {
			x.Verdict, x.Note = report.Same, "not comparable"
		}
		return res
	}
	switch {
	case c.Baseline.N == 0:
		res.Verdict, res.Cause = report.Inconclusive, "no figure"
		res.Error = fmt.Sprintf("%s: the baseline measured nothing to compare: %s", first.Workload, firstError(base))
		return res
	case c.This.N == 0:
		res.Verdict, res.Cause = report.Inconclusive, "no figure"
		res.Error = fmt.Sprintf("%s: this run measured nothing to compare: %s", first.Workload, firstError(this))
		return res
	}
	var regressed []string
	for _, x := range append([]report.Comparison{c}, br.Latency...) {
		if x.Verdict == report.Regressed {
			regressed = append(regressed, Row(first.Workload, x))
		}
	}
	if len(regressed) > 0 {
		res.Verdict, res.Cause = report.Fail, report.CauseRegressed
		res.Error = strings.Join(regressed, "; ")
		if leftBase+leftThis > 0 {
			res.Error += fmt.Sprintf(" (left out as not the drive's: %s)", all)
		}
	}
	return res
}

func pointers(cs []report.Comparison) []*report.Comparison {
	out := make([]*report.Comparison, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

func firstError(rs []report.Result) string {
	for _, r := range rs {
		if r.Error != "" {
			return strings.SplitN(r.Error, "\n", 2)[0]
		}
	}
	return "no result"
}

// Row is a comparison in one line, as the cell's message gives it:
// "4KB Random Read: 2,160,000 IOPS vs baseline 2,400,000 IOPS: -10.00 %
// (p=0.000 n=24+24): regressed beyond the 5 % tolerance".
func Row(workload string, c report.Comparison) string {
	what := workload
	unit := c.Figure
	if strings.HasSuffix(c.Figure, "_us") && c.Figure != string(specs.LatUS) {
		what += " " + FigureName(c.Figure)
	}
	s := fmt.Sprintf("%s: %s vs baseline %s: %s (%s)", what, Value(c.This.Median, unit), Value(c.Baseline.Median, unit),
		c.DeltaText(), c.PText())
	switch c.Verdict {
	case report.Regressed:
		s += fmt.Sprintf(": regressed beyond the %s %% tolerance", pct(c.Tolerance))
		switch {
		case !c.Tested:
			s += " (judged by tolerance alone)"
		case c.P >= c.Alpha:
			s += fmt.Sprintf(" (p=%.3f is not below %s, but a median change beyond the tolerance is not passed on p alone)",
				c.P, strconv.FormatFloat(c.Alpha, 'f', -1, 64))
		}
	case report.Worse:
		s += fmt.Sprintf(": worse, within the %s %% tolerance", pct(c.Tolerance))
	case report.Improved:
		s += ": improved"
	default:
		s += ": ~"
	}
	return s
}

// FigureName is a latency figure as people read it: "read_p99_99_us" →
// "read p99.99 latency".
func FigureName(fig string) string {
	dir, rest, _ := strings.Cut(strings.TrimSuffix(fig, "_us"), "_")
	return dir + " " + strings.ReplaceAll(rest, "_", ".") + " latency"
}

// Value formats v in the figure's unit.
func Value(v float64, figure string) string {
	switch figure {
	case string(specs.IOPS), string(specs.MBps), string(specs.LatUS):
		return report.FormatValue(v, figure)
	}
	return report.Thousands(v) + " µs"
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) }
