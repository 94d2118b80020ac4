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
		require.Equal(t, report.CauseReadBack, o.Result.Cause, c.Test)
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
	require.Len(t, run.Failures, 1, "the read-back failure is recorded as the drive's")
	require.Equal(t, report.CauseReadBack, run.Failures[0].Cause)
	require.Equal(t, 0, run.Failures[0].Drive)
	require.NotEmpty(t, run.Failures[0].At)
}

// A verify pass that runs for the cells, with TestIntegrity not selected
// (-run=TestSingleDrive) or before it asks, is in the report as soon as
// it ends, as every result is, so that results.json, summary.md and
// junit.xml name the drive that failed it and where; TestIntegrity then
// reports it once, not again.
func TestAReadBackIsReportedWhenItRuns(t *testing.T) {
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), verify: fixture(t, "error-bs1000.json"), rounds: steadyRounds}
	s := liveSuite(t, exec)
	c := s.SingleCells()[0].Cells[0]
	_, err := s.Run(context.Background(), c, t.Logf)
	require.NoError(t, err)
	integrityResults := func() []report.Result {
		var out []report.Result
		for _, r := range s.Report.Results {
			if r.Kind == report.KindIntegrity {
				out = append(out, r)
			}
		}
		return out
	}
	got := integrityResults()
	require.Len(t, got, 1, "the verify pass that ran for %s is reported when it ends", c.Test)
	require.Equal(t, "TestIntegrity/fake.img", got[0].Test)
	require.Equal(t, report.Fail, got[0].Verdict)
	require.Equal(t, report.CauseReadBack, got[0].Cause, "a read-back that failed without a mismatch is named so, not as any fio failure")
	data, err := os.ReadFile(filepath.Join(s.Cfg.Report, "results.json"))
	require.NoError(t, err)
	require.Contains(t, string(data), "TestIntegrity/fake.img", "results.json holds it before TestIntegrity runs")

	drives, why := s.JudgeIntegrity(context.Background(), t.Logf)
	require.Empty(t, why)
	require.Len(t, drives, 1)
	require.Equal(t, report.Fail, drives[0].Verdict)
	require.Len(t, integrityResults(), 1, "TestIntegrity reports the pass once")
}
