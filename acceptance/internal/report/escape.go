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
// its own text, never a line of the reader's workflow commands.
func Escape(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
