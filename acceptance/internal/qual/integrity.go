package qual

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/integrity"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
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

// verifyStep runs a verify pass (fio reads back every block the fill
// wrote) and judges each drive from its recording, as a replay does. A
// drive that returned other data than it was given is disqualified: it
// is marked broken, so its remaining cells fail at once with the
// mismatch instead of spending hours measuring the speed of a drive that
// cannot be bought.
func (s *Suite) verifyStep(ctx context.Context, st *plan.Step, logf func(string, ...any), w *Watch) string {
	prep, err := s.Exec.Prepare(ctx, *st, s.Drives, logf, w)
	if prep.Raw == "" && err == nil {
		// An executor that keeps no output (a test's): nothing to judge.
		logf("step %d: %s: the executor recorded no output to judge", st.N, st.Name)
		return ""
	}
	if prep.Raw == "" {
		// fio did not run at all: nothing was verified.
		err = fmt.Errorf("preparing %s: %s failed: %w", s.paths(st.Drives), st.Name, err)
		if ctx.Err() == nil {
			s.markBroken(st.Drives, report.CausePreparation, "a preparation step", err)
		}
		logf("%v", err)
		return err.Error()
	}
	rec := record.Verify{Step: st.N, Name: st.Name, Raw: filepath.ToSlash(prep.Raw), Pattern: st.Job.VerifyPattern}
	if s.resume != nil {
		rec.Resume = len(s.info.Resumptions)
	}
	if rel, rerr := filepath.Rel(s.Cfg.Record, prep.Raw); rerr == nil {
		rec.Raw = filepath.ToSlash(rel)
	}
	for i, d := range st.Drives {
		vd := record.VerifyDrive{Path: s.Drives[d].Path, Bytes: s.Drives[d].Size, LBASize: s.Drives[d].LogicalBlockSize}
		if i < len(st.Job.Targets) {
			vd.Target = st.Job.Targets[i].Path
			if sz := st.Job.Targets[i].Size; sz > 0 && (vd.Bytes == 0 || sz < vd.Bytes) {
				vd.Bytes = sz
			}
		}
		rec.Drives = append(rec.Drives, vd)
	}
	s.mu.Lock()
	s.info.Verify = append(s.info.Verify, rec)
	if serr := s.saveRunInfo(); serr != nil {
		logf("%s: %v", s.Cfg.Record, serr)
	}
	s.mu.Unlock()
	for _, r := range s.judgeVerify(s.Cfg.Record, rec) {
		d := s.driveIndex(r.path)
		switch r.Verdict {
		case report.Pass:
			logf("step %d: %s", st.N, r.Message)
		case report.Fail:
			logf("step %d: %s", st.N, r.Message)
			if d >= 0 {
				s.markBroken([]int{d}, r.cause, "the verify pass ("+integrityTest(r.path)+")", errors.New(r.Message))
			}
		}
	}
	return ""
}

// addVerify gives every drive whose TestIntegrity subtest is selected a
// verify pass, when the cells selected do not fill it.
func (s *Suite) addVerify() {
	if s.Precondition == plan.None || s.Spec.Precondition.FillPasses == 0 {
		return
	}
	s.Planner.AddVerify(&s.Plan, s.verifyDrives())
}

// verifyDrives lists the drives whose TestIntegrity subtest is selected.
func (s *Suite) verifyDrives() []int {
	var drives []int
	for i, d := range s.Drives {
		if s.Cfg.Selected(integrityTest(d.Path)) {
			drives = append(drives, i)
		}
	}
	return drives
}

// judged is one drive's verify verdict with what the report needs.
type judged struct {
	IntegrityDrive
	path, cause string
}

// judgeVerify judges the verify pass rec recorded in dir, drive by drive,
// and adds each drive's result to the report. A live run and a replay
// both judge the recording.
func (s *Suite) judgeVerify(dir string, rec record.Verify) []judged {
	return s.judgeVerifyOf(dir, rec, nil)
}

// judgeVerifyOf is judgeVerify reporting only the drives in only (nil:
// every drive of rec): a drive read back again by a later pass is judged
// on that one, the others of rec still on rec.
func (s *Suite) judgeVerifyOf(dir string, rec record.Verify, only map[string]bool) []judged {
	drives := make([]integrity.Drive, len(rec.Drives))
	for i, d := range rec.Drives {
		drives[i] = integrity.Drive{Path: d.Path, Target: d.Target, Bytes: d.Bytes, LBASize: d.LBASize, Method: verifyMethod(rec)}
	}
	raw := filepath.Join(dir, filepath.FromSlash(rec.Raw))
	stdout, stderr, failure, err := record.ReadVerify(dir, rec)
	var results []integrity.Result
	if err != nil {
		for _, d := range drives {
			results = append(results, integrity.Result{Drive: d.Path, Verdict: integrity.Fail,
				Message: fmt.Sprintf("%s: the verify pass's recording does not read: %v", d.Path, err)})
		}
	} else {
		var runErr string
		var stopped bool
		if failure != nil {
			runErr, stopped = failure.Message, failure.Interrupted
		}
		results = integrity.Judge(stdout, stderr, runErr, stopped, drives)
	}
	var out []judged
	for i, r := range results {
		if only != nil && !only[r.Drive] {
			continue
		}
		d := s.driveIndex(r.Drive)
		j := judged{IntegrityDrive: IntegrityDrive{Name: integrityName(r.Drive), Verdict: r.Verdict, Message: r.Message}, path: r.Drive}
		switch {
		case err != nil:
			j.cause = report.CauseBadRecording
		case len(r.Mismatches) > 0:
			j.cause = report.CauseIntegrity
		case r.Verdict == integrity.Inconclusive:
			j.cause = report.CauseInterrupted
		case r.Verdict == integrity.Fail:
			j.cause = report.CauseFioFailed
		}
		res := report.Result{Test: integrityTest(r.Drive), Kind: report.KindIntegrity, Workload: "Data integrity",
			Drives: 1, Verdict: r.Verdict, Cause: j.cause, Raw: raw}
		if r.Verdict != report.Pass {
			res.Error = r.Message
		}
		in := &report.Integrity{Drive: r.Drive, Step: rec.Step, Resume: rec.Resume, BytesVerified: r.Verified, BytesWritten: drives[i].Bytes,
			Checksum: verifyMethod(rec), Mismatches: len(r.Mismatches)}
		if len(r.Mismatches) > 0 {
			m := r.Mismatches[0]
			in.Offset, in.Length, in.LBA, in.LBASize = m.Offset, m.Length, m.LBA, m.LBASize
			in.Check, in.Expected, in.Received, in.Fio, in.Returned = m.Check, m.Expected, m.Received, m.Fio, m.Returned
		}
		cell := plan.Cell{Kind: report.KindIntegrity, Test: res.Test}
		if d >= 0 {
			res.Capacity = s.Drives[d].Capacity
			in.Serial = s.Drives[d].Serial
			cell.Drives = []int{d}
		}
		res.Integrity = in
		s.finish(res, cell, "")
		s.mu.Lock()
		s.integrity = append(s.integrity, j.IntegrityDrive)
		s.mu.Unlock()
		out = append(out, j)
	}
	return out
}

// JudgeIntegrity runs the plan through its last verify pass (a live run)
// or judges the recorded ones (a replay), and returns each drive's
// verdict for TestIntegrity; when there is nothing to judge, it says why.
func (s *Suite) JudgeIntegrity(ctx context.Context, logf func(string, ...any)) ([]IntegrityDrive, string) {
	if !s.Cfg.Live() {
		if len(s.info.Verify) == 0 {
			return nil, "the recording holds no verify pass (run.json has no \"verify\"): it was recorded with -precondition=none, with fill_passes = 0, before drivequal verified its fills, or reconstructed"
		}
		r, _ := s.Exec.(Replay)
		last := lastReadBack(s.info.Verify)
		for i, rec := range s.info.Verify {
			if len(last[i]) > 0 {
				s.breakFailed(rec, s.judgeVerifyOf(r.Dir, rec, last[i]))
			}
		}
		return s.integrityDrives(), ""
	}
	last := -1
	for i, st := range s.Plan.Steps {
		if st.Kind == plan.StepVerify {
			last = i
		}
	}
	s.resumedIntegrity()
	if last < 0 && len(s.integrityDrives()) > 0 {
		return s.integrityDrives(), "" // read back before the run was resumed
	}
	if last < 0 {
		why := "no verify pass in the plan: nothing selected needs a fill"
		switch {
		case s.Precondition == plan.None:
			why = "no verify pass: -precondition=none writes nothing to read back"
		case s.Spec.Precondition.FillPasses == 0:
			why = "no verify pass: " + s.Spec.File + " sets fill_passes = 0, so nothing is written to read back"
		}
		return nil, why
	}
	for s.cursor <= last && s.cursor < len(s.Plan.Steps) {
		st := s.Plan.Steps[s.cursor]
		s.cursor++
		s.runStep(ctx, st, logf)
	}
	drives := s.integrityDrives()
	if len(drives) == 0 {
		return nil, "no verify pass ran: the run was stopped, or the purge or fill before it failed on every drive (their cells say why)"
	}
	return drives, ""
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

// breakFailed marks the drives that failed rec's verify pass broken, as
// the live run did: their cells that were not measured fail with the
// verify pass's reason.
func (s *Suite) breakFailed(rec record.Verify, results []judged) {
	for _, r := range results {
		if d := s.driveIndex(r.path); d >= 0 && r.Verdict == report.Fail {
			s.markBroken([]int{d}, r.cause, "the verify pass ("+integrityTest(r.path)+")", errors.New(r.Message))
		}
	}
}

// replayUnusable says why a replayed cell that was not recorded was not
// measured: one of its drives failed a recorded verify pass, and the live
// run failed the cell at once. The verify passes are judged here once,
// without reporting them (TestIntegrity reports them when selected).
func (s *Suite) replayUnusable(cell plan.Cell) unusableDrive {
	s.replayBroken.Do(func() {
		r, _ := s.Exec.(Replay)
		for _, rec := range s.info.Verify {
			out, err := judgeVerifyIn(r.Dir, rec)
			if err != nil {
				continue // TestIntegrity says so when selected
			}
			s.breakFailed(rec, out)
		}
	})
	return s.unusable(cell)
}

// judgeVerifyIn judges the verify pass rec recorded under dir, each drive
// by the method its recording used, without reporting it: a replay and a
// resume ask it which drives a recorded read-back failed.
func judgeVerifyIn(dir string, rec record.Verify) ([]judged, error) {
	drives := make([]integrity.Drive, len(rec.Drives))
	for i, d := range rec.Drives {
		drives[i] = integrity.Drive{Path: d.Path, Target: d.Target, Bytes: d.Bytes, LBASize: d.LBASize, Method: verifyMethod(rec)}
	}
	stdout, stderr, failure, err := record.ReadVerify(dir, rec)
	if err != nil {
		return nil, err
	}
	var runErr string
	var stopped bool
	if failure != nil {
		runErr, stopped = failure.Message, failure.Interrupted
	}
	var out []judged
	for _, res := range integrity.Judge(stdout, stderr, runErr, stopped, drives) {
		cause := report.CauseFioFailed
		if len(res.Mismatches) > 0 {
			cause = report.CauseIntegrity
		}
		out = append(out, judged{IntegrityDrive: IntegrityDrive{Verdict: res.Verdict, Message: res.Message}, path: res.Drive, cause: cause})
	}
	return out, nil
}

// unmeasured lists cells in run.json as failed unmeasured because a drive
// failed a verify pass, so that a replay lists them too.
func (s *Suite) unmeasured(cells []plan.Cell, logf func(string, ...any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cells {
		if !slices.Contains(s.info.Unmeasured, c.Test) {
			s.info.Unmeasured = append(s.info.Unmeasured, c.Test)
		}
	}
	if err := s.saveRunInfo(); err != nil && logf != nil {
		logf("%s: %v", s.Cfg.Record, err)
	}
}

func (s *Suite) integrityDrives() []IntegrityDrive {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]IntegrityDrive(nil), s.integrity...)
}

// driveIndex is the index of the drive given as path; -1 when none is.
func (s *Suite) driveIndex(path string) int {
	for i, d := range s.Drives {
		if d.Path == path {
			return i
		}
	}
	return -1
}

// integrityName is a drive's TestIntegrity subtest name: its path without
// /dev/ ("nvme0n1", "disk/by-id/nvme-X" becomes "nvme-X"), a file's name.
func integrityName(path string) string {
	name := strings.TrimPrefix(path, "/dev/")
	if strings.Contains(name, "/") {
		name = filepath.Base(name)
	}
	return name
}

func integrityTest(path string) string { return "TestIntegrity/" + integrityName(path) }
