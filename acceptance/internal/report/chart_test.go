package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
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

	glyph := fmt.Sprintf("fill:#%02X%02X%02X", chart.MeasuredColor.R, chart.MeasuredColor.G, chart.MeasuredColor.B)
	for _, g := range r.scalingGroups(r.workloadRank()) {
		name := chartFile(g.workload)
		doc := parseSVG(t, name, charts[name])

		for _, text := range []string{g.workload, "drives", "expected (linear)", "measured"} {
			if !slices.Contains(doc.texts, text) {
				t.Errorf("%s has no text %q; texts: %q", name, text, doc.texts)
			}
		}
		unit := chart.Unit(g.rows[0].Metric)
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
			label := chart.Label(res.Actual, res.Metric)
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

// Once the run's charts have a heading, a scaling chart's title names
// the model, the run's date and its mode under the workload.
func TestChartsHeading(t *testing.T) {
	r := fixedRun()
	r.ChartHeading = &chart.Heading{Model: "D7-PS1010", Date: "2026-12-03", Mode: "live"}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, "4KB_Random_Read.svg", charts["4KB_Random_Read.svg"])
	for _, text := range []string{"4KB Random Read", "D7-PS1010 · 2026-12-03 · live"} {
		if !slices.Contains(doc.texts, text) {
			t.Errorf("4KB_Random_Read.svg: no text %q in %q", text, doc.texts)
		}
	}
}
