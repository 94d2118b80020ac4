// Package outfiles writes a report directory's files atomically and keeps
// the list of those a run wrote there, so that the next run removes them,
// and nothing else.
package outfiles

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Manifest is the file in a report directory that lists, one a line as
// sha256sum prints them ("<sha256>  <path>"), every file the run wrote
// there, by its path relative to the directory with slashes.
const Manifest = ".drivequal-outputs"

// tracked is the report directory whose writes are listed, if any.
var tracked struct {
	sync.Mutex
	dir     string
	exclude []string // directories inside dir never listed (recordings)
	files   map[string]string
}

// WriteAtomic replaces path with data: it writes a temporary file in the
// same directory, syncs it, and renames it over path, so a reader sees
// either the old content or the new one, never a part. The directory is
// created if missing. The file is left with mode 0644. A file written
// inside the tracked report directory (Track) is listed in its Manifest.
//
// A file inside the tracked directory is written relative to it,
// through no symbolic link below it: a directory on its way that is a
// symbolic link or not a directory (a planted charts -> /elsewhere) is
// refused, naming it and the fix, never written through.
func WriteAtomic(path string, data []byte) error {
	t := &tracked
	t.Lock()
	dir, exclude := t.dir, t.exclude
	t.Unlock()
	if dir != "" {
		if rel, ok := inside(dir, exclude, path); ok {
			if err := writeBeneath(dir, rel, data); err != nil {
				return err
			}
			return list(path, data)
		}
	}
	if err := writeAtomic(path, data); err != nil {
		return err
	}
	return list(path, data)
}

// writeBeneath writes rel (slashes) in dir atomically, as writeAtomic
// does, each directory below dir made or checked to be a directory, not
// a symbolic link, and every file opened relative to dir (os.Root: no
// path leaves it).
func writeBeneath(dir, rel string, data []byte) (err error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	defer func() {
		if err != nil {
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		sub := strings.Join(parts[:i], "/")
		fi, err := root.Lstat(sub)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if fi, err = root.Lstat(sub); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if !fi.IsDir() {
			what := "not a directory"
			if fi.Mode()&fs.ModeSymlink != 0 {
				what = "a symbolic link"
				if to, err := root.Readlink(sub); err == nil {
					what += " to " + to
				}
			}
			full := filepath.Join(dir, filepath.FromSlash(sub))
			return fmt.Errorf("%s is %s: drivequal writes the report's files into a directory of its own in the report directory, never through a link out of it; remove it (rm %s) and run again", full, what, full)
		}
	}
	parent := filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel)))
	var tmp string
	var f *os.File
	for range 100 {
		tmp = path2(parent, fmt.Sprintf(".%s.tmp-%d", filepath.Base(path), rand.Uint64()))
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		return err
	}
	if d, err := root.Open(parent); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// path2 is name in the directory parent ("." for the root), with slashes.
func path2(parent, name string) string {
	if parent == "." {
		return name
	}
	return parent + "/" + name
}

func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// Make the rename itself durable. Not every file system lets a
	// directory be synced; the data is already safe, so ignore that.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// list adds path, just written with data, to the tracked directory's
// Manifest when it is inside that directory and outside its excluded
// ones.
func list(path string, data []byte) error {
	t := &tracked
	t.Lock()
	defer t.Unlock()
	if t.dir == "" {
		return nil
	}
	rel, ok := inside(t.dir, t.exclude, path)
	if !ok {
		return nil
	}
	sum := sha256.Sum256(data)
	t.files[rel] = hex.EncodeToString(sum[:])
	lines := make([]string, 0, len(t.files))
	for name, sum := range t.files {
		lines = append(lines, sum+"  "+name+"\n")
	}
	sort.Strings(lines)
	return writeBeneath(t.dir, Manifest, []byte(strings.Join(lines, "")))
}

// inside returns path relative to dir, with slashes, when it is a file
// inside dir and outside every directory of exclude.
func inside(dir string, exclude []string, path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	for _, x := range exclude {
		if r, err := filepath.Rel(x, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", false
		}
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || rel == Manifest {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Track removes from dir the files an earlier run listed in its Manifest
// that still hold what it wrote (a file changed since, or replaced by a
// user's own, stays; so does every file it did not list, and everything
// under exclude, such as a recording kept in the report directory), then
// lists each file written into dir from now on. It returns the files it
// removed, relative to dir.
func Track(dir string, exclude ...string) (removed []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var ex []string
	for _, x := range exclude {
		if x == "" {
			continue
		}
		if a, err := filepath.Abs(x); err == nil {
			ex = append(ex, a)
		}
	}
	removed, err = sweep(abs, ex)
	t := &tracked
	t.Lock()
	t.dir, t.exclude, t.files = abs, ex, map[string]string{}
	t.Unlock()
	return removed, err
}

// Written is the files written into the tracked directory since Track,
// relative to it, sorted.
func Written() []string {
	t := &tracked
	t.Lock()
	defer t.Unlock()
	out := make([]string, 0, len(t.files))
	for name := range t.files {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Untrack stops listing the files written.
func Untrack() {
	t := &tracked
	t.Lock()
	t.dir, t.exclude, t.files = "", nil, nil
	t.Unlock()
}

// sweep removes the files dir's Manifest lists that hold what it says,
// then the Manifest.
func sweep(dir string, exclude []string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, Manifest))
	if os.IsNotExist(err) {
		data, err = legacy(dir), nil
	} else if err == nil {
		data = append(data, legacy(dir)...)
	}
	if data == nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, Manifest), err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || name == "" || filepath.IsAbs(name) || slices.Contains(removed, name) {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if _, ok := inside(dir, exclude, path); !ok {
			continue // not a file the run could have listed
		}
		if !unchanged(path, filepath.Join(realDir, filepath.Dir(filepath.FromSlash(name))), sum) {
			continue
		}
		if err := os.Remove(path); err != nil {
			return removed, fmt.Errorf("removing %s, written by an earlier run: %w", path, err)
		}
		removed = append(removed, name)
	}
	if err := os.Remove(filepath.Join(dir, Manifest)); err != nil && !os.IsNotExist(err) {
		return removed, err
	}
	return removed, nil
}

// olderSlack is how long after summary.md a file of the run that wrote
// it may be written (its charts and junit.xml follow it).
const olderSlack = 2 * time.Minute

var chartLink = regexp.MustCompile(`\]\((charts/[A-Za-z0-9._-]+\.svg)\)`)

// legacy lists, as Manifest lines with the files' sha256, what a run of
// drivequal that kept no Manifest wrote in dir: its summary.md (which
// opens "# drivequal: "), results.json and junit.xml, and the charts its
// summary.md links, each written no later than shortly after summary.md
// (a user's file written since is not the run's). nil when dir holds no
// such summary.md or has a Manifest naming it.
func legacy(dir string) []byte {
	summary := filepath.Join(dir, "summary.md")
	fi, err := os.Lstat(summary)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	text, err := os.ReadFile(summary)
	if err != nil || !bytes.HasPrefix(text, []byte("# drivequal: ")) {
		return nil
	}
	if m, err := os.ReadFile(filepath.Join(dir, Manifest)); err == nil && bytes.Contains(m, []byte("  summary.md\n")) {
		return nil // listed by the run that wrote it
	}
	names := []string{"summary.md", "results.json", "junit.xml"}
	for _, m := range chartLink.FindAllSubmatch(text, -1) {
		names = append(names, string(m[1]))
	}
	var out bytes.Buffer
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		f, err := os.Lstat(path)
		if err != nil || !f.Mode().IsRegular() || f.ModTime().After(fi.ModTime().Add(olderSlack)) {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&out, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return out.Bytes()
}

// unchanged reports whether path is a regular file in the directory
// parent (reached through no symbolic link below the report directory),
// holding data of sha256 sum.
func unchanged(path, parent, sum string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(path)); err != nil || real != parent {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	got := sha256.Sum256(data)
	return hex.EncodeToString(got[:]) == sum
}
