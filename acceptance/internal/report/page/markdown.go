package page

import (
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/outfiles"
)

// section is one "## " section of summary.md, as HTML.
type section struct {
	title string // "" for the head, before the first "## "
	html  strings.Builder
}

// chartFile is the name of a chart the reporter draws, from the report
// directory: in its charts directory, no other.
var chartFile = regexp.MustCompile(`^` + outfiles.ChartName + `$`)

// chartLine is a line of summary.md that is a chart's link or image and
// nothing else, as the reporter writes them: "![lot](charts/lot.svg)",
// "Chart: [charts/x.svg](charts/x.svg)". A link in a line of text (a
// spec's model, a drive's name quoted) is never drawn.
var chartLine = regexp.MustCompile(`^(?:Chart: )?!?\[(.*)\]\((` + outfiles.ChartName + `)\)$`)

// markdown turns summary.md (the subset its writer uses: headings, lists,
// pipe tables, footnotes, paragraphs of lines, bold, links and images)
// into HTML sections, each chart it links drawn inline by figure.
func markdown(md string, figure func(name string) string) []*section {
	cur := &section{}
	out := []*section{cur}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "# "):
			// The title: the page has its own.
		case strings.HasPrefix(l, "## "):
			cur = &section{title: strings.TrimPrefix(l, "## ")}
			out = append(out, cur)
		case strings.HasPrefix(l, "### "):
			fmt.Fprintf(&cur.html, "<h3>%s</h3>\n", inline(strings.TrimPrefix(l, "### ")))
		case strings.HasPrefix(l, "|"):
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], "|") {
				j++
			}
			table(&cur.html, lines[i:j])
			i = j - 1
		case strings.HasPrefix(l, "- "):
			cur.html.WriteString("<ul>\n")
			for ; i < len(lines) && strings.HasPrefix(lines[i], "- "); i++ {
				fmt.Fprintf(&cur.html, "<li>%s</li>\n", inline(strings.TrimPrefix(lines[i], "- ")))
			}
			cur.html.WriteString("</ul>\n")
			i--
		case footnoteDef.MatchString(l):
			m := footnoteDef.FindStringSubmatch(l)
			fmt.Fprintf(&cur.html, "<p class=\"note\" id=\"note-%s\"><sup>%s</sup> %s</p>\n", m[1], m[1], inline(m[2]))
		case strings.TrimSpace(l) == "":
		default:
			var para []string
			for ; i < len(lines) && paragraphLine(lines[i]); i++ {
				para = append(para, lines[i])
			}
			i--
			paragraph(&cur.html, para, figure)
		}
	}
	return out
}

var footnoteDef = regexp.MustCompile(`^\[\^(\d+)\]: (.*)$`)

// paragraphLine says l continues a paragraph.
func paragraphLine(l string) bool {
	return strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "|") &&
		!strings.HasPrefix(l, "- ") && !footnoteDef.MatchString(l)
}

// paragraph writes lines as one paragraph, a line each, and after it the
// charts of its lines that are only a chart's link (chartLine).
func paragraph(b *strings.Builder, lines []string, figure func(string) string) {
	var text []string
	var charts []string
	for _, l := range lines {
		if m := chartLine.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			charts = append(charts, m[2])
			continue
		}
		text = append(text, inline(l))
	}
	if len(text) > 0 {
		fmt.Fprintf(b, "<p>%s</p>\n", strings.Join(text, "<br>\n"))
	}
	for _, c := range charts {
		b.WriteString(figure(c))
	}
}

// table writes a pipe table: a header row, the rule (whose ":" says
// which columns align right), then the rows.
func table(b *strings.Builder, rows []string) {
	if len(rows) < 2 {
		for _, r := range rows {
			fmt.Fprintf(b, "<p>%s</p>\n", inline(r))
		}
		return
	}
	var right []bool
	for _, c := range cells(rows[1]) {
		right = append(right, strings.HasSuffix(strings.TrimSpace(c), ":"))
	}
	b.WriteString("<div class=\"scroll\"><table>\n<thead><tr>")
	for _, c := range cells(rows[0]) {
		fmt.Fprintf(b, "<th>%s</th>", inline(c))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows[2:] {
		b.WriteString("<tr>")
		for i, c := range cells(r) {
			class := ""
			if i < len(right) && right[i] {
				class = ` class="num"`
			}
			v := inline(c)
			for _, w := range []string{"PASS", "FAIL", "INCONCLUSIVE"} {
				if strings.HasPrefix(v, w) {
					v = fmt.Sprintf("<span class=\"v-%s\">%s</span>%s", strings.ToLower(w), w, strings.TrimPrefix(v, w))
					break
				}
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, v)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

// cells splits a table row at its unescaped pipes; "\|" is a pipe in a
// cell.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

var (
	imageRE   = regexp.MustCompile(`!\[([^\]]*)\]\((` + outfiles.ChartName + `)\)`)
	linkRE    = regexp.MustCompile(`\[([^\]^][^\]]*)\]\((` + outfiles.ChartName + `)\)`)
	noteRefRE = regexp.MustCompile(`\[\^(\d+)\]`)
	boldRE    = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	codeRE    = regexp.MustCompile("`([^`]+)`")
)

// inline writes a line's text as HTML: its control and format characters
// escaped (report.Escape: a bidi override shows as \u202e, not as text
// backwards), HTML-escaped, then its bold, code, footnote references and
// links to the report's charts, the only links the reporter writes. Any
// other link or image (a URL in a spec's model or source, a path out of
// the report) stays the text it is, never a link. An image of a chart is
// its alt text: the charts are drawn by paragraph.
func inline(s string) string {
	s = strings.ReplaceAll(s, `\|`, "|")
	s = html.EscapeString(report.Escape(s))
	s = imageRE.ReplaceAllString(s, "$1")
	s = linkRE.ReplaceAllString(s, `<a href="$2">$1</a>`)
	s = noteRefRE.ReplaceAllString(s, `<sup><a href="#note-$1">$1</a></sup>`)
	s = boldRE.ReplaceAllString(s, "<strong>$1</strong>")
	s = codeRE.ReplaceAllString(s, "<code>$1</code>")
	return s
}
