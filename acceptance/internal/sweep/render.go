package sweep

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/specs"
)

func init() { report.Sections = append(report.Sections, Render) }

// curve is one target's points and its judged result, if any.
type curve struct {
	test     string
	capacity string
	workload string
	points   []report.Result
	target   *report.Result
}

// curves groups r's sweep points by target, in the order they came.
func curves(r *report.Run) []*curve {
	var out []*curve
	by := map[string]*curve{}
	get := func(test, capacity, workload string) *curve {
		if c, ok := by[test]; ok {
			return c
		}
		c := &curve{test: test, capacity: capacity, workload: workload}
		by[test] = c
		out = append(out, c)
		return c
	}
	for i, res := range r.Results {
		switch res.Kind {
		case report.KindSweep:
			c := get(res.Test[:strings.LastIndexByte(res.Test, '/')], res.Capacity, res.Workload)
			c.points = append(c.points, res)
		case report.KindLatency:
			get(res.Test, res.Capacity, res.Workload).target = &r.Results[i]
		}
	}
	return out
}

// ChartFile is the chart of target test's curve in the report's charts
// directory: "sweep-1.92TB-4KB_Random_Read.svg".
func ChartFile(capacity, workload string) string {
	return "sweep-" + specs.SubtestName(capacity) + "-" + specs.SubtestName(workload) + ".svg"
}

// Render is summary.md's "Latency at load" section, a table of each
// sweep's points and its target's verdict, and each sweep's chart
// (chart.Latency), keyed by file name.
func Render(r *report.Run) (string, map[string][]byte) {
	cs := curves(r)
	if len(cs) == 0 {
		return "", nil
	}
	var b strings.Builder
	charts := map[string][]byte{}
	b.WriteString("## Latency at load\n\n")
	for _, c := range cs {
		fmt.Fprintf(&b, "### %s, %s\n\n", c.capacity, c.workload)
		if t := c.target; t != nil {
			row := t.Error
			switch _, bound := boundOf(t); {
			case row == "" && bound == "":
				row = "points measured; no [capacity.at_latency] target to judge them by"
			case row == "":
				row = fmt.Sprintf("IOPS at %s: %s ≥ min_iops %s", bound, report.Thousands(t.Actual), report.Thousands(t.Spec))
			}
			fmt.Fprintf(&b, "**%s** (`%s`): %s\n\n", strings.ToUpper(t.Verdict), t.Test, row)
		}
		b.WriteString("| Load | IOPS | MB/s | Direction | p50 µs | p99 µs | p99.9 µs | p99.99 µs | p99.999 µs | max µs | mean µs | Note |\n")
		b.WriteString("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, p := range c.points {
			note := ""
			switch {
			case p.Saturated:
				note = fmt.Sprintf("saturated: %s of %s IOPS asked (< %g %%), not a latency figure", report.Thousands(p.Actual), report.Thousands(p.RateIOPS), HoldShare*100)
			case p.Verdict != report.Pass:
				note = strings.ToUpper(p.Verdict) + ": " + strings.ReplaceAll(p.Error, "|", "\\|")
			case p.Error != "":
				note = p.Cause + ": " + strings.ReplaceAll(p.Error, "|", "\\|")
			}
			dirs := 0
			for _, d := range []struct {
				name string
				l    *report.Latency
			}{{"read", p.Read}, {"write", p.Write}} {
				if d.l == nil {
					continue
				}
				dirs++
				fmt.Fprintf(&b, "| %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", Load(p), report.Thousands(p.Actual), p.MBps, d.name,
					report.Thousands(d.l.P50), report.Thousands(d.l.P99), report.Thousands(d.l.P999), report.Thousands(d.l.P9999),
					report.Thousands(d.l.P99999), report.Thousands(d.l.Max), report.Thousands(d.l.Mean), note)
			}
			if dirs == 0 {
				fmt.Fprintf(&b, "| %s | %s | %.1f | | | | | | | | | %s |\n", Load(p), report.Thousands(p.Actual), p.MBps, note)
			}
		}
		b.WriteString("\n")
		pts, knee := chartPoints(c)
		var tg chart.LatencyTarget
		if t := c.target; t != nil {
			tg.MinIOPS = t.Spec
			tg.BoundUs, tg.Bound = boundOf(t)
		}
		svg, err := chart.Latency(c.capacity+" "+c.workload+": latency at load", pts, tg, knee)
		if err == nil && len(pts) > 0 {
			name := ChartFile(c.capacity, c.workload)
			charts[name] = svg
			fmt.Fprintf(&b, "![%s %s latency at load](%s/%s)\n\n", c.capacity, c.workload, report.ChartsDir, name)
		}
	}
	return b.String(), charts
}

// chartPoints are c's latency figures as chart points in IOPS order,
// saturated and unjudged points left out, the direction the target bounds
// (reads, when there is none and the workload reads); and the knee: the
// point of most IOPS ÷ mean latency (Kleinrock's power), -1 for none.
func chartPoints(c *curve) ([]chart.LatencyPoint, int) {
	dir := "read"
	if c.target != nil && len(c.target.QoS) > 0 && strings.HasPrefix(c.target.QoS[0].Key, "write") {
		dir = "write"
	}
	var pts []chart.LatencyPoint
	var means []float64
	for _, p := range c.points {
		l := p.Read
		if dir == "write" || l == nil {
			l = p.Write
		}
		if l == nil || p.Saturated || p.Verdict == report.Fail {
			continue
		}
		pts = append(pts, chart.LatencyPoint{IOPS: p.Actual, Us: [5]float64{l.P50, l.P99, l.P999, l.P9999, l.Max}})
		means = append(means, l.Mean)
	}
	idx := make([]int, len(pts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pts[idx[a]].IOPS < pts[idx[b]].IOPS })
	sorted := make([]chart.LatencyPoint, len(pts))
	knee, best := -1, 0.0
	for i, j := range idx {
		sorted[i] = pts[j]
		if means[j] > 0 && pts[j].IOPS/means[j] > best {
			knee, best = i, pts[j].IOPS/means[j]
		}
	}
	return sorted, knee
}

// boundOf is a target's bound (its one QoS check): its µs and its
// words ("read p99.99 ≤ 2,000 µs").
func boundOf(t *report.Result) (float64, string) {
	if len(t.QoS) == 0 {
		return 0, ""
	}
	q := t.QoS[0]
	dir, _, _ := strings.Cut(q.Key, "_")
	return q.LimitUs, fmt.Sprintf("%s %s ≤ %s µs", dir, judge.PercentileName(q.Key), report.Thousands(q.LimitUs))
}
