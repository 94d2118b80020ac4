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
// drive that is not one of drives (the run's paths; sizes their bytes, 0
// when unknown), a second entry for a drive, a verdict other than pass,
// fail or inconclusive, or one its counts contradict: a pass with bad
// sectors, with no purge command, with nothing of the fill before the
// purge (that is inconclusive) or with less read back than the read-back
// it names reads of the drive; an inconclusive verdict with a bad sector,
// with some of the fill before the purge (that is a pass or a fail) or
// with nothing read back; a fail with neither a bad sector nor a message
// saying why.
func Check(rs []purgeproof.Result, drives []string, sizes []int64) error {
	var errs []error
	seen := map[string]bool{}
	for i, r := range rs {
		where := fmt.Sprintf("%s: drives[%d] (%q)", File, i, r.Drive)
		at := slices.Index(drives, r.Drive)
		switch {
		case at < 0:
			errs = append(errs, fmt.Errorf("%s: not a drive of the run (%s)", where, strings.Join(drives, ", ")))
		case seen[r.Drive]:
			errs = append(errs, fmt.Errorf("%s: a second verdict for the drive", where))
		}
		seen[r.Drive] = true
		var size int64
		if at >= 0 && at < len(sizes) {
			size = sizes[at]
		}
		if err := contradicted(r, size); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	return errors.Join(errs...)
}

// contradicted says what of r's own counts contradict its verdict, for a
// drive of size bytes (0: unknown).
func contradicted(r purgeproof.Result, size int64) error {
	read := func() error {
		switch {
		case r.Sectors <= 0 || r.BytesRead <= 0 || r.Command == "":
			return fmt.Errorf("verdict %s with no purge command or nothing read back (%d sectors, %d bytes)", r.Verdict, r.Sectors, r.BytesRead)
		case r.SectorBytes > 0 && r.Sectors*r.SectorBytes != r.BytesRead:
			return fmt.Errorf("verdict %s: its %d sectors of %d bytes are not the %d bytes it read back", r.Verdict, r.Sectors, r.SectorBytes, r.BytesRead)
		}
		mode := r.ReadBack
		if mode != purgeproof.Full {
			mode = purgeproof.Sample
		}
		if want := purgeproof.Bytes(purgeproof.Extents(size, mode)); r.BytesRead < want {
			return fmt.Errorf("verdict %s with %d bytes read back, less than the %d bytes its read-back (%s) reads of the drive's %d", r.Verdict, r.BytesRead, want, mode, size)
		}
		return nil
	}
	switch r.Verdict {
	case purgeproof.Pass:
		switch {
		case r.Bad > 0 || len(r.LBAs) > 0:
			return fmt.Errorf("verdict pass contradicts its %d bad sectors (LBAs %s)", r.Bad, strings.Join(r.LBAs, ", "))
		case r.FillBefore <= 0:
			return fmt.Errorf("verdict pass, but the drive held none of the fill before the purge (fill_sectors_before %d): no erase is shown", r.FillBefore)
		}
		return read()
	case purgeproof.Inconclusive:
		switch {
		case r.Bad > 0 || len(r.LBAs) > 0:
			return fmt.Errorf("verdict inconclusive contradicts its %d bad sectors (LBAs %s): that is a fail", r.Bad, strings.Join(r.LBAs, ", "))
		case r.FillBefore != 0:
			return fmt.Errorf("verdict inconclusive, but the drive held %d sectors of the fill before the purge: its read-back shows the erase or its failure", r.FillBefore)
		}
		return read()
	case purgeproof.Fail:
		if r.Bad == 0 && r.Message == "" {
			return errors.New("verdict fail with no bad sector and no message")
		}
		return nil
	}
	return fmt.Errorf("verdict %q is none of %q, %q and %q", r.Verdict, purgeproof.Pass, purgeproof.Fail, purgeproof.Inconclusive)
}

// Save adds rs to the verdicts kept in dir, replacing a drive's earlier
// one unless that failed (a failure is never forgotten), and writes the
// file atomically.
func Save(dir string, rs []purgeproof.Result) error {
	return record.KeepList(dir, File, "drives", rs,
		func(k, r purgeproof.Result) bool { return k.Drive == r.Drive },
		func(k purgeproof.Result) bool { return k.Verdict == purgeproof.Fail })
}

// Moved renames, in the verdicts kept in dir, the drive of each recorded
// at a path of to (a resume matched the drive by its identity, given
// under another path now) to its path now, in one pass (a swap stays a
// swap), saying in its message where it was recorded. changed says the
// file was rewritten.
func Moved(dir string, to map[string]string) (changed bool, err error) {
	if len(to) == 0 {
		return false, nil
	}
	rs, err := Load(dir)
	if err != nil || len(rs) == 0 {
		return false, err
	}
	for i, r := range rs {
		if n, ok := to[r.Drive]; ok {
			rs[i].Drive = n
			rs[i].Message = fmt.Sprintf("[recorded at %s, this drive's path then] %s", r.Drive, r.Message)
			changed = true
		}
	}
	if !changed {
		return false, nil
	}
	return true, record.WriteList(dir, File, "drives", rs)
}
