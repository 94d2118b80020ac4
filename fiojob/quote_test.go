package fiojob

import (
	"strconv"
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

// A clat_ns bins object of more bins than fio has is not fio's output:
// refused, not allocated.
func TestParseRefusesMoreBinsThanFioHas(t *testing.T) {
	bins := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + strconv.Itoa(1000+i) + `":1`)
		}
		return `{"fio version":"fio-3.33","jobs":[{"jobname":"j","read":{"clat_ns":{"bins":{` + b.String() + `}}}}]}`
	}
	if _, err := Parse([]byte(bins(maxBins))); err != nil {
		t.Errorf("Parse(%d bins) = %v, want no error", maxBins, err)
	}
	_, err := Parse([]byte(bins(maxBins + 1)))
	if err == nil || !strings.Contains(err.Error(), "more than the 1856 latency bins fio has") {
		t.Errorf("Parse(%d bins) = %v, want the bins refused", maxBins+1, err)
	}
}

// A report of more jobs than fio runs is refused before it is decoded.
func TestParseRefusesMoreJobsThanFioRuns(t *testing.T) {
	jobs := func(n int) []byte {
		return []byte(`{"fio version":"fio-3.33","jobs":[` + strings.TrimSuffix(strings.Repeat(`{"jobname":"j"},`, n), ",") + `]}`)
	}
	if out, err := Parse(jobs(maxJobs)); err != nil || len(out.Jobs) != maxJobs {
		t.Errorf("Parse(%d jobs) = %v, want them all", maxJobs, err)
	}
	_, err := Parse(jobs(maxJobs + 1))
	if err == nil || !strings.Contains(err.Error(), "4097 jobs, more than the 4096 fio runs at most") {
		t.Errorf("Parse(%d jobs) = %v, want the jobs refused", maxJobs+1, err)
	}
}
