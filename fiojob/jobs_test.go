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
// maxJobs under the same name, the second decoded into the first.
func TestParseOfManyTinyJobsIsBoundedInMemory(t *testing.T) {
	for name, doc := range map[string]string{
		"200,000 {}":       `{"jobs":[` + strings.TrimSuffix(strings.Repeat(`{},`, 200_000), ",") + `]}`,
		"200,000 null":     `{"client_stats":[` + strings.TrimSuffix(strings.Repeat(`null,`, 200_000), ",") + `]}`,
		"jobs given twice": `{"jobs":[` + strings.TrimSuffix(strings.Repeat(`{},`, maxJobs), ",") + `],"jobs":[` + strings.TrimSuffix(strings.Repeat(`{},`, maxJobs), ",") + `]}`,
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Parse([]byte(doc))
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%s (%d bytes): Parse allocated %d MB (err %v), want at most 32", name, len(doc), alloc>>20, err)
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
