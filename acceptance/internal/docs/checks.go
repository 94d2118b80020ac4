package docs

import (
	"flag"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// FlagPage is the page whose flag table documents the suite's flags.
const FlagPage = "docs/running.md"

// SpecPage is the page whose key table documents the spec's keys.
const SpecPage = "docs/spec.md"

var flagCellRE = regexp.MustCompile(`^-([A-Za-z0-9][A-Za-z0-9_-]*)(?:[ =\[]|$)`)

// documentedFlags are the flags the tables of pages document: a row whose
// first cell's first code span is -NAME (alone or followed by its value,
// `-spec NAME|PATH`), by name, each with where it is.
func documentedFlags(pages []Page) map[string][]Problem {
	out := map[string][]Problem{}
	for _, p := range pages {
		for _, t := range p.tables() {
			for _, r := range t[1:] {
				spans := codeSpans(r.cells[0])
				if len(spans) == 0 {
					continue
				}
				if m := flagCellRE.FindStringSubmatch(spans[0]); m != nil {
					out[m[1]] = append(out[m[1]], Problem{File: p.Path, Line: r.line})
				}
			}
		}
	}
	return out
}

// Flags checks that every flag of fs, the suite's flag set, is documented
// in a table row on some page, and that every row of FlagPage's flag table
// (the one whose header is "flag") names a flag of fs.
func Flags(pages []Page, fs *flag.FlagSet, registeredIn string) []Problem {
	var out []Problem
	docs := documentedFlags(pages)
	tableLine := 0
	for _, p := range pages {
		for _, t := range p.tables() {
			if p.Path == FlagPage && column(t[0], "flag") == 0 && tableLine == 0 {
				tableLine = t[0].line
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if len(docs[f.Name]) == 0 {
			out = append(out, Problem{FlagPage, tableLine, fmt.Sprintf(
				"flag -%s (registered in %s: %q) is documented on no page: add a row | `-%s …` | meaning | to the flag table of %s",
				f.Name, registeredIn, f.Usage, f.Name, FlagPage)})
		}
	})
	for _, p := range pages {
		if p.Path != FlagPage {
			continue
		}
		for _, t := range p.tables() {
			if column(t[0], "flag") != 0 {
				continue
			}
			for _, r := range t[1:] {
				spans := codeSpans(r.cells[0])
				var m []string
				if len(spans) > 0 {
					m = flagCellRE.FindStringSubmatch(spans[0])
				}
				switch {
				case m == nil:
					out = append(out, Problem{p.Path, r.line, fmt.Sprintf("flag table row %q does not start with a flag: write its first cell as `-NAME VALUE`", r.cells[0])})
				case fs.Lookup(m[1]) == nil:
					out = append(out, Problem{p.Path, r.line, fmt.Sprintf("-%s is documented but the suite registers no such flag (%s): remove the row, or fix its name (the flags are %s)", m[1], registeredIn, flagNames(fs))})
				}
			}
		}
	}
	return out
}

func flagNames(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "-"+f.Name) })
	return strings.Join(names, ", ")
}

// A KeyRow is one key documented in SpecPage's key table: its dotted path
// as specs.Keys writes it, the row's line and its default cell.
type KeyRow struct {
	Key     string
	Table   string // the row's table header as written, `[[workload]]`; "" at the top level
	Line    int
	Default string
	// Index is the key's place among the Of keys its row documents, so
	// that a default cell "`"libaio"`, `true`" gives each its own.
	Index, Of int
}

// KeyRows reads the key table of page: the table whose header has the
// columns "key" and "default". A row's first cell is a table header in a
// code span, `[method]` or `[[workload]]` (a quoted name, `"NAME"`, is
// any name: "*"), followed by the key names in code spans; a row with no
// key names documents the names the table holds (`[capacity.spec]`:
// capacity.spec.*); a row with no table header documents top-level keys.
func KeyRows(page Page) ([]KeyRow, int, []Problem) {
	var rows []KeyRow
	var problems []Problem
	found := false
	headerLine := 0
	for _, t := range page.tables() {
		kc, dc := column(t[0], "key"), column(t[0], "default")
		if kc < 0 || dc < 0 {
			continue
		}
		found = true
		if headerLine == 0 {
			headerLine = t[0].line
		}
		for _, r := range t[1:] {
			if len(r.cells) <= dc || len(r.cells) <= kc {
				problems = append(problems, Problem{page.Path, r.line, fmt.Sprintf("key table row has %d cells, not the header's %d: give it key, meaning and default", len(r.cells), len(t[0].cells))})
				continue
			}
			spans := codeSpans(r.cells[kc])
			if len(spans) == 0 {
				problems = append(problems, Problem{page.Path, r.line, fmt.Sprintf("key table row %q names no key: write its table and keys in code spans, e.g. `[method]` `runtime`", r.cells[kc])})
				continue
			}
			var table []string
			header := ""
			if strings.HasPrefix(spans[0], "[") {
				header = spans[0]
				table = tablePath(header)
				spans = spans[1:]
			}
			if len(spans) == 0 {
				rows = append(rows, KeyRow{Key: strings.Join(append(table, "*"), "."), Table: header, Line: r.line, Default: r.cells[dc], Of: 1})
			}
			for i, k := range spans {
				rows = append(rows, KeyRow{Key: strings.Join(append(append([]string(nil), table...), k), "."), Table: header, Line: r.line, Default: r.cells[dc], Index: i, Of: len(spans)})
			}
		}
	}
	if !found {
		problems = append(problems, Problem{File: page.Path, Msg: "no key table: add a table with the columns | key | meaning | default | listing every key of a spec"})
	}
	return rows, headerLine, problems
}

// tablePath splits a TOML table header, [a.b."NAME"] or [[a]], into its
// keys, a quoted one standing for any name ("*").
func tablePath(h string) []string {
	h = strings.Trim(strings.TrimSpace(h), "[]")
	var out []string
	for _, part := range splitDotted(h) {
		if strings.HasPrefix(part, `"`) {
			part = "*"
		}
		out = append(out, part)
	}
	return out
}

// splitDotted splits a dotted TOML key at the dots outside quotes.
func splitDotted(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
		case r == '.' && !quoted:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// SpecKeys checks page's key table against accepted, every key the spec
// parser accepts (specs.Keys): each is documented once with a default,
// and no row documents a key the parser refuses.
func SpecKeys(page Page, accepted []string, acceptedBy string) []Problem {
	rows, headerLine, out := KeyRows(page)
	// Tables as the page writes their headers ([[workload]]), for the
	// rows a problem asks for.
	headers := map[string]string{}
	for _, r := range rows {
		if r.Table != "" {
			headers[strings.Join(tablePath(r.Table), ".")] = r.Table
		}
	}
	display := func(k string) string { return display(k, headers) }
	ok := map[string]bool{}
	for _, k := range accepted {
		ok[k] = true
	}
	byKey := map[string][]KeyRow{}
	for _, r := range rows {
		byKey[r.Key] = append(byKey[r.Key], r)
		switch d := strings.TrimSpace(r.Default); {
		case !ok[r.Key]:
			out = append(out, Problem{page.Path, r.Line, fmt.Sprintf("key %s is documented but the spec parser (%s) does not accept it: remove it from the row, or fix its name (%s)", display(r.Key), acceptedBy, siblings(r.Key, accepted))})
		case d == "" || strings.Trim(d, "-—– ") == "":
			out = append(out, Problem{page.Path, r.Line, fmt.Sprintf("key %s has no default: write in its default cell the value it takes when left out (or \"required\")", display(r.Key))})
		}
	}
	for _, k := range accepted {
		switch rs := byKey[k]; {
		case len(rs) == 0:
			out = append(out, Problem{page.Path, headerLine, fmt.Sprintf("key %s, which the spec parser (%s) accepts, is not in the key table: add a row | %s | meaning | default |", display(k), acceptedBy, display(k))})
		case len(rs) > 1:
			out = append(out, Problem{page.Path, rs[1].Line, fmt.Sprintf("key %s is documented again (first on line %d): keep one row for it", display(k), rs[0].Line)})
		}
	}
	return out
}

// display writes a dotted key as the key table does, `[table]` `key`,
// its table's header as headers has it when it does ([[workload]]).
func display(k string, headers map[string]string) string {
	parts := strings.Split(k, ".")
	if len(parts) == 1 {
		return "`" + k + "`"
	}
	path := strings.Join(parts[:len(parts)-1], ".")
	header, ok := headers[path]
	if !ok {
		table := parts[:len(parts)-1]
		for i, p := range table {
			if p == "*" {
				table[i] = `"NAME"`
			}
		}
		header = "[" + strings.Join(table, ".") + "]"
	}
	if last := parts[len(parts)-1]; last != "*" {
		return "`" + header + "` `" + last + "`"
	}
	return "`" + header + "`"
}

// siblings names the accepted keys in k's table, or says there are none.
func siblings(k string, accepted []string) string {
	prefix := ""
	if i := strings.LastIndex(k, "."); i >= 0 {
		prefix = k[:i+1]
	}
	var out []string
	for _, a := range accepted {
		if strings.HasPrefix(a, prefix) && !strings.Contains(a[len(prefix):], ".") {
			out = append(out, a[len(prefix):])
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("no key starting %q is accepted", prefix)
	}
	sort.Strings(out)
	return "accepted there: " + strings.Join(out, ", ")
}

// Openings checks that every docs/ page opens with its title and one
// sentence saying what it answers, and that README.md's table of contents
// links to every docs/ page.
func Openings(pages []Page) []Problem {
	var out []Problem
	var readme *Page
	for i, p := range pages {
		if p.Path == "README.md" {
			readme = &pages[i]
		}
	}
	linked := map[string]bool{}
	tocLine := 0 // the table of contents' header: the table whose first column is "page"
	if readme != nil {
		for _, l := range readme.links() {
			file, _, _ := strings.Cut(l.target, "#")
			linked[file] = true
		}
		for _, t := range readme.tables() {
			if column(t[0], "page") == 0 && tocLine == 0 {
				tocLine = t[0].line
			}
		}
	}
	for _, p := range pages {
		if !strings.HasPrefix(p.Path, "docs/") {
			continue
		}
		lines := strings.Split(p.Text, "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") || lines[1] != "" || !strings.HasPrefix(lines[2], "This page answers ") {
			out = append(out, Problem{p.Path, 1, "a page opens with its title (# Title), a blank line, and one sentence starting \"This page answers\" saying what it answers"})
		}
		if readme != nil && !linked[p.Path] {
			out = append(out, Problem{"README.md", tocLine, fmt.Sprintf("the table of contents does not link to %s: add a row | [%s](%s) | what it answers |", p.Path, p.Path, p.Path)})
		}
	}
	return out
}

// VerdictPage is the page whose table lists every cause.
const VerdictPage = "docs/verdicts.md"

// Causes checks VerdictPage's cause table (the one whose first header is
// "cause") against causes, every cause a result can name by its value,
// each with the constant that declares it: each is documented, and the
// table names no other.
func Causes(pages []Page, causes map[string]string) []Problem {
	var out []Problem
	documented := map[string]int{}
	tableLine := 0
	for _, p := range pages {
		if p.Path != VerdictPage {
			continue
		}
		for _, t := range p.tables() {
			if column(t[0], "cause") != 0 {
				continue
			}
			if tableLine == 0 {
				tableLine = t[0].line
			}
			for _, r := range t[1:] {
				for _, c := range codeSpans(r.cells[0]) {
					if _, ok := causes[c]; !ok {
						out = append(out, Problem{p.Path, r.line, fmt.Sprintf("cause %q is documented but no Cause constant has that value: remove it, or fix it to one of %s", c, causeList(causes))})
					}
					documented[c] = r.line
				}
			}
		}
	}
	if tableLine == 0 {
		return append(out, Problem{File: VerdictPage, Msg: "no cause table: add a table | cause | verdict | when | listing every cause"})
	}
	var values []string
	for v := range causes {
		values = append(values, v)
	}
	sort.Strings(values)
	for _, v := range values {
		if _, ok := documented[v]; !ok {
			out = append(out, Problem{VerdictPage, tableLine, fmt.Sprintf("cause %q (%s) is not in the cause table: add a row | `%s` | its verdict | when |", v, causes[v], v)})
		}
	}
	return out
}

func causeList(causes map[string]string) string {
	var vs []string
	for v := range causes {
		vs = append(vs, fmt.Sprintf("%q", v))
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}
