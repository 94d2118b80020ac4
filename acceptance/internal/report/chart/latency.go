package chart

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LatencyPercentiles names the percentiles of a LatencyPoint, in order.
var LatencyPercentiles = []string{"p50", "p99", "p99.9", "p99.99", "max"}

// percentileColors shade MeasuredColor from light (p50) to dark (max).
var percentileColors = []color.RGBA{
	{R: 158, G: 202, B: 225, A: 255},
	{R: 107, G: 174, B: 214, A: 255},
	MeasuredColor,
	{R: 8, G: 81, B: 156, A: 255},
	{R: 8, G: 48, B: 107, A: 255},
}

// LatencyPoint is one sweep point of a latency-at-load chart: its IOPS
// and its completion latency percentiles in µs (LatencyPercentiles' order;
// 0: not measured).
type LatencyPoint struct {
	IOPS float64
	Us   [5]float64
}

// LatencyTarget is what a latency-at-load curve is held to: a latency
// bound in µs (named Bound, e.g. "read p99.99 ≤ 2,000 µs") and the IOPS
// the drive must give within it; zero values are not drawn.
type LatencyTarget struct {
	Bound   string
	BoundUs float64
	MinIOPS float64
}

// Latency draws a workload's latency at load: IOPS on x, completion
// latency in µs on a log scale on y, one line per percentile through the
// points in IOPS order, the target's bound (horizontal) and min_iops
// (vertical) as dashed reference lines, and the knee (point knee of pts,
// -1 for none) ringed in FlaggedColor.
func Latency(title string, pts []LatencyPoint, t LatencyTarget, knee int) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "IOPS"
	p.Y.Label.Text = "completion latency, µs (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	lo, hi, maxX := math.Inf(1), 0.0, t.MinIOPS
	for _, pt := range pts {
		maxX = math.Max(maxX, pt.IOPS)
		for _, v := range pt.Us {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if t.BoundUs > 0 {
		lo, hi = math.Min(lo, t.BoundUs), math.Max(hi, t.BoundUs)
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	p.X.Min, p.X.Max = 0, maxX*1.08+1
	p.Y.Min, p.Y.Max = lo/1.5, hi*60 // room above the curves for the legend
	for i, name := range LatencyPercentiles {
		var xys plotter.XYs
		for _, pt := range pts {
			if pt.Us[i] > 0 {
				xys = append(xys, plotter.XY{X: pt.IOPS, Y: pt.Us[i]})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, dots, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color, line.Width = percentileColors[i], vg.Points(1.5)
		dots.Color, dots.Shape, dots.Radius = percentileColors[i], draw.CircleGlyph{}, vg.Points(2.5)
		p.Add(line, dots)
		p.Legend.Add(name, line, dots)
	}
	if t.BoundUs > 0 {
		l, err := ReferenceLine(plotter.XYs{{X: 0, Y: t.BoundUs}, {X: p.X.Max, Y: t.BoundUs}})
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add("bound: "+t.Bound, l)
	}
	if t.MinIOPS > 0 {
		l, err := ReferenceLine(plotter.XYs{{X: t.MinIOPS, Y: p.Y.Min}, {X: t.MinIOPS, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.Color = FlaggedColor
		p.Add(l)
		p.Legend.Add("min_iops "+strconv.FormatFloat(t.MinIOPS, 'f', 0, 64)+" IOPS", l)
	}
	if knee >= 0 && knee < len(pts) && pts[knee].Us[1] > 0 {
		sc, err := plotter.NewScatter(plotter.XYs{{X: pts[knee].IOPS, Y: pts[knee].Us[1]}})
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = FlaggedColor, draw.RingGlyph{}, vg.Points(7)
		p.Add(sc)
		p.Legend.Add("knee (most IOPS ÷ mean latency)", sc)
	}
	p.Title.Padding = vg.Points(8)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(-6)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Padding = vg.Points(2)
	return SVG(p, chartWidth, chartHeight*5/4, &p.Y.Label.TextStyle)
}
