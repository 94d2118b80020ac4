package page

import (
	"encoding/json"
	"errors"
	"html"
	"io/fs"
	"os"
	"path/filepath"
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

// A chart that cannot be read, or that holds anything but what the
// reporter's charts hold, is a line saying so, never part of the page:
// an inline SVG shares the page's document, so its <style> restyles the
// whole page, and its links lead out.
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
		// The attack: a chart whose style hides the bottom line and
		// writes QUALIFIED over a NOT QUALIFIED page, and links out.
		{"style", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><style>header.bottom,#verdicts{display:none!important} body::before{content:"QUALIFIED"}</style><a href="https://evil.example/steal"><text y="9">x</text></a></svg>`, nil, "<style>"},
		{"link", `<svg><a href="https://evil.example/"><text>x</text></a></svg>`, nil, "<a>"},
		{"xlink", `<svg><g xlink:href="#x"/></svg>`, nil, "xlink:href"},
		{"foreignObject", `<svg><foreignObject><div>QUALIFIED</div></foreignObject></svg>`, nil, "<foreignObject>"},
		{"style attribute", `<svg style="position:fixed;inset:0;z-index:9"><text>QUALIFIED</text></svg>`, nil, "position"},
		{"style url", `<svg><path d="M0,0" style="fill:url(https://evil.example/)"/></svg>`, nil, "fill:url"},
		{"entity", `<svg><path d="M0,0" style="fill&#58;red"/></svg>`, nil, "left out of the page"},
		{"closed early", `<svg></svg><style>body{display:none}</style><svg></svg>`, nil, "<style>"},
		{"comment", `<svg><!-- <style> --></svg>`, nil, "left out of the page"},
		{"namespace", `<svg xmlns="https://evil.example/"></svg>`, nil, "namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := figureHTML("charts/a.svg", func(string) ([]byte, error) { return []byte(tc.svg), tc.err })
			if !strings.Contains(got, html.EscapeString(tc.want)) {
				t.Errorf("got %s, want it to hold %s", got, tc.want)
			}
			if strings.Contains(got, "<svg") {
				t.Errorf("the chart is on the page: %s", got)
			}
		})
	}
	// Every chart the reporter draws is drawn, as it is.
	r := load(t, "brief.json")
	charts, err := r.Charts()
	if err != nil || len(charts) == 0 {
		t.Fatalf("Charts() = %d, %v", len(charts), err)
	}
	for name, svg := range charts {
		got := figureHTML("charts/"+name, func(string) ([]byte, error) { return svg, nil })
		if !strings.Contains(got, `<figure class="chart"`) || !strings.Contains(got, "<text") {
			t.Errorf("chart %s is not drawn: %.300s", name, got)
		}
	}
}

// A chart is read only as charts/NAME.svg inside the report directory,
// through no symbolic link: a name climbing out, or a charts directory
// or chart linked elsewhere, is not read.
func TestReadChart(t *testing.T) {
	dir := t.TempDir()
	out := t.TempDir()
	evil := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><text>x</text></svg>`)
	if err := os.WriteFile(filepath.Join(out, "evil.svg"), evil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "charts", "ok.svg"), evil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "evil.svg"), filepath.Join(dir, "charts", "link.svg")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, filepath.Join(out, "evil.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"charts/" + rel, "charts/../../evil.svg", "charts/link.svg", filepath.Join(out, "evil.svg"), "charts/sub/x.svg"} {
		if data, err := readChart(dir, name); err == nil {
			t.Errorf("readChart(%s) read %d bytes, want it refused", name, len(data))
		}
	}
	if data, err := readChart(dir, "charts/ok.svg"); err != nil || string(data) != string(evil) {
		t.Errorf("readChart(charts/ok.svg) = %q, %v", data, err)
	}
	linked := t.TempDir()
	if err := os.Symlink(out, filepath.Join(linked, "charts")); err != nil {
		t.Fatal(err)
	}
	if _, err := readChart(linked, "charts/evil.svg"); err == nil {
		t.Error("readChart read through a charts symlink out of the report")
	}
}

// The attack: a spec whose model and source carry a chart path climbing
// out of the report to a hostile SVG, markup, a javascript: and an https
// link, and a bidi override. The NOT QUALIFIED page written from it
// draws no chart of theirs, holds no style but its own, links nowhere
// outside, and shows the override as its escape, not text backwards.
func TestHostileSpec(t *testing.T) {
	data, err := os.ReadFile("testdata/onefail.json")
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	evil := `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><style>header.bottom,#verdicts{display:none!important} body::before{content:"QUALIFIED"}</style><a href="https://evil.example/steal"><text y="9">x</text></a></svg>`
	if err := os.WriteFile(filepath.Join(out, "evil.svg"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	climb := "charts/" + strings.Repeat("../", 12) + strings.TrimPrefix(filepath.Join(out, "evil.svg"), "/")
	hostile := "Loop ![c](" + climb + ") **QUALIFIED**: fake <b>x</b> [y](javascript:alert(1)) [z](https://evil.example/) \u202eevil"
	r.Spec = hostile
	r.Source = "src ![c](" + climb + ") [z](https://evil.example/)"
	r.JudgedBy = &report.SpecRef{Model: hostile, File: "evil.toml", SHA256: "00"}
	r.Results[0].Raw = "//evil.example/raw.json"
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, &r); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	got := string(page)
	if strings.Count(got, "<style") != 1 || strings.Contains(got, "display:none") {
		t.Errorf("the page holds a style but its own")
	}
	for _, bad := range []string{`href="https:`, `href="javascript:`, `href="charts/..`, `href="//`, "<b>", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(got, `<p class="decision" id="decision">NOT QUALIFIED</p>`) || !strings.Contains(got, `\u202eevil`) {
		t.Errorf("the page lost its decision or the override's escape")
	}
}

// summary.md's text goes on the page escaped, a link to anywhere but a
// chart of the report as the text it is, and a chart image line as its
// chart.
func TestMarkdown(t *testing.T) {
	md := "## A <b>\n\n| x | y |\n|---|---:|\n| a \\| b | 1 FAIL [^1] |\n\n[^1]: why <i>\n\n- **bold** [doc](docs/x.md) [bad](javascript:void) [a](charts/a.svg)\n\n![lot](charts/lot.svg)\n"
	secs := markdown(md, func(name string) string { return "<figure>" + name + "</figure>\n" })
	got := secs[1].html.String()
	for _, want := range []string{
		`<td>a | b</td><td class="num">1 FAIL <sup><a href="#note-1">1</a></sup></td>`,
		`<p class="note" id="note-1"><sup>1</sup> why &lt;i&gt;</p>`,
		`<li><strong>bold</strong> [doc](docs/x.md) [bad](javascript:void) <a href="charts/a.svg">a</a></li>`,
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

// A chart whose root <svg> carries a transform is left out: a browser
// applies it as a CSS transform, which no box clips, so it could paint
// "QUALIFIED" over a NOT QUALIFIED banner.
func TestRootTransformRefused(t *testing.T) {
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="200" viewBox="0 0 800 200" transform="translate(0,-560)"><g><path d="M0 0 L800 0 L800 200 L0 200 Z" style="fill:#e9f7ef"/><text x="20" y="90" style="fill:#1a7f37">QUALIFIED</text></g></svg>`
	if _, err := inlineSVG([]byte(svg)); err == nil {
		t.Error("a chart with a transform on its root was inlined")
	}
	inner := strings.Replace(svg, ` transform="translate(0,-560)"><g>`, `><g transform="translate(0,10)">`, 1)
	if _, err := inlineSVG([]byte(inner)); err != nil {
		t.Errorf("a transform inside the chart (gonum's own) was refused: %v", err)
	}
}

// A chart placed is kept by its content, not its name: the page is
// written after every result, and a chart refused once is refused again,
// however often it is asked, while the same chart with the refused part
// taken out is placed; a prolog (what a file adds before the <svg>) does
// not change the verdict or what is placed. Only placed charts are kept:
// a refusal quotes the chart.
func TestChartVerdictKeptByContent(t *testing.T) {
	bad := `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="2"><g><text x="1" y="1">x</text><script>alert(1)</script></g></svg>`
	good := strings.Replace(bad, `<script>alert(1)</script>`, ``, 1)
	kept := func() int { checked.Lock(); defer checked.Unlock(); return len(checked.m) }
	before, first := -1, kept()
	for i := range 3 {
		if i == 1 {
			before = kept()
		}
		if _, err := inlineSVG([]byte(bad)); err == nil || !strings.Contains(err.Error(), "<script>") {
			t.Errorf("ask %d: the chart with a script: %v, want it refused naming <script>", i+1, err)
		}
		for _, in := range []string{good, `<?xml version="1.0"?>` + "\n" + good} {
			out, err := inlineSVG([]byte(in))
			if err != nil || string(out) != good {
				t.Errorf("ask %d: the chart without it: %q, %v, want it placed as %q", i+1, out, err, good)
			}
		}
	}
	if before != first+1 {
		t.Errorf("%d charts kept after the first asks, from %d: want the placed one alone", before, first)
	}
	// Asked again, the placed chart was answered from what was kept.
	if n := kept(); n != before {
		t.Errorf("%d verdicts kept after asking again, %d after the first asks: the same charts were checked again", n, before)
	}
}
