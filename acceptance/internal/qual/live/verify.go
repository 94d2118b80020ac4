package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// verifyStep runs a verify pass (fio reads back every block the fill
// wrote), records it in run.json and judges each drive from its
// recording, as a replay does. A drive that returned other data than it
// was given is disqualified: it is marked broken, so its remaining cells
// fail at once with the mismatch instead of spending hours measuring the
// speed of a drive that cannot be bought.
func (r *Runner) verifyStep(ctx context.Context, st *plan.Step, logf func(string, ...any), w *Watch) string {
	running := -1
	if p, ok := r.Exec.(interface{ PreparedRaw(plan.Step) string }); ok {
		// Listed before fio starts: a kill mid-pass leaves fio's stderr,
		// streamed beside it, to judge.
		rec := verifyRecord(r.Record, r.Drives, st, p.PreparedRaw(*st), r.facts.resumption())
		rec.Running = true
		if serr := r.rec.Update(func(i *record.Run) { running = len(i.Verify); i.Verify = append(i.Verify, rec) }); serr != nil {
			logf("%s: %v", r.Record, serr)
		}
	}
	clock, w := r.clockPass(st, w)
	prep, err := r.Exec.Prepare(ctx, *st, r.Drives, logf, w)
	clock.end()
	if prep.Raw == "" && running >= 0 {
		// fio did not start: the pass is not listed.
		_ = r.rec.Update(func(i *record.Run) { i.Verify = append(i.Verify[:running], i.Verify[running+1:]...) })
	}
	if prep.Raw == "" && err == nil {
		// An executor that keeps no output (a test's): nothing to judge.
		logf("step %d: %s: the executor recorded no output to judge", st.N, st.Name)
		return ""
	}
	if prep.Raw == "" {
		// fio did not run at all: nothing was verified.
		err = fmt.Errorf("preparing %s: %s failed: %w", strings.Join(pathsOf(r.Drives, st.Drives), ","), st.Name, err)
		if ctx.Err() == nil {
			r.facts.failDrives(st.Drives, report.CausePreparation, *st, err)
		}
		logf("%v", err)
		return err.Error()
	}
	rec := verifyRecord(r.Record, r.Drives, st, prep.Raw, r.facts.resumption())
	// A drive that vanished during the pass (pulled): once its capacity
	// drops to 0, each read of it completes with no bytes and no error,
	// and fio compares a buffer the read never filled (zeros, or the data
	// of a block read before): what it names is no evidence of the
	// drive's media. The drive fails as disappeared (recorded by
	// vanished, and in the pass's record, which the verdict reads as a
	// replay does), not as a mismatch, when it went before fio first
	// named a failed read of it (clockPass).
	r.drives.vanished(st.Drives, "during "+st.Name)
	for i, d := range st.Drives {
		gone := r.drives.changed(d)
		switch {
		case gone == "" || i >= len(rec.Drives):
		case clock.wentFirst(d):
			rec.Drives[i].Gone = gone
		default:
			// fio named a failed read of it before it went: a drive whose
			// media failed and whose controller died after.
			logf("step %d: %s went after fio's first failed read of it: what fio read of it is the drive's own", st.N, r.Drives[d].Path)
		}
	}
	// Listed whole with the sha256 of its files in the same rewrite of
	// run.json: a kill before the step's files are hashed (Runner.runStep)
	// must not leave a read-back that a resume trusts and nothing vouches
	// for.
	sums, herr := verifySums(r.Record, prep.Raw)
	if herr != nil {
		logf("%s: %v", r.Record, herr)
	}
	if serr := r.rec.Update(func(i *record.Run) {
		if running >= 0 && running < len(i.Verify) {
			i.Verify[running] = rec
		} else {
			i.Verify = append(i.Verify, rec)
		}
		if len(sums) > 0 && i.Files == nil {
			i.Files = map[string]string{}
		}
		maps.Copy(i.Files, sums)
	}); serr != nil {
		logf("%s: %v", r.Record, serr)
	}
	rb := evidence.ReadBack{Dir: r.Record, Pass: rec, Disappeared: map[string]bool{}}
	for _, d := range st.Drives {
		if r.drives.changed(d) != "" {
			rb.Disappeared[r.Drives[d].Path] = true
		}
	}
	r.mu.Lock()
	r.readBacks = append(r.readBacks, rb)
	r.mu.Unlock()
	r.readBack(rb)
	for _, d := range verdict.ReadBack(rb, r.Drives) {
		if d.Verdict == report.Fail && d.Drive >= 0 && d.Cause == report.CauseDriveChanged {
			logf("step %d: %s", st.N, d.Message)
			continue
		}
		switch d.Verdict {
		case report.Pass:
			logf("step %d: %s", st.N, d.Message)
			if d.Drive >= 0 {
				r.facts.readBackWhole(d.Drive)
			}
		case report.Fail:
			logf("step %d: %s", st.N, d.Message)
			if d.Drive >= 0 {
				if verdict.Disqualifying(d.Cause) {
					// A mismatch or an I/O error reading the drive back:
					// the drive's failure, for every resume and replay.
					r.facts.disqualify(d.Drive, d.Cause, "the verify pass ("+verdict.IntegrityTest(d.Path)+")", "", d.Message)
				}
				r.drives.markBroken([]int{d.Drive}, d.Cause, "the verify pass ("+verdict.IntegrityTest(d.Path)+")", errors.New(d.Message))
			}
		}
	}
	return ""
}

// resumption is the resumption this run is (0: not resumed).
func (r *facts) resumption() int {
	if !r.resumed {
		return 0
	}
	return r.rec.Resumptions()
}

// verifyRecord is run.json's record (in dir) of the verify pass st of
// drives whose output is (or will be) raw; resume is the resumption that
// runs it.
func verifyRecord(dir string, drives []plan.Drive, st *plan.Step, raw string, resume int) record.Verify {
	rec := record.Verify{Step: st.N, Name: st.Name, Raw: filepath.ToSlash(raw), Pattern: st.Job.VerifyPattern, Resume: resume}
	if rel, rerr := filepath.Rel(dir, raw); rerr == nil {
		rec.Raw = filepath.ToSlash(rel)
	}
	for i, d := range st.Drives {
		vd := record.VerifyDrive{Path: drives[d].Path, Bytes: drives[d].Size, LBASize: drives[d].LogicalBlockSize}
		if i < len(st.Job.Targets) {
			vd.Target = st.Job.Targets[i].Path
			if sz := st.Job.Targets[i].Size; sz > 0 && (vd.Bytes == 0 || sz < vd.Bytes) {
				vd.Bytes = sz
			}
		}
		rec.Drives = append(rec.Drives, vd)
	}
	return rec
}

// verifySums is the sha256 of each file a verify pass kept at raw (its
// fio output, job file and stderr), by path relative to the recording
// in dir.
func verifySums(dir, raw string) (map[string]string, error) {
	base := strings.TrimSuffix(raw, record.OutputExt)
	var rels []string
	for _, ext := range []string{record.OutputExt, record.JobExt, record.StderrExt} {
		rel, err := filepath.Rel(dir, base+ext)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if _, err := os.Stat(base + ext); err == nil {
			rels = append(rels, filepath.ToSlash(rel))
		}
	}
	return record.HashFiles(dir, rels)
}
