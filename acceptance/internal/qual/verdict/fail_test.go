package verdict

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// A fio run that failed is judged in fio's own words, not as a slow drive:
// the recording of fio with bs=1000 on a 512-byte-sector device (errno 22).
func TestFioFailureQuotesFio(t *testing.T) {
	data, err := os.ReadFile("../../../../fixtures/fio/error-bs1000.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := fiojob.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	got := FioFailure("4KB Random Read", &fiojob.ExitError{Code: 1}, out)
	for _, want := range []string{
		"4KB Random Read: fio failed: fio exited with status 1",
		`job "drive0": errno 22 (invalid argument)`,
		"fio printed: fio: pid=14781, err=22/file:io_u.c:1876, func=io_u error, error=Invalid argument",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("FioFailure() = %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "actual") {
		t.Errorf("FioFailure() = %q reads as a measured figure", got)
	}
}

// results.json and summary.md give the same spread for a scaling cell
// with a failed drive: the summary renders the judge's figure.
func TestSummarySpreadIsTheJudges(t *testing.T) {
	shares := []judge.DriveShare{{Path: "/dev/da", Actual: 90}, {Path: "/dev/db", Actual: 110}, {Path: "/dev/dc", Actual: 10, Err: "io error"}}
	sj := judge.Scaling("W", specs.IOPS, shares, 300, 100, 0.1, "")
	res := report.Result{Test: "TestScaling/3_drives/W", Kind: report.KindScaling, Capacity: "1GiB", Workload: "W", Drives: 3,
		Metric: "iops", Spec: 100, Expected: 300, Actual: 210, Tolerance: 0.1, Verdict: sj.Verdict, Error: sj.Message,
		PerDrive: sj.PerDrive, Spread: sj.Spread, Min: sj.Min, Median: sj.Median, Max: sj.Max}
	run := &report.Run{Spec: "X", Results: []report.Result{res}}
	data, err := json.Marshal(run)
	require.NoError(t, err)
	var back report.Run
	require.NoError(t, json.Unmarshal(data, &back))
	require.InDelta(t, 0.2, back.Results[0].Spread, 1e-12, "results.json: (110 − 90) / median 100, the failed drive left out")
	require.Contains(t, string(back.Summary()), "spread (max − min) / median is 20.00 %")
}
