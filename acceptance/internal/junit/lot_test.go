package junit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A TestLot cell is a testcase of class TestLot/<capacity>, failing when
// the lot is rejected and skipped when undecided, with the lot's figures
// as "lot …" lines; the lot gate is a Verdict testcase. Both schemas
// read it.
func TestLotCases(t *testing.T) {
	l := &report.LotResult{Coverage: 0.95, Confidence: 0.95, Method: "normal", N: 6, Passing: 4, K: 3.7077, Mean: 96, SD: 23,
		Bound: 10.7, PassLine: 90, PassingShareLower: 0.317, PassingShareUpper: 0.937, ZeroFailure: 59, Verdict: report.LotRejected,
		Normality: &report.Normality{Test: "shapiro-wilk", W: 0.93, P: 0.6, Alpha: 0.05, Normal: true},
		Figures:   []report.LotFigure{{Drive: "host-a:/dev/loop24", Value: 96.3, Test: "TestScaling/host-a/6_drives/R", Pass: true}}}
	r := &report.Run{Spec: "Loop device", Mode: "replay", Results: []report.Result{
		{Test: "TestLot/64MiB/R", Kind: report.KindLot, Capacity: "64MiB", Workload: "R", Drives: 6, Metric: "MBps", Spec: 100,
			Expected: 100, Actual: 10.7, Tolerance: 0.1, Verdict: report.Fail, Cause: report.CauseLotRejected,
			Error: "R: lot rejected at coverage 95 %, confidence 95 %: 4 of 6 drives pass", Lot: l},
	}}
	data, err := Marshal(r, "report")
	require.NoError(t, err)
	x := string(data)
	assert.Contains(t, x, `<testcase name="64MiB/R" classname="TestLot" time="0">`)
	assert.Contains(t, x, `<failure message="R: lot rejected at coverage 95 %, confidence 95 %: 4 of 6 drives pass" type="lot rejected">`)
	for _, want := range []string{"lot verdict: rejected", "lot method: normal", "lot n: 6", "lot passing: 4", "lot k: 3.7077",
		"lot mean: 96", "lot s: 23", "lot bound: 10.7", "lot pass line: 90", "lot normality: shapiro-wilk W=0.93 p=0.6 normal=true",
		"lot passing share lower: 0.317", "lot passing share upper: 0.937", "lot zero-failure n: 59", "lot drive[1]: host-a:/dev/loop24 value=96.3 pass=true test=TestScaling/host-a/6_drives/R"} {
		assert.Contains(t, x, want+"\n")
	}
	assert.NotContains(t, x, "model:", "a lot cell names no single drive")
	assert.Contains(t, x, `<testcase name="lot" classname="Verdict" time="0">`)

	xmllint := testenv.MustHave(t, "xmllint", "apt-get install libxml2-utils")
	file := filepath.Join(t.TempDir(), "lot.xml")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	for _, xsd := range schemas {
		out, err := exec.Command(xmllint, "--noout", "--schema", xsd, file).CombinedOutput()
		assert.NoError(t, err, "%s: %s", filepath.Base(xsd), strings.TrimSpace(string(out)))
	}
}
