package verdict

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/integrity"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// IntegrityDrive is one drive's verify pass as TestIntegrity/<Name>
// reports it.
type IntegrityDrive struct {
	Name    string // the subtest name: the drive's path without /dev/
	Verdict string // report.Pass, report.Fail or report.Inconclusive
	Message string
}

// ReadBackDrive is one drive's verdict on a verify pass, with its result
// for the report.
type ReadBackDrive struct {
	IntegrityDrive
	Path  string
	Cause string
	// Drive is the index of the drive in the run; -1 when the pass names
	// a drive the run does not have.
	Drive  int
	Result report.Result
}

// ReadBack judges the verify pass rb, drive by drive (those of rb.Only).
func ReadBack(rb evidence.ReadBack, drives []plan.Drive) []ReadBackDrive {
	rec := rb.Pass
	targets := integrityDrives(rec)
	raw := filepath.Join(rb.Dir, filepath.FromSlash(rec.Raw))
	stdout, stderr, failure, err := record.ReadVerify(rb.Dir, rec)
	if err != nil && rec.Running && errors.Is(err, os.ErrNotExist) {
		// Listed as it started, and no output: the run was killed while
		// fio read the drives back. What fio wrote to its stderr until
		// then still names a mismatch it saw; nothing else is judged.
		var serr error
		stderr, serr = record.ReadFile(rb.Dir, strings.TrimSuffix(rec.Raw, record.OutputExt)+record.StderrExt)
		stdout, err = nil, nil
		if serr != nil && !errors.Is(serr, os.ErrNotExist) {
			err = serr // refused: a symlink, a FIFO, too large
		}
		failure = &record.Failure{Interrupted: true, Message: "the run was killed during the verify pass, before fio printed its report"}
	}
	var results []integrity.Result
	if err != nil {
		for _, d := range targets {
			results = append(results, integrity.Result{Drive: d.Path, Verdict: integrity.Fail,
				Message: fmt.Sprintf("%s: the verify pass's recording does not read: %v", d.Path, err)})
		}
	} else {
		results = judgeRecorded(stdout, stderr, failure, targets)
	}
	var out []ReadBackDrive
	for i, r := range results {
		if rb.Only != nil && !rb.Only[r.Drive] {
			continue
		}
		j := ReadBackDrive{IntegrityDrive: IntegrityDrive{Name: IntegrityName(r.Drive), Verdict: r.Verdict, Message: r.Message},
			Path: r.Drive, Drive: driveIndex(drives, r.Drive)}
		gone := ""
		if r.Verdict != report.Pass && unfilled(r) {
			gone = goneDuring(rb, r.Drive)
		}
		if gone != "" {
			// Pulled mid-pass: what fio compared is a buffer the read
			// never filled, no evidence of the drive's media.
			j.Verdict = report.Fail
			j.Message = gone + "; what the verify pass read of it is no evidence of its media (fio: " + firstLine(r.Message) + ")"
			r.Mismatches = nil
		}
		switch {
		case gone != "":
			j.Cause = report.CauseDriveChanged
		case err != nil:
			j.Cause = report.CauseBadRecording
		case len(r.Mismatches) > 0:
			j.Cause = report.CauseIntegrity
		case r.Verdict == integrity.Inconclusive:
			j.Cause = report.CauseInterrupted
		case r.Verdict == integrity.Fail:
			j.Cause = report.CauseReadBack
		}
		res := report.Result{Test: IntegrityTest(r.Drive), Kind: report.KindIntegrity, Workload: "Data integrity",
			Drives: 1, Verdict: j.Verdict, Cause: j.Cause, Raw: raw}
		if j.Verdict != report.Pass {
			res.Error = j.Message
		}
		in := &report.Integrity{Drive: r.Drive, Step: rec.Step, Resume: rec.Resume, BytesVerified: r.Verified, BytesWritten: targets[i].Bytes,
			Checksum: verifyMethod(rec), Mismatches: len(r.Mismatches)}
		if len(r.Mismatches) > 0 {
			m := r.Mismatches[0]
			in.Offset, in.Length, in.LBA, in.LBASize = m.Offset, m.Length, m.LBA, m.LBASize
			in.Check, in.Expected, in.Received, in.Fio, in.Returned = m.Check, m.Expected, m.Received, m.Fio, m.Returned
		}
		if j.Drive >= 0 {
			res.Capacity = drives[j.Drive].Capacity
			in.Serial = drives[j.Drive].Serial
		}
		res.Integrity = in
		j.Result = res
		out = append(out, j)
	}
	return out
}

// goneDuring is why the pass of rb recorded drive path as gone by its
// end, when the run's failures say it disappeared too ("" otherwise: a
// recording whose pass says gone and whose failures do not is judged on
// what fio read).
func goneDuring(rb evidence.ReadBack, path string) string {
	if !rb.Disappeared[path] {
		return ""
	}
	for _, d := range rb.Pass.Drives {
		if d.Path == path {
			return d.Gone
		}
	}
	return ""
}

// unfilled reports whether what fio found reading a drive back is what
// reads of a drive gone mid-pass give: reads that failed (no mismatch),
// or blocks that held zeros or another block's data (a buffer no read
// filled). Data of an earlier write, or other data, is the drive's own
// whether it went or not.
func unfilled(r integrity.Result) bool {
	for _, m := range r.Mismatches {
		if m.Returned != integrity.Zeros && m.Returned != integrity.OtherOffset {
			return false
		}
	}
	return true
}

// Disappeared are the drives (by path) fs, a run's failures, record as
// having disappeared or changed (cause drive changed).
func Disappeared(fs []record.DriveFailure) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if f.Cause == report.CauseDriveChanged {
			out[f.Path] = true
		}
	}
	return out
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func judgeRecorded(stdout, stderr []byte, failure *record.Failure, drives []integrity.Drive) []integrity.Result {
	var runErr string
	var stopped bool
	if failure != nil {
		// fio killed from outside (the OOM killer) was interrupted too: a
		// drive it had not read to the end proves nothing either way.
		runErr, stopped = failure.Message, failure.Interrupted || Killed(failure.Message)
	}
	return integrity.Judge(stdout, stderr, runErr, stopped, drives)
}

func integrityDrives(rec record.Verify) []integrity.Drive {
	drives := make([]integrity.Drive, len(rec.Drives))
	for i, d := range rec.Drives {
		drives[i] = integrity.Drive{Path: d.Path, Target: d.Target, Bytes: d.Bytes, LBASize: d.LBASize, Method: verifyMethod(rec)}
	}
	return drives
}

// verifyMethod is the fio verify= the pass rec checked with: the fill's
// pattern, or in a recording made before the fill wrote one (no pattern
// recorded) fio's crc32c header and checksum.
func verifyMethod(rec record.Verify) string {
	if rec.Pattern == "" {
		return "crc32c"
	}
	return fiojob.FillVerify
}

// LastReadBack says, for each pass of recs, the drives whose last
// read-back it is: a drive read back again by a later pass (a resumed
// run's) is judged on that one, and the other drives of the earlier pass
// still on it, each drive once.
func LastReadBack(recs []record.Verify) []map[string]bool {
	out := make([]map[string]bool, len(recs))
	later := map[string]bool{}
	for i := len(recs) - 1; i >= 0; i-- {
		out[i] = map[string]bool{}
		for _, d := range recs[i].Drives {
			if !later[d.Path] {
				later[d.Path] = true
				out[i][d.Path] = true
			}
		}
	}
	return out
}

// driveIndex is the index of the drive given as path; -1 when none is.
func driveIndex(drives []plan.Drive, path string) int {
	for i, d := range drives {
		if d.Path == path {
			return i
		}
	}
	return -1
}

// IntegrityName is a drive's TestIntegrity subtest name: its path without
// /dev/ ("nvme0n1", "disk/by-id/nvme-X" becomes "nvme-X"), a file's name.
func IntegrityName(path string) string {
	name := strings.TrimPrefix(path, "/dev/")
	if strings.Contains(name, "/") {
		name = filepath.Base(name)
	}
	return name
}

// IntegrityTest is a drive's TestIntegrity subtest, in full.
func IntegrityTest(path string) string { return "TestIntegrity/" + IntegrityName(path) }

// Killed reports whether a recorded fio failure is fio stopped by a
// signal from outside (the OOM killer, an operator's kill): fiojob's
// ExitError words for a signal, not a job's errors. A step or pass that
// ended so was interrupted, and is run again on resume.
func Killed(msg string) bool {
	return strings.HasPrefix(msg, "fio killed by signal ") || strings.HasPrefix(msg, "fio exited with status 128 (stopped by a signal)")
}
