// Package absent is the drives a resume after the whole host's power cut
// goes on without.
//
// They are those that did not come back. A recorded drive not found, with a power-loss cycle the cut left pending (or recorded as
// not back already), given at a path where nothing is, takes its
// recorded place as a drive that is not there (plan.Drive.Absent), its
// own recorded description standing for it; the resume disqualifies it
// in run.json, and nothing inspects, holds, reads or writes it.
package absent

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/powertest"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Step is the step run.json's failure of a drive that did not come back
// names.
const Step = "the resume's setup"

// Failure is run.json's record that drive i did not come back after the
// host's power cut, if any.
func Failure(r record.Run, i int) (record.DriveFailure, bool) {
	for _, f := range r.Failures {
		if f.Drive == i && f.Step == Step && f.Cause == report.CauseDriveChanged {
			return f, true
		}
	}
	return record.DriveFailure{}, false
}

// Recorded says whether run.json records that drive i did not come back.
func Recorded(r record.Run, i int) bool {
	_, ok := Failure(r, i)
	return ok
}

// Failed is the failure run.json records of drive d (index i), absent
// from resumption resume.
func Failed(i int, d plan.Drive, resume int) record.DriveFailure {
	return record.DriveFailure{Drive: i, Path: d.Path, Cause: report.CauseDriveChanged, Step: Step, Message: d.Absent,
		At: time.Now().UTC().Format(time.RFC3339), Resume: resume}
}

// Await waits up to within for each of paths where nothing is yet (a
// drive may take that long to come back after the cut), saying so on w.
func Await(ctx context.Context, sys device.System, paths []string, within time.Duration, w io.Writer) {
	missing := func() []string {
		var out []string
		for _, p := range paths {
			if sys.Nothing(p) {
				out = append(out, p)
			}
		}
		return out
	}
	gone := missing()
	if len(gone) == 0 {
		return
	}
	fmt.Fprintf(w, "drivequal: nothing is at %s yet: waiting up to %s (ready_within) for it to come back after the host's power cut\n", strings.Join(gone, ", "), within)
	deadline := time.Now().Add(within)
	for len(gone) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(min(time.Second, time.Until(deadline)))
		gone = missing()
	}
}

// Returning is what lets the resume of prior (recorded in dir) take
// paths, where nothing is, for drives that did not come back: only a
// run that cuts the host (host), and only a drive with a cycle that cut
// left pending, after the host restarted (another boot id than prior's:
// in the boot of the cut, the cut did not happen), or recorded as not
// back already.
func Returning(host bool, dir string, prior record.Run, paths []string) match.Returning {
	boot := match.BootID()
	restarted := boot == "" || prior.BootID == "" || boot != prior.BootID
	return match.Returning{Paths: paths, Pending: func(i int) bool {
		return host && (restarted && powertest.PendingHost(dir, prior.Files, prior.Samples, i) || Recorded(prior, i))
	}}
}

// Drive is the placeholder of recorded drive i of prior, given at path
// where nothing was, nor within ready_within (within, 0 when not known):
// named as its power-loss cycles are filed (its kernel name then),
// unless a drive given has that name now (taken): kernel names shift
// after a reboot when a drive is missing.
func Drive(prior record.Run, i int, path string, within time.Duration, taken func(name string) bool) plan.Drive {
	was := prior.Drives[i]
	name := filepath.Base(path)
	if prior.Samples != nil && i < len(prior.Samples.Drives) && prior.Samples.Drives[i].PowerLoss != "" {
		name = prior.Samples.Drives[i].PowerLoss
	}
	if taken(name) {
		name += "-absent"
	}
	info := device.Info{Path: path, Name: name, Model: was.Model, Serial: was.Serial, Firmware: was.Firmware, Size: was.Bytes, NUMANode: -1}
	nor := ""
	if within > 0 {
		nor = " nor within ready_within " + within.String()
	}
	return plan.Drive{Info: info, Capacity: was.Capacity,
		Absent: powertest.AbsentPrefix(path) + fmt.Sprintf("nothing was at %s when the resume started%s (drive %d of the run, recorded at %s: %s)", path, nor, i+1, was.Path, prior.Identities[i])}
}

// Present is infos (drives', by index) but those of drives absent.
func Present(infos []device.Info, drives []plan.Drive) []device.Info {
	var out []device.Info
	for i, in := range infos {
		if i >= len(drives) || drives[i].Absent == "" {
			out = append(out, in)
		}
	}
	return out
}

// Disqualify adds to broken (why, cause by drive) each drive of drives
// absent from a resume of prior (resumption resume) that no earlier
// failure disqualified, and returns the failure run.json must record of
// each absent drive it does not record already: no later resume
// forgets it, back or not, and a later resume goes on without it (even
// beside an earlier failure of the drive).
func Disqualify(drives []plan.Drive, prior record.Run, resume int, broken, cause map[int]string) []record.DriveFailure {
	var out []record.DriveFailure
	for d, dr := range drives {
		if dr.Absent == "" || Recorded(prior, d) {
			continue
		}
		if _, ok := broken[d]; !ok {
			broken[d], cause[d] = dr.Absent, report.CauseDriveChanged
		}
		out = append(out, Failed(d, dr, resume))
	}
	return out
}

// Keep keeps in info (run.json of a resume of prior) what prior
// recorded of each drive of drives absent: its description, identity,
// device number and logical block size, so that a later resume, the
// drive back, knows it by its identity.
func Keep(info *record.Run, prior record.Run, drives []plan.Drive) {
	for i, d := range drives {
		if d.Absent == "" || i >= len(prior.Drives) || i >= len(prior.Identities) {
			continue
		}
		info.Drives[i], info.Identities[i] = prior.Drives[i], prior.Identities[i]
		if i < len(prior.Devices) {
			info.Devices[i] = prior.Devices[i]
		}
		if i < len(prior.LBASizes) {
			info.LBASizes[i] = prior.LBASizes[i]
		}
	}
}

// Mark marks absent to t each drive run.json (r) records as not back
// after the host's cut, though it is there now: never written again,
// its cycle pending then did not return.
func Mark(t *powertest.Test, r record.Run) {
	for i := range t.Drives {
		if f, ok := Failure(r, i); ok && t.Drives[i].Absent == "" {
			t.Drives[i].Absent = f.Message
		}
	}
}

// Taken is a taken func of Drive: whether a drive of drives is named name.
func Taken(drives []plan.Drive) func(string) bool {
	return func(name string) bool {
		return slices.ContainsFunc(drives, func(d plan.Drive) bool { return d.Name == name })
	}
}
