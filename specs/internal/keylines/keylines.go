// Package keylines finds the line each key of a TOML document is defined
// on, which the toml package does not say.
package keylines

import (
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// The toml package reports where a syntax error is but not where each key
// is defined: MetaData keeps key positions unexported (BurntSushi/toml
// #462), and keyed by dotted key, so each [[workload]] element's keys
// overwrite the previous element's. So Lines finds the keys again in
// the text. md.Keys lists
// them in document order; each is looked for after the previous one, as a
// key token (bare or quoted, outside comments and values) followed by "=",
// "." or "]". Keys under a top-level array of tables ([[workload]]) get the
// element's index as an extra path piece, "#0", "#1", ..., so that
// Path("workload", "#1", "iodepth") is the second workload's iodepth.

// Lines maps a key path (see path) to the 1-based line it is defined on.
type Lines map[string]int

// path joins key pieces into a Lines key.
func Path(pieces ...string) string { return strings.Join(pieces, "\x1f") }

// index is the path piece of the i-th element of an array of tables.
func Index(i int) string { return "#" + strconv.Itoa(i) }

// Located is one key of the document: where it is and, for a key under a
// top-level array of tables, which element it belongs to (-1 otherwise).
type Located struct {
	Key  toml.Key
	Elem int
	Line int
}

// path returns the Lines path of the first n pieces of l.Key.
func (l Located) Path(n int) string {
	pieces := []string(l.Key[:n])
	if l.Elem >= 0 && n > 0 {
		pieces = append([]string{pieces[0], Index(l.Elem)}, pieces[1:]...)
	}
	return Path(pieces...)
}

// Locate finds every key of md in data, in document order, and returns
// them with a map from key path to line.
func Locate(data []byte, md toml.MetaData) ([]Located, Lines) {
	s := keyScanner{src: string(data)}
	for i, c := range []byte(s.src) {
		if c == '\n' {
			s.newlines = append(s.newlines, i)
		}
	}
	var all []Located
	lines := Lines{}
	elem := map[string]int{}             // current element of each top-level array
	seen := map[string]map[string]bool{} // keys seen in that element
	for _, k := range md.Keys() {
		if len(k) == 0 {
			continue
		}
		l := Located{Key: k, Elem: -1}
		if isArrayOfTables(md, k[0]) {
			i, started := elem[k[0]]
			switch {
			case len(k) == 1 && md.Type(k...) == "ArrayHash":
				// A [[name]] header starts a new element.
				if started {
					i++
				}
				seen[k[0]] = map[string]bool{}
			case len(k) > 1:
				// An inline array of tables has one key for the whole
				// array; a repeated key starts the next element.
				if seen[k[0]] == nil {
					seen[k[0]] = map[string]bool{}
				}
				rest := Path(k[1:]...)
				if seen[k[0]][rest] {
					i++
					seen[k[0]] = map[string]bool{}
				}
				seen[k[0]][rest] = true
			}
			elem[k[0]] = i
			l.Elem = i
		}
		l.Line = s.find(k[len(k)-1])
		all = append(all, l)
		if len(k) == 1 && md.Type(k...) != "ArrayHash" {
			l.Elem = -1 // the whole inline array, not one element
		}
		if p := l.Path(len(k)); l.Line > 0 && lines[p] == 0 {
			lines[p] = l.Line
		}
		if len(k) == 1 && l.Line > 0 && lines[k[0]] == 0 {
			lines[k[0]] = l.Line // an array of tables is where it starts
		}
		if len(k) > 1 && l.Elem >= 0 && l.Line > 0 && lines[l.Path(1)] == 0 {
			lines[l.Path(1)] = l.Line // an inline table is where its first key is
		}
	}
	return all, lines
}

func isArrayOfTables(md toml.MetaData, name string) bool {
	t := md.Type(name)
	return t == "ArrayHash" || t == "Array"
}

// keyScanner finds key tokens in a TOML document, moving forward only.
type keyScanner struct {
	src      string
	pos      int   // where the next search starts
	newlines []int // byte offsets of '\n'
}

// find returns the line of the next key token spelling piece, or 0 if there
// is none; in that case the scanner does not move.
func (s *keyScanner) find(piece string) int {
	src := s.src
	for i := s.pos; i < len(src); {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			start := i
			text, end := scanString(src, i)
			if end-start >= 6 && (strings.HasPrefix(src[start:], `"""`) || strings.HasPrefix(src[start:], "'''")) {
				i = end // multi-line strings are never keys
				continue
			}
			if (text == piece || unquoteEq(src[start:end], piece)) && keyFollows(src, end) {
				s.pos = end
				return s.line(start)
			}
			i = end
		case isBare(c):
			start := i
			for i < len(src) && isBare(src[i]) {
				i++
			}
			if src[start:i] == piece && keyFollows(src, i) {
				s.pos = i
				return s.line(start)
			}
		default:
			i++
		}
	}
	return 0
}

// line returns the 1-based line of byte offset off.
func (s *keyScanner) line(off int) int {
	return sort.SearchInts(s.newlines, off) + 1
}

// scanString returns the raw text inside the string starting at src[i] and
// the offset just past it. An unterminated string ends at the line's end.
func scanString(src string, i int) (text string, end int) {
	q := src[i]
	triple := strings.Repeat(string(q), 3)
	if strings.HasPrefix(src[i:], triple) {
		j := i + 3
		for j < len(src) {
			if q == '"' && src[j] == '\\' {
				j += 2
				continue
			}
			if strings.HasPrefix(src[j:], triple) {
				j += 3
				// Up to two more quotes may close the string.
				for k := 0; k < 2 && j < len(src) && src[j] == q; k++ {
					j++
				}
				return "", min(j, len(src))
			}
			j++
		}
		return "", len(src)
	}
	j := i + 1
	for j < len(src) && src[j] != '\n' {
		if q == '"' && src[j] == '\\' {
			j += 2
			continue
		}
		if src[j] == q {
			return src[i+1 : j], j + 1
		}
		j++
	}
	j = min(j, len(src))
	return src[i+1 : j], j
}

// unquoteEq reports whether the basic string lit, with escapes, spells piece.
func unquoteEq(lit, piece string) bool {
	if !strings.HasPrefix(lit, `"`) || !strings.Contains(lit, `\`) {
		return false
	}
	u, err := strconv.Unquote(lit)
	return err == nil && u == piece
}

// keyFollows reports whether src[i:] continues a key: "=", "." or "]"
// after optional blanks.
func keyFollows(src string, i int) bool {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i < len(src) && (src[i] == '=' || src[i] == '.' || src[i] == ']')
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
