package baseline

import (
	"errors"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
)

// Chart writes ChartSVG's chart of rows to path, atomically, creating its
// directory.
func Chart(rows []report.Result, group, path string) error {
	svg, err := ChartSVG(rows, group)
	if err != nil {
		return err
	}
	return report.WriteFileAtomic(path, svg)
}

// baselineColor marks the baseline side's figures.
var baselineColor = color.RGBA{R: 150, G: 150, B: 150, A: 255}

// ChartSVG draws both sides of every compared cell of one summary table
// (TestBaseline results): one row per cell, the baseline's figures (one
// per drive per recorded run) just above the row's line and this run's
// just below, each as a box with its points, all as a fraction of the
// baseline's median so that IOPS and MB/s share the axis. A dashed line
// marks the baseline's median, a second one the tolerance below it (above
// it, for lat_us); a regressed cell's points are red.
func ChartSVG(rows []report.Result, group string) ([]byte, error) {
	var cells []report.Result
	for _, r := range rows {
		if r.Baseline != nil && r.Baseline.Metric.Baseline.Median > 0 && r.Baseline.Metric.This.N > 0 {
			cells = append(cells, r)
		}
	}
	if len(cells) == 0 {
		return nil, errors.New("baseline chart: no cell with figures on both sides")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: this run against the baseline (figure / baseline median)", group)
	p.X.Label.Text = "figure / baseline median"
	p.Add(plotter.NewGrid())

	n := len(cells)
	labels := make([]string, n)
	lo, hi := 1.0, 1.0
	var basePts, thisPts, flagged plotter.XYs
	tol, lowerTol := 0.0, false
	for i, r := range cells {
		c := r.Baseline.Metric
		tol, lowerTol = c.Tolerance, lowerTol || c.LowerIsBetter
		y := float64(n - 1 - i)
		labels[n-1-i] = r.Workload
		if r.Baseline.Group == report.ScalingGate {
			labels[n-1-i] = fmt.Sprintf("%d× %s", r.Drives, r.Workload)
		}
		for side, s := range []report.Sample{c.Baseline, c.This} {
			off := 0.18
			if side == 1 {
				off = -0.18
			}
			var vals plotter.Values
			for j, v := range s.Values {
				x := v / c.Baseline.Median
				vals = append(vals, x)
				lo, hi = min(lo, x), max(hi, x)
				pt := plotter.XY{X: x, Y: y + off + float64(j%5-2)*0.03}
				switch {
				case side == 0:
					basePts = append(basePts, pt)
				case c.Verdict == report.Regressed:
					flagged = append(flagged, pt)
				default:
					thisPts = append(thisPts, pt)
				}
			}
			if len(vals) < 2 {
				continue
			}
			box, err := plotter.NewBoxPlot(vg.Points(10), y+off, vals)
			if err != nil {
				return nil, err
			}
			box.Horizontal = true
			box.GlyphStyle.Radius = 0
			p.Add(box)
		}
	}
	for _, set := range []struct {
		xys plotter.XYs
		col color.Color
		leg string
	}{{basePts, baselineColor, "baseline"}, {thisPts, chart.MeasuredColor, "this run"}, {flagged, chart.FlaggedColor, "this run, regressed"}} {
		if err := chart.Dots(p, set.xys, set.col, set.leg); err != nil {
			return nil, err
		}
	}
	top := float64(n) - 0.4
	median, err := chart.ReferenceLine(plotter.XYs{{X: 1, Y: -0.6}, {X: 1, Y: top}})
	if err != nil {
		return nil, err
	}
	p.Add(median)
	p.Legend.Add("baseline median", median)
	limit := 1 - tol
	if lowerTol {
		limit = 1 + tol
	}
	if tol > 0 {
		tl, err := chart.ReferenceLine(plotter.XYs{{X: limit, Y: -0.6}, {X: limit, Y: top}})
		if err != nil {
			return nil, err
		}
		tl.Color = chart.FlaggedColor
		tl.Width = vg.Points(1)
		p.Add(tl)
		p.Legend.Add(fmt.Sprintf("tolerance (%s %%)", pct(tol)), tl)
		lo, hi = min(lo, limit), max(hi, limit)
	}
	return chart.RowsSVG(p, lo, hi, labels, 0.5)
}
