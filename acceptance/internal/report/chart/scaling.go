package chart

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Chart size.
const (
	chartWidth  = 6 * vg.Inch
	chartHeight = 4 * vg.Inch
)

// Step is one scaling step of a workload: its drive count, the total it
// is expected to reach (N × the baseline) and the total it measured, in
// the workload's metric's unit.
type Step struct {
	Drives   int
	Expected float64 // 0 or ±Inf: no expected total
	Actual   float64 // 0: nothing measured
}

// Measured reports whether the step has a total worth plotting.
func (s Step) Measured() bool {
	return s.Actual > 0 && !math.IsInf(s.Actual, 0) && s.Drives > 0
}

// AnyMeasured reports whether steps have a measured total to draw.
func AnyMeasured(steps []Step) bool {
	for _, s := range steps {
		if s.Measured() {
			return true
		}
	}
	return false
}

// Unit is the axis unit a scaling chart draws a metric's totals in:
// millions of IOPS, or GB/s (10^9 bytes/s).
func Unit(metric string) string {
	_, unit := scale(metric)
	return unit
}

// Label is the label a scaling chart writes beside a measured total v
// (in metric's unit), with about three significant digits: "2.41 M
// IOPS", "14.5 GB/s".
func Label(v float64, metric string) string {
	div, unit := scale(metric)
	return shortValue(v/div) + " " + unit
}

// scale is how a metric is drawn: the divisor and the axis unit.
func scale(metric string) (div float64, unit string) {
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

// Scaling draws one workload's scaling chart: the number of drives on x
// and the measured total on y, in millions of IOPS or in GB/s, each point
// labelled with its value, and a dashed line for the expected (linear)
// total. steps are in drive-count order.
func Scaling(workload, metric string, steps []Step) ([]byte, error) {
	div, unit := scale(metric)

	var got, want plotter.XYs
	var labels []string
	var ticks []plot.Tick
	maxX, maxY := 0.0, 0.0
	for _, res := range steps {
		x := float64(res.Drives)
		maxX = math.Max(maxX, x)
		ticks = append(ticks, plot.Tick{Value: x, Label: strconv.Itoa(res.Drives)})
		if res.Expected > 0 && !math.IsInf(res.Expected, 0) {
			want = append(want, plotter.XY{X: x, Y: res.Expected / div})
			maxY = math.Max(maxY, res.Expected/div)
		}
		if res.Measured() {
			y := res.Actual / div
			got = append(got, plotter.XY{X: x, Y: y})
			labels = append(labels, shortValue(y)+" "+unit)
			maxY = math.Max(maxY, y)
		}
	}

	p := plot.New()
	p.Title.Text = workload
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

	// A margin keeps the title and the y label inside the picture where
	// a browser's font runs a little larger than gonum/plot measures.
	return svgIn(p, chartWidth, chartHeight, vg.Points(4), &p.Y.Label.TextStyle, &lab.style)
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
// neither a line, a point, the legend nor a label already drawn; a label with no such
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
	// The legend, drawn over the data area before its padding (a glyph's
	// radius each side), is kept clear with that padding to spare.
	lg := legendRect(&p.Legend, c)
	margin := l.radius + vg.Points(4)
	placed := []vg.Rectangle{{Min: vg.Point{X: lg.Min.X - margin, Y: lg.Min.Y - margin}, Max: vg.Point{X: lg.Max.X + margin, Y: lg.Max.Y + margin}}}
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

// legendRect is where l draws on c (gonum/plot's Legend.Rectangle gives
// its size, but swaps left for right and leaves the offsets out).
func legendRect(l *plot.Legend, c draw.Canvas) vg.Rectangle {
	size := l.Rectangle(c)
	w := size.Max.X - size.Min.X + l.TextStyle.Rectangle(" ").Max.X
	h := size.Max.Y - size.Min.Y + l.TextStyle.FontExtents().Descent
	var r vg.Rectangle
	if l.Left {
		r.Min.X = c.Min.X + l.XOffs
		r.Max.X = r.Min.X + w
	} else {
		r.Max.X = c.Max.X + l.XOffs
		r.Min.X = r.Max.X - w
	}
	if l.Top {
		r.Max.Y = c.Max.Y + l.YOffs
		r.Min.Y = r.Max.Y - h
	} else {
		r.Min.Y = c.Min.Y + l.YOffs
		r.Max.Y = r.Min.Y + h
	}
	return r
}
