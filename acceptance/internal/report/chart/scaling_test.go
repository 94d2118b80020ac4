package chart

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
)

// svgText is one <text> of a chart and the box it takes, roughly (0.55 em a
// character), in the picture's coordinates, y down.
type svgText struct {
	s                      string
	minX, minY, maxX, maxY float64
}

// texts reads a gonum/plot SVG's texts: each is drawn flipped twice (the
// picture's group scale(1, -1) translate(0, -height), its own scale(1,
// -1)), so its baseline is at height + y.
func texts(t *testing.T, svg []byte) []svgText {
	t.Helper()
	var doc struct {
		ViewBox string `xml:"viewBox,attr"`
		Texts   []struct {
			X     float64 `xml:"x,attr"`
			Y     float64 `xml:"y,attr"`
			Style string  `xml:"style,attr"`
			S     string  `xml:",chardata"`
		} `xml:"g>text"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatal(err)
	}
	height, err := strconv.ParseFloat(strings.Fields(doc.ViewBox)[3], 64)
	if err != nil {
		t.Fatal(err)
	}
	var out []svgText
	for _, e := range doc.Texts {
		_, size, _ := strings.Cut(e.Style, "font-size:")
		px, err := strconv.ParseFloat(strings.TrimSuffix(size, "px"), 64)
		if err != nil {
			t.Fatalf("text %q: style %q", e.S, e.Style)
		}
		base := height + e.Y
		out = append(out, svgText{e.S, e.X, base - 0.8*px, e.X + 0.55*px*float64(len(e.S)), base + 0.2*px})
	}
	return out
}

// At 24 drives with a 1-drive total near the 24-drive one (the loop24
// recording's 8KB Random Write: 48,753 IOPS on one drive, 25,035 on 24),
// the 1-drive point sits under the legend: its value is written clear of
// the legend's texts, and every text is inside the picture.
func TestScalingLabelsClearOfLegend(t *testing.T) {
	svg, err := Scaling("8KB Random Write", "iops", []Step{{Drives: 1, Expected: 1, Actual: 48753}, {Drives: 24, Expected: 24, Actual: 25035}})
	if err != nil {
		t.Fatal(err)
	}
	all := texts(t, svg)
	var legend, values []svgText
	for _, x := range all {
		switch {
		case x.s == "expected (linear)" || x.s == "measured":
			legend = append(legend, x)
		case strings.HasSuffix(x.s, " M IOPS"):
			values = append(values, x)
		}
		if x.minX < 0 || x.minY < 0 || x.maxX > 432 || x.maxY > 288 {
			t.Errorf("%q at %+v is outside the 432 × 288 picture", x.s, x)
		}
	}
	if len(legend) != 2 || len(values) == 0 {
		t.Fatalf("legend %v, values %v", legend, values)
	}
	for _, v := range values {
		for _, l := range legend {
			if v.minX < l.maxX && l.minX < v.maxX && v.minY < l.maxY && l.minY < v.maxY {
				t.Errorf("%q %+v overlaps the legend's %q %+v", v.s, v, l.s, l)
			}
		}
	}
}

// A scaling run at every drive count from 1 to 24: no two texts of the
// chart overlap (a point's value with no room is left out).
func TestScalingEveryCountLegible(t *testing.T) {
	var steps []Step
	for n := 1; n <= 24; n++ {
		steps = append(steps, Step{Drives: n, Expected: float64(n) * 2.35e6, Actual: float64(n) * 2.35e6 * (1 - 0.004*float64(n))})
	}
	svg, err := Scaling("4KB Random Read", "iops", steps)
	if err != nil {
		t.Fatal(err)
	}
	all := texts(t, svg)
	for i, a := range all {
		for _, b := range all[i+1:] {
			if a.minX < b.maxX && b.minX < a.maxX && a.minY < b.maxY && b.minY < a.maxY {
				t.Errorf("%q %+v overlaps %q %+v", a.s, a, b.s, b)
			}
		}
	}
}
