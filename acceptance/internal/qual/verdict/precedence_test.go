package verdict

import (
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// The causes a drive is disqualified with, and those it is not.
var (
	driveCauses    = []string{report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CausePreparation}
	notDriveCauses = []string{report.CauseFioFailed, report.CauseDriveChanged, report.CauseInterrupted, report.CauseBadRecording, report.CauseBelowSpec, ""}
	// Every cause an inconclusive cell has.
	inconclusiveCauses = []string{report.CauseInterrupted, report.CausePrecondition, report.CauseNotSteady, report.CauseThrottled,
		report.CausePCIeLink, report.CauseHostBound, report.CausePCIeBound, report.CauseNoBaseline, report.CauseNotRecorded}
	// Every cause a cell fails with for itself.
	cellFailCauses = []string{report.CauseBelowSpec, report.CauseLatency, report.CauseFioFailed, report.CausePreparation,
		report.CauseDriveChanged, report.CauseBadRecording}
	// The causes that already name a drive's failure.
	ownDriveCauses = []string{report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack}
)

// Every pair of a drive's failure and a cell's own cause, measured or
// not, the failure arising during the cell or not.
func TestOutranksEveryPair(t *testing.T) {
	for _, d := range driveCauses {
		for _, measured := range []bool{false, true} {
			for _, during := range []bool{false, true} {
				for _, c := range inconclusiveCauses {
					if !Outranks(d, report.Inconclusive, c, measured, during) {
						t.Errorf("Outranks(%q, inconclusive, %q, measured %v, during %v) = false, want true: a drive's failure outranks every inconclusive cause", d, c, measured, during)
					}
				}
				for _, c := range cellFailCauses {
					want := !measured || during
					if got := Outranks(d, report.Fail, c, measured, during); got != want {
						t.Errorf("Outranks(%q, fail, %q, measured %v, during %v) = %v, want %v", d, c, measured, during, got, want)
					}
				}
				for _, c := range ownDriveCauses {
					if Outranks(d, report.Fail, c, measured, during) {
						t.Errorf("Outranks(%q, fail, %q, measured %v, during %v) = true, want false: the cell already fails on a drive's failure", d, c, measured, during)
					}
				}
				if Outranks(d, report.Pass, "", measured, during) {
					t.Errorf("Outranks(%q, pass, measured %v, during %v) = true: a measured pass stands", d, measured, during)
				}
			}
		}
	}
	for _, d := range notDriveCauses {
		for _, c := range append(append(cloned(inconclusiveCauses), cellFailCauses...), "") {
			for _, v := range []string{report.Inconclusive, report.Fail, report.Pass} {
				if Outranks(d, v, c, false, true) {
					t.Errorf("Outranks(%q, %s, %q) = true: %q does not disqualify a drive", d, v, c, d)
				}
			}
		}
	}
}

func cloned(s []string) []string { return append([]string(nil), s...) }

var precedeCell = plan.Cell{Test: "TestSingleDrive/64MiB/4KB_Random_Read", Kind: report.KindSingle,
	Workload: specs.Workload{Name: "4KB Random Read"}, Drives: []int{1}}

// Seen under QEMU: after a read-only critical warning mid-run, a cell of
// that drive measured with -precondition=quick came out INCONCLUSIVE "not
// preconditioned". It FAILs naming the warning and when it was read.
func TestPrecedeWarningOverNotPreconditioned(t *testing.T) {
	j := Judged{Figure: true, Message: "4KB Random Read: actual 10 IOPS >= spec 1 IOPS; measured with -precondition=quick",
		Result: report.Result{Test: precedeCell.Test, Verdict: report.Inconclusive, Cause: report.CausePrecondition}}
	fails := []record.DriveFailure{
		{Drive: 0, Path: "/dev/nvme0n1", Cause: report.CauseIntegrity, Message: "another drive's mismatch", At: "2026-01-01T00:00:00Z"},
		{Drive: 1, Path: "/dev/nvme1n1", Cause: report.CauseCriticalWarning, Step: "its health log check (read after TestSingleDrive/64MiB/4KB_Random_Write)",
			Message: "/dev/nvme1n1 raised critical_warning 0x08: media is read-only", At: "2026-01-01T00:10:00Z"},
		{Drive: 1, Path: "/dev/nvme1n1", Cause: report.CauseReadBack, Message: "a later read-back error", At: "2026-01-01T00:20:00Z"},
	}
	got := Precede(j, precedeCell, fails)
	if got.Result.Verdict != report.Fail || got.Result.Cause != report.CauseCriticalWarning {
		t.Fatalf("Precede() = %s %q, want fail %q", got.Result.Verdict, got.Result.Cause, report.CauseCriticalWarning)
	}
	for _, w := range []string{"4KB Random Read: /dev/nvme1n1 failed its health log check (read after TestSingleDrive/64MiB/4KB_Random_Write) earlier in this run, at 2026-01-01T00:10:00Z: ",
		"media is read-only", "the cell's own verdict was INCONCLUSIVE: actual 10 IOPS"} {
		if !strings.Contains(got.Message, w) || !strings.Contains(got.Result.Error, w) {
			t.Errorf("Precede() message %q does not say %q", got.Message, w)
		}
	}
	if strings.Contains(got.Message, "another drive") || strings.Contains(got.Message, "later read-back") {
		t.Errorf("Precede() = %q names a failure other than the drive's first", got.Message)
	}
}

// A measured failure of the cell's own stands when its drive failed
// later, and names the drive's failure when it arose during the cell; a
// pass stands; a cell of other drives is untouched.
func TestPrecedeMeasuredFailureOnlyDuring(t *testing.T) {
	below := Judged{Figure: true, Message: "4KB Random Read: actual 1 IOPS < spec 10 IOPS", Result: report.Result{Verdict: report.Fail, Cause: report.CauseBelowSpec}}
	pass := Judged{Figure: true, Message: "4KB Random Read: actual 10 IOPS >= spec 1 IOPS", Result: report.Result{Verdict: report.Pass}}
	f := record.DriveFailure{Drive: 1, Path: "/dev/nvme1n1", Cause: report.CauseCriticalWarning, Message: "raised", At: "t"}
	if got := Precede(below, precedeCell, []record.DriveFailure{f}); got.Result.Cause != report.CauseBelowSpec {
		t.Errorf("a cell below spec measured before the warning: Precede() = %q, want %q", got.Result.Cause, report.CauseBelowSpec)
	}
	f.Test = precedeCell.Test
	if got := Precede(below, precedeCell, []record.DriveFailure{f}); got.Result.Cause != report.CauseCriticalWarning {
		t.Errorf("a cell below spec measured while the warning arose: Precede() = %q, want %q", got.Result.Cause, report.CauseCriticalWarning)
	}
	if got := Precede(pass, precedeCell, []record.DriveFailure{f}); got.Result.Verdict != report.Pass {
		t.Errorf("a pass: Precede() = %s, want pass", got.Result.Verdict)
	}
	other := precedeCell
	other.Drives = []int{0}
	if got := Precede(below, other, []record.DriveFailure{f}); got.Result.Cause != report.CauseBelowSpec {
		t.Errorf("a cell of another drive: Precede() = %q, want %q", got.Result.Cause, report.CauseBelowSpec)
	}
}
