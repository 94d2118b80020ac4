// Package datacheck decides, before a resume trusts any recorded state of
// a drive (its fill, its read-back, its preconditioning, its kept
// cells), whether the drive holds what the interrupted run left on it:
// its data sample (package device/sample) read now against the one
// run.json recorded after the last step that read or wrote it.
//
// When nothing was writing the drive when the run stopped (a read cell,
// a read-back, another drive's step, no step at all), the sample must
// match exactly: a drive that does not is not the recorded drive as it
// was left, whatever its identifiers say; a drive whose failure run.json
// records is disqualified, never written again, and its identity
// decides. When a step was writing it,
// the sample cannot match, and its identifiers alone decide: a drive
// whose identity does not say it is the recorded drive (one that reports
// nothing, matched by its path and device number only; a loop device or
// file known only by a device and inode that a file created since may
// have been given) is refused, and so is such a drive, however it was
// left, whose recorded sample holds only zeros, which any blank drive
// also holds.
package datacheck

import (
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// Drive is one drive of a resumed run as the check sees it: recorded
// drive Index of the interrupted run, given at Path now.
type Drive struct {
	Index int
	Path  string
	// Unconfirmed says why the drive's identity does not say it is the
	// recorded drive ("" when it does): it reports nothing that tells it
	// from another and was matched by its path and device number alone,
	// within the boot that recorded it, or it is known only by a file's
	// device and inode, which a file created since may have been given
	// (match.Match.Unconfirmed). Its data must say it.
	Unconfirmed string
	// Now is its sample read now, Err why it did not read; both zero
	// when it was not read (Needed said no).
	Now sample.Print
	Err error
	// Absent says the drive is not there (plan.Drive.Absent): nothing is
	// read, and nothing recorded of it is trusted but its failure.
	Absent bool
}

// Needed reports whether recorded drive i's data must be read to judge
// it: not when its identity decides (a step was writing it, or it is
// disqualified) and says it is the recorded drive (confirmed).
func Needed(prior record.Run, i int, confirmed bool) bool {
	rec := entry(prior, i)
	return rec == nil || !confirmed || rec.Writing == "" && !failed(prior, i)
}

// failed reports whether run.json records a failure of drive i: the
// drive is disqualified, nothing more is written to it, and of what was
// recorded of it only its failure is kept, which no resume forgets (its
// data may well have changed: a drive that failed its read-back).
func failed(prior record.Run, i int) bool {
	_, ok := prior.FailureOf(i)
	return ok
}

func entry(prior record.Run, i int) *record.DriveSample {
	if prior.Samples == nil || i < 0 || i >= len(prior.Samples.Drives) {
		return nil
	}
	return &prior.Samples.Drives[i]
}

// Refusals is one error for each drive that the resume of the run
// prior (recorded in dir) must not trust, naming the drive, what was
// expected and what was found, and ending with fix; nil when every drive
// holds what the run left on it.
func Refusals(prior record.Run, drives []Drive, dir, fix string) []error {
	var errs []error
	for _, d := range drives {
		if why := judge(prior, d); why != "" {
			errs = append(errs, fmt.Errorf("parsing -resume: %s (drive %d of the interrupted run in %s) %s; %s", d.Path, d.Index+1, dir, why, fix))
		}
	}
	return errs
}

// judge says why drive d is not trusted; "" when it is.
func judge(prior record.Run, d Drive) string {
	rec := entry(prior, d.Index)
	was, ok := prior.Samples.Print(d.Index)
	switch {
	case d.Absent:
		return "" // the resume disqualifies it
	case rec == nil:
		return "has no data sample in run.json (recorded by a drivequal that did not keep one): what it holds cannot be checked"
	case rec.Writing != "" && d.Unconfirmed != "":
		return fmt.Sprintf("%s, and the interrupted run was writing it (%s): its data cannot say whether it is the drive the run wrote, so nothing recorded of it is trusted; a fresh run is the fix", d.Unconfirmed, rec.Writing)
	case rec.Writing != "" || failed(prior, d.Index) && d.Unconfirmed == "":
		return "" // its identity decides
	case !ok:
		return fmt.Sprintf("has no data sample in run.json: it did not read after %s (%s)", orSetup(rec.After), rec.Error)
	case d.Err != nil:
		return fmt.Sprintf("does not read its data sample now: %v", d.Err)
	}
	if diff := sample.Compare(was, d.Now); diff != nil {
		return fmt.Sprintf("does not hold what the interrupted run left on it: %s; nothing was writing it when the run stopped (its sample was read after %s, %s), so it is not the recorded drive as it was left (another device at its path, or the drive changed since): give the drive the run measured", diff, orSetup(rec.After), wrote(rec.Wrote))
	}
	if d.Unconfirmed != "" && was.Zeros() {
		return fmt.Sprintf("%s, and its recorded sample holds only zeros, as any blank drive does: its data cannot tell it from another drive", d.Unconfirmed)
	}
	return ""
}

func orSetup(step string) string {
	if step == "" || step == "setup" {
		return "setup, before the run's first step"
	}
	return "step " + step
}

func wrote(step string) string {
	if step == "" {
		return "no step of the run had written it"
	}
	return "last written by step " + step
}

// Read reads the sample of each drive whose data the check needs
// (Needed), drives[i] being recorded drive i; unconfirmed[i] says why
// its identity does not say it is the recorded drive, "" when it does.
func Read(prior record.Run, drives []plan.Drive, unconfirmed []string) []Drive {
	out := make([]Drive, len(drives))
	for i, d := range drives {
		out[i] = Drive{Index: i, Path: d.Path}
		if i < len(unconfirmed) {
			out[i].Unconfirmed = unconfirmed[i]
		}
		if out[i].Absent = d.Absent != ""; out[i].Absent {
			continue
		}
		if Needed(prior, i, out[i].Unconfirmed == "") {
			out[i].Now, out[i].Err = sample.Read(d.Path, d.Size, d.Block)
		}
	}
	return out
}
