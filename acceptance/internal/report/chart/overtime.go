package chart

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// BandColor fills the band between the drives' lowest and highest
// figure a second; SecondColor draws a second measured series (a cell's
// writes beside its reads).
var (
	BandColor   = color.RGBA{R: 31, G: 119, B: 180, A: 64}
	SecondColor = color.RGBA{R: 255, G: 127, B: 14, A: 255}
)

// Heading is what every over-time and latency chart's title names
// besides what it draws: the drives' model, the run's date and its mode
// ("live", "fleet").
type Heading struct{ Model, Date, Mode string }

// Title is what, over a line naming the model, date and mode.
func (h Heading) Title(what string) string {
	return what + "\n" + h.Model + " · " + h.Date + " · " + h.Mode
}

// Window is a preconditioning's steady-state window on a drive: the
// rounds judged, from and to seconds from the step's start, their mean
// IOPS, and the range limit, in % of the mean (drawn at the mean ± half
// of it); Attained says the window held the rule.
type Window struct {
	From, To, Mean, RangePct float64
	Attained                 bool
}

// Series is one drive's figures a second over a cell or step: Seconds
// from its start and Values (IOPS or MB/s); for a write step, Written
// is the bytes written up to each second. Window, when set, is the
// drive's steady-state window.
type Series struct {
	Name    string
	Seconds []float64
	Values  []float64
	Written []float64
	Window  *Window
}

// maxPanelPoints is the most points a drive's line is drawn with: longer
// series keep each bucket's lowest and highest figure, so that a dip of
// one second still shows.
const maxPanelPoints = 1200

// thin is xys with at most maxPanelPoints points (see maxPanelPoints).
func thin(xys plotter.XYs) plotter.XYs {
	if len(xys) <= maxPanelPoints {
		return xys
	}
	per := (len(xys) + maxPanelPoints/2 - 1) / (maxPanelPoints / 2)
	var out plotter.XYs
	for i := 0; i < len(xys); i += per {
		b := xys[i:min(i+per, len(xys))]
		lo, hi := b[0], b[0]
		for _, p := range b {
			if p.Y < lo.Y {
				lo = p
			}
			if p.Y > hi.Y {
				hi = p
			}
		}
		if lo.X > hi.X {
			lo, hi = hi, lo
		}
		out = append(out, lo, hi)
	}
	return out
}

// WSAT draws a preconditioning step's write saturation: each drive's
// IOPS a second against minutes from the step's start (byBytes false) or
// against GB written (byBytes true), with its steady-state window shaded
// and its mean and range limits drawn over it. One drive is one chart;
// more are small multiples, four a row, each panel named by its drive.
func WSAT(h Heading, what string, drives []Series, byBytes bool) ([]byte, error) {
	if len(drives) == 0 {
		return nil, fmt.Errorf("no drive to draw")
	}
	// Minutes, or seconds for a step shorter than two minutes.
	xlabel, per := "minutes", 60.0
	if last := drives[0].Seconds; len(last) > 0 && last[len(last)-1] < 120 {
		xlabel, per = "seconds", 1
	}
	if byBytes {
		xlabel = "GB written"
	}
	var plots []*plot.Plot
	for _, d := range drives {
		p := plot.New()
		p.X.Label.Text, p.Y.Label.Text = xlabel, "IOPS"
		p.Y.Min, p.Y.Tick.Marker = 0, countTicks{}
		x := func(k int) float64 {
			if byBytes {
				return d.Written[k] / 1e9
			}
			return d.Seconds[k] / per
		}
		xys := make(plotter.XYs, 0, len(d.Values))
		maxY := 0.0
		for k, v := range d.Values {
			if byBytes && k >= len(d.Written) {
				break
			}
			xys = append(xys, plotter.XY{X: x(k), Y: v})
			maxY = math.Max(maxY, v)
		}
		if w := d.Window; w != nil && w.Mean > 0 {
			from, to := w.From/per, w.To/per
			if byBytes {
				from, to = at(d.Seconds, d.Written, w.From)/1e9, at(d.Seconds, d.Written, w.To)/1e9
			}
			if err := window(p, from, to, *w); err != nil {
				return nil, err
			}
			maxY = math.Max(maxY, w.Mean*(1+w.RangePct/200))
		}
		p.Y.Max = maxY * 1.1
		if len(xys) > 0 {
			l, err := plotter.NewLine(thin(xys))
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = MeasuredColor, vg.Points(1)
			p.Add(l)
			p.Legend.Add("IOPS a second", l)
		}
		p.Add(plotter.NewGrid())
		if len(drives) > 1 {
			p.Title.Text = d.Name
		}
		plots = append(plots, p)
	}
	if len(plots) == 1 {
		p := plots[0]
		p.Title.Text = h.Title(what + ": " + drives[0].Name)
		legend(p)
		return SVG(p, chartWidth, chartHeight, &p.Y.Label.TextStyle)
	}
	// One scale for every panel: the drives compare at a glance.
	top := 0.0
	for _, p := range plots {
		top = math.Max(top, p.Y.Max)
	}
	for _, p := range plots {
		p.Y.Max = top
	}
	return Tiles(h.Title(what), plots, 4)
}

// at is the value of ys at second s of secs (the last one not after it).
func at(secs, ys []float64, s float64) float64 {
	i, _ := slices.BinarySearch(secs, s)
	if i >= len(ys) {
		i = len(ys) - 1
	}
	if i < 0 {
		return 0
	}
	return ys[i]
}

// window shades the steady-state window w from x0 to x1 on p, with its
// mean (solid) and its range limits (dashed) across it: grey when it held
// the rule, FlaggedColor when it did not.
func window(p *plot.Plot, x0, x1 float64, w Window) error {
	lo, hi := max(w.Mean*(1-w.RangePct/200), 0), w.Mean*(1+w.RangePct/200)
	shade, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: 0}, {X: x1, Y: 0}, {X: x1, Y: hi}, {X: x0, Y: hi}})
	if err != nil {
		return err
	}
	shade.Color, shade.LineStyle.Width = color.RGBA{R: 128, G: 128, B: 128, A: 40}, 0
	name := "steady window"
	col := color.Color(ReferenceColor)
	if !w.Attained {
		name, col = "window judged (not steady)", FlaggedColor
	}
	p.Add(shade)
	p.Legend.Add(name, shade)
	mean, err := plotter.NewLine(plotter.XYs{{X: x0, Y: w.Mean}, {X: x1, Y: w.Mean}})
	if err != nil {
		return err
	}
	mean.Color, mean.Width = col, vg.Points(1.5)
	p.Legend.Add("window mean "+units(w.Mean)+" IOPS", mean)
	p.Add(mean)
	for i, y := range []float64{lo, hi} {
		l, err := ReferenceLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
		if err != nil {
			return err
		}
		l.Color, l.Width = col, vg.Points(1)
		p.Add(l)
		if i == 0 {
			p.Legend.Add("range limit ±"+strconv.FormatFloat(w.RangePct/2, 'f', -1, 64)+" %", l)
		}
	}
	return nil
}

// countTicks are gonum's default ticks, each major one labelled as a
// count with thousands separators ("25,000", not "25000.00").
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = units(ts[i].Value)
			if hi-lo < 10 {
				ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
			}
		}
	}
	return ts
}

// units writes v with thousands separators, no decimals.
func units(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// legend places a chart's legend top right, small, on a white box over
// the data's top.
func legend(p *plot.Plot) {
	p.Title.Padding = vg.Points(8)
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-6), vg.Points(-4)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
}

// Consistency draws a cell's figure a second (a performance consistency
// chart) in unit ("IOPS" or "MB/s"): one drive's as dots, with its mean
// and the spec; a step of several drives as the band from the lowest to
// the highest drive a second, their median, and the drive outlier names
// (the lowest, by the judge) as a line of its own, against the mean and
// the spec a drive. mean and spec are 0 when there is none.
func Consistency(h Heading, what, unit string, drives []Series, outlier int, mean, spec float64) ([]byte, error) {
	if len(drives) == 0 {
		return nil, fmt.Errorf("no drive to draw")
	}
	p := plot.New()
	p.Title.Text = h.Title(what)
	p.X.Label.Text, p.Y.Label.Text = "seconds", unit
	p.Y.Min, p.Y.Tick.Marker = 0, countTicks{}
	maxX, maxY := 0.0, math.Max(mean, spec)
	for _, d := range drives {
		for k, v := range d.Values {
			maxY = math.Max(maxY, v)
			maxX = math.Max(maxX, d.Seconds[k])
		}
	}
	p.Add(plotter.NewGrid())
	if len(drives) == 1 {
		d := drives[0]
		xys := make(plotter.XYs, len(d.Values))
		for k := range d.Values {
			xys[k] = plotter.XY{X: d.Seconds[k], Y: d.Values[k]}
		}
		sc, err := plotter.NewScatter(thin(xys))
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = MeasuredColor, draw.CircleGlyph{}, vg.Points(1.5)
		p.Add(sc)
		p.Legend.Add(d.Name+", a second", sc)
	} else if err := band(p, drives, outlier); err != nil {
		return nil, err
	}
	per := ""
	if len(drives) > 1 {
		per = " a drive"
	}
	if mean > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: mean}, {X: maxX, Y: mean}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = MeasuredColor, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add("mean"+per+" "+units(mean)+" "+unit, l)
	}
	if spec > 0 {
		l, err := ReferenceLine(plotter.XYs{{X: 0, Y: spec}, {X: maxX, Y: spec}})
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add("spec"+per+" "+units(spec)+" "+unit, l)
	}
	p.X.Min, p.X.Max = 0, maxX
	p.Y.Max = maxY * 1.3 // room above for the legend
	legend(p)
	return SVG(p, chartWidth, chartHeight, &p.Y.Label.TextStyle)
}

// band adds the drives' lowest, median and highest figure a second, and
// drive outlier's own line, named.
func band(p *plot.Plot, drives []Series, outlier int) error {
	n := 0
	for _, d := range drives {
		n = max(n, len(d.Values))
	}
	var lo, hi, med plotter.XYs
	for k := range n {
		var vs []float64
		x := 0.0
		for _, d := range drives {
			if k < len(d.Values) {
				vs = append(vs, d.Values[k])
				x = d.Seconds[k]
			}
		}
		slices.Sort(vs)
		m := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		lo, hi, med = append(lo, plotter.XY{X: x, Y: vs[0]}), append(hi, plotter.XY{X: x, Y: vs[len(vs)-1]}), append(med, plotter.XY{X: x, Y: m})
	}
	lo, hi, med = thinMean(lo), thinMean(hi), thinMean(med)
	poly := slices.Clone(lo)
	for i := len(hi) - 1; i >= 0; i-- {
		poly = append(poly, hi[i])
	}
	shade, err := plotter.NewPolygon(poly)
	if err != nil {
		return err
	}
	shade.Color, shade.LineStyle.Width = BandColor, 0
	p.Add(shade)
	p.Legend.Add(fmt.Sprintf("lowest to highest of %d drives", len(drives)), shade)
	m, err := plotter.NewLine(med)
	if err != nil {
		return err
	}
	m.Color, m.Width = MeasuredColor, vg.Points(1)
	p.Add(m)
	p.Legend.Add("median drive", m)
	if outlier >= 0 && outlier < len(drives) {
		d := drives[outlier]
		xys := make(plotter.XYs, len(d.Values))
		for k := range d.Values {
			xys[k] = plotter.XY{X: d.Seconds[k], Y: d.Values[k]}
		}
		l, err := plotter.NewLine(thinMean(xys))
		if err != nil {
			return err
		}
		l.Color, l.Width = FlaggedColor, vg.Points(1)
		p.Add(l)
		p.Legend.Add("lowest: "+d.Name, l)
	}
	return nil
}

// thinMean is xys in at most maxPanelPoints points, each the mean of a
// bucket (a band's edges and a median, which keep their shape).
func thinMean(xys plotter.XYs) plotter.XYs {
	if len(xys) <= maxPanelPoints {
		return xys
	}
	per := (len(xys) + maxPanelPoints - 1) / maxPanelPoints
	var out plotter.XYs
	for i := 0; i < len(xys); i += per {
		b := xys[i:min(i+per, len(xys))]
		var s plotter.XY
		for _, p := range b {
			s.X += p.X
			s.Y += p.Y
		}
		out = append(out, plotter.XY{X: s.X / float64(len(b)), Y: s.Y / float64(len(b))})
	}
	return out
}

// Distribution is one direction of a cell for an exceedance chart: fio's
// completion latency bins (ns → count), or, without them, its
// percentiles (P → µs); and the spec's limits on it.
type Distribution struct {
	Dir         string
	Bins        map[int64]int64
	Percentiles map[float64]float64
	Limits      []LatencyLimit
}

// LatencyLimit is a QoS limit: at most Us µs at Percentile; Pass is its
// verdict.
type LatencyLimit struct {
	Percentile, Us float64
	Pass           bool
}

// Exceedance draws a cell's latency distribution: for each direction the
// share of I/Os slower than each latency (1 − CDF) against the latency in
// µs, both on log scales, and each QoS limit as a cross at its latency
// and share (the curve must pass below and left of it): ReferenceColor
// when the cell met it, FlaggedColor when not.
func Exceedance(h Heading, what string, dirs []Distribution) ([]byte, error) {
	p := plot.New()
	p.Title.Text = h.Title(what)
	p.X.Label.Text, p.Y.Label.Text = "completion latency, µs", "share of I/Os slower"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	minX, maxX, minY := math.Inf(1), 0.0, 1.0
	cols := []color.Color{MeasuredColor, SecondColor}
	drawn := 0
	for i, d := range dirs {
		xys := exceedance(d)
		if len(xys) == 0 {
			continue
		}
		for _, q := range xys {
			minX, maxX, minY = math.Min(minX, q.X), math.Max(maxX, q.X), math.Min(minY, q.Y)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = cols[i%len(cols)], vg.Points(1.5)
		p.Add(l)
		name := d.Dir
		if d.Bins == nil {
			name += " (percentiles)"
		}
		p.Legend.Add(name, l)
		drawn++
		for _, lim := range d.Limits {
			y := 1 - lim.Percentile/100
			if y <= 0 || lim.Us <= 0 {
				continue
			}
			minX, maxX, minY = math.Min(minX, lim.Us), math.Max(maxX, lim.Us), math.Min(minY, y)
			sc, err := plotter.NewScatter(plotter.XYs{{X: lim.Us, Y: y}})
			if err != nil {
				return nil, err
			}
			sc.Shape, sc.Radius, sc.Color = draw.CrossGlyph{}, vg.Points(5), ReferenceColor
			verdict := "met"
			if !lim.Pass {
				sc.Color, verdict = FlaggedColor, "missed"
			}
			p.Add(sc)
			p.Legend.Add(fmt.Sprintf("%s p%s ≤ %s µs (%s)", d.Dir, strconv.FormatFloat(lim.Percentile, 'f', -1, 64), units(lim.Us), verdict), sc)
		}
	}
	if drawn == 0 {
		return nil, fmt.Errorf("no latency to draw")
	}
	p.X.Min, p.X.Max = minX/1.5, maxX*1.5
	p.Y.Min, p.Y.Max = minY/2, 1.5
	legend(p)
	p.Legend.Top = true
	return SVG(p, chartWidth, chartHeight, &p.Y.Label.TextStyle)
}

// exceedance is d's 1 − CDF as points (µs, share slower), from its bins
// (a step at each bin) or else its percentiles; the last bin, which no
// I/O exceeds, is left out of a log scale.
func exceedance(d Distribution) plotter.XYs {
	var out plotter.XYs
	if d.Bins != nil {
		keys := make([]int64, 0, len(d.Bins))
		var n int64
		for k, c := range d.Bins {
			if c > 0 && k > 0 {
				keys = append(keys, k)
				n += c
			}
		}
		slices.Sort(keys)
		var cum int64
		for _, k := range keys {
			cum += d.Bins[k]
			if s := float64(n-cum) / float64(n); s > 0 {
				out = append(out, plotter.XY{X: float64(k) / 1e3, Y: s})
			}
		}
		return out
	}
	ps := make([]float64, 0, len(d.Percentiles))
	for p := range d.Percentiles {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, cmp.Compare)
	for _, p := range ps {
		if us := d.Percentiles[p]; us > 0 && p < 100 {
			out = append(out, plotter.XY{X: us, Y: 1 - p/100})
		}
	}
	return out
}

// Tiles renders plots as small multiples, cols a row, under title, in
// drivequal's charts' face: each panel 2.25 × 1.9 inches.
func Tiles(title string, plots []*plot.Plot, cols int) ([]byte, error) {
	cols = min(cols, len(plots))
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for j := range grid {
		grid[j] = make([]*plot.Plot, cols)
		for i := range cols {
			if k := j*cols + i; k < len(plots) {
				p := plots[k]
				for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
					&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
					st.Font.Variant = "Sans"
					st.Font.Size = vg.Points(7)
				}
				p.Title.TextStyle.Font.Size = vg.Points(8)
				p.Legend.TextStyle.Font.Size = vg.Points(6)
				p.Legend.Top, p.Legend.Padding = true, vg.Points(1)
				if k > 0 {
					p.Legend = plot.NewLegend()
					p.Legend.TextStyle.Font.Variant = "Sans"
				}
				grid[j][i] = p
			}
		}
	}
	head := vg.Length(0.6) * vg.Inch
	w, h := vg.Length(cols)*2.25*vg.Inch, vg.Length(rows)*1.9*vg.Inch+head
	c := vgsvg.New(w, h)
	dc := draw.New(c)
	// The title, centred over the panels, as a plot's title is drawn.
	ts := text.Style{Font: font.From(plot.DefaultFont, vg.Points(12)), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	ts.Font.Variant = "Sans"
	dc.FillText(ts, vg.Point{X: w / 2, Y: h - vg.Points(6)}, title)
	body := draw.Crop(dc, 0, 0, 0, -head)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(8), PadY: vg.Points(8), PadTop: vg.Points(2), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, body)
	for j := range grid {
		for i, p := range grid[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
