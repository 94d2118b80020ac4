package record

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

const (
	// RunFile is a recording's run.json; SumFile, its sha256 kept beside
	// it in sha256sum's format ("<hex>  run.json"), so that `sha256sum -c
	// run.json.sha256` checks it too.
	RunFile = "run.json"
	SumFile = RunFile + ".sha256"
)

func sumOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func sumLines(sums ...string) []byte {
	var b strings.Builder
	for _, s := range sums {
		fmt.Fprintf(&b, "%s  %s\n", s, RunFile)
	}
	return []byte(b.String())
}

// WriteRun writes data as dir's run.json and its sha256 beside it, each
// file atomically: first the sum file listing data's sha256 and that of
// the run.json it replaces (prev, nil for none), then run.json, then the
// sum file with data's alone. A run stopped between any two of the three
// writes leaves a run.json whose sha256 the sum file lists; once all
// three are done, only data matches.
func WriteRun(dir string, data, prev []byte) error {
	sum := filepath.Join(dir, SumFile)
	if prev != nil {
		if err := report.WriteFileAtomic(sum, sumLines(sumOf(data), sumOf(prev))); err != nil {
			return err
		}
	}
	if err := report.WriteFileAtomic(filepath.Join(dir, RunFile), data); err != nil {
		return err
	}
	return report.WriteFileAtomic(sum, sumLines(sumOf(data)))
}

// RunSums are the sha256 sums dir's run.json.sha256 lists for run.json;
// found is false when there is no such file (a recording made before it
// was kept, or one whose sum file was removed).
func RunSums(dir string) (sums []string, found bool, err error) {
	// A few lines of "<sha256>  run.json"; read as every recorded file is
	// (Open: a regular file inside the recording, within a limit).
	data, err := ReadFileLimit(dir, SumFile, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for line := range strings.Lines(string(data)) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok || name != RunFile {
			line = strings.TrimSpace(line)
			if len(line) > 200 {
				line = line[:200] + "…"
			}
			return nil, true, fmt.Errorf("%s: %q is not \"<sha256>  %s\"", filepath.Join(dir, SumFile), line, RunFile)
		}
		sums = append(sums, sum)
	}
	return sums, true, nil
}

// CheckRun says whether dir's run.json is as drivequal last wrote it:
// nil when its sha256 is one its sum file lists, or when there is no
// sum file (kept says so); otherwise how it differs. A sum file that
// does not read is an error.
func CheckRun(dir string) (c *Changed, kept bool, err error) {
	sums, kept, err := RunSums(dir)
	if err != nil || !kept {
		return nil, kept, err
	}
	data, err := ReadFile(dir, RunFile)
	if errors.Is(err, os.ErrNotExist) {
		return &Changed{Path: RunFile, Missing: true, Want: strings.Join(sums, ",")}, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	if now := sumOf(data); !slices.Contains(sums, now) {
		want := ""
		if len(sums) > 0 {
			want = sums[0]
		}
		return &Changed{Path: RunFile, Sum: now, Want: want}, true, nil
	}
	return nil, true, nil
}
