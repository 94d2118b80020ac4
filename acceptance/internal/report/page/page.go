// Package page writes index.html: a run's report as one self-contained
// page for people who were not at the server, the bottom line first.
//
// The page is made from what summary.md says and the charts it links, so
// that a section or chart added to summary.md is on the page too: the
// verdicts first (one plain line per gate), then each capacity's table,
// the scaling tables and their charts, the other sections and charts, the
// drives and their health, and the evidence files it came from. Charts
// are inline SVG, styles inline CSS; the page fetches nothing (its
// Content-Security-Policy forbids it) and prints. What a spec, drive or
// host supplies is text on it: no chart, link or style of theirs.
package page

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/bottomline"
)

// File is the page's name in a report directory.
const File = "index.html"

// Write writes dir/index.html (atomically) for r, with the charts
// summary.md links read from dir.
func Write(dir string, r *report.Run) error {
	read := func(name string) ([]byte, error) { return readChart(dir, name) }
	return report.WriteFileAtomic(filepath.Join(dir, File), Render(r, r.Summary(), read))
}

// Render is the page of r, whose summary.md is summary; chart reads a
// chart summary.md links by its path in the report directory
// ("charts/4KB_Random_Read.svg").
func Render(r *report.Run, summary []byte, chart func(name string) ([]byte, error)) []byte {
	p := &page{r: r}
	figure := func(name string) string {
		return figureHTML(name, chart)
	}
	md := string(summary)
	// summary.md opens with the bottom line and its title; the page has its own.
	if _, rest, ok := strings.Cut(md, "\n# "); ok {
		_, md, _ = strings.Cut(rest, "\n")
	}
	secs := markdown(headWithoutGates(md), figure)
	p.write(secs)
	return p.b.Bytes()
}

type page struct {
	r *report.Run
	b bytes.Buffer
}

// headWithoutGates drops summary.md's list of gates (the page's verdicts
// say each in plain words) from what comes before its first section.
func headWithoutGates(md string) string {
	head, rest, _ := strings.Cut(md, "\n## ")
	var keep []string
	for _, l := range strings.Split(head, "\n") {
		if !strings.HasPrefix(l, "- **") && l != "No results yet." {
			keep = append(keep, l)
		}
	}
	if rest == "" {
		return strings.Join(keep, "\n")
	}
	return strings.Join(keep, "\n") + "\n## " + rest
}

// Where a section of summary.md goes: the capacities' and scaling tables
// first, the drives and their checks last.
var lastSections = []string{"Drives", "Receipt inspection", "Health"}

func (p *page) write(secs []*section) {
	r, b := p.r, &p.b
	l := r.BottomLine()
	mode := r.Mode
	if r.Reconstructed {
		mode += " of reconstructed figures"
	}
	date := r.Finished
	if date == "" {
		date = r.Started
	}
	fmt.Fprintf(b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s: %s — drivequal</title>
<style>%s</style>
</head>
<body>
<header class="bottom %s" id="bottom-line">
<p class="what">drivequal · %s · %s%s</p>
<p class="decision" id="decision">%s</p>
<p class="reason" id="reason">%s</p>
<p class="next" id="next"><strong>Next:</strong> %s</p>
</header>
`, esc(orDash(r.Spec)), esc(l.Decision), css, class(l.Decision), esc(orDash(r.Spec)), esc(orDash(mode)), dated(date),
		esc(l.Decision), esc(capital(l.Reason)), esc(l.Next))
	p.writeGates()
	var first, middle, last []*section
	for _, s := range secs[1:] {
		switch {
		case slices.Contains(lastSections, s.title):
			last = append(last, s)
		case s.title == "Scaling" || slices.Contains(p.capacities(), s.title):
			first = append(first, s)
		default:
			middle = append(middle, s)
		}
	}
	if head := strings.TrimSpace(secs[0].html.String()); head != "" {
		fmt.Fprintf(b, "<section id=\"how\">\n<h2>How this run was made</h2>\n%s\n</section>\n", head)
	}
	for _, s := range slices.Concat(first, middle, last) {
		fmt.Fprintf(b, "<section>\n<h2>%s</h2>\n%s</section>\n", inline(s.title), s.html.String())
	}
	p.writeEvidence()
	b.WriteString("</body>\n</html>\n")
}

// writeGates writes one line per gate: its name, verdict and why.
func (p *page) writeGates() {
	gates := p.r.Gates()
	if len(gates) == 0 {
		return
	}
	b := &p.b
	b.WriteString("<section id=\"verdicts\">\n<h2>Verdicts</h2>\n<table class=\"gates\">\n")
	for _, g := range gates {
		fmt.Fprintf(b, "<tr class=\"gate\"><th>%s</th><td><span class=\"badge %s\">%s</span></td><td>%s</td></tr>\n",
			esc(g.Name), class(g.Verdict), esc(g.Verdict), esc(capital(bottomline.Explain(g, p.r.Precondition))))
	}
	b.WriteString("</table>\n</section>\n")
}

// writeEvidence lists the files the page came from: the report's own,
// and each result's recorded fio output.
func (p *page) writeEvidence() {
	b := &p.b
	b.WriteString("<section id=\"evidence\">\n<h2>Evidence</h2>\n<p>This page is made from ")
	for i, f := range []string{report.ResultsFile, report.SummaryFile, "junit.xml"} {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "<a href=\"%s\">%s</a>", f, f)
	}
	b.WriteString(" and the charts beside it, in the same directory.")
	if c := p.r.Recording; c != nil {
		fmt.Fprintf(b, " %s", inline(strings.TrimSpace(c.Line())))
	}
	b.WriteString("</p>\n")
	var rows []report.Result
	for _, res := range p.r.Results {
		if res.Raw != "" {
			rows = append(rows, res)
		}
	}
	if len(rows) > 0 {
		b.WriteString("<p>Each test's recorded fio output (paths from the report directory's parent):</p>\n<div class=\"scroll\"><table class=\"files\">\n<thead><tr><th>Test</th><th>Verdict</th><th>fio output</th></tr></thead>\n<tbody>\n")
		for _, res := range rows {
			// A file's path, never a host: "//host/x" is cleaned to
			// "/host/x", and a relative path stays below "../".
			target := path.Clean(filepath.ToSlash(res.Raw))
			if !filepath.IsAbs(res.Raw) {
				target = "../" + filepath.ToSlash(res.Raw)
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td><a href=\"%s\">%s</a></td></tr>\n",
				esc(res.Test), esc(strings.ToUpper(res.Verdict)), esc(target), esc(res.Raw))
		}
		b.WriteString("</tbody></table></div>\n")
	}
	b.WriteString("</section>\n")
}

// capacities are the capacities the run's results name.
func (p *page) capacities() []string {
	var out []string
	for _, res := range p.r.Results {
		if !slices.Contains(out, res.Capacity) {
			out = append(out, res.Capacity)
		}
	}
	return out
}

// figureHTML is a chart drawn inline: its SVG without the XML prolog,
// and a link to its file; or, when it cannot be read or is not a chart
// as the reporter draws it, a line saying so.
func figureHTML(name string, chart func(string) ([]byte, error)) string {
	svg, err := chart(name)
	if err == nil {
		svg, err = inlineSVG(svg)
	}
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "not drawn"
		}
		return fmt.Sprintf("<p class=\"missing\">Chart %s: %s.</p>\n", esc(name), esc(why))
	}
	return fmt.Sprintf("<figure class=\"chart\" data-chart=\"%s\">\n%s\n<figcaption><a href=\"%s\">%s</a></figcaption>\n</figure>\n",
		esc(name), svg, esc(name), esc(name))
}

// MaxChart is the most bytes a chart may hold to be drawn on the page.
const MaxChart = 4 << 20

// readChart reads the chart name (a chartFile) in the report directory
// dir, every component opened without following a symbolic link, a
// regular file of one link (record.Open): a chart linked out of the
// directory is not read.
func readChart(dir, name string) ([]byte, error) {
	if !chartFile.MatchString(name) {
		return nil, fmt.Errorf("%q is not a chart of the report (charts/NAME.svg)", name)
	}
	f, _, err := record.Open(dir, name, MaxChart)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return record.Read(f, MaxChart)
}

var (
	prolog = regexp.MustCompile(`(?s)^\s*(<\?xml.*?\?>\s*|<!--.*?-->\s*|<!DOCTYPE[^>]*>\s*)*`)
	// svgTag is one tag of a chart: its name and attributes, each value
	// in double quotes, holding no "<" or "&".
	svgTag  = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9:_-]*)((?:\s+[A-Za-z][A-Za-z0-9:_-]*\s*=\s*"[^"<&]*")*)\s*/?>`)
	svgAttr = regexp.MustCompile(`([A-Za-z][A-Za-z0-9:_-]*)\s*=\s*"([^"]*)"`)
	// svgValue is what an attribute but xmlns and style may hold:
	// numbers, path commands and transforms; no URL, no reference.
	svgValue   = regexp.MustCompile(`^[A-Za-z0-9., ()%+-]*$`)
	styleValue = regexp.MustCompile(`^[A-Za-z0-9#., %-]*$`)
)

// What a chart, as the reporter draws it (gonum's SVG), may hold: its
// elements, their attributes and the properties of their style. An SVG
// placed in the page shares the page's document: a <style> in it styles
// the whole page (hiding the bottom line, writing another), a link leads
// out, an image or foreignObject fetches or holds HTML, an event
// attribute runs. None of them is in a chart drawn by the reporter.
var (
	svgElements = []string{"svg", "g", "path", "text"}
	svgAttrs    = []string{"width", "height", "viewBox", "version", "xmlns", "xmlns:xlink", "transform", "d", "x", "y", "style"}
	svgXMLNS    = []string{"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
	svgStyles   = []string{"fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
		"stroke-linecap", "stroke-linejoin", "opacity", "font-family", "font-variant", "font-weight", "font-style", "font-size", "text-anchor"}
)

// inlineSVG makes a chart file fit to place in the page: the <svg>
// element alone. A chart holding anything but the elements, attributes
// and styles the reporter's charts hold is refused (left out of the
// page, which says so): the page stays self-contained and is styled by
// itself alone.
func inlineSVG(svg []byte) ([]byte, error) {
	s := strings.TrimSpace(prolog.ReplaceAllString(string(svg), ""))
	if !strings.HasPrefix(s, "<svg") || !strings.HasSuffix(s, "</svg>") {
		return nil, errors.New("not an SVG")
	}
	key := sha256.Sum256([]byte(s))
	checked.Lock()
	_, ok := checked.m[key]
	checked.Unlock()
	if !ok {
		if err := checkSVG(s); err != nil {
			return nil, err
		}
		checked.Lock()
		if len(checked.m) >= maxChecked {
			clear(checked.m)
		}
		checked.m[key] = struct{}{}
		checked.Unlock()
	}
	return []byte(s), nil
}

// checked holds the sha256 of each chart checkSVG placed. A run writes
// its page again after every result, with every chart drawn so far, and
// the charts' checks (regular expressions over each whole SVG) were a
// sixth of the CPU the suite itself used in a run of 35 cells: on a
// 24-drive run they grew with the square of its cells. A refused chart is
// checked again each time: its refusal quotes what it holds, up to
// MaxChart, which is not kept. At most maxChecked sums are kept.
var checked = struct {
	sync.Mutex
	m map[[sha256.Size]byte]struct{}
}{m: map[[sha256.Size]byte]struct{}{}}

const maxChecked = 1 << 14

// checkSVG refuses an <svg> element that holds anything but what the
// reporter's charts hold (see inlineSVG).
func checkSVG(s string) error {
	tags := svgTag.FindAllStringSubmatch(s, -1)
	if strings.Count(s, "<") != len(tags) {
		return errors.New("holds markup that is not a tag of a chart (a comment, a CDATA section, a tag that does not read), left out of the page")
	}
	for _, m := range tags {
		if !slices.Contains(svgElements, m[2]) {
			return fmt.Errorf("holds the element <%s>, which a chart does not (a style, a link, an image or a script would reach the page), left out of the page", m[2])
		}
		for _, a := range svgAttr.FindAllStringSubmatch(m[3], -1) {
			if m[2] == "svg" && a[1] == "transform" {
				// On the root, a browser applies it as a CSS transform,
				// which no box clips: the chart could cover the verdict.
				return fmt.Errorf("<svg transform=%q>: a chart does not move itself, left out of the page", a[2])
			}
			if err := svgAttrOK(a[1], a[2]); err != nil {
				return fmt.Errorf("<%s %s=%q>: %w, left out of the page", m[2], a[1], a[2], err)
			}
		}
	}
	return nil
}

// svgAttrOK says why a chart's attribute name="value" is not one of a
// chart's.
func svgAttrOK(name, value string) error {
	switch {
	case !slices.Contains(svgAttrs, name):
		return errors.New("an attribute a chart does not hold")
	case strings.HasPrefix(name, "xmlns"):
		if !slices.Contains(svgXMLNS, value) {
			return errors.New("not the SVG or XLink namespace")
		}
	case name == "style":
		for _, decl := range strings.Split(value, ";") {
			if strings.TrimSpace(decl) == "" {
				continue
			}
			prop, v, _ := strings.Cut(decl, ":")
			if !slices.Contains(svgStyles, strings.TrimSpace(prop)) || !styleValue.MatchString(strings.TrimSpace(v)) {
				return fmt.Errorf("the style %q is not one a chart sets", strings.TrimSpace(decl))
			}
		}
	case !svgValue.MatchString(value):
		return errors.New("a value a chart does not hold")
	}
	return nil
}

func class(verdict string) string {
	switch verdict {
	case bottomline.Qualified:
		return "qualified"
	case bottomline.NotQualified:
		return "not-qualified"
	}
	return "inconclusive"
}

func dated(ts string) string {
	if ts == "" {
		return ""
	}
	return " · " + esc(ts)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// esc is s as HTML text, its control and format characters (a bidi
// override, which would show the text after it backwards) written as
// their escapes (report.Escape).
func esc(s string) string { return html.EscapeString(report.Escape(s)) }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// css is the page's style: readable on a screen, and printable.
const css = `
:root { --ok: #1a7f37; --bad: #c62828; --unsure: #9a6700; --line: #d0d7de; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", "Liberation Sans", sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem 3rem; color: #1f2328; line-height: 1.45; }
header.bottom { border-left: 0.5rem solid var(--unsure); background: #fff8e1; padding: 0.6rem 1rem; margin-bottom: 1rem; }
header.qualified { border-color: var(--ok); background: #e9f7ef; }
header.not-qualified { border-color: var(--bad); background: #fdecea; }
header .what { margin: 0; color: #57606a; font-size: 0.9rem; }
header .decision { margin: 0.2rem 0; font-size: 2rem; font-weight: 700; letter-spacing: 0.02em; }
header.qualified .decision { color: var(--ok); }
header.not-qualified .decision { color: var(--bad); }
header.inconclusive .decision { color: var(--unsure); }
header .reason { margin: 0.2rem 0; font-size: 1.15rem; }
header .next { margin: 0.2rem 0; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.gates th { white-space: nowrap; }
.badge { display: inline-block; padding: 0.1rem 0.5rem; border-radius: 0.3rem; color: #fff; font-weight: 700; white-space: nowrap; background: var(--unsure); }
.badge.qualified { background: var(--ok); }
.badge.not-qualified { background: var(--bad); }
.v-pass { color: var(--ok); font-weight: 600; }
.v-fail { color: var(--bad); font-weight: 600; }
.v-inconclusive { color: var(--unsure); font-weight: 600; }
.scroll { overflow-x: auto; }
figure.chart { margin: 0.5rem 0 1.5rem; overflow: hidden; contain: paint; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 0.8rem; color: #57606a; }
p.note { font-size: 0.85rem; color: #57606a; margin: 0.2rem 0; }
table.files { font-size: 0.8rem; }
a { color: #0969da; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  header.bottom { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .badge, .v-pass, .v-fail, .v-inconclusive { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .scroll { overflow: visible; }
  figure.chart, tr, header.bottom { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
`
