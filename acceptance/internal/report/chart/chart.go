// Package chart draws drivequal's SVG charts from plain rows of figures.
//
// It knows nothing of results: package report (and the fleet and
// baseline judges) turn what they judged into the steps and rows drawn
// here, and write the SVG where the report links it. Every chart has the
// same face: sans-serif text, MeasuredColor for what fio measured,
// ReferenceColor for what it is held to, FlaggedColor for a figure that
// misses it.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The colours of drivequal's charts: MeasuredColor for what fio
// measured, ReferenceColor for what it is held to (the spec, the expected
// total), FlaggedColor for a figure that misses it.
var (
	MeasuredColor  = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	ReferenceColor = color.RGBA{R: 128, G: 128, B: 128, A: 255}
	FlaggedColor   = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

// ReferenceLine is the dashed grey line through xys that marks what a
// chart's figures are held to.
func ReferenceLine(xys plotter.XYs) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.Color = ReferenceColor
	l.Width = vg.Points(1.5)
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	return l, nil
}

// Dots adds xys to p as round dots of col, named legend in its legend;
// nothing when xys is empty.
func Dots(p *plot.Plot, xys plotter.XYs, col color.Color, legend string) error {
	if len(xys) == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.Color = col
	sc.Shape = draw.CircleGlyph{}
	sc.Radius = vg.Points(2.5)
	p.Add(sc)
	p.Legend.Add(legend, sc)
	return nil
}

// RowLabels labels a row chart's rows bottom to top, the first row at the
// top: each row its workload, and its capacity too when the rows span
// more than one.
func RowLabels(capacity, workload []string) []string {
	n := len(workload)
	several := false
	for _, c := range capacity {
		several = several || c != capacity[0]
	}
	labels := make([]string, n)
	for i := range workload {
		labels[n-1-i] = workload[i]
		if several {
			labels[n-1-i] = capacity[i] + " " + workload[i]
		}
	}
	return labels
}

// RowsSVG lays out a chart of one row per label (the fleet's, the lot's
// and the baseline's): x from lo to hi with a margin, the rows bottom to
// top, rowHeight inches a row, and renders it with SVG, the legend in a
// column right of the plot, off the data.
func RowsSVG(p *plot.Plot, lo, hi float64, labels []string, rowHeight float64) ([]byte, error) {
	n := len(labels)
	pad := (hi - lo) * 0.08
	p.X.Min, p.X.Max = lo-pad-0.01, hi+pad+0.01
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.Title.Padding = vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return svgLegendBeside(p, 7*vg.Inch, 1.2*vg.Inch+vg.Length(n)*vg.Length(rowHeight)*vg.Inch)
}

// SVG renders p as an SVG of w × h in drivequal's charts' face: sans-serif
// for the title, the x label, the ticks and the legend, and for the extra
// styles given (such as a y label); set per plot, never through
// gonum/plot's global default font.
func SVG(p *plot.Plot, w, h vg.Length, extra ...*text.Style) ([]byte, error) {
	return svgIn(p, w, h, 0, extra...)
}

// svgIn renders p as SVG does, inside a margin of m each side of w × h.
func svgIn(p *plot.Plot, w, h, m vg.Length, extra ...*text.Style) ([]byte, error) {
	face(p, extra...)
	if m == 0 {
		wt, err := p.WriterTo(w, h, "svg")
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(draw.Crop(dc, m, -m, m, -m))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// face sets the charts' sans-serif on p's texts and the extra styles.
func face(p *plot.Plot, extra ...*text.Style) {
	for _, st := range append([]*text.Style{
		&p.Title.TextStyle, &p.X.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle,
	}, extra...) {
		st.Font.Variant = "Sans"
	}
}

// svgLegendBeside renders p as SVG, its plot w × h and its legend in a
// column to the right, below the title, where no figure is drawn.
func svgLegendBeside(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	face(p)
	legend := p.Legend
	p.Legend = plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.XOffs, legend.YOffs = 0, 0
	gap := vg.Points(10)
	lw := legend.Rectangle(draw.New(vgsvg.New(w, h))).Size().X + 2*gap
	img := vgsvg.New(w+lw, h)
	c := draw.New(img)
	p.Draw(draw.Crop(c, 0, -lw, 0, 0))
	top := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding + gap
	legend.Draw(draw.Crop(c, w+gap, 0, 0, -top))
	p.Legend = legend
	var buf bytes.Buffer
	if _, err := img.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WithVerdicts labels each row with its verdict, rows given top to
// bottom as RowLabels takes them: "4KB Random Read: ACCEPTED".
func WithVerdicts(labels, verdicts []string) []string {
	n := len(labels)
	out := make([]string, n)
	for i, l := range labels {
		out[i] = l
		if v := verdicts[n-1-i]; v != "" {
			out[i] = l + ": " + strings.ToUpper(v)
		}
	}
	return out
}

// Tally says how many rows have each verdict, in the order first seen:
// "2 accepted, 1 rejected".
func Tally(verdicts []string) string {
	var order []string
	count := map[string]int{}
	for _, v := range verdicts {
		if v == "" {
			v = "not judged"
		}
		if count[v] == 0 {
			order = append(order, v)
		}
		count[v]++
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = fmt.Sprintf("%d %s", count[v], v)
	}
	return strings.Join(parts, ", ")
}
