package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// svgDoc is what the tests read from a chart: its text elements and the
// style of each path.
type svgDoc struct {
	texts  []string
	styles []string
}

func parseSVG(t *testing.T, name string, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(data))
	inText := false
	var root string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", name, err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			switch el.Name.Local {
			case "text":
				inText = true
				doc.texts = append(doc.texts, "")
			case "path":
				for _, a := range el.Attr {
					if a.Name.Local == "style" {
						doc.styles = append(doc.styles, a.Value)
					}
				}
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = false
			}
		case xml.CharData:
			if inText {
				doc.texts[len(doc.texts)-1] += string(el)
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element is <%s>, want <svg>", name, root)
	}
	return doc
}

func TestCharts(t *testing.T) {
	r := fixedRun()
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range charts {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"128KB_Sequential_Read.svg", "4KB_Random_Read.svg", "4KB_Random_Write.svg"}
	if !slices.Equal(names, want) {
		t.Fatalf("Charts() made %v, want %v", names, want)
	}

	glyph := fmt.Sprintf("fill:#%02X%02X%02X", MeasuredColor.R, MeasuredColor.G, MeasuredColor.B)
	for _, g := range r.scalingGroups(r.workloadRank()) {
		name := chartFile(g.workload)
		doc := parseSVG(t, name, charts[name])

		for _, text := range []string{g.workload, "drives", "expected (linear)", "measured"} {
			if !slices.Contains(doc.texts, text) {
				t.Errorf("%s has no text %q; texts: %q", name, text, doc.texts)
			}
		}
		div, unit := chartScale(g.rows[0].Metric)
		if !slices.Contains(doc.texts, "total, "+unit) {
			t.Errorf("%s has no y-axis label %q", name, "total, "+unit)
		}

		// One filled circle per measured point, plus the legend's.
		circles := 0
		for _, s := range doc.styles {
			if s == glyph {
				circles++
			}
		}
		if want := len(g.rows) + 1; circles != want {
			t.Errorf("%s has %d filled circles, want %d (one per point and the legend's)", name, circles, want)
		}
		// Two points far apart: both are labelled with their value.
		for _, res := range g.rows {
			label := shortValue(res.Actual/div) + " " + unit
			if !slices.Contains(doc.texts, label) {
				t.Errorf("%s: %d drives: no label %q; texts: %q", name, res.Drives, label, doc.texts)
			}
		}
		// The x axis names each drive count.
		for _, res := range g.rows {
			if n := fmt.Sprint(res.Drives); !slices.Contains(doc.texts, n) {
				t.Errorf("%s: no x tick %q", name, n)
			}
		}
	}
}

// The labels are chosen to read well: millions of IOPS and GB/s (10^9 B/s)
// with about three significant digits.
func TestChartScale(t *testing.T) {
	tests := []struct {
		v      float64
		metric string
		out    string
	}{
		{57_400_000, "iops", "57.4 M IOPS"},
		{2_409_894, "iops", "2.41 M IOPS"},
		{157_885, "iops", "0.16 M IOPS"},
		{346_000, "MBps", "346 GB/s"},
		{14_506, "MBps", "14.5 GB/s"},
	}
	for _, tt := range tests {
		div, unit := chartScale(tt.metric)
		if out := shortValue(tt.v/div) + " " + unit; out != tt.out {
			t.Errorf("label for %v %s = %q, want %q", tt.v, tt.metric, out, tt.out)
		}
	}
}

// A workload whose multi-drive results all failed before measuring gets no
// chart and no link.
func TestChartsSkipUnmeasured(t *testing.T) {
	r := &Run{Spec: "Acme X1", Results: []Result{
		{Kind: KindScaling, Capacity: "1TB", Workload: "4KB Random Read", Drives: 4, Metric: "iops",
			Expected: 4e6, Verdict: Inconclusive, Error: "fio exited with status 1"},
		{Kind: KindScaling, Capacity: "1TB", Workload: "Seq/Read", Drives: 4, Metric: "MBps",
			Expected: 4e4, Actual: 3.9e4, Verdict: Pass},
	}}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 1 || charts["Seq-Read.svg"] == nil {
		t.Errorf("Charts() made %d charts, want only Seq-Read.svg", len(charts))
	}
	s := string(r.Summary())
	if strings.Contains(s, "4KB_Random_Read.svg") {
		t.Errorf("summary links a chart that was not made:\n%s", s)
	}
	if !strings.Contains(s, "(charts/Seq-Read.svg)") {
		t.Errorf("summary lacks the link to charts/Seq-Read.svg:\n%s", s)
	}
}

func BenchmarkCharts(b *testing.B) {
	r := fixedRun()
	for b.Loop() {
		if _, err := r.Charts(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSummary(b *testing.B) {
	r := fixedRun()
	for b.Loop() {
		r.Summary()
	}
}
