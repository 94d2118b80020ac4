package page

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// load reads a results.json the suite wrote (the junit package's
// testdata/runs: its README says the command of each).
func load(t *testing.T, name string) *report.Run {
	t.Helper()
	data, err := os.ReadFile("../../junit/testdata/runs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// chartsOf reads the charts Run.Charts draws, as Write would from disk.
func chartsOf(t *testing.T, r *report.Run) func(string) ([]byte, error) {
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	return func(name string) ([]byte, error) {
		if svg, ok := charts[strings.TrimPrefix(name, report.ChartsDir+"/")]; ok {
			return svg, nil
		}
		return nil, fs.ErrNotExist
	}
}

// The brief's replay: the bottom line before anything else, a verdict
// line per gate, every chart summary.md links drawn inline, and nothing
// the page would fetch.
func TestRenderBrief(t *testing.T) {
	r := load(t, "brief.json")
	md := r.Summary()
	got := string(Render(r, md, chartsOf(t, r)))
	body := got[strings.Index(got, "<body>"):]
	if i := strings.Index(body, `id="decision">QUALIFIED<`); i < 0 || strings.Index(body, "<section") < i {
		t.Errorf("the page does not open with its decision:\n%.2000s", body)
	}
	for _, c := range []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB", "scaling"} {
		if !strings.Contains(got, "<tr class=\"gate\"><th>"+c+"</th><td><span class=\"badge qualified\">QUALIFIED</span></td><td>Met the vendor&#39;s figures in all") {
			t.Errorf("no verdict line for %s", c)
		}
	}
	links := regexp.MustCompile(`\(charts/[^)]+\.svg\)`).FindAllString(string(md), -1)
	figures := strings.Count(got, `<figure class="chart"`)
	if len(links) != 8 || figures != len(links) || strings.Count(got, "<svg") != len(links) {
		t.Errorf("summary.md links %d charts; the page draws %d figures, %d <svg>", len(links), figures, strings.Count(got, "<svg"))
	}
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url(http", "<?xml"} {
		if strings.Contains(got, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	// The capacities' tables and the scaling before the drives; the
	// evidence last.
	order := []string{"<h2>Verdicts</h2>", "<h2>1.92TB</h2>", "<h2>15.36TB</h2>", "<h2>Scaling</h2>", "<h2>Drives</h2>", "<h2>Evidence</h2>"}
	last := -1
	for _, h := range order {
		i := strings.Index(got, h)
		if i <= last {
			t.Errorf("%s is at %d, not after %d", h, i, last)
		}
		last = i
	}
	if !strings.Contains(got, `<a href="../fixtures/solidigm-d7-ps1010/TestSingleDrive/1.92TB/4KB_Random_Read.json">`) {
		t.Error("the evidence does not link a cell's recorded fio output")
	}
}

// A NOT QUALIFIED run says why at the top, and in which test.
func TestRenderNotQualified(t *testing.T) {
	data, err := os.ReadFile("testdata/onefail.json")
	if err != nil {
		t.Fatal(err)
	}
	var r0 report.Run
	if err := json.Unmarshal(data, &r0); err != nil {
		t.Fatal(err)
	}
	r := &r0
	got := string(Render(r, r.Summary(), chartsOf(t, r)))
	want := `<p class="decision" id="decision">NOT QUALIFIED</p>`
	if !strings.Contains(got, want) {
		t.Fatalf("no %s", want)
	}
	reason := `<p class="reason" id="reason">1.92TB failed: the drives were slower than the vendor&#39;s published figures (4KB Random Read; 1 of 8 tests of 1.92TB)`
	if !strings.Contains(got, `<header class="bottom not-qualified"`) || !strings.Contains(got, reason) {
		t.Errorf("the bottom line does not name the failed test:\n%.3000s", got[strings.Index(got, "<body>"):])
	}
}

// A chart that cannot be read, or that would run or fetch something, is
// a line saying so, never part of the page.
func TestFigure(t *testing.T) {
	for _, tc := range []struct {
		name string
		svg  string
		err  error
		want string
	}{
		{"missing", "", fs.ErrNotExist, "Chart charts/a.svg: not drawn."},
		{"unreadable", "", errors.New("permission denied"), "Chart charts/a.svg: permission denied."},
		{"script", `<svg><script>alert(1)</script></svg>`, nil, "left out of the page"},
		{"handler", `<svg onload="alert(1)"></svg>`, nil, "left out of the page"},
		{"image", `<svg><image href="http://example.com/x.png"/></svg>`, nil, "left out of the page"},
		{"not svg", `<html></html>`, nil, "not an SVG"},
		{"ids", `<?xml version="1.0"?>
<!-- made -->
<svg><clipPath id="a"/><g clip-path="url(#a)"/><use href="#a"/></svg>`, nil, `<svg><clipPath id="c3-a"/><g clip-path="url(#c3-a)"/><use href="#c3-a"/></svg>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := figureHTML("charts/a.svg", 3, func(string) ([]byte, error) { return []byte(tc.svg), tc.err })
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %s, want it to hold %s", got, tc.want)
			}
			if tc.name != "ids" && strings.Contains(got, "<svg") {
				t.Errorf("the chart is on the page: %s", got)
			}
		})
	}
}

// summary.md's text goes on the page escaped, a link to anywhere but a
// relative path or http(s) as its text alone, and a chart image line as
// its chart.
func TestMarkdown(t *testing.T) {
	md := "## A <b>\n\n| x | y |\n|---|---:|\n| a \\| b | 1 FAIL [^1] |\n\n[^1]: why <i>\n\n- **bold** [doc](docs/x.md) [bad](javascript:void)\n\n![lot](charts/lot.svg)\n"
	secs := markdown(md, func(name string) string { return "<figure>" + name + "</figure>\n" })
	got := secs[1].html.String()
	for _, want := range []string{
		`<td>a | b</td><td class="num">1 FAIL <sup><a href="#note-1">1</a></sup></td>`,
		`<p class="note" id="note-1"><sup>1</sup> why &lt;i&gt;</p>`,
		`<li><strong>bold</strong> <a href="docs/x.md">doc</a> bad</li>`,
		"<figure>charts/lot.svg</figure>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if secs[1].title != "A <b>" || strings.Contains(got, "lot</p>") {
		t.Errorf("title %q; html:\n%s", secs[1].title, got)
	}
}

// A smoke test (a replay of a -precondition=quick recording) says in the
// first line of summary.md and at the top of the page that nothing was
// qualified and what to run instead.
func TestRenderSmokeTest(t *testing.T) {
	data, err := os.ReadFile("testdata/quick.json")
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	md := r.Summary()
	first, _, _ := strings.Cut(string(md), "\n")
	const smoke = "smoke test only: the drives were not preconditioned, so nothing can be qualified"
	if !strings.HasPrefix(first, "**INCONCLUSIVE**: "+smoke) || !strings.HasSuffix(first, "; next: run without -precondition=quick.") {
		t.Errorf("summary.md opens with\n%s", first)
	}
	got := string(Render(&r, md, chartsOf(t, &r)))
	for _, want := range []string{
		`<p class="decision" id="decision">INCONCLUSIVE</p>`,
		`<p class="reason" id="reason">S` + smoke[1:],
		`<p class="next" id="next"><strong>Next:</strong> run without -precondition=quick</p>`,
		`<th>1.92TB</th><td><span class="badge inconclusive">INCONCLUSIVE</span></td><td>Not qualified by a smoke test: the drives were not preconditioned</td>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
