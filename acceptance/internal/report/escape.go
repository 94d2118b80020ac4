package report

import (
	"strconv"
	"strings"
	"unicode"
)

// Escape is s with each control character (a newline, a carriage return,
// an escape, U+0085) written as Go escapes it (\n, \r, \x1b, \u0085): a
// name read from a recording (a drive's model, a host's name) printed in
// the test log, a testcase attribute or junit.xml is always one line of
// its own text, never a line of the reader's workflow commands. Format
// characters (a bidi override U+202E, which shows the text after it
// backwards; a zero-width space) and the line and paragraph separators
// are escaped too: what the reader sees is what the recording says.
func Escape(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hidden reports whether r is a character Escape writes as its escape.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.In(r, unicode.Zl, unicode.Zp)
}
