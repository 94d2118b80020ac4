package verdict

import (
	"os"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// The causes a drive is disqualified with, and those it is not.
var (
	driveCauses    = []string{report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CausePreparation, report.CauseIOError}
	notDriveCauses = []string{report.CauseFioFailed, report.CauseDriveChanged, report.CauseInterrupted, report.CauseBadRecording, report.CauseBelowSpec, ""}
	// Every cause an inconclusive cell has.
	inconclusiveCauses = []string{report.CauseInterrupted, report.CausePrecondition, report.CauseNotSteady, report.CauseThrottled,
		report.CausePCIeLink, report.CauseHostBound, report.CausePCIeBound, report.CauseNoBaseline, report.CauseNotRecorded}
	// Every cause a cell fails with for itself.
	cellFailCauses = []string{report.CauseBelowSpec, report.CauseLatency, report.CauseFioFailed, report.CausePreparation,
		report.CauseDriveChanged, report.CauseBadRecording}
	// The causes that already name a drive's failure.
	ownDriveCauses = []string{report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack, report.CauseIOError}
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

// fio's job errors name the drive whose jobs failed, by drive group: the
// checksum mismatch of fixtures/fio/verify-crc.json is drive 1's
// (errno 84, EILSEQ, the errno of a protection-information error too),
// its neighbour's read finished; the EINVAL of error-bs1000.json (an I/O
// size the device does not take) is fio's failure, no drive's.
func TestDriveIOErrors(t *testing.T) {
	for _, tt := range []struct {
		file string
		want map[int]string
	}{
		{"verify-crc.json", map[int]string{1: `job "drive1": errno 84 (invalid or incomplete multibyte or wide character)`}},
		{"error-bs1000.json", map[int]string{}},
		{"two-targets.json", map[int]string{}},
	} {
		data, err := os.ReadFile("../../../../fixtures/fio/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		out, err := fiojob.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		got := DriveIOErrors(out)
		if len(got) != len(tt.want) {
			t.Errorf("DriveIOErrors(%s) = %v, want %v", tt.file, got, tt.want)
			continue
		}
		for g, w := range tt.want {
			if e := strings.Join(got[g], "; "); !strings.EqualFold(e, w) {
				t.Errorf("DriveIOErrors(%s)[%d] = %q, want %q", tt.file, g, e, w)
			}
		}
	}
}

// In a 3-drive scaling cell, the failure of the drive whose jobs failed
// while the cell was measured (fio's I/O error) names that drive's
// per-drive entry, and no other's; a cell not measured because its drive
// was disqualified earlier gets an entry for each drive, the failed one
// naming its failure; a pass measured before a drive failed is left as
// it is.
func TestPrecedeDrivesNamesTheFailedDrive(t *testing.T) {
	drives := []plan.Drive{{}, {}, {}, {}}
	for i := range drives {
		drives[i].Path, drives[i].Serial = "/dev/nvme"+string(rune('0'+i))+"n1", "S"+string(rune('0'+i))
	}
	cell := plan.Cell{Test: "TestScaling/3_drives/128KB_Sequential_Read", Kind: report.KindScaling,
		Workload: specs.Workload{Name: "128KB Sequential Read"}, Drives: []int{1, 2, 3}}
	f := record.DriveFailure{Drive: 2, Path: "/dev/nvme2n1", Cause: report.CauseIOError, Step: "a measurement (" + cell.Test + ")",
		Test: cell.Test, Message: `job "drive1": errno 5 (input/output error)`, At: "2026-01-01T00:00:00Z"}
	measured := Judged{Figure: true, Message: "128KB Sequential Read on 3 drives: fio failed: ...",
		Result: report.Result{Test: cell.Test, Kind: report.KindScaling, Verdict: report.Fail, Cause: report.CauseFioFailed, PerDrive: []report.DriveResult{
			{Path: "/dev/nvme1n1", Actual: 100, Verdict: report.Pass},
			{Path: "/dev/nvme2n1", Actual: 40, Verdict: report.Fail, Error: `job "drive1": errno 5 (input/output error)`},
			{Path: "/dev/nvme3n1", Actual: 100, Verdict: report.Pass}}}}
	got := PrecedeDrives(measured, cell, drives, []record.DriveFailure{f})
	if got.Result.Cause != report.CauseIOError {
		t.Errorf("the cell's cause = %q, want %q", got.Result.Cause, report.CauseIOError)
	}
	for i, d := range got.Result.PerDrive {
		if want := map[bool]string{true: report.CauseIOError}[i == 1]; d.Cause != want {
			t.Errorf("per_drive[%d] (%s) cause = %q, want %q", i, d.Path, d.Cause, want)
		}
	}
	if measured.Result.PerDrive[1].Cause != "" {
		t.Error("PrecedeDrives changed the judged cell's per-drive entries in place")
	}

	later := f
	later.Test, later.Step = "TestScaling/1_drives/128KB_Sequential_Read", "a measurement (TestScaling/1_drives/128KB_Sequential_Read)"
	unmeasured := Judged{Result: report.Result{Test: cell.Test, Kind: report.KindScaling, Verdict: report.Fail, Cause: report.CauseIOError,
		Error: "not measured: " + DisqualifiedText(later)}}
	got = PrecedeDrives(unmeasured, cell, drives, []record.DriveFailure{later})
	if len(got.Result.PerDrive) != 3 {
		t.Fatalf("a cell not measured: per_drive = %+v, want one entry a drive", got.Result.PerDrive)
	}
	for i, d := range got.Result.PerDrive {
		if d.Path != drives[cell.Drives[i]].Path || d.Serial != drives[cell.Drives[i]].Serial || d.Verdict != report.Fail {
			t.Errorf("per_drive[%d] = %+v, want %s failed", i, d, drives[cell.Drives[i]].Path)
		}
		if want := map[bool]string{true: report.CauseIOError}[i == 1]; d.Cause != want {
			t.Errorf("per_drive[%d] (%s) cause = %q, want %q", i, d.Path, d.Cause, want)
		}
	}
	if !strings.Contains(got.Result.PerDrive[1].Error, "failed a measurement (TestScaling/1_drives/128KB_Sequential_Read) earlier in this run") {
		t.Errorf("per_drive[1] error = %q, want the failure named", got.Result.PerDrive[1].Error)
	}

	pass := Judged{Figure: true, Result: report.Result{Test: cell.Test, Kind: report.KindScaling, Verdict: report.Pass,
		PerDrive: []report.DriveResult{{Path: "/dev/nvme1n1", Actual: 1}, {Path: "/dev/nvme2n1", Actual: 1}, {Path: "/dev/nvme3n1", Actual: 1}}}}
	if got := PrecedeDrives(pass, cell, drives, []record.DriveFailure{later}); got.Result.Verdict != report.Pass || got.Result.PerDrive[1].Cause != "" {
		t.Errorf("a pass measured before the drive failed: %s, per_drive[1] cause %q; want pass, no cause", got.Result.Verdict, got.Result.PerDrive[1].Cause)
	}
}
