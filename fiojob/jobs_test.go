package fiojob

import (
	"runtime"
	"strings"
	"testing"
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
// each time: 300 of them (3.7 MB) allocated 1.7 GB. Every list of jobs of
// one report counts against the same maxJobs: they are refused.
func TestParseOfManyTinyJobsIsBoundedInMemory(t *testing.T) {
	list := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(`{},`, n), ",") + "]" }
	again := func(key, empty string, n int) string {
		return `{"fio version":"fio-3.33",` + strings.TrimSuffix(strings.Repeat(`"`+key+`":`+list(n)+`,"`+key+`":`+empty+`,`, 300), ",") + `}`
	}
	for name, doc := range map[string]string{
		"200,000 {}":                        `{"jobs":` + list(200_000) + `}`,
		"200,000 null":                      `{"client_stats":[` + strings.TrimSuffix(strings.Repeat(`null,`, 200_000), ",") + `]}`,
		"jobs given twice":                  `{"jobs":` + list(maxJobs) + `,"jobs":` + list(maxJobs) + `}`,
		"jobs emptied by null, 300 times":   again("jobs", "null", maxJobs),
		"jobs emptied by [], 300 times":     again("jobs", "[]", maxJobs),
		"client_stats emptied, 300 times":   again("client_stats", "null", maxJobs),
		"jobs past the bound, 300 times":    again("jobs", "null", maxJobs+1),
		"jobs and client_stats, 300 times":  `{` + strings.Repeat(`"jobs":`+list(maxJobs/2)+`,"client_stats":`+list(maxJobs/2)+`,"jobs":null,"client_stats":null,`, 300) + `"x":0}`,
		"Jobs folded, emptied, 300 times":   again("Jobſ", "null", maxJobs),
		"jobs escaped, emptied, 300 times":  again(`\u006aobs`, "null", maxJobs),
		"NaN, then jobs emptied, 300 times": `{"y":nan,` + strings.TrimPrefix(again("jobs", "null", maxJobs), "{"),
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
