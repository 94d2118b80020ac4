package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/acceptance/internal/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// The brief's 1.92TB and 3.84TB single-drive figures: spec and actual.
type briefRow struct {
	workload string
	metric   string
	spec     float64
	actual   float64
}

var workloads = []string{
	"4KB Random Read",
	"4KB Random Write",
	"8KB Random Read",
	"8KB Random Write",
	"128KB Sequential Read",
	"128KB Sequential Write",
	"4KB Random Mixed Read Write 70/30",
	"8KB Random Mixed Read Write 70/30",
}

var brief192 = []briefRow{
	{"4KB Random Read", "iops", 2350000, 2409894},
	{"4KB Random Write", "iops", 150000, 157885},
	// The brief prints 126011, a dropped digit; kept to have a failing row.
	{"8KB Random Read", "iops", 1200000, 126011},
	{"8KB Random Write", "iops", 75000, 76938},
	{"128KB Sequential Read", "MBps", 14500, 14506},
	{"128KB Sequential Write", "MBps", 4100, 4275},
	{"4KB Random Mixed Read Write 70/30", "iops", 335000, 372825},
	{"8KB Random Mixed Read Write 70/30", "iops", 175000, 182692},
}

var brief384 = []briefRow{
	{"4KB Random Read", "iops", 3100000, 3254340},
	{"4KB Random Write", "iops", 315000, 317250},
	{"8KB Random Read", "iops", 1550000, 1667217},
	{"8KB Random Write", "iops", 157000, 179899},
	{"128KB Sequential Read", "MBps", 14500, 14514},
	{"128KB Sequential Write", "MBps", 8200, 8234},
	{"4KB Random Mixed Read Write 70/30", "iops", 729000, 820722},
	{"8KB Random Mixed Read Write 70/30", "iops", 364000, 468291},
}

func subtest(w string) string { return strings.NewReplacer(" ", "_", "/", "-").Replace(w) }

func single(capacity string, row briefRow) Result {
	test := "TestSingleDrive/" + capacity + "/" + subtest(row.workload)
	v := Pass
	if row.actual < row.spec {
		v = Fail
	}
	return Result{
		Test: test, Kind: KindSingle, Capacity: capacity, Workload: row.workload,
		Drives: 1, Metric: row.metric, Spec: row.spec, Expected: row.spec,
		Actual: row.actual, Ratio: row.actual / row.spec, Verdict: v,
		Raw: "report/raw/" + test + ".json",
	}
}

// scaling builds an n-drive result on 1.92TB drives whose per-drive actuals
// lie within ±2 % of perDrive (drive 0 exactly on it), except that the drives in odd get the
// actual given there (0 with an error string for a drive that failed).
// The total is the sum of the per-drive actuals.
func scaling(row briefRow, n int, perDrive float64, odd map[int]DriveResult) Result {
	res := Result{
		Test:     fmt.Sprintf("TestScaling/%d_drives/%s", n, subtest(row.workload)),
		Kind:     KindScaling,
		Capacity: "1.92TB", Workload: row.workload, Drives: n, Metric: row.metric,
		Spec: row.spec, Expected: float64(n) * row.spec, Tolerance: 0.10,
	}
	for i := range n {
		d := DriveResult{
			Path:   fmt.Sprintf("/dev/nvme%dn1", i),
			Serial: fmt.Sprintf("PHAX4%03d019T", i),
			Actual: perDrive * (1 + 0.004*float64((i*7+5)%11-5)),
		}
		if o, ok := odd[i]; ok {
			d.Actual, d.Error = o.Actual, o.Error
		}
		d.Actual = float64(int64(d.Actual)) // fio reports whole IOPS
		d.Ratio = d.Actual / row.spec
		switch {
		case d.Error != "":
			d.Verdict = Inconclusive
		case d.Ratio >= 1-res.Tolerance:
			d.Verdict = Pass
		default:
			d.Verdict = Fail
		}
		res.Actual += d.Actual
		res.PerDrive = append(res.PerDrive, d)
	}
	res.Ratio = res.Actual / res.Expected
	judged(&res)
	res.Verdict = Pass
	if res.Ratio < 1-res.Tolerance {
		res.Verdict = Fail
	}
	return res
}

// fixedRun is a replay of the brief on 24 × 1.92TB drives and one 3.84TB
// drive: single-drive rows for both capacities (one fail, one inconclusive
// on 1.92TB; all pass on 3.84TB), and scaling at 1 and 24 drives with one
// slow drive and, in another workload, one drive that failed.
func fixedRun() *Run {
	r := &Run{
		Spec:         "Solidigm D7-PS1010",
		Source:       "Solidigm D7-PS1010 performance brief, 2024, Tables 2-5",
		Mode:         "replay",
		FioVersion:   "fio-3.33",
		Precondition: "full",
		Started:      "2024-05-01T09:00:00Z",
		Finished:     "2024-05-01T21:14:07Z",
		Workloads:    workloads,
		Capacities:   []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB"},
		Scaling: &Scaling{
			Capacity: "1.92TB", Baseline: "spec", Tolerance: 0.10, Drives: []int{1, 24},
		},
	}
	for i := range 24 {
		r.Drives = append(r.Drives, Drive{
			Path: fmt.Sprintf("/dev/nvme%dn1", i), Model: "SOLIDIGM SB5PH27X019T",
			Serial: fmt.Sprintf("PHAX4%03d019T", i), Firmware: "G70YG030",
			Bytes: 1_920_383_410_176, Capacity: "1.92TB",
			NUMANode: i / 12, CPUs: fmt.Sprintf("%d-%d", 4*i, 4*i+3),
		})
	}
	r.Drives = append(r.Drives, Drive{
		Path: "/dev/nvme24n1", Model: "SOLIDIGM SB5PH27X038T", Serial: "PHAX4024038T",
		Firmware: "G70YG030", Bytes: 3_840_755_982_336, Capacity: "3.84TB", NUMANode: -1,
	})

	for _, row := range brief192 {
		res := single("1.92TB", row)
		switch row.workload {
		case "8KB Random Read":
			res.Error = "126,011 IOPS is below the spec of 1,200,000 IOPS (tolerance 0 %)"
			res.P99Us, res.P999Us = 3784, 5211
		case "128KB Sequential Write":
			res.Actual, res.Ratio, res.Verdict, res.Raw = 0, 0, Inconclusive, ""
			res.Error = "fio exited with status 1: fio: pid=4242, err=5/file:io_u.c:1896, func=io_u error, error=Input/output error"
		default:
			res.P99Us, res.P999Us = 1020, 1795
		}
		r.Results = append(r.Results, res)
	}
	// Out of the spec's order, as results arrive when subtests are filtered.
	for i := len(brief384) - 1; i >= 0; i-- {
		r.Results = append(r.Results, single("3.84TB", brief384[i]))
	}

	rr, rw, sr := brief192[0], brief192[1], brief192[4]
	r.Results = append(r.Results,
		scaling(rr, 1, 2409894, nil),
		scaling(rr, 24, 2408500, map[int]DriveResult{7: {Actual: 2005317}}),
		scaling(sr, 1, 14506, nil),
		scaling(sr, 24, 14417, nil),
		scaling(rw, 1, 157885, nil),
	)
	bad := scaling(rw, 24, 150400, map[int]DriveResult{12: {
		Error: "fio: io_u error on file /dev/nvme12n1: Input/output error: write offset=1048576, buflen=4096",
	}})
	bad.Verdict = Inconclusive
	bad.Error = "1 of 24 drives failed: /dev/nvme12n1"
	r.Results = append(r.Results, bad)
	return r
}

// golden compares got with testdata/golden/name, or rewrites that file
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := WriteFileAtomic(path, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

func TestJSONGolden(t *testing.T) {
	got, err := fixedRun().JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "results.json", got)
}

func TestSummaryGolden(t *testing.T) {
	golden(t, "summary.md", fixedRun().Summary())
}

// results.json is the Run: reading it back gives the same value.
func TestJSONRoundTrip(t *testing.T) {
	want := fixedRun()
	js, err := want.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(js), "}\n") {
		t.Errorf("JSON() does not end in a newline: ...%q", js[len(js)-10:])
	}
	var got Run
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("Run after a JSON round trip differs (-want +got):\n%s", diff)
	}
}

func TestJSONEmpty(t *testing.T) {
	js, err := (&Run{Spec: "x", Mode: "live"}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"drives": []`, `"results": []`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("JSON() of an empty run lacks %s:\n%s", want, js)
		}
	}
}

// A figure JSON cannot carry (a latency mean a recording overflowed to
// +Inf) fails its result and the report is still written whole: before,
// JSON failed and no results.json, summary.md or junit.xml was written.
func TestJSONNotFinite(t *testing.T) {
	r := fixedRun()
	r.Results[3].Ratio = r.Results[3].Actual / 0
	r.Results[3].PerDrive = append(r.Results[3].PerDrive, DriveResult{Path: "/dev/nvme9n1", Actual: math.NaN()})
	other := r.Results[2]
	js, err := r.JSON()
	if err != nil {
		t.Fatalf("JSON() with an infinite ratio = %v, want the report", err)
	}
	var back Run
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	got := back.Results[3]
	if got.Verdict != Fail || got.Cause != CauseBadRecording || got.Ratio != 0 {
		t.Errorf("result %s: verdict %s, cause %q, ratio %v; want fail, %q, 0", got.Test, got.Verdict, got.Cause, got.Ratio, CauseBadRecording)
	}
	for _, want := range []string{"ratio +Inf", "per_drive[", "].actual NaN"} {
		if !strings.Contains(got.Error, want) {
			t.Errorf("result %s: error %q does not name %q", got.Test, got.Error, want)
		}
	}
	if !reflect.DeepEqual(back.Results[2], other) {
		t.Errorf("result %s changed: %+v, want %+v", other.Test, back.Results[2], other)
	}
	if sum := string(r.Summary()); !strings.Contains(sum, "ratio +Inf") {
		t.Errorf("summary.md does not say the figure is not a number:\n%s", sum)
	}
}

// judged fills in what the judge computes for a scaling result (qual's
// JudgeScaling, tested there): the statistics of the drives without an
// error, and which of them are outliers.
func judged(res *Result) {
	var vals []float64
	for _, d := range res.PerDrive {
		if d.Error == "" {
			vals = append(vals, d.Actual)
		}
	}
	st := stats.Of(vals)
	res.Spread, res.Min, res.Median, res.Max = st.Spread(), st.Min, st.Median, st.Max
	for i, d := range res.PerDrive {
		res.PerDrive[i].Outlier = d.Error == "" && d.Actual < st.Median*(1-res.Tolerance)
	}
}
