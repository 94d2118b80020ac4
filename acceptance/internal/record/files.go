package record

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Exts are the extensions of a test's files: its fio output, job file,
// stderr and every sidecar.
var Exts = []string{OutputExt, JobExt, StderrExt, StatusExt, SteadyExt, ThermalExt, LinkExt, CPUExt, OCPExt, LogExt}

// PrepareDir is where the preparation records of resumption n (0: the
// run itself) are kept, relative to the recording's directory.
func PrepareDir(n int) string {
	if n == 0 {
		return "prepare"
	}
	return filepath.Join("prepare", fmt.Sprintf("resume-%d", n))
}

// Hash is the sha256 (hex) of the regular file at path, of at most
// MaxPrepare bytes (a symlink, a FIFO or a device is refused).
func Hash(path string) (string, error) {
	return hashIn(filepath.Dir(path), filepath.Base(path), MaxPrepare)
}

// HashIn is the sha256 (hex) of the file rel names in the recording dir,
// opened as Open allows, within its limit (LimitOf).
func HashIn(dir, rel string) (string, error) { return hashIn(dir, rel, LimitOf(rel)) }

func hashIn(dir, rel string, limit int64) (string, error) {
	f, _, err := Open(dir, rel, limit)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", f.Name(), err)
	}
	if n > limit {
		return "", &RefusedError{Path: f.Name(), Why: fmt.Sprintf("grew past the %s a recording's file may hold while it was hashed", bytesText(limit))}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// TestFiles are the files test has in dir, relative to dir with
// slashes: its output and whichever sidecars were written.
func TestFiles(dir, test string) []string {
	var out []string
	for _, ext := range Exts {
		if _, err := os.Stat(Base(dir, test) + ext); err == nil {
			out = append(out, test+ext)
		}
	}
	return out
}

// HashFiles is the sha256 of each file rels names in dir.
func HashFiles(dir string, rels []string) (map[string]string, error) {
	out := map[string]string{}
	for _, rel := range rels {
		sum, err := HashIn(dir, rel)
		if err != nil {
			return nil, fmt.Errorf("hashing %s for run.json: %w", rel, err)
		}
		out[rel] = sum
	}
	return out, nil
}

// Unhashed lists the files under sub (relative to dir) that files does
// not hold, relative to dir with slashes, skipping the subdirectories
// skip names (relative to dir).
func Unhashed(dir, sub string, files map[string]string, skip ...string) []string {
	var out []string
	root := filepath.Join(dir, sub)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && slices.ContainsFunc(skip, func(s string) bool { return filepath.ToSlash(s) == rel }) {
				return fs.SkipDir
			}
			return nil
		}
		if _, ok := files[rel]; !ok && d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// Changed is a file a recording lists whose content is not what was
// recorded.
type Changed struct {
	Path string // relative to the recording, with slashes
	// Missing says the file is gone; Refused, why it is not read (a
	// symlink, a FIFO, a device, above its size limit, a path outside
	// the recording); otherwise it was edited: Sum is its sha256 now,
	// Want what run.json recorded.
	Missing   bool
	Refused   string
	Sum, Want string
}

func (c Changed) String() string {
	if c.Missing {
		return c.Path + " (missing since it was recorded)"
	}
	if c.Refused != "" {
		return c.Path + " (refused: " + c.Refused + ")"
	}
	return fmt.Sprintf("%s (edited after recording: sha256 %s…, recorded %s…)", c.Path, short(c.Sum), short(c.Want))
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// Check compares every file run lists a sha256 of with the file in dir
// now, and run.json with the sha256 kept beside it (run.json.sha256),
// and returns those that differ, in path order: gone, refused (see Open:
// outside the recording, not a regular file, too large) or edited; an
// error only when a file cannot be read for another reason. A run.json
// without a sum file is listed only when it was written by a drivequal
// that keeps one (it records data samples): the sum file is missing.
func Check(dir string, run Run) ([]Changed, error) {
	paths := make([]string, 0, len(run.Files))
	for p := range run.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var out []Changed
	var errs []error
	for _, p := range paths {
		sum, err := HashIn(dir, p)
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			out = append(out, Changed{Path: p, Refused: refused.Why, Want: run.Files[p]})
		case errors.Is(err, os.ErrNotExist):
			out = append(out, Changed{Path: p, Missing: true, Want: run.Files[p]})
		case err != nil:
			errs = append(errs, err)
		case sum != run.Files[p]:
			out = append(out, Changed{Path: p, Sum: sum, Want: run.Files[p]})
		}
	}
	// run.json itself, against the sha256 kept beside it.
	c, kept, err := CheckRun(dir)
	switch {
	case err != nil:
		errs = append(errs, err)
	case c != nil:
		out = append(out, *c)
	case !kept && run.Samples != nil:
		// Written by a drivequal that keeps the sum file: it was removed.
		out = append(out, Changed{Path: SumFile, Missing: true})
	}
	slices.SortFunc(out, func(a, b Changed) int { return strings.Compare(a.Path, b.Path) })
	return out, errors.Join(errs...)
}

// Unfinished says why run, a live run's run.json, is a run that did not
// run to its end ("" when it did, or when it is no live run): a new run
// in its directory would destroy it.
func Unfinished(run Run) string {
	switch {
	case run.Mode != "record" || run.Reconstructed:
		return ""
	case run.Format < 3:
		return fmt.Sprintf("its run.json (format %d) does not record whether it ran to its end", run.Format)
	case run.Finished == "" && len(run.Resumptions) > 0:
		return fmt.Sprintf("it was interrupted (resumed %d times, not run to its end)", len(run.Resumptions))
	case run.Finished == "":
		return "it did not run to its end"
	}
	return ""
}
