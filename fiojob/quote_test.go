package fiojob

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var quoteTests = []struct{ in, want string }{
	{"", `""`},
	{"fio: pid=1, err=5", `"fio: pid=1, err=5"`},
	{"a\nb", `"a\nb"`},
	{strings.Repeat("é", MaxQuote), `"` + strings.Repeat("é", MaxQuote) + `"`},
	{strings.Repeat("x", MaxQuote+7), `"` + strings.Repeat("x", MaxQuote) + `"… (7 more bytes)`},
	{strings.Repeat("é", MaxQuote+1), `"` + strings.Repeat("é", MaxQuote) + `"… (2 more bytes)`},
}

func TestQuote(t *testing.T) {
	for _, tt := range quoteTests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%.30q) = %.60q, want %.60q", tt.in, got, tt.want)
		}
	}
}

// What Parse quotes of an output that is no fio JSON is at most MaxQuote
// characters of it, however long its first line (a recorded "output"
// that is someone's environment, or a gigabyte on one line).
func TestParseQuotesAtMostMaxQuote(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("SECRET=1\x00", 1<<16),
		strings.Repeat("y", 1<<20) + "\n",
		`{"jobs":[{"jobname":"` + strings.Repeat("j", 1<<16) + `","read":{"clat_ns":{"bins":{"x":1}}}}]}`,
	} {
		_, err := Parse([]byte(in))
		if err == nil {
			t.Errorf("Parse(%.30q...) = nil error", in)
			continue
		}
		if n := utf8.RuneCountInString(err.Error()); n > MaxQuote+200 {
			t.Errorf("Parse(%.30q...) error is %d characters: %.300s", in, n, err)
		}
	}
}
