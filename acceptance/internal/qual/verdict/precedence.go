package verdict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Verdict precedence: a drive's failure that disqualifies it (a critical
// warning raised mid-run, a read-back that returned other data or failed
// with an I/O error, a fill or preconditioning error) is a fact about the
// drive, and it outranks what a cell of that drive says for itself:
//
//   - every inconclusive cause of a cell of that drive (interrupted, not
//     preconditioned, not steady, thermal throttle, PCIe link, host-bound,
//     PCIe-bound, no baseline, not recorded): the cell FAILs naming the
//     drive's failure;
//   - a cell's own failure that is not itself a drive's failure (below
//     spec, latency, fio failed, preparation failed, drive changed, bad
//     recording) when the cell was not measured, or the failure arose
//     while it was: the cell FAILs naming the drive's failure.
//
// A pass stays a pass: its figure was measured in full, the drive's
// failure fails the drive's other cells, its health and its capacity. A
// cell measured whole before its drive failed keeps a failure of its own;
// a cell that already fails on a drive's failure keeps it. The rule is the same in a live run, a
// replay and a resume: each judges from run.json's failures.

// Disqualifying reports whether cause, as a drive's failure, disqualifies
// the drive for the rest of the run.
func Disqualifying(cause string) bool {
	switch cause {
	case report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CausePreparation:
		return true
	}
	return false
}

// ownDriveCause reports whether a cell's cause already names a failure of
// one of its drives, which no other drive failure outranks.
func ownDriveCause(cause string) bool {
	switch cause {
	case report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack:
		return true
	}
	return false
}

// Outranks reports whether a drive's failure with cause drive decides
// the verdict of a cell of that drive whose own verdict is verdict with
// cause cell. measured says the cell has a figure of its own (fio's
// output parsed); during, that the failure arose while the cell was
// measured.
func Outranks(drive, verdict, cell string, measured, during bool) bool {
	if !Disqualifying(drive) {
		return false
	}
	switch verdict {
	case report.Inconclusive:
		return true
	case report.Fail:
		return !ownDriveCause(cell) && (!measured || during)
	}
	return false
}

// DisqualifiedText names drive failure f and when it happened, as every
// cell it fails says it: "/dev/nvme1n1 failed the verify pass
// (TestIntegrity/nvme1n1) earlier in this run, at 2026-01-01T00:00:00Z:
// ...". A live run, a replay and a resume word it the same.
func DisqualifiedText(f record.DriveFailure) string {
	what := f.Step
	if what == "" {
		what = "a check"
	}
	return fmt.Sprintf("%s failed %s earlier in this run, at %s: %s", f.Path, what, f.At, f.Message)
}

// Precede applies the failures of cell's drives (run.json's, in the order
// they happened) to j, the cell as judged from its own evidence: the
// first failure of a drive of the cell that Outranks its verdict makes it
// FAIL with that failure's cause, naming it first.
func Precede(j Judged, cell plan.Cell, failures []record.DriveFailure) Judged {
	res := j.Result
	for _, f := range failures {
		if !slices.Contains(cell.Drives, f.Drive) {
			continue
		}
		if !Outranks(f.Cause, res.Verdict, res.Cause, j.Figure, f.Test == cell.Test) {
			continue
		}
		text := DisqualifiedText(f)
		if !j.Figure {
			text = "not measured: " + text
		}
		msg := cell.Workload.Name + ": " + text
		if own := strings.TrimPrefix(j.Message, cell.Workload.Name+": "); own != "" && !strings.Contains(own, f.Message) {
			msg += "; the cell's own verdict was " + strings.ToUpper(res.Verdict) + ": " + own
		}
		res.Verdict, res.Cause, res.Error = report.Fail, f.Cause, msg
		j.Result, j.Message = res, msg
		return j
	}
	return j
}
