package fiojob

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxQuote is the most characters of what was read that an error quotes:
// what fio (or a recording standing in for it) printed may be anything,
// a gigabyte on one line or a judge's environment, and an error is
// copied into every report.
const MaxQuote = 200

// Quote is s quoted as Go would (%q), at most MaxQuote characters of it,
// then how many bytes were left out.
func Quote(s string) string {
	if utf8.RuneCountInString(s) <= MaxQuote {
		return strconv.Quote(s)
	}
	n, i := 0, 0
	for i = range s {
		if n == MaxQuote {
			break
		}
		n++
	}
	return fmt.Sprintf("%s… (%d more bytes)", strconv.Quote(s[:i]), len(s)-i)
}

// Clip is s cut to at most MaxQuote characters, then how many bytes were
// left out: a line of what fio printed, as an error gives it unquoted.
func Clip(s string) string {
	if utf8.RuneCountInString(s) <= MaxQuote {
		return s
	}
	n, i := 0, 0
	for i = range s {
		if n == MaxQuote {
			break
		}
		n++
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:i], len(s)-i)
}
