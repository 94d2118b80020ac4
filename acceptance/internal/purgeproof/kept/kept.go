// Package kept keeps each drive's TestPurge verdict in the recording, as
// each is judged, so that a resume and a replay read it back.
package kept

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// File is where a recording keeps each drive's TestPurge verdict, written
// as each is judged, before the test reports it: a resume keeps it (the
// drive was purged, and a failure stays failed) and a replay judges it.
const File = "purge.json"

// Load reads the verdicts kept in the recording dir; none (and no error)
// when it holds none.
func Load(dir string) ([]purgeproof.Result, error) {
	return record.LoadList[purgeproof.Result](dir, File, "drives")
}

// Check refuses verdicts a run could not have written: an entry for a
// drive that is not one of drives (the run's paths), a second entry for a
// drive, a verdict other than pass or fail, or one its counts contradict
// (a pass with bad sectors, a pass with nothing read, or a fail with
// neither a bad sector nor a message saying why).
func Check(rs []purgeproof.Result, drives []string) error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range rs {
		where := fmt.Sprintf("%s: drives[%d] (%q)", File, i, r.Drive)
		switch {
		case !slices.Contains(drives, r.Drive):
			errs = append(errs, fmt.Errorf("%s: not a drive of the run (%s)", where, strings.Join(drives, ", ")))
		case seen[r.Drive]:
			errs = append(errs, fmt.Errorf("%s: a second verdict for the drive", where))
		}
		seen[r.Drive] = true
		switch {
		case r.Verdict != purgeproof.Pass && r.Verdict != purgeproof.Fail:
			errs = append(errs, fmt.Errorf("%s: verdict %q is neither %q nor %q", where, r.Verdict, purgeproof.Pass, purgeproof.Fail))
		case r.Verdict == purgeproof.Pass && (r.Bad > 0 || len(r.LBAs) > 0):
			errs = append(errs, fmt.Errorf("%s: verdict pass contradicts its %d bad sectors (LBAs %s)", where, r.Bad, strings.Join(r.LBAs, ", ")))
		case r.Verdict == purgeproof.Pass && (r.Sectors <= 0 || r.BytesRead <= 0 || r.Command == ""):
			errs = append(errs, fmt.Errorf("%s: verdict pass with no purge command or nothing read back (%d sectors, %d bytes)", where, r.Sectors, r.BytesRead))
		case r.Verdict == purgeproof.Fail && r.Bad == 0 && r.Message == "":
			errs = append(errs, fmt.Errorf("%s: verdict fail with no bad sector and no message", where))
		}
	}
	return errors.Join(errs...)
}

// Save adds rs to the verdicts kept in dir, replacing a drive's earlier
// one unless that failed (a failure is never forgotten), and writes the
// file atomically.
func Save(dir string, rs []purgeproof.Result) error {
	return record.KeepList(dir, File, "drives", rs,
		func(k, r purgeproof.Result) bool { return k.Drive == r.Drive },
		func(k purgeproof.Result) bool { return k.Verdict == purgeproof.Fail })
}
