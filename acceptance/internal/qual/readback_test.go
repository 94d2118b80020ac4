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
