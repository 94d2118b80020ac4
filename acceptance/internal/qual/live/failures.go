package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/fioexec"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A drive's failures are facts of the run: each is written to run.json
// (record.Run's failures) as it is seen, before anything else is written
// to that drive, so that a kill right after it loses nothing, and a
// replay and every resume fail the drive's remaining cells with it.

// Failures is run.json's drive failures so far, in the order they
// happened (a resumed run's, the interrupted run's first).
func (r *Runner) Failures() []record.DriveFailure {
	r.init()
	return r.rec.Failures()
}

// facts writes what the recording must know of each drive as it
// happens: its failures, the purges and fills that left its last
// read-back behind, the sanitizes sent to its controller, its peak
// temperature.
type facts struct {
	rec     *runjson.Recorder
	drives  *drives
	list    []plan.Drive
	lines   *lines
	ctrls   map[string]nvme.Controller
	record  string
	resumed bool
}

// recordFailure writes drive d's failure to run.json and returns it; what
// says what the drive failed ("the verify pass (TestIntegrity/x)"), test
// the cell it arose during ("" for none).
func (r *facts) recordFailure(d int, cause, what, test, msg string) record.DriveFailure {
	f := record.DriveFailure{Drive: d, Path: r.list[d].Path, Cause: cause, Step: what, Test: test, Message: msg,
		At: time.Now().UTC().Format(time.RFC3339)}
	if r.resumed {
		f.Resume = r.rec.Resumptions()
	}
	if err := r.rec.Failed(f); err != nil {
		r.lines.progress(nil, "recording the failure of %s in %s: %v", r.list[d].Path, r.record, err)
	}
	if first, ok := r.rec.FailureOf(d); ok {
		return first
	}
	return f
}

// disqualify records drive d's failure and marks the drive broken with it,
// worded as a replay and a resume word it.
func (r *facts) disqualify(d int, cause, what, test, msg string) {
	f := r.recordFailure(d, cause, what, test, msg)
	r.drives.breakWith(d, unusable{cause: f.Cause, text: verdict.DisqualifiedText(f)}, false)
}

// failDrives records that drives failed step with err, then marks them
// broken: their remaining cells fail at once.
func (r *facts) failDrives(drives []int, cause string, st plan.Step, err error) {
	for _, d := range drives {
		r.disqualify(d, cause, fmt.Sprintf("a preparation step (step %d %s: %s)", st.N, st.Kind, st.Name), "", err.Error())
	}
}

// ioErrors records each of found, an I/O error of the measurement of owner
// (fio's stderr, or its output), as its drive's failure, unless the drive
// is gone or changed (pulled: its capacity 0, then its node gone).
func (r *facts) ioErrors(owner plan.Cell, found []verdict.DriveIOError, logf func(string, ...any)) {
	for _, f := range found {
		if r.drives.guard == nil || r.drives.sys.Recheck(r.list[f.Drive].Info) == nil {
			r.disqualify(f.Drive, report.CauseIOError, "a measurement ("+owner.Test+")", owner.Test, f.Message)
			logf("%s: %s", owner.Test, f.Message)
		}
	}
}

// TargetsFailed is a preparation step's fio failure that names the
// targets whose jobs reported errors (package fioexec).
type TargetsFailed = fioexec.TargetsFailed

// named reports whether err is fio's report naming the drives whose
// jobs failed: a failure of those drives, recorded as theirs.
func named(err error) bool {
	var tf *TargetsFailed
	return errors.As(err, &tf) && len(tf.Targets) > 0
}

// failedDrives is the drives of a step whose fio failed with err: those
// whose jobs reported errors when fio says which, else all of them.
func failedDrives(drives []int, err error) []int {
	var tf *TargetsFailed
	if !errors.As(err, &tf) || len(tf.Targets) == 0 {
		return drives
	}
	var out []int
	for _, i := range tf.Targets {
		if i >= 0 && i < len(drives) {
			out = append(out, drives[i])
		}
	}
	if len(out) == 0 {
		return drives
	}
	return out
}

// markWritten marks st's drives (a purge's, widened to the namespaces it
// reaches) written since their last read-back in run.json, and a
// sanitize's controllers as sent one, before the step starts.
func (r *facts) markWritten(st plan.Step) {
	if err := r.rec.Written(st.Drives, len(r.list), true); err != nil {
		r.lines.progress(nil, "marking %s written in %s: %v", r.lines.drivesLine(st.Drives), r.record, err)
	}
	if devs := r.sanitizes(st); len(devs) > 0 {
		if err := r.rec.Sanitizing(devs, true); err != nil {
			r.lines.progress(nil, "recording the sanitize of %v in %s: %v", devs, r.record, err)
		}
	}
}

// sanitized records that the purge st ended: its sanitizes are done.
func (r *facts) sanitized(st plan.Step) {
	if devs := r.sanitizes(st); len(devs) > 0 {
		if err := r.rec.Sanitizing(devs, false); err != nil {
			r.lines.progress(nil, "recording the end of the sanitize of %v in %s: %v", devs, r.record, err)
		}
	}
}

// sanitizes lists the controllers the purge st sends a sanitize to.
func (r *facts) sanitizes(st plan.Step) []string {
	if st.Kind != plan.StepPurge || st.Purge != purge.Sanitize {
		return nil
	}
	var infos []device.Info
	for _, d := range st.Drives {
		infos = append(infos, r.list[d].Info)
	}
	steps, _ := purge.Plan(infos, st.Purge, r.ctrls)
	var out []string
	for _, s := range steps {
		if s.Kind == purge.SanitizeNVM {
			out = append(out, s.Device)
		}
	}
	return out
}

// readBackWhole records that drive d was read back whole: what it holds
// is its fill again.
func (r *facts) readBackWhole(d int) {
	if err := r.rec.Written([]int{d}, len(r.list), false); err != nil {
		r.lines.progress(nil, "marking %s read back in %s: %v", r.list[d].Path, r.record, err)
	}
}

// peak records drive d's new peak temperature (K) in run.json.
func (r *facts) peak(d, kelvin int) {
	if err := r.rec.Peak(d, len(r.list), kelvin); err != nil {
		r.lines.progress(nil, "recording the peak temperature of %s in %s: %v", r.list[d].Path, r.record, err)
	}
}

// recordSetupWarnings disqualifies, in a resumed run, each drive that
// had a critical warning at setup which the recording does not hold as
// its failure yet (raised after the interrupted run last read its log):
// it is recorded now, and the other drives go on.
func (r *facts) recordSetupWarnings(m *Monitor) error {
	for d, why := range m.setupWarnings() {
		if _, ok := r.rec.FailureOf(d); ok {
			continue
		}
		when := fmt.Sprintf("at the setup of resumption %d", r.rec.Resumptions())
		msg := fmt.Sprintf("%s has %s, read %s: nothing more is written to it", r.list[d].Path, why, when)
		r.disqualify(d, report.CauseCriticalWarning, "its health log check (read "+when+")", "", msg)
	}
	return nil
}
