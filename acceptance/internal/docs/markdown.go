// Package docs checks the documentation against the code it describes.
//
// Every relative link and #anchor in README.md and docs/ resolves, every
// flag the suite registers is documented, and docs/spec.md's key table
// lists exactly the keys the spec parser accepts, each with its default;
// docs/verdicts.md lists every cause and docs/results.md every field of
// results.json.
// Its tests run in make test, so a page cannot fall behind the code.
package docs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// A Page is one Markdown file of the documentation.
type Page struct {
	Path string // relative to the module root, slash-separated
	Text string
}

// A Problem is one thing wrong with a page: where it is and the fix.
type Problem struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// Pages are the documentation's files: README.md, every docs/*.md and
// specs/README.md, read from the module root.
func Pages(root string) ([]Page, error) {
	names := []string{"README.md", "specs/README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(docs)
	for _, d := range docs {
		names = append(names, "docs/"+filepath.Base(d))
	}
	var pages []Page
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		pages = append(pages, Page{Path: n, Text: string(b)})
	}
	return pages, nil
}

var (
	fenceRE = regexp.MustCompile("(?m)^ {0,3}(```|~~~)")
	codeRE  = regexp.MustCompile("`[^`]*`")
)

// prose is the page's text with fenced code blocks and code spans blanked
// (every byte but newlines replaced by a space), so that offsets and line
// numbers stay those of the page and nothing quoted as code is read as a
// link or heading.
func (p Page) prose() string {
	b := []byte(p.Text)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	// Fenced blocks: from an opening fence line to its closing one.
	locs := fenceRE.FindAllIndex(b, -1)
	for i := 0; i+1 < len(locs); i += 2 {
		end := locs[i+1][1]
		if nl := strings.IndexByte(string(b[end:]), '\n'); nl >= 0 {
			end += nl
		} else {
			end = len(b)
		}
		blank(locs[i][0], end)
	}
	if len(locs)%2 == 1 {
		blank(locs[len(locs)-1][0], len(b))
	}
	// Code spans, each within its paragraph: a span does not cross a
	// blank line, so a stray backtick stays a backtick and cannot pair
	// with one paragraphs below, hiding every link between.
	start := 0
	for _, sep := range append(blankLineRE.FindAllIndex(b, -1), []int{len(b), len(b)}) {
		for _, l := range codeRE.FindAllIndex(b[start:sep[0]], -1) {
			blank(start+l[0], start+l[1])
		}
		start = sep[1]
	}
	return string(b)
}

var blankLineRE = regexp.MustCompile(`\n[ \t]*\n`)

// lineAt is the 1-based line of byte offset off in text.
func lineAt(text string, off int) int { return strings.Count(text[:off], "\n") + 1 }

// A heading is one ATX heading of a page and its GitHub anchor.
type heading struct {
	line   int
	text   string
	anchor string
}

var headingRE = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)

// headings are the page's headings outside code, each with the anchor
// GitHub gives it: the duplicates of an anchor get -1, -2, … in order.
func (p Page) headings() []heading {
	prose := p.prose()
	seen := map[string]int{}
	var out []heading
	for _, m := range headingRE.FindAllStringSubmatchIndex(prose, -1) {
		// The heading's text as written, code spans included.
		text := p.Text[m[2]:m[3]]
		a := Slug(text)
		if n := seen[a]; n > 0 {
			seen[a] = n + 1
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		out = append(out, heading{line: lineAt(prose, m[0]), text: text, anchor: a})
	}
	return out
}

var inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Slug is the anchor GitHub gives a heading: its rendered text (without
// code marks, emphasis and link targets) lowercased, every character that
// is not a letter, mark, digit, connector (_), space or hyphen dropped,
// and each space made a hyphen.
func Slug(heading string) string {
	s := inlineLinkRE.ReplaceAllString(heading, "$1")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// A link is one inline link of a page.
type link struct {
	line   int
	target string
}

var linkRE = regexp.MustCompile(`\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)

// links are the page's inline links outside code, their text on any
// number of lines.
func (p Page) links() []link {
	prose := p.prose()
	var out []link
	for _, m := range linkRE.FindAllStringSubmatchIndex(prose, -1) {
		out = append(out, link{line: lineAt(prose, m[0]), target: prose[m[2]:m[3]]})
	}
	return out
}

// Links checks every relative link of pages: its file or directory
// exists under root, and its #anchor, if any, is a heading of the page it
// names.
func Links(root string, pages []Page) []Problem {
	byPath := map[string]Page{}
	for _, p := range pages {
		byPath[p.Path] = p
	}
	var out []Problem
	for _, p := range pages {
		for _, l := range p.links() {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(l.target, "#")
			target := p.Path
			if file != "" {
				target = path.Clean(path.Join(path.Dir(p.Path), file))
				if strings.HasPrefix(target, "../") || strings.HasPrefix(file, "/") {
					out = append(out, Problem{p.Path, l.line, fmt.Sprintf("link %q leaves the repository: link to a path inside it, relative to %s", l.target, relativeTo(p.Path))})
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					out = append(out, Problem{p.Path, l.line, fmt.Sprintf("link %q: %s does not exist: fix the link (it is relative to %s) or restore the file", l.target, target, relativeTo(p.Path))})
					continue
				}
			}
			if anchor == "" {
				continue
			}
			tp, ok := byPath[target]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
				if err != nil || !strings.HasSuffix(target, ".md") {
					out = append(out, Problem{p.Path, l.line, fmt.Sprintf("link %q: #%s is an anchor into %s, which is not a Markdown page: drop the anchor", l.target, anchor, target)})
					continue
				}
				tp = Page{Path: target, Text: string(b)}
			}
			hs := tp.headings()
			found := false
			for _, h := range hs {
				found = found || h.anchor == anchor
			}
			if !found {
				out = append(out, Problem{p.Path, l.line, fmt.Sprintf("link %q: %s has no heading whose anchor is #%s: link to one of its anchors (%s) or fix the heading", l.target, target, anchor, anchorList(hs, anchor))})
			}
		}
	}
	return out
}

// relativeTo names the directory page's links are relative to.
func relativeTo(page string) string {
	if d := path.Dir(page); d != "." {
		return d + "/"
	}
	return "the module root"
}

// anchorList names the anchors of hs, the ones nearest to want first.
func anchorList(hs []heading, want string) string {
	var as []string
	for _, h := range hs {
		as = append(as, "#"+h.anchor)
	}
	prefix := func(a string) int {
		a = strings.TrimPrefix(a, "#")
		n := 0
		for n < len(a) && n < len(want) && a[n] == want[n] {
			n++
		}
		return n
	}
	sort.SliceStable(as, func(i, j int) bool { return prefix(as[i]) > prefix(as[j]) })
	if len(as) > 8 {
		as = append(as[:8], "…")
	}
	if len(as) == 0 {
		return "it has no headings"
	}
	return strings.Join(as, ", ")
}

// A row is one row of a Markdown table: its cells, trimmed, and its line.
type row struct {
	line  int
	cells []string
}

// tables returns the page's tables outside code, each as its header row
// and body rows (the delimiter row dropped).
func (p Page) tables() [][]row {
	lines := strings.Split(p.Text, "\n")
	proseLines := strings.Split(p.prose(), "\n")
	var out [][]row
	var cur []row
	flush := func() {
		if len(cur) >= 2 {
			out = append(out, append(cur[:1:1], cur[2:]...))
		}
		cur = nil
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		// A table line in a fenced block is blank in prose.
		if !strings.HasPrefix(t, "|") || strings.TrimSpace(proseLines[i]) == "" {
			flush()
			continue
		}
		cur = append(cur, row{line: i + 1, cells: splitRow(t)})
	}
	flush()
	return out
}

// splitRow splits a table line at its unescaped pipes outside code spans.
func splitRow(l string) []string {
	l = strings.TrimPrefix(strings.TrimSuffix(l, "|"), "|")
	var cells []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '\\' && i+1 < len(l) && l[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case c == '`':
			code = !code
			cur.WriteByte(c)
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// column is the index of the header cell named name, or -1.
func column(header row, name string) int {
	for i, c := range header.cells {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// codeSpans are the contents of the code spans in s, in order.
func codeSpans(s string) []string {
	var out []string
	for _, m := range codeRE.FindAllString(s, -1) {
		out = append(out, strings.ReplaceAll(strings.Trim(m, "`"), `\|`, "|"))
	}
	return out
}
