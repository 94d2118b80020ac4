package qual

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

type singleTest struct {
	actual, spec, tol float64
	precondition      string
	verdict           string
	message           string
}

var singleTests = []singleTest{
	{62_113, 2_350_000, 0, PrecondFull, report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
	{2_409_894, 2_350_000, 0, PrecondFull, report.Pass,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec)"},
	{2_200_000, 2_350_000, 0.1, PrecondFull, report.Pass,
		"4KB Random Read: actual 2,200,000 IOPS >= spec 2,350,000 IOPS (93.62 % of spec, tolerance 10 %)"},
	{2_409_894, 2_350_000, 0, PrecondQuick, report.Inconclusive,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec); measured with -precondition=quick; preconditioning only lowers a drive's figures, so this is not a pass"},
	{62_113, 2_350_000, 0, PrecondNone, report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
}

func TestJudgeSingle(t *testing.T) {
	for _, tt := range singleTests {
		j := JudgeSingle("4KB Random Read", specs.IOPS, tt.actual, tt.spec, tt.tol, tt.precondition)
		if j.Verdict != tt.verdict || j.Message != tt.message {
			t.Errorf("JudgeSingle(%v, %v, %v, %s) = %s %q, want %s %q", tt.actual, tt.spec, tt.tol, tt.precondition, j.Verdict, j.Message, tt.verdict, tt.message)
		}
	}
}

func shares(vals ...float64) []DriveShare {
	out := make([]DriveShare, len(vals))
	for i, v := range vals {
		out[i] = DriveShare{Path: "/dev/nvme" + string(rune('0'+i)) + "n1", Serial: "S" + string(rune('0'+i)), Actual: v}
	}
	return out
}

func TestJudgeScaling(t *testing.T) {
	// The brief's 8KB Random Read at 24 drives: 27.3 M against 28.8 M.
	per := make([]float64, 24)
	for i := range per {
		per[i] = 27_300_000 / 24.0
	}
	j := JudgeScaling("8KB Random Read", specs.IOPS, shares(per...), 24*1_200_000, 1_200_000, 0.10, PrecondFull)
	assert.Equal(t, report.Pass, j.Verdict)
	assert.InDelta(t, 0.948, j.Ratio, 0.0005)
	assert.Contains(t, j.Message, "below linear")
	assert.Zero(t, j.Spread)

	// One drive of four 20 % low: named, and below the single-drive spec.
	j = JudgeScaling("4KB Random Read", specs.IOPS, shares(2.4e6, 2.4e6, 1.92e6, 2.4e6), 4*2_350_000, 2_350_000, 0.10, PrecondFull)
	assert.Equal(t, report.Fail, j.Verdict)
	assert.Contains(t, j.Message, "drive /dev/nvme2n1 (serial S2) is 20.0 % below the median 2,400,000 IOPS")
	assert.NotContains(t, j.Message, "nvme1n1")
	assert.Equal(t, report.Fail, j.PerDrive[2].Verdict)
	assert.Equal(t, report.Pass, j.PerDrive[0].Verdict)
	assert.InDelta(t, 0.48/(9.12/4), j.Spread, 1e-9)

	// Total short although each drive passes.
	j = JudgeScaling("4KB Random Read", specs.IOPS, shares(1e6, 1e6), 2*1e6*1.2, 1e6, 0.10, PrecondFull)
	assert.Equal(t, report.Fail, j.Verdict)
	assert.True(t, strings.HasPrefix(j.Message, "4KB Random Read on 2 drives: total 2,000,000 IOPS < expected 2,400,000 IOPS (83.33 % of expected"), j.Message)
}

// A fio run that failed is judged in fio's own words, not as a slow drive:
// the recording of fio with bs=1000 on a 512-byte-sector device (errno 22).
func TestFioFailureQuotesFio(t *testing.T) {
	data, err := os.ReadFile("../../../fixtures/fio/error-bs1000.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := fiojob.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	got := fioFailure("4KB Random Read", &fiojob.ExitError{Code: 1}, out)
	for _, want := range []string{
		"4KB Random Read: fio failed: fio exited with status 1",
		`job "drive0": errno 22 (invalid argument)`,
		"fio printed: fio: pid=14781, err=22/file:io_u.c:1876, func=io_u error, error=Invalid argument",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("fioFailure() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "actual") {
		t.Errorf("fioFailure() = %q reads as a measured figure", got)
	}
}

// The judge computes the spread, median and outliers of a scaling step
// over the drives without an error (a drive whose jobs failed has no
// figure to compare); the report renders them as given.
func TestJudgeScalingStatistics(t *testing.T) {
	share := func(actuals ...float64) []DriveShare {
		var out []DriveShare
		for i, a := range actuals {
			out = append(out, DriveShare{Path: "/dev/d" + string(rune('a'+i)), Actual: a})
		}
		return out
	}
	tests := []struct {
		name     string
		shares   []DriveShare
		spread   float64
		median   float64
		outliers []string
	}{
		{"equal", share(100, 100, 100), 0, 100, nil},
		{"spread", share(90, 100, 110), 0.2, 100, nil},
		{"one slow", share(100, 100, 89), 11.0 / (289.0 / 3), 100, []string{"/dev/dc"}},
		{"just inside", share(100, 100, 91), 9.0 / (291.0 / 3), 100, nil},
		{"two slow", share(100, 80, 100, 100, 50), 50.0 / 86, 100, []string{"/dev/db", "/dev/de"}},
		{"a drive with an error is left out", append(share(90, 110), DriveShare{Path: "/dev/x", Err: "io error"}), 0.2, 100, nil},
	}
	for _, tt := range tests {
		sj := JudgeScaling("W", specs.IOPS, tt.shares, 0, 1, 0.1, PrecondFull)
		if math.Abs(sj.Spread-tt.spread) > 1e-12 || sj.Median != tt.median {
			t.Errorf("%s: spread %v median %v, want %v and %v", tt.name, sj.Spread, sj.Median, tt.spread, tt.median)
		}
		var out []string
		for _, d := range sj.PerDrive {
			if d.Outlier {
				out = append(out, d.Path)
			}
		}
		if !slices.Equal(out, tt.outliers) {
			t.Errorf("%s: outliers %v, want %v", tt.name, out, tt.outliers)
		}
	}
}

// results.json and summary.md give the same spread for a scaling cell
// with a failed drive: the summary renders the judge's figure.
func TestSummarySpreadIsTheJudges(t *testing.T) {
	shares := []DriveShare{{Path: "/dev/da", Actual: 90}, {Path: "/dev/db", Actual: 110}, {Path: "/dev/dc", Actual: 10, Err: "io error"}}
	sj := JudgeScaling("W", specs.IOPS, shares, 300, 100, 0.1, PrecondFull)
	res := report.Result{Test: "TestScaling/3_drives/W", Kind: report.KindScaling, Capacity: "1GiB", Workload: "W", Drives: 3,
		Metric: "iops", Spec: 100, Expected: 300, Actual: 210, Tolerance: 0.1, Verdict: sj.Verdict, Error: sj.Message,
		PerDrive: sj.PerDrive, Spread: sj.Spread, Min: sj.Min, Median: sj.Median, Max: sj.Max}
	run := &report.Run{Spec: "X", Results: []report.Result{res}}
	data, err := json.Marshal(run)
	require.NoError(t, err)
	var back report.Run
	require.NoError(t, json.Unmarshal(data, &back))
	require.InDelta(t, 0.2, back.Results[0].Spread, 1e-12, "results.json: (110 − 90) / 100, the failed drive left out")
	require.Contains(t, string(back.Summary()), "spread (max − min) / mean is 20.00 %")
}
