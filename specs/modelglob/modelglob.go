// Package modelglob matches a drive's model number against a spec's
// model pattern.
package modelglob

import (
	"path"
	"strings"
)

// slash stands for "/" on both sides: path.Match's * and ? stop at "/";
// U+FFFF is a noncharacter that no model number (ASCII) holds.
const slash = '\uffff'

// Match reports whether model matches the glob pattern: path.Match's
// syntax (* any characters, ? one, [abc] and [^a-z] a set, \ quotes the
// next character), except that * and ? match "/" too: a model number is
// not a path, and some vendors' have a "/" in them. A set's range keeps
// its meaning whether or not "/" is in it or ends it ([+-/], [/-9]). The
// only error is path.ErrBadPattern, for a malformed pattern.
func Match(pattern, model string) (bool, error) {
	return path.Match(translate(pattern), strings.ReplaceAll(model, "/", string(slash)))
}

// translate is pattern with each "/" it matches written as slash: a
// literal "/" (quoted or not) is slash, and a set's range that holds "/"
// is the same range without it, and slash. A pattern it cannot read (an
// unclosed set) has its "/" replaced alone, for path.Match to refuse.
func translate(pattern string) string {
	p := []rune(pattern)
	var b strings.Builder
	char := func(r rune) {
		if r == '/' {
			r = slash
		}
		b.WriteString(`\` + string(r))
	}
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			char(p[i])
		case p[i] == '[':
			end, set, ok := class(p, i+1)
			if !ok {
				return strings.ReplaceAll(pattern, "/", string(slash))
			}
			b.WriteString(set)
			i = end
		default:
			if p[i] == '/' {
				b.WriteRune(slash)
			} else {
				b.WriteRune(p[i])
			}
		}
	}
	return b.String()
}

// class translates the set that starts at p[i] (after its "["): it
// returns the index of its "]", the set written out and whether it is
// one path.Match reads.
func class(p []rune, i int) (end int, set string, ok bool) {
	var b strings.Builder
	b.WriteByte('[')
	if i < len(p) && p[i] == '^' {
		b.WriteByte('^')
		i++
	}
	esc := func(r rune) string { return `\` + string(r) }
	one := func() (rune, bool) {
		if i >= len(p) || p[i] == '-' || p[i] == ']' {
			return 0, false
		}
		if p[i] == '\\' {
			i++
			if i >= len(p) {
				return 0, false
			}
		}
		r := p[i]
		i++
		return r, true
	}
	for n := 0; ; n++ {
		if i < len(p) && p[i] == ']' && n > 0 {
			b.WriteByte(']')
			return i, b.String(), true
		}
		lo, ok := one()
		if !ok {
			return 0, "", false
		}
		hi := lo
		if i < len(p) && p[i] == '-' {
			i++
			if hi, ok = one(); !ok {
				return 0, "", false
			}
		}
		if lo > '/' || hi < '/' {
			b.WriteString(esc(lo) + "-" + esc(hi))
			continue
		}
		// The range holds "/": the rest of it, and slash.
		if lo < '/' {
			b.WriteString(esc(lo) + "-" + esc('/'-1))
		}
		if hi > '/' {
			b.WriteString(esc('/'+1) + "-" + esc(hi))
		}
		b.WriteString(esc(slash))
	}
}
