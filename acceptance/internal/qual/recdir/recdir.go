// Package recdir says what a recording's directory holds: the run a new
// run would replace, whether there is anything to replay, and whether a
// replayed recording's files are as recorded.
package recdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report/hashes"
)

// ReadPrior reads the run.json in dir; found is false when there is none.
func ReadPrior(dir string) (prior record.Run, found bool, err error) {
	path := filepath.Join(dir, "run.json")
	data, err := record.ReadFile(dir, "run.json")
	if errors.Is(err, os.ErrNotExist) {
		return prior, false, nil
	}
	if err != nil {
		return prior, true, err
	}
	if err := json.Unmarshal(data, &prior); err != nil {
		return prior, true, fmt.Errorf("%s: %w", path, err)
	}
	return prior, true, nil
}

// Replace says what a new run (no -resume) would replace in dir: the
// replacing line for the terminal ("" when dir holds no run to replace),
// or, for a live run that did not run to its end without overwrite, the
// error refusing the new run: it would replace its run.json, its kept
// cells, prepare/ and the health logs read on receipt. A finished
// recording is replaced, and the terminal says so. Nothing is written.
func Replace(dir string, overwrite bool) (replacing string, refused error) {
	prior, found, err := ReadPrior(dir)
	if !found {
		return "", nil
	}
	why := ""
	if err != nil {
		why = fmt.Sprintf("its run.json does not read (%v)", err)
	} else {
		why = record.Unfinished(prior)
	}
	if why == "" {
		if prior.Mode == "record" {
			return "replacing the finished recording in " + dir, nil
		}
		return "", nil
	}
	what := fmt.Sprintf("%s holds a recorded run that a new run would replace, and %s", dir, why)
	if err == nil {
		what = fmt.Sprintf("%s holds the recording of an unfinished run (%s, %d cells recorded, %d drives): %s", dir, prior.Spec, len(prior.Tests), len(prior.Drives), why)
	}
	if overwrite {
		return "replacing, as -overwrite says, " + what, nil
	}
	return "", fmt.Errorf("parsing -record: %s; a new run would destroy it: continue it with -resume, start the new run with a new -record directory, or give -overwrite to replace it", what)
}

// CheckFiles compares the replayed recording's files in dir with the
// sha256 its run.json (info) lists: the replay still judges them, and
// the report and the terminal (warnings) name each file edited after
// recording.
func CheckFiles(dir string, info record.Run) (c *hashes.Check, warnings []string) {
	c = &hashes.Check{Files: len(info.Files), Unhashed: len(info.Files) == 0}
	if c.Unhashed {
		// No sha256 listed: a recording made before drivequal kept them,
		// unless run.json itself no longer matches the sha256 kept beside
		// it (its files emptied by an edit).
		if ch, _, err := record.CheckRun(dir); err == nil && ch != nil {
			c.Unhashed = false
			c.Edited = append(c.Edited, ch.String())
			return c, []string{fmt.Sprintf("%s: %s; its list of files' sha256 is empty, which the run.json drivequal wrote did not say: what it no longer lists is judged as never recorded", dir, ch)}
		}
		return c, []string{fmt.Sprintf("%s carries no sha256 of its files (run.json format %d): whether one was edited after recording cannot be told", dir, info.Format)}
	}
	changed, err := record.Check(dir, info)
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	for _, ch := range changed {
		c.Edited = append(c.Edited, ch.String())
		if ch.Refused != "" || ch.Missing {
			warnings = append(warnings, fmt.Sprintf("%s: %s; it is not read, and what needs it fails", dir, ch))
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s: %s; it is judged as it is now", dir, ch))
	}
	for _, u := range Unvouched(dir, info) {
		c.Unvouched = append(c.Unvouched, u)
		warnings = append(warnings, fmt.Sprintf("%s: %s", dir, u))
	}
	return c, warnings
}

// Unvouched lists the files a replay of the recording in dir judges that
// its run.json (info) holds no sha256 of: the stderr of a verify pass
// killed before fio printed its report (its output is not there), which
// fio streamed while the run was killed, so it was never hashed, and a
// purge.json of a recording made before run.json hashed it; each as
// "<path> (why)".
func Unvouched(dir string, info record.Run) []string {
	var out []string
	for _, v := range info.Verify {
		if !v.Running || record.Exists(dir, v.Raw) {
			continue
		}
		rel := strings.TrimSuffix(v.Raw, record.OutputExt) + record.StderrExt
		if _, ok := info.Files[rel]; ok || !record.Exists(dir, rel) {
			continue
		}
		out = append(out, rel+" (the stderr of a verify pass killed before fio printed its report, which run.json holds no sha256 of: whether it was edited cannot be told)")
	}
	if _, ok := info.Files[kept.File]; !ok && record.Exists(dir, kept.File) {
		out = append(out, kept.File+" (the purge verdicts, kept by a drivequal that did not hash them: whether they were edited cannot be told)")
	}
	if _, ok := info.Files[fwrun.File]; !ok && record.Exists(dir, fwrun.File) {
		out = append(out, fwrun.File+" (the firmware verdicts, which run.json holds no sha256 of: whether they were edited cannot be told)")
	}
	return out
}

// HasVerify reports whether dir's run.json lists a verify pass: a run
// whose drives all failed the read-back measured nothing, and its
// recording is still the evidence of TestIntegrity.
func HasVerify(dir string) bool {
	data, err := record.ReadFile(dir, "run.json")
	if err != nil {
		return false
	}
	var info struct {
		Verify []json.RawMessage `json:"verify"`
	}
	return json.Unmarshal(data, &info) == nil && len(info.Verify) > 0
}

// HasRecordings reports whether dir holds at least one recorded measurement.
func HasRecordings(dir string) bool {
	found := false
	for _, top := range []string{"TestSingleDrive", "TestScaling"} {
		filepath.WalkDir(filepath.Join(dir, top), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				found = true
				return fs.SkipAll
			}
			return nil
		})
	}
	return found
}

// Within returns the directory under dir that holds a recording, for a
// -replay given a directory that holds none: a report directory's raw/
// (where a run records by default) first, then any directory directly
// in dir, in name order; "" when none does.
func Within(dir string) string {
	sub := filepath.Join(dir, "raw")
	if HasRecordings(sub) || HasVerify(sub) {
		return sub
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		if e.IsDir() && (HasRecordings(sub) || HasVerify(sub)) {
			return sub
		}
	}
	return ""
}

// Edited is what a resume of the recording in dir refuses because its
// files were edited since they were recorded (a resume would keep them as
// measured), run.json among them and a run.json without its sha256
// beside it; and, as warnings, the files that are gone: what needs them
// is measured or read again (a cell whose recording is missing, a verify
// pass that does not read).
func Edited(dir string, prior record.Run) (refused []error, warnings []string) {
	changed, err := record.Check(dir, prior)
	if err != nil {
		refused = append(refused, fmt.Errorf("parsing -resume: %w", err))
	}
	for _, c := range changed {
		switch {
		case c.Path == record.SumFile:
			// Refused below, saying why an edit cannot be told.
		case c.Missing:
			warnings = append(warnings, fmt.Sprintf("%s: %s: what needs it is measured again", dir, c))
		default:
			refused = append(refused, fmt.Errorf("parsing -resume: %s in %s: a resume keeps the recording as measured; restore the file, judge the recording as it is with -replay=%s (it says what was edited), or start a new run with a new -record directory (without -resume)",
				c, dir, dir))
		}
	}
	if _, kept, err := record.CheckRun(dir); err == nil && !kept {
		refused = append(refused, fmt.Errorf("parsing -resume: %s has no %s beside it: it was recorded by a drivequal that did not keep run.json's sha256, or the file was removed, so an edit of run.json cannot be told; judge the recording with -replay=%s, or start a new run with a new -record directory (without -resume)",
			filepath.Join(dir, "run.json"), record.SumFile, dir))
	}
	return refused, warnings
}

// Resumable reads the run.json in dir that a resume continues, and
// refuses it, saying why, when there is none or it is not a drivequal
// recording of a live run (another format, a replay's, a reconstruction,
// no spec or no drives).
func Resumable(dir string) (prior record.Run, errs []error) {
	path := filepath.Join(dir, "run.json")
	data, err := record.ReadFile(dir, "run.json")
	if errors.Is(err, os.ErrNotExist) {
		return prior, []error{fmt.Errorf("parsing -resume: %s does not exist: there is no recorded run to resume in %s; give the -record directory of the interrupted run, or drop -resume to start a new run", path, dir)}
	}
	if err != nil {
		return prior, []error{fmt.Errorf("parsing -resume: %w", err)}
	}
	why := ""
	if err := json.Unmarshal(data, &prior); err != nil {
		why = err.Error()
	}
	switch {
	case why != "":
	case prior.Format != record.Format:
		why = fmt.Sprintf("format %d, this drivequal writes %d", prior.Format, record.Format)
	case prior.Mode != "record":
		why = fmt.Sprintf("mode %q, not \"record\"", prior.Mode)
	case prior.Reconstructed:
		why = "it was reconstructed from published figures, not measured"
	case prior.SpecSHA256 == "" || len(prior.Drives) == 0:
		why = "it names no spec sha256 or no drives"
	}
	if why != "" {
		return prior, []error{NotOurs(dir, why)}
	}
	return prior, nil
}

// NotOurs is the refusal of a resume of the recording in dir, whose
// run.json is not a drivequal recording of a live run, for why.
func NotOurs(dir, why string) error {
	return fmt.Errorf("parsing -resume: %s is not a drivequal recording of a live run (%s): give the -record directory of the interrupted run, or drop -resume and use a new -record directory", filepath.Join(dir, "run.json"), why)
}

// PassTime is when the recorded verify pass v last wrote its output (its
// report, else its streamed stderr: a pass killed before fio ended),
// RFC 3339 in UTC; now if neither is on disk.
func PassTime(dir string, v record.Verify) string {
	base := strings.TrimSuffix(filepath.Join(dir, filepath.FromSlash(v.Raw)), record.OutputExt)
	for _, p := range []string{base + record.OutputExt, base + record.StderrExt} {
		if fi, err := os.Lstat(p); err == nil {
			return fi.ModTime().UTC().Format(time.RFC3339)
		}
	}
	return time.Now().UTC().Format(time.RFC3339)
}
