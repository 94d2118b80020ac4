// Package kept keeps each drive's TestPurge verdict in the recording, as
// each is judged, so that a resume and a replay read it back.
package kept

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// File is where a recording keeps each drive's TestPurge verdict, written
// as each is judged, before the test reports it: a resume keeps it (the
// drive was purged, and a failure stays failed) and a replay judges it.
const File = "purge.json"

type stored struct {
	Drives []purgeproof.Result `json:"drives"`
}

// Load reads the verdicts kept in the recording dir; none (and no error)
// when it holds none.
func Load(dir string) ([]purgeproof.Result, error) {
	b, err := record.ReadFile(dir, File)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, File), err)
	}
	return s.Drives, nil
}

// Save adds rs to the verdicts kept in dir, replacing a drive's earlier
// one unless that failed (a failure is never forgotten), and writes the
// file atomically.
func Save(dir string, rs []purgeproof.Result) error {
	kept, err := Load(dir)
	if err != nil {
		return err
	}
	for _, r := range rs {
		i := slices.IndexFunc(kept, func(k purgeproof.Result) bool { return k.Drive == r.Drive })
		switch {
		case i < 0:
			kept = append(kept, r)
		case kept[i].Verdict != purgeproof.Fail:
			kept[i] = r
		}
	}
	b, err := json.MarshalIndent(stored{kept}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+File+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, File))
}
