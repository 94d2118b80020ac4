package fwrun

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Started is the verdict of a step kept before its first firmware command
// is sent and replaced once the step is judged: a recording that still
// holds it was interrupted during the activation, which a replay and a
// resume judge a failure (the drive is never flashed again).
const Started = "started"

// Entry is one drive's step as firmware.json keeps it: its result and the
// drive's index in the run's drives, which a resume and a replay follow
// whatever path the drive has now.
type Entry struct {
	firmware.Result
	// DriveIndex is the drive's index in run.json's drives (absent in
	// recordings made before it: the entry is then the drive at its path).
	DriveIndex *int `json:"drive_index,omitempty"`
}

// Asking is run.json's firmware: the steps asked before (a resumed run's
// run.json keeps them) and those pl plans that are not among them, each
// with its image (cfg's -firmware or -firmware-back), size and sha256.
func Asking(before []record.FirmwareAsked, pl plan.Plan, cfg *cmdline.Config) []record.FirmwareAsked {
	out := slices.Clone(before)
	for _, st := range pl.Steps {
		if st.Kind != plan.StepFirmware || slices.ContainsFunc(out, func(a record.FirmwareAsked) bool { return a.Step == st.Purge }) {
			continue
		}
		a := record.FirmwareAsked{Step: st.Purge, Image: cfg.Firmware, Drives: slices.Clone(st.Drives)}
		if st.Purge == firmware.StepBack {
			a.Image = cfg.FirmwareBack
		}
		a.Bytes, a.SHA256 = sum(a.Image)
		out = append(out, a)
	}
	return out
}

// sum is the size and sha256 (hex) of the file at path; "" when it does
// not read.
func sum(path string) (int64, string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, ""
	}
	return n, hex.EncodeToString(h.Sum(nil))
}

// loadEntries reads the entries kept in dir; none when it holds none.
func loadEntries(dir string) ([]Entry, error) {
	return record.LoadList[Entry](dir, File, "steps")
}

// saveEntries adds es to the entries kept in dir, replacing a drive's
// earlier entry of the same step unless that failed: a failure is never
// forgotten, while a started step is replaced by its verdict.
func saveEntries(dir string, es []Entry) error {
	return record.KeepList(dir, File, "steps", es,
		func(k, r Entry) bool {
			if k.DriveIndex != nil && r.DriveIndex != nil {
				// By the drive, whatever its path: on a resume that found
				// the drives renumbered, another drive may have this one's
				// old path.
				return *k.DriveIndex == *r.DriveIndex && k.Step == r.Step
			}
			return k.Drive == r.Drive && k.Step == r.Step
		},
		func(k Entry) bool { return k.Verdict == firmware.Fail })
}

// CheckKept refuses entries a run could not have written: one of a drive not
// among drives (the run's, by index, or by path in an entry without
// one), a second entry for a drive's step, a step other than activate
// and back, a verdict other than pass, fail, inconclusive or started, or
// a pass its own figures contradict (a stall over its max_stall, the
// revision unchanged, no command sent, writes that did not read back).
// It resolves each entry's drive to the path it has now.
func CheckKept(es []Entry, drives []plan.Drive) ([]firmware.Result, error) {
	var errs []error
	var out []firmware.Result
	seen := map[string]bool{}
	for i, e := range es {
		r := e.Result
		where := fmt.Sprintf("%s: steps[%d] (%q, %q)", File, i, r.Drive, r.Step)
		d := slices.IndexFunc(drives, func(d plan.Drive) bool { return d.Path == r.Drive })
		if e.DriveIndex != nil {
			d = *e.DriveIndex
			if d < 0 || d >= len(drives) {
				d = -1
			}
		}
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s: not a drive of the run (%s)", where, strings.Join(paths(drives), ", ")))
			continue
		}
		if now := drives[d].Path; now != r.Drive {
			// The drive, matched by its identity, is at another path now.
			if r.Message != "" {
				r.Message = fmt.Sprintf("[recorded at %s, this drive's path then] %s", r.Drive, r.Message)
			}
			r.Drive = now
		}
		key := strconv.Itoa(d) + "/" + r.Step
		switch {
		case r.Step != firmware.StepActivate && r.Step != firmware.StepBack:
			errs = append(errs, fmt.Errorf("%s: step %q is neither %q nor %q", where, r.Step, firmware.StepActivate, firmware.StepBack))
			continue
		case seen[key]:
			errs = append(errs, fmt.Errorf("%s: a second entry for the drive's step", where))
			continue
		}
		seen[key] = true
		switch {
		case r.Verdict != firmware.Pass && r.Verdict != firmware.Fail && r.Verdict != report.Inconclusive && r.Verdict != Started:
			errs = append(errs, fmt.Errorf("%s: verdict %q is none of %q, %q, %q, %q", where, r.Verdict, firmware.Pass, firmware.Fail, report.Inconclusive, Started))
		case r.Verdict == firmware.Pass && r.MaxStallMS > 0 && r.StallMS > r.MaxStallMS:
			errs = append(errs, fmt.Errorf("%s: verdict pass contradicts its own stall: %.0f ms over its max_stall of %.0f ms", where, r.StallMS, r.MaxStallMS))
		case r.Verdict == firmware.Pass && (r.After == "" || r.After == r.Before):
			errs = append(errs, fmt.Errorf("%s: verdict pass contradicts its revisions: %q before, %q after (unchanged)", where, r.Before, r.After))
		case r.Verdict == firmware.Pass && (len(r.Commands) == 0 || !r.Verified):
			errs = append(errs, fmt.Errorf("%s: verdict pass with no command sent or writes not read back (%d commands, verified %v)", where, len(r.Commands), r.Verified))
		case r.Verdict == firmware.Fail && r.Message == "":
			errs = append(errs, fmt.Errorf("%s: verdict fail with no message", where))
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// kept is the verdicts a recording in dir keeps for drives, as a replay
// and a resume judge them: a step started and never judged fails
// (interrupted during the activation); a drive a step of asked (run.json's
// firmware) names without a verdict fails, naming the step and what is
// missing; entries CheckKept refuses fail every drive. why is set when there
// is nothing to judge and none was asked. todo, when set, says which
// (drive index, step) a live resume still runs: those are not failed for
// a missing verdict. refused says CheckKept refused the entries.
func kept(dir string, asked []record.FirmwareAsked, drives []plan.Drive, todo func(d int, step string) bool) (rs []firmware.Result, why string, refused bool) {
	es, err := loadEntries(dir)
	var got []firmware.Result
	if err == nil {
		got, err = CheckKept(es, drives)
	}
	if err != nil {
		return failEvery(asked, drives, fmt.Sprintf("the recorded firmware verdicts are refused: %v", err)), "", true
	}
	if len(got) == 0 && len(asked) == 0 {
		return nil, "the recording holds no firmware activation (-firmware)", false
	}
	for _, r := range got {
		rs = append(rs, Interrupted(r))
	}
	for _, a := range asked {
		for _, d := range a.Drives {
			if d < 0 || d >= len(drives) || (todo != nil && todo(d, a.Step)) {
				continue
			}
			path := drives[d].Path
			if slices.ContainsFunc(got, func(r firmware.Result) bool { return r.Drive == path && r.Step == a.Step }) {
				continue
			}
			rs = append(rs, firmware.Result{Drive: path, Step: a.Step, Image: a.Image, ImageBytes: a.Bytes, Verdict: firmware.Fail,
				Message: fmt.Sprintf("%s: run.json records firmware %s asked of this drive (%s, %d bytes, sha256 %s), but %s holds no verdict for it: its activation is not proven (a resume with the same -firmware/-firmware-back runs it)",
					path, a.Step, a.Image, a.Bytes, orNone(a.SHA256), filepath.Join(dir, File))})
		}
	}
	order := func(r firmware.Result) int {
		d := slices.IndexFunc(drives, func(d plan.Drive) bool { return d.Path == r.Drive })
		if r.Step == firmware.StepBack {
			return 2*d + 1
		}
		return 2 * d
	}
	slices.SortStableFunc(rs, func(a, b firmware.Result) int { return order(a) - order(b) })
	return rs, "", false
}

// Interrupted is r as judged once its run has gone: a step kept as
// started fails, naming the commands it sent or was about to send; any
// other is r.
func Interrupted(r firmware.Result) firmware.Result {
	if r.Verdict != Started {
		return r
	}
	r.Verdict = firmware.Fail
	r.Message = fmt.Sprintf("%s: interrupted during the activation: %s (%s): whether the drive took the image, and how long its I/O stalled, is unknown; a resume never flashes it again",
		r.Drive, strings.Join(r.Commands, "; "), r.Message)
	return r
}

// started is the entry kept for drive d before in's commands are sent.
func started(in firmware.Input, d int) Entry {
	r := firmware.Result{Drive: in.Drive, Step: in.Step, Image: in.Image, Action: in.Action, Slot: in.Slot, Verdict: Started,
		Message: "started " + time.Now().UTC().Format(time.RFC3339) + ", not finished"}
	r.ImageBytes, _ = sum(in.Image)
	commit := []string{"fw-commit", in.Admin, "--slot=" + strconv.Itoa(in.Slot), "--action=" + strconv.Itoa(firmware.CommitAction(in.Action))}
	cmds := [][]string{{"fw-download", in.Admin, "--fw=" + in.Image}, commit}
	if firmware.CommitAction(in.Action) != 3 {
		cmds = append(cmds, []string{"reset", in.Admin})
	}
	for _, c := range cmds {
		r.Commands = append(r.Commands, "nvme "+strings.Join(c, " "))
	}
	return Entry{Result: r, DriveIndex: &d}
}

// failEvery fails each drive of each step asked (every drive's activate
// when none is) with msg.
func failEvery(asked []record.FirmwareAsked, drives []plan.Drive, msg string) []firmware.Result {
	if len(asked) == 0 {
		a := record.FirmwareAsked{Step: firmware.StepActivate}
		for d := range drives {
			a.Drives = append(a.Drives, d)
		}
		asked = []record.FirmwareAsked{a}
	}
	var out []firmware.Result
	for _, a := range asked {
		for _, d := range a.Drives {
			if d >= 0 && d < len(drives) {
				out = append(out, firmware.Result{Drive: drives[d].Path, Step: a.Step, Verdict: firmware.Fail, Message: drives[d].Path + ": " + msg})
			}
		}
	}
	return out
}

func paths(drives []plan.Drive) []string {
	var out []string
	for _, d := range drives {
		out = append(out, d.Path)
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
