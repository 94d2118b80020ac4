package qual

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// -dry-run's estimate of bytes written says it for each drive: drives
// that write as much are one line (23 of 24 when scaling is 1 and 24
// drives), and that line names every one of them
// (by-id names form no range), not eight and "… and 16 more".
func TestDryRunEstimateNamesEveryDrive(t *testing.T) {
	s, _ := builtinSuite(t, 24)
	s.Report = &report.Run{}
	// Scaling 1 and 24 drives: 23 drives write as much.
	s.Spec.Scaling.Drives = []int{1, 24}
	cells := s.allCells()
	for i := range s.Drives {
		s.Drives[i].Path = fmt.Sprintf("/dev/disk/by-id/nvme-SOLIDIGM_SB5PH27X019T_PHAB%c%c", 'A'+i/4, 'K'+i%4)
		s.Drives[i].Resolved = s.Drives[i].Path
	}
	s.Plan = s.Planner.Build(cells)
	var b strings.Builder
	s.PrintPlan(&b)
	_, est, ok := strings.Cut(b.String(), "bytes written per drive (estimate):\n")
	require.True(t, ok, b.String())
	est, _, _ = strings.Cut(est, "estimated duration")
	require.NotContains(t, est, "more", "the estimate leaves drives unnamed:\n%s", est)
	for _, d := range s.Drives {
		require.Contains(t, est, strings.TrimPrefix(d.Path, "/dev/"), "the estimate does not name %s:\n%s", d.Path, est)
	}
}
