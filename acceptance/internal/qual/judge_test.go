package qual

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

type singleTest struct {
	actual, spec, tol float64
	precondition      string
	jobErrors         []string
	verdict           string
	message           string
}

var singleTests = []singleTest{
	{62_113, 2_350_000, 0, PrecondFull, nil, report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
	{2_409_894, 2_350_000, 0, PrecondFull, nil, report.Pass,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec)"},
	{2_200_000, 2_350_000, 0.1, PrecondFull, nil, report.Pass,
		"4KB Random Read: actual 2,200,000 IOPS >= spec 2,350,000 IOPS (93.62 % of spec, tolerance 10 %)"},
	{2_409_894, 2_350_000, 0, PrecondQuick, nil, report.Inconclusive,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec); measured with -precondition=quick; preconditioning only lowers a drive's figures, so this is not a pass"},
	{62_113, 2_350_000, 0, PrecondNone, nil, report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
	{2_409_894, 2_350_000, 0, PrecondFull, []string{`job "drive0": errno 5 (Input/output error)`}, report.Inconclusive,
		`4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec); fio reported job errors (job "drive0": errno 5 (Input/output error)), so the figure is not trusted`},
}

func TestJudgeSingle(t *testing.T) {
	for _, tt := range singleTests {
		j := JudgeSingle("4KB Random Read", specs.IOPS, tt.actual, tt.spec, tt.tol, tt.precondition, tt.jobErrors)
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
	j := JudgeScaling("8KB Random Read", specs.IOPS, shares(per...), 24*1_200_000, 1_200_000, 0.10, PrecondFull, nil)
	assert.Equal(t, report.Pass, j.Verdict)
	assert.InDelta(t, 0.948, j.Ratio, 0.0005)
	assert.Contains(t, j.Message, "below linear")
	assert.Zero(t, j.Spread)

	// One drive of four 20 % low: named, and below the single-drive spec.
	j = JudgeScaling("4KB Random Read", specs.IOPS, shares(2.4e6, 2.4e6, 1.92e6, 2.4e6), 4*2_350_000, 2_350_000, 0.10, PrecondFull, nil)
	assert.Equal(t, report.Fail, j.Verdict)
	assert.Contains(t, j.Message, "drive /dev/nvme2n1 (serial S2) is 20.0 % below the median 2,400,000 IOPS")
	assert.NotContains(t, j.Message, "nvme1n1")
	assert.Equal(t, report.Fail, j.PerDrive[2].Verdict)
	assert.Equal(t, report.Pass, j.PerDrive[0].Verdict)
	assert.InDelta(t, 0.48/(9.12/4), j.Spread, 1e-9)

	// Total short although each drive passes.
	j = JudgeScaling("4KB Random Read", specs.IOPS, shares(1e6, 1e6), 2*1e6*1.2, 1e6, 0.10, PrecondFull, nil)
	assert.Equal(t, report.Fail, j.Verdict)
	assert.True(t, strings.HasPrefix(j.Message, "4KB Random Read on 2 drives: total 2,000,000 IOPS < expected 2,400,000 IOPS (83.33 % of expected"), j.Message)
}
