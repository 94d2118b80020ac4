package qual

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A drive whose read-back fio could not finish (a job error, no
// mismatch: here a recorded fio output whose one job failed with errno
// 22, standing in for the read errors of a failing drive) fails
// TestIntegrity, and its cells fail unmeasured: run.json lists them in
// "unmeasured", as it does for a mismatch, so that a replay fails them
// the same way instead of leaving them out.
func TestAReadBackFioFailedListsTheCellsUnmeasured(t *testing.T) {
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), verify: fixture(t, "error-bs1000.json"), rounds: steadyRounds}
	s := liveSuite(t, exec)
	cells := s.SingleCells()[0].Cells
	for _, c := range cells {
		o, err := s.Run(context.Background(), c, t.Logf)
		require.NoError(t, err)
		require.Equal(t, report.Fail, o.Result.Verdict, c.Test)
		require.Equal(t, report.CauseFioFailed, o.Result.Cause, c.Test)
		require.Contains(t, o.Result.Error, "failed the verify pass", c.Test)
	}
	require.Empty(t, exec.measured, "a drive that failed its read-back is not measured")
	data, err := os.ReadFile(filepath.Join(s.Cfg.Record, "run.json"))
	require.NoError(t, err)
	var run record.Run
	require.NoError(t, json.Unmarshal(data, &run))
	for _, c := range cells {
		require.Contains(t, run.Unmeasured, c.Test, "run.json lists it for a replay")
	}
}

// A verify pass is reported when it is read back, whichever test the plan
// ran it for: a run of the single-drive cells alone (-run without
// TestIntegrity) still has the drive's read-back in its results, and
// TestIntegrity judged after it reports the pass once, not twice.
func TestAReadBackIsReportedOnceWhicheverTestRanIt(t *testing.T) {
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), verify: fixture(t, "error-bs1000.json"), rounds: steadyRounds}
	s := liveSuite(t, exec)
	_, err := s.Run(context.Background(), s.SingleCells()[0].Cells[0], t.Logf)
	require.NoError(t, err)
	integrity := func() []report.Result {
		var out []report.Result
		for _, r := range s.Report.Results {
			if r.Kind == report.KindIntegrity {
				out = append(out, r)
			}
		}
		return out
	}
	got := integrity()
	require.Len(t, got, 1, "the read-back the cell's plan ran is in the results")
	require.Equal(t, "TestIntegrity/fake.img", got[0].Test)
	require.Equal(t, report.Fail, got[0].Verdict)
	require.Equal(t, report.CauseFioFailed, got[0].Cause)

	drives, why := s.JudgeIntegrity(context.Background(), t.Logf)
	require.Empty(t, why)
	require.Len(t, drives, 1)
	require.Equal(t, report.Fail, drives[0].Verdict)
	require.Len(t, integrity(), 1, "judged again by TestIntegrity, the pass is not reported twice")
}
