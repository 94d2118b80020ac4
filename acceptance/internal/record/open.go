package record

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A recording is untrusted input: a fleet's arrive from many runners, and
// one broken or compromised runner must not make its judge read files
// outside the recording, block on a FIFO, or read gigabytes. Every file a
// replay or a resume reads from a recording, and every file it hashes, is
// opened with Open, within the limit of what the file is (LimitOf).
const (
	// MaxOutput is the most bytes of a fio output (<test>.json, and a
	// verify pass's under prepare/): a 61 s json+ cell of 24 drives with
	// its two status reports is about 17 MB, and each status report adds
	// about 5.5 MB for 24 drives; a live cell prints at most
	// live.MaxCellReports of them, so this holds a 24-drive cell of any
	// length. Parsed, a fio output takes up to
	// about ten times its size: 256 MiB of hostile JSON did not fit the
	// 4 GiB of address space a replay is tested in.
	MaxOutput int64 = 64 << 20
	// MaxRunJSON is the most bytes of run.json: the spec's text, every
	// file's sha256 and every steady-state round, a few MB in a long run.
	MaxRunJSON int64 = 64 << 20
	// MaxStderr is the most bytes of fio's stderr (.stderr): a verify
	// pass's mismatch reports.
	MaxStderr int64 = 16 << 20
	// MaxSidecar is the most bytes of a cell's sidecar (.status.json,
	// .steady.json, .thermal.json, .link.json, .cpu.json, .ocp.json) or
	// job file (.fio), and of nvme-cli's JSON under health/.
	MaxSidecar int64 = 16 << 20
	// MaxPrepare is the most bytes of any other file under prepare/ (the
	// IOPS logs and status reports of hours of preconditioning): they are
	// only hashed, a buffer at a time.
	MaxPrepare int64 = 1 << 30
	// MaxLog is the most bytes of a cell's or a step's packed per-second
	// logs (LogExt), compressed: a 24-drive random step of 30 minutes
	// packs into about 2 MB (see docs/results.md, Recorded size); this
	// holds a day of it. What it decompresses to has its own limit
	// (timelog.MaxText).
	MaxLog int64 = 256 << 20
)

// LimitOf is the most bytes the file rel (relative to a recording, with
// slashes) may hold, by what it is.
func LimitOf(rel string) int64 {
	switch {
	case rel == "run.json":
		return MaxRunJSON
	case strings.HasSuffix(rel, StderrExt):
		return MaxStderr
	case strings.HasPrefix(rel, "health/"):
		return MaxSidecar
	case strings.HasSuffix(rel, LogExt):
		return MaxLog
	case strings.HasSuffix(rel, OutputExt) && !hasSidecarExt(rel):
		if strings.HasPrefix(rel, "prepare/") {
			// A random preconditioning's status reports, one a round for
			// hours: hashed, never read (a verify pass's output is read
			// at MaxOutput).
			return MaxPrepare
		}
		return MaxOutput
	case strings.HasPrefix(rel, "prepare/"):
		return MaxPrepare
	}
	return MaxSidecar
}

func hasSidecarExt(rel string) bool {
	for _, ext := range []string{StatusExt, SteadyExt, ThermalExt, LinkExt, CPUExt, OCPExt} {
		if strings.HasSuffix(rel, ext) {
			return true
		}
	}
	return false
}

// ErrRefused says a recorded file is not one a replay reads: outside the
// recording, a symlink, not a regular file, or above its size limit.
var ErrRefused = errors.New("refused")

// RefusedError is a recorded file that is not read, and why.
type RefusedError struct {
	Path string // the file as the recording names it, joined to its directory
	Why  string
}

func (e *RefusedError) Error() string { return e.Path + ": " + e.Why }

// Is makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Clean checks rel, a path a recording names relative to its directory
// (with slashes), and returns it cleaned: it must be relative and stay
// inside, no "..", no absolute path, nothing empty.
func Clean(rel string) (string, error) {
	if rel == "" || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("%q is not a file name", rel)
	}
	if path.IsAbs(rel) || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" {
		return "", fmt.Errorf("%q is an absolute path, outside the recording", rel)
	}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if c == ".." {
			return "", fmt.Errorf("%q climbs out of the recording (..)", rel)
		}
	}
	c := path.Clean(filepath.ToSlash(rel))
	if c == "." {
		return "", fmt.Errorf("%q is the recording's directory, not a file in it", rel)
	}
	return c, nil
}

// Open opens the file rel names in the recording dir for reading, if it
// is a regular file inside dir of at most limit bytes: rel is checked
// with Clean, every component below dir is opened without following a
// symlink, and the opened file must be regular (no FIFO, which is opened
// without blocking, no device, no socket) with one link (no hard link to
// a file outside). A file that is not there
// gives an error for which errors.Is(err, fs.ErrNotExist) holds; one
// refused, a *RefusedError. size is the file's size when opened; read
// it through Read, which stops at limit even if it grows.
func Open(dir, rel string, limit int64) (f *os.File, size int64, err error) {
	clean, err := Clean(rel)
	if err != nil {
		// Named as the recording gives it: joined, it would name
		// another file.
		return nil, 0, &RefusedError{Path: dir, Why: err.Error()}
	}
	full := filepath.Join(dir, filepath.FromSlash(clean))
	f, err = openBeneath(dir, clean)
	if err != nil {
		var r *RefusedError
		if errors.As(err, &r) {
			r.Path = full
			return nil, 0, r
		}
		return nil, 0, &fs.PathError{Op: "open", Path: full, Err: unwrapPath(err)}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, &RefusedError{Path: full, Why: "is a " + kind(fi.Mode()) + ", not a regular file: a recording holds only regular files; put the file as recorded in its place"}
	}
	if n := links(fi); n > 1 {
		// O_NOFOLLOW does not see a hard link: the same file may be one
		// outside the recording (the judge's own), and what is read of
		// it is quoted into the report. drivequal never links a
		// recording's files.
		f.Close()
		return nil, 0, &RefusedError{Path: full, Why: fmt.Sprintf("has %d hard links: a recording's files are its own, and one linked may be a file outside it; copy the recording (cp, not a hard link)", n)}
	}
	if fi.Size() > limit {
		f.Close()
		return nil, 0, &RefusedError{Path: full, Why: fmt.Sprintf("holds %d bytes, above the %s a recording's %s may hold: it is not read (see docs/results.md, What a replay opens)", fi.Size(), bytesText(limit), what(clean))}
	}
	return f, fi.Size(), nil
}

// unwrapPath is err's own error under a *fs.PathError, so that the path
// is said once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Read reads f, opened by Open with limit, whole: at most limit bytes,
// refused if it grew past them since it was opened.
func Read(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &RefusedError{Path: f.Name(), Why: fmt.Sprintf("grew past the %s a recording's file may hold while it was read", bytesText(limit))}
	}
	return data, nil
}

// ReadFile reads the file rel names in the recording dir, as Open allows
// it, within its limit (LimitOf).
func ReadFile(dir, rel string) ([]byte, error) {
	return ReadFileLimit(dir, rel, LimitOf(rel))
}

// ReadFileLimit is ReadFile within limit bytes.
func ReadFileLimit(dir, rel string, limit int64) ([]byte, error) {
	f, _, err := Open(dir, rel, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, limit)
}

// Exists reports whether rel names a file in the recording dir that Open
// would open (a refused one is there too: reading it says why).
func Exists(dir, rel string) bool {
	f, _, err := Open(dir, rel, LimitOf(rel))
	if err == nil {
		f.Close()
		return true
	}
	return !errors.Is(err, fs.ErrNotExist)
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// what names the kind of file rel is, for a refusal.
func what(rel string) string {
	switch l := LimitOf(rel); {
	case rel == "run.json":
		return "run.json"
	case strings.HasSuffix(rel, StderrExt):
		return "fio stderr"
	case strings.HasPrefix(rel, "health/"):
		return "health log"
	case l == MaxLog:
		return "fio log"
	case l == MaxOutput:
		return "fio output"
	case l == MaxPrepare:
		return "preparation file"
	}
	return "sidecar"
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
