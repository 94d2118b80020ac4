package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/drivequal/drivequal/specs"
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

// RowsSVG lays out a chart of one row per label (the fleet's and the
// baseline's): x from lo to hi with a margin, the rows bottom to top with
// a free band above the first for the legend, rowHeight inches a row, and
// renders it with SVG.
func RowsSVG(p *plot.Plot, lo, hi float64, labels []string, rowHeight float64) ([]byte, error) {
	n := len(labels)
	pad := (hi - lo) * 0.08
	p.X.Min, p.X.Max = lo-pad-0.01, hi+pad+0.01
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)+0.9
	p.Title.Padding = vg.Points(8)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(-4)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return SVG(p, 7*vg.Inch, 1.5*vg.Inch+vg.Length(n)*vg.Length(rowHeight)*vg.Inch)
}

// SVG renders p as an SVG of w × h in drivequal's charts' face: sans-serif
// for the title, the x label, the ticks and the legend, and for the extra
// styles given (such as a y label); set per plot, never through
// gonum/plot's global default font.
func SVG(p *plot.Plot, w, h vg.Length, extra ...*text.Style) ([]byte, error) {
	for _, st := range append([]*text.Style{
		&p.Title.TextStyle, &p.X.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle,
	}, extra...) {
		st.Font.Variant = "Sans"
	}
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

// Chart size.
const (
	chartWidth  = 6 * vg.Inch
	chartHeight = 4 * vg.Inch
)

// Charts returns one SVG chart per scaling workload that has a measured
// result, keyed by file name (the workload's subtest name plus ".svg", e.g.
// "4KB_Random_Read.svg"). Each chart has the number of drives on x and the
// measured total on y, in millions of IOPS or in GB/s (10^9 bytes/s), with
// each point labelled with its value, and a dashed line for the expected
// (linear) total.
func (r *Run) Charts() (map[string][]byte, error) {
	charts := make(map[string][]byte)
	for _, g := range r.scalingGroups(r.workloadRank()) {
		if !chartable(g.rows) {
			continue
		}
		svg, err := scalingChart(g)
		if err != nil {
			return nil, fmt.Errorf("chart for %q: %w", g.workload, err)
		}
		charts[chartFile(g.workload)] = svg
	}
	return charts, nil
}

// chartable reports whether rows have a measured value to draw.
func chartable(rows []Result) bool {
	for _, res := range rows {
		if measured(res) {
			return true
		}
	}
	return false
}

// measured reports whether res has a total worth plotting.
func measured(res Result) bool {
	return res.Actual > 0 && !math.IsInf(res.Actual, 0) && res.Drives > 0
}

// chartFile is the chart's file name for a workload: its subtest name
// (spaces to "_", "/" to "-") plus ".svg".
func chartFile(workload string) string {
	return specs.SubtestName(workload) + ".svg"
}

// chartScale is how a metric is drawn: the divisor and the axis unit.
func chartScale(metric string) (div float64, unit string) {
	switch metric {
	case "iops":
		return 1e6, "M IOPS"
	case "MBps":
		return 1e3, "GB/s" // 1 GB/s = 1000 MB/s = 10^9 bytes/s
	}
	return 1, metric
}

// shortValue writes a scaled value with about three significant digits.
func shortValue(v float64) string {
	prec := 2
	switch a := math.Abs(v); {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func scalingChart(g scalingGroup) ([]byte, error) {
	div, unit := chartScale(g.rows[0].Metric)

	var got, want plotter.XYs
	var labels []string
	var ticks []plot.Tick
	maxX, maxY := 0.0, 0.0
	for _, res := range g.rows {
		x := float64(res.Drives)
		maxX = math.Max(maxX, x)
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(res.Drives)})
		if res.Expected > 0 && !math.IsInf(res.Expected, 0) {
			want = append(want, plotter.XY{X: x, Y: res.Expected / div})
			maxY = math.Max(maxY, res.Expected/div)
		}
		if measured(res) {
			y := res.Actual / div
			got = append(got, plotter.XY{X: x, Y: y})
			labels = append(labels, shortValue(y)+" "+unit)
			maxY = math.Max(maxY, y)
		}
	}

	p := plot.New()
	p.Title.Text = g.workload
	p.X.Label.Text = "drives"
	p.Y.Label.Text = "total, " + unit
	p.X.Min = 0
	p.X.Max = maxX*1.18 + 0.5 // room right of the last point for its value
	p.Y.Min = 0
	p.Y.Max = maxY * 1.12 // room above the highest point for its label
	p.X.Tick.Marker = plot.ConstantTicks(dedupTicks(ticks))
	p.Add(plotter.NewGrid())

	line, points, err := plotter.NewLinePoints(got)
	if err != nil {
		return nil, err
	}
	line.Color = MeasuredColor
	line.Width = vg.Points(2)
	points.Color = MeasuredColor
	points.Shape = draw.CircleGlyph{}
	points.Radius = vg.Points(3.5)
	p.Add(line, points)

	// The expected line goes on top: where the two coincide, its dashes
	// still show.
	if len(want) > 0 {
		exp, err := ReferenceLine(want)
		if err != nil {
			return nil, err
		}
		p.Add(exp)
		p.Legend.Add("expected (linear)", exp)
	}
	p.Legend.Add("measured", line, points)

	lab := &pointLabels{
		xys:    got,
		labels: labels,
		style: text.Style{
			Font:    font.From(plot.DefaultFont, vg.Points(9)),
			Handler: plot.DefaultTextHandler,
		},
		avoid:  []plotter.XYs{got, want},
		radius: points.Radius,
	}
	p.Add(lab)

	p.Title.Padding = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(3)
	p.Legend.XOffs = vg.Points(10)
	p.Legend.YOffs = vg.Points(-6)
	p.Legend.TextStyle.Font.Size = vg.Points(10)

	return SVG(p, chartWidth, chartHeight, &p.Y.Label.TextStyle, &lab.style)
}

// dedupTicks drops ticks repeating an earlier value (a drive count run twice).
func dedupTicks(ticks []plot.Tick) []plot.Tick {
	var out []plot.Tick
	seen := make(map[float64]bool)
	for _, t := range ticks {
		if !seen[t.Value] {
			seen[t.Value] = true
			out = append(out, t)
		}
	}
	return out
}

// pointLabels writes each point's value next to it, at the first of a few
// places around the point (below right first: on a rising line that is
// clear of it) where the label stays inside the plot area and touches
// neither a line, a point, nor a label already drawn; a label with no such
// place is left out. The last point (most drives) is labelled first, then
// the first, then the rest from left to right.
type pointLabels struct {
	xys    plotter.XYs
	labels []string
	style  text.Style
	// avoid holds the lines the labels must not cross, in data units.
	avoid []plotter.XYs
	// radius is the glyphs' radius.
	radius vg.Length
}

// Plot implements plot.Plotter.
func (l *pointLabels) Plot(c draw.Canvas, p *plot.Plot) {
	n := len(l.xys)
	if n == 0 {
		return
	}
	order := []int{n - 1}
	if n > 1 {
		order = append(order, 0)
	}
	for i := 1; i < n-1; i++ {
		order = append(order, i)
	}

	trX, trY := p.Transforms(&c)
	toCanvas := func(xy plotter.XY) vg.Point { return vg.Point{X: trX(xy.X), Y: trY(xy.Y)} }
	var obstacles []vg.Point // sampled along every line
	for _, line := range l.avoid {
		for i := 1; i < len(line); i++ {
			a, b := toCanvas(line[i-1]), toCanvas(line[i])
			const steps = 64
			for s := 0; s <= steps; s++ {
				f := vg.Length(s) / steps
				obstacles = append(obstacles, vg.Point{X: a.X + (b.X-a.X)*f, Y: a.Y + (b.Y-a.Y)*f})
			}
		}
	}
	var placed []vg.Rectangle
	for _, xy := range l.xys {
		pt := toCanvas(xy)
		r := l.radius + vg.Points(1)
		placed = append(placed, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
	}

	gap := l.radius + vg.Points(3)
	type place struct {
		xa     draw.XAlignment
		ya     draw.YAlignment
		dx, dy vg.Length
	}
	places := []place{
		{draw.XLeft, draw.YTop, gap, -gap},     // below right
		{draw.XRight, draw.YBottom, -gap, gap}, // above left
		{draw.XLeft, draw.YBottom, gap, gap},   // above right
		{draw.XRight, draw.YTop, -gap, -gap},   // below left
		{draw.XCenter, draw.YBottom, 0, gap},   // above
		{draw.XCenter, draw.YTop, 0, -gap},     // below
		{draw.XLeft, draw.YCenter, gap, 0},     // right
		{draw.XRight, draw.YCenter, -gap, 0},   // left
	}
	for _, i := range order {
		pt := toCanvas(l.xys[i])
		for _, pl := range places {
			st := l.style
			st.XAlign, st.YAlign = pl.xa, pl.ya
			at := vg.Point{X: pt.X + pl.dx, Y: pt.Y + pl.dy}
			r := st.Rectangle(l.labels[i]).Add(at)
			if !inside(r, c.Rectangle) || overlapsAny(r, placed) || containsAny(r, obstacles) {
				continue
			}
			c.FillText(st, at, l.labels[i])
			placed = append(placed, r)
			break
		}
	}
}

func containsAny(r vg.Rectangle, pts []vg.Point) bool {
	for _, p := range pts {
		if p.X >= r.Min.X && p.X <= r.Max.X && p.Y >= r.Min.Y && p.Y <= r.Max.Y {
			return true
		}
	}
	return false
}

func inside(r, outer vg.Rectangle) bool {
	return r.Min.X >= outer.Min.X && r.Min.Y >= outer.Min.Y && r.Max.X <= outer.Max.X && r.Max.Y <= outer.Max.Y
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, o := range rs {
		if r.Min.X < o.Max.X && o.Min.X < r.Max.X && r.Min.Y < o.Max.Y && o.Min.Y < r.Max.Y {
			return true
		}
	}
	return false
}
