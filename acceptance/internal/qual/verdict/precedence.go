package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
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
	case report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CausePreparation, report.CauseIOError:
		return true
	}
	return false
}

// ownDriveCause reports whether a cell's cause already names a failure of
// one of its drives, which no other drive failure outranks.
func ownDriveCause(cause string) bool {
	switch cause {
	case report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CauseIOError:
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

// PrecedeDrives is Precede, and for a scaling cell it also names, in the
// per-drive entry of each drive whose failure outranks the cell's own
// verdict, or that was disqualified before a cell that was not measured,
// that failure's cause (the first of the drive's), so that the lot counts
// the drive as one that failed and its neighbours as they measured. A
// cell with no per-drive entries (not measured) is given one for each of
// its drives, from drives (the suite's).
func PrecedeDrives(j Judged, cell plan.Cell, drives []plan.Drive, failures []record.DriveFailure) Judged {
	own := j.Result
	j = Precede(j, cell, failures)
	if cell.Kind != report.KindScaling {
		return j
	}
	var per []report.DriveResult
	for _, f := range failures {
		i := slices.Index(cell.Drives, f.Drive)
		if i < 0 || !Disqualifying(f.Cause) || j.Figure && !Outranks(f.Cause, own.Verdict, own.Cause, true, f.Test == cell.Test) {
			continue
		}
		if per == nil {
			per = slices.Clone(j.Result.PerDrive)
			if len(per) != len(cell.Drives) {
				per = make([]report.DriveResult, len(cell.Drives))
				for k, d := range cell.Drives {
					per[k] = report.DriveResult{Verdict: report.Fail, Error: "not measured"}
					if d >= 0 && d < len(drives) {
						per[k].Path, per[k].Serial = drives[d].Path, drives[d].Serial
					}
				}
			}
		}
		if per[i].Cause != "" {
			continue
		}
		per[i].Verdict, per[i].Cause = report.Fail, f.Cause
		if per[i].Error == "" || per[i].Error == "not measured" {
			per[i].Error = DisqualifiedText(f)
		}
	}
	if per != nil {
		j.Result.PerDrive = per
	}
	return j
}

// driveErrnos are the errnos (Linux's, as fio reports them) of an I/O the
// drive itself failed: the block layer's I/O error (EIO), medium error
// (ENODATA), protection-information error (EILSEQ), target error
// (EREMOTEIO), command timeout (ETIMEDOUT) and out of space (ENOSPC, a
// thin or full namespace). An errno of the job's own making (EINVAL for
// an I/O size the device does not take) is fio's failure, not the drive's.
var driveErrnos = map[int]bool{5: true, 28: true, 61: true, 84: true, 110: true, 121: true}

// DriveIOErrors is, by drive group of fio's output of a measurement (group
// i is the step's drive i, in Groups order), the job errors of the group
// whose errno is the drive's own failure (driveErrnos), in fio's words as
// fiojob.Aggregate writes them; empty when none is.
func DriveIOErrors(out *fiojob.Output) map[int][]string {
	byGroup := map[int][]fiojob.JobResult{}
	for _, j := range out.Jobs {
		byGroup[j.GroupID] = append(byGroup[j.GroupID], j)
	}
	ids := slices.Sorted(maps.Keys(byGroup))
	found := map[int][]string{}
	for i, id := range ids {
		var bad []fiojob.JobResult
		for _, j := range byGroup[id] {
			if driveErrnos[j.Error] {
				bad = append(bad, j)
			}
		}
		if len(bad) > 0 {
			found[i] = fiojob.Aggregate(bad).Errors
		}
	}
	return found
}
