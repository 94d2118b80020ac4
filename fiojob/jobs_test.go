package fiojob

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/fiojob/internal/nonfinite"
)

// A list of jobs that names none of them (elements of a few bytes, no
// "jobname" for tooManyJobs to count) is refused past maxJobs before it
// is decoded, in jobs and in client_stats, and a list at maxJobs is read.
func TestParseRefusesMoreJobsThanFioRunsWithoutTheirNames(t *testing.T) {
	list := func(elem string, n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + "]"
	}
	for _, elem := range []string{`{}`, `null`, `{"JOBNAME":"j"}`, `{"jobnam\u0065":"j"}`, `{"x":"\"jobname\""}`} {
		for _, key := range []string{"jobs", "client_stats", "JOBS"} {
			at := `{"fio version":"fio-3.33","` + key + `":` + list(elem, maxJobs) + `}`
			out, err := Parse([]byte(at))
			if err != nil || len(out.Jobs) != maxJobs {
				n := -1
				if out != nil {
					n = len(out.Jobs)
				}
				t.Errorf("%s of %d %s: %d jobs, %v; want them all", key, maxJobs, elem, n, err)
			}
			past := `{"fio version":"fio-3.33","` + key + `":` + list(elem, maxJobs+1) + `}`
			if _, err := Parse([]byte(past)); err == nil || !strings.Contains(err.Error(), "more than the 4096 fio runs at most") {
				t.Errorf("%s of %d %s: %v, want the jobs refused", key, maxJobs+1, elem, err)
			}
		}
	}
}

// 200,000 jobs of 3 bytes each (600 KB) took 800 MB to decode before the
// list was bounded; refused, they take a few MB, and so do two lists of
// maxJobs under the same name. A list given again and again, emptied
// between (null or []), each of maxJobs or of one more (which the fast
// way refuses and encoding/json's way reads again), was decoded afresh
// each time: 30 of them (370 KB) allocated 172 MB, 300 of them 1.7 GB.
// Every list of jobs of one report counts against the same maxJobs: they
// are refused.
func TestParseOfManyTinyJobsIsBoundedInMemory(t *testing.T) {
	list := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + "]" }
	again := func(key, empty string, n int) string {
		return `{"fio version":"fio-3.33",` + strings.TrimSuffix(strings.Repeat(`"`+key+`":`+list(n)+`,"`+key+`":`+empty+`,`, 30), ",") + `}`
	}
	for name, doc := range map[string]string{
		"200,000 {}":                       `{"jobs":` + list(200_000) + `}`,
		"200,000 null":                     `{"client_stats":[` + strings.TrimSuffix(strings.Repeat(`null,`, 200_000), ",") + `]}`,
		"jobs given twice":                 `{"jobs":` + list(maxJobs) + `,"jobs":` + list(maxJobs) + `}`,
		"jobs emptied by null, 30 times":   again("jobs", "null", maxJobs),
		"jobs emptied by [], 30 times":     again("jobs", "[]", maxJobs),
		"client_stats emptied, 30 times":   again("client_stats", "null", maxJobs),
		"jobs past the bound, 30 times":    again("jobs", "null", maxJobs+1),
		"jobs and client_stats, 30 times":  `{` + strings.Repeat(`"jobs":`+list(maxJobs/2)+`,"client_stats":`+list(maxJobs/2)+`,"jobs":null,"client_stats":null,`, 30) + `"x":0}`,
		"Jobs folded, emptied, 30 times":   again("Jobſ", "null", maxJobs),
		"jobs escaped, emptied, 30 times":  again(`\u006aobs`, "null", maxJobs),
		"NaN, then jobs emptied, 30 times": `{"y":nan,` + strings.TrimPrefix(again("jobs", "null", maxJobs), "{"),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Parse([]byte(doc))
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%s (%d bytes): Parse allocated %d MB (err %v), want at most 32", name, len(doc), alloc>>20, err)
		}
		if strings.HasPrefix(name, "200,000") {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "more than the 4096 fio runs at most") {
			t.Errorf("%s: %v, want the jobs refused", name, err)
		}
	}
}

// A second "bins" member of one direction replaces the first: appended,
// members of maxBins each would have held any number of bins.
func TestDuplicateBinsReplaceTheFirst(t *testing.T) {
	many := `{"jobs":[{"jobname":"j","read":{"clat_ns":{"bins":{"1000":1}` + strings.Repeat(`,"bins":{"1000":1}`, maxBins) + `}}}]}`
	out, err := Parse([]byte(many))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Jobs[0].Read.Bins; len(got) != 1 || got[1000] != 1 {
		t.Errorf("bins = %v, want the last member's {1000: 1}", got)
	}
	var v fioOutput
	if err := decodeFast([]byte(many), &v); err != nil {
		t.Fatal(err)
	}
	if n := len(v.Jobs[0].Read.Clat.Bins.ns); n != 1 {
		t.Errorf("%d bins held, want 1", n)
	}
}

// Many objects that fio's layout does not delimit (a '}' not at a line's
// start) are split in one pass: the line rule read the rest of the output
// for each, so that 32,000 of them (160 KB) took 3.6 s, and the 2 MB here
// would have taken hours, past any test's timeout.
func TestSplitOfManyObjectsNotLaidOutByFio(t *testing.T) {
	one, err := Parse([]byte("{\n }\n"))
	if err != nil {
		t.Fatal(err)
	}
	many, err := Parse([]byte(strings.Repeat("{\n }\n", 400_000)))
	if err != nil || len(many.Jobs) != len(one.Jobs) {
		t.Errorf("Parse of 400,000 objects: %v, %v; want what one gave: %v", many, err, one)
	}
}

// Lines outside fio's JSON are kept as notes, one string each: 250,000
// lines of two bytes (500 KB) took 43 times their size to split, as append
// grew the list a quarter at a time, and 86 times without a report or
// with one the line rule cut short, split twice. The notes before the
// first object are made room for at once, those after it by doubling,
// and an output without an object is split once; every note is kept.
func TestParseOfManyNotesIsBoundedInMemory(t *testing.T) {
	const lines = 250_000
	notes := strings.Repeat("x\n", lines)
	for _, tt := range []struct {
		name, doc string
		times     uint64
	}{
		{"then a report", notes + `{"fio version":"fio-3.33","jobs":[]}` + "\n", 16},
		{"and no report", notes, 12},
		{"blank lines, then a report", strings.Repeat("\n", 2*lines) + `{"fio version":"fio-3.33","jobs":[]}` + "\n", 3},
		{"blank lines, then a report the fast way cannot read", strings.Repeat(" \r\n", lines) + "{\n\"x\":1e\n}\n", 3},
		{"then a report, and notes again", notes + `{"fio version":"fio-3.33","jobs":[]}` + "\n" + notes, 24},
		// The line rule ends the report at the "}" of its member x (its
		// count of brackets sees the one in a string), the fast way fails
		// on that, and the output is split again the exact way.
		{"then a report the line rule cuts short", notes + "{\n\"z\":\"]\",\"jobs\":[],\n\"x\":{\n},\"y\":1\n}\n", 48},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, err := Parse([]byte(tt.doc))
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tt.times*uint64(len(tt.doc)) {
			t.Errorf("%s (%d bytes): Parse allocated %d MB, %d times the output, want at most %d", tt.name, len(tt.doc), alloc>>20, alloc/uint64(len(tt.doc)), tt.times)
		}
		if strings.HasSuffix(tt.name, "and no report") || strings.HasSuffix(tt.name, "cannot read") {
			if err == nil {
				t.Errorf("%s: no error, want the output refused", tt.name)
			}
			continue
		}
		if want := strings.Count(tt.doc, "x\n"); err != nil || len(out.Notes) != want {
			t.Errorf("%s: %v; want %d notes", tt.name, err, want)
		}
	}
}

// jobs and client_stats share fio's 4,096 jobs, in the fast way's
// decoding (one budget) and in the count before encoding/json's, which
// names the line of the first job past them; a report that is not valid
// JSON gets encoding/json's syntax error, which it gives before decoding
// any list.
func TestJobsAndClientStatsShareTheBound(t *testing.T) {
	list := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("{},\n", n), ",\n") + "]" }
	both := `{"fio version":"fio-3.33","jobs":` + list(2049) + `,"client_stats":` + list(2048) + "}"
	var v fioOutput
	if err := decodeFast(nonfinite.Zero([]byte(both)), &v); !errors.Is(err, errJobs) {
		t.Errorf("decodeFast of jobs of 2,049 and client_stats of 2,048: %v, want errJobs", err)
	}
	_, err := Parse([]byte(both))
	if want := "more than the 4096 fio runs at most: job 4097 is at line 4096"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse of jobs of 2,049 and client_stats of 2,048: %v, want %q", err, want)
	}
	at := `{"fio version":"fio-3.33","jobs":` + list(2048) + `,"client_stats":` + list(2048) + "}"
	if out, err := Parse([]byte(at)); err != nil || len(out.Jobs) != 2048 {
		t.Errorf("Parse of jobs of 2,048 and client_stats of 2,048: %v, want the 2,048 jobs", err)
	}
	_, err = Parse([]byte(`{"jobs":` + list(maxJobs+1) + `,"x":tru}`))
	if err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Errorf("Parse of a report past the bound and not valid JSON: %v, want its syntax error", err)
	}
}
