package fleet

import (
	"errors"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
)

// Chart writes ChartSVG's chart of cells to path, atomically (see
// report.WriteFileAtomic), creating its directory.
func Chart(cells []Cell, path string) error {
	svg, err := ChartSVG(cells)
	if err != nil {
		return err
	}
	return report.WriteFileAtomic(path, svg)
}

// ChartSVG draws every cell on one SVG chart, one row per cell in the
// order given (labelled with its workload, and its capacity when cells
// have more than one): a box of the counted drives' actual / spec, and
// each drive as a point over it, red when it is below spec or an
// outlier. A line marks actual = spec. For a latency cell a value below 1
// is the better one.
func ChartSVG(cells []Cell) ([]byte, error) {
	if len(cells) == 0 {
		return nil, errors.New("fleet chart: no cells")
	}

	p := plot.New()
	verdicts := make([]string, len(cells))
	for i, c := range cells {
		verdicts[i] = c.Verdict
	}
	p.Title.Text = "fleet: " + chart.Tally(verdicts)
	p.X.Label.Text = "actual / spec"
	p.Add(plotter.NewGrid())

	n := len(cells)
	capacity, workload := make([]string, n), make([]string, n)
	lo, hi := 1.0, 1.0
	var ok, flagged plotter.XYs
	for i, c := range cells {
		y := float64(n - 1 - i) // the first cell at the top
		capacity[i], workload[i] = c.Capacity, c.Workload
		var ratios plotter.Values
		for j, m := range c.Members {
			if !m.Counted || c.Spec <= 0 {
				continue
			}
			r := m.Actual / c.Spec
			ratios = append(ratios, r)
			lo, hi = min(lo, r), max(hi, r)
			// Spread the points a little up and down so that equal
			// values stay visible.
			pt := plotter.XY{X: r, Y: y + float64(j%7-3)*0.05}
			if m.Below || m.Outlier {
				flagged = append(flagged, pt)
			} else {
				ok = append(ok, pt)
			}
		}
		if len(ratios) == 0 {
			continue
		}
		box, err := plotter.NewBoxPlot(vg.Points(18), y, ratios)
		if err != nil {
			return nil, err
		}
		box.Horizontal = true
		box.GlyphStyle.Radius = 0 // the points show every drive
		p.Add(box)
	}
	for _, set := range []struct {
		xys plotter.XYs
		col color.Color
		leg string
	}{{ok, chart.MeasuredColor, "drive"}, {flagged, chart.FlaggedColor, "below spec or outlier"}} {
		if err := chart.Dots(p, set.xys, set.col, set.leg); err != nil {
			return nil, err
		}
	}
	spec, err := chart.ReferenceLine(plotter.XYs{{X: 1, Y: -0.6}, {X: 1, Y: float64(n) - 0.4}})
	if err != nil {
		return nil, err
	}
	p.Add(spec)
	p.Legend.Add("spec", spec)

	return chart.RowsSVG(p, lo, hi, chart.WithVerdicts(chart.RowLabels(capacity, workload), verdicts), 0.4)
}
