package capture

import (
	"slices"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

type failedTest struct {
	name    string
	results []report.Result
	broken  map[int]string
	want    []int
}

// Three drives, /dev/nvme0n1 to /dev/nvme2n1, all of capacity 1.92TB.
var failedTests = []failedTest{
	{"nothing failed", []report.Result{{Kind: report.KindSingle, Capacity: "1.92TB", Verdict: report.Pass}}, nil, nil},
	{"broken", nil, map[int]string{2: "a critical warning"}, []int{2}},
	{"a single-drive cell", []report.Result{{Kind: report.KindSingle, Capacity: "1.92TB", Verdict: report.Fail}}, nil, []int{0, 1, 2}},
	// A drive that failed only a scaling cell: its per-drive verdict.
	{"a drive of a scaling cell", []report.Result{{Kind: report.KindScaling, Verdict: report.Fail, PerDrive: []report.DriveResult{
		{Path: "/dev/nvme0n1", Verdict: report.Pass}, {Path: "/dev/nvme1n1", Verdict: report.Fail}, {Path: "/dev/nvme2n1", Verdict: report.Pass}}}}, nil, []int{1}},
	// Its own failure named in the step (an I/O error), whatever its share.
	{"a drive's failure in a scaling cell", []report.Result{{Kind: report.KindScaling, Verdict: report.Fail, Cause: report.CauseIOError, PerDrive: []report.DriveResult{
		{Path: "/dev/nvme0n1", Verdict: report.Pass}, {Path: "/dev/nvme2n1", Cause: report.CauseIOError}}}}, nil, []int{2}},
	// A step below N × baseline with every drive at its own line names no drive.
	{"a scaling cell no drive of which failed", []report.Result{{Kind: report.KindScaling, Verdict: report.Fail, Cause: report.CauseBelowSpec, PerDrive: []report.DriveResult{
		{Path: "/dev/nvme0n1", Verdict: report.Pass}, {Path: "/dev/nvme1n1", Verdict: report.Pass}}}}, nil, nil},
}

func TestFailed(t *testing.T) {
	index := map[string]int{"/dev/nvme0n1": 0, "/dev/nvme1n1": 1, "/dev/nvme2n1": 2}
	drivesOf := func(string) []int { return []int{0, 1, 2} }
	for _, tt := range failedTests {
		got := Failed(&report.Run{Results: tt.results}, index, tt.broken, drivesOf)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Failed() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
