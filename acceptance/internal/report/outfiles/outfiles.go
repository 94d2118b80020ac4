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
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
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
	if err := fill(f, data); err != nil {
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

// fill writes data to the new file f, readable by all, syncs it and
// closes it.
func fill(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
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
	if err := fill(f, data); err != nil {
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
	if !ok || !Ours(rel) {
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
// user's own, stays; so does every file it did not list), then lists
// each file written into dir from now on. It returns the files it
// removed, relative to dir.
//
// The Manifest is in the report directory, which a user or an earlier
// run controls, and its sums prove a file's content, not who wrote it:
// so only a name the reporter writes (Ours) is removed, a regular file
// of one link owned by the effective user, opened relative to dir
// through no symbolic link, and never one inside a directory of exclude
// (the recordings: their paths and the report's are both resolved, and
// compared by device and inode, so a recording named through a link is
// still known).
func Track(dir string, exclude ...string) (removed []string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var ex []string
	var recs []fileID
	for _, x := range exclude {
		if x == "" {
			continue
		}
		if a, err := filepath.Abs(x); err == nil {
			ex = append(ex, a)
		}
		if real, err := filepath.EvalSymlinks(x); err == nil {
			if a, err := filepath.Abs(real); err == nil && !slices.Contains(ex, a) {
				ex = append(ex, a)
			}
			if id, ok := idOf(real); ok {
				recs = append(recs, id)
			}
		}
	}
	removed, err = sweep(abs, recs)
	t := &tracked
	t.Lock()
	t.dir, t.exclude, t.files = abs, ex, map[string]string{}
	t.Unlock()
	return removed, err
}

// ours is every name the reporter writes in a report directory:
// results.json and summary.md (report.ResultsFile, report.SummaryFile),
// junit.xml (junit.File), index.html (page.File) and the charts
// (report.ChartsDir, charts/NAME.svg). Those packages write through this
// one, so the names are here; a test holds them to the reporter's own.
var ours = regexp.MustCompile(`^(summary\.md|results\.json|junit\.xml|index\.html|` + ChartName + `)$`)

// ChartName matches a chart's name from the report directory as the
// reporter makes it (specs.SubtestName of a workload, capacity or group:
// "charts/4KB_Random_Read,_QD256.svg", "charts/Mix_70%.svg"): one name
// in the charts directory, not hidden, with no separator, space, quote,
// bracket or parenthesis (which would end a markdown link).
const ChartName = "charts/[^./\\\\\\s()\\[\\]<>\"'`][^/\\\\\\s()\\[\\]<>\"'`]*\\.svg"

// Ours reports whether rel (slashes, from the report directory) is a
// name the reporter writes: the only files a run lists and removes.
func Ours(rel string) bool { return ours.MatchString(rel) }

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// inRecording reports whether path, resolved, is a recording of recs or
// lies in one (any directory above it is one); a path that does not
// resolve counts as one.
func inRecording(path string, recs []fileID) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return true
	}
	for p := real; ; p = filepath.Dir(p) {
		id, ok := idOf(p)
		if !ok || slices.Contains(recs, id) {
			return true
		}
		if filepath.Dir(p) == p {
			return false
		}
	}
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

// sweep removes the files dir's Manifest lists that hold what it says
// and Track allows, then the Manifest.
func sweep(dir string, recs []fileID) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := readNoFollow(root, Manifest)
	if errors.Is(err, fs.ErrNotExist) {
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
	var removed []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || !Ours(name) || slices.Contains(removed, name) {
			continue // not a file the reporter writes
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if inRecording(path, recs) || !unchanged(root, name, sum) {
			continue
		}
		if err := root.Remove(name); err != nil {
			return removed, fmt.Errorf("removing %s, written by an earlier run: %w", path, err)
		}
		removed = append(removed, name)
	}
	if fi, err := root.Lstat(Manifest); err == nil && fi.Mode().IsRegular() {
		if err := root.Remove(Manifest); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// readNoFollow reads name in root, refusing a symbolic link.
func readNoFollow(root *os.Root, name string) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

// olderSlack is how long after summary.md a file of the run that wrote
// it may be written (its charts and junit.xml follow it).
const olderSlack = 2 * time.Minute

var chartLink = regexp.MustCompile(`\]\((` + ChartName + `)\)`)

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

// unchanged reports whether name (Ours) in root is a regular file of one
// link owned by the effective user, in a directory below root that is
// no symbolic link, opened without following one, holding data of
// sha256 sum.
func unchanged(root *os.Root, name, sum string) bool {
	if d, _ := path.Split(name); d != "" {
		fi, err := root.Lstat(strings.TrimSuffix(d, "/"))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() || st.Nlink != 1 {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == sum
}
