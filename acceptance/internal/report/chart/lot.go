package chart

import (
	"errors"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// LotRow is one TestLot cell on the lot chart.
type LotRow struct {
	Capacity, Workload string
	// PassLine is the line a drive meets the cell at; a row without one
	// (0) is labelled and left empty.
	PassLine float64
	// Bound is the lot's tolerance bound, drawn when Judged (the cell
	// had figures); Accepted says the lot was accepted.
	Bound            float64
	Judged, Accepted bool
	// Verdict is the lot's verdict ("accepted", "rejected",
	// "inconclusive"), shown on its row and counted in the title.
	Verdict string
	Figures []LotDot
}

// LotDot is one drive's figure in a lot row, and whether it meets the
// pass line.
type LotDot struct {
	Value float64
	Pass  bool
}

// Lot draws every TestLot cell on one chart, one row per cell in the
// order given: each drive's figure / the cell's pass line as a dot, red
// when it misses the line, the tolerance bound as a bar across the row
// (black when the lot is accepted, red otherwise), and a dashed line at
// the pass line. For a latency a value below 1 is the better one.
func Lot(rows []LotRow) ([]byte, error) {
	if len(rows) == 0 {
		return nil, errors.New("lot chart: no cells")
	}
	p := plot.New()
	verdicts := make([]string, len(rows))
	for i, l := range rows {
		verdicts[i] = l.Verdict
	}
	p.Title.Text = "lot: " + Tally(verdicts)
	p.X.Label.Text = "figure / pass line"
	p.Add(plotter.NewGrid())
	n := len(rows)
	capacity, workload := make([]string, n), make([]string, n)
	lo, hi := 1.0, 1.0
	var ok, flagged plotter.XYs
	var bounds []*plotter.Line
	for i, l := range rows {
		y := float64(n - 1 - i)
		capacity[i], workload[i] = l.Capacity, l.Workload
		if l.PassLine <= 0 {
			continue
		}
		for j, f := range l.Figures {
			x := f.Value / l.PassLine
			lo, hi = min(lo, x), max(hi, x)
			pt := plotter.XY{X: x, Y: y + float64(j%7-3)*0.05}
			if f.Pass {
				ok = append(ok, pt)
			} else {
				flagged = append(flagged, pt)
			}
		}
		if !l.Judged {
			continue
		}
		x := l.Bound / l.PassLine
		lo, hi = min(lo, x), max(hi, x)
		bar, err := plotter.NewLine(plotter.XYs{{X: x, Y: y - 0.3}, {X: x, Y: y + 0.3}})
		if err != nil {
			return nil, err
		}
		bar.Width = vg.Points(2.5)
		bar.Color = FlaggedColor
		if l.Accepted {
			bar.Color = color.Black
		}
		p.Add(bar)
		bounds = append(bounds, bar)
	}
	for _, set := range []struct {
		xys plotter.XYs
		leg string
	}{{ok, "drive"}, {flagged, "drive below the pass line"}} {
		col := MeasuredColor
		if set.leg != "drive" {
			col = FlaggedColor
		}
		if err := Dots(p, set.xys, col, set.leg); err != nil {
			return nil, err
		}
	}
	if len(bounds) > 0 {
		p.Legend.Add("tolerance bound (black: accepted)", bounds[0])
	}
	line, err := ReferenceLine(plotter.XYs{{X: 1, Y: -0.6}, {X: 1, Y: float64(n) - 0.4}})
	if err != nil {
		return nil, err
	}
	p.Add(line)
	p.Legend.Add("pass line", line)
	return RowsSVG(p, lo, hi, WithVerdicts(RowLabels(capacity, workload), verdicts), 0.4)
}
