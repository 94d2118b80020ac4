package verdict

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/fiojob"
)

// strerrors are glibc's words (fio prints strerror) for the errnos of
// driveErrnos, the ones a drive fails an I/O with: fio's stderr names an
// I/O error in them as it happens, long before its JSON output, which it
// writes only when it ends.
var strerrors = map[string]int{
	"Input/output error":                                5,
	"No space left on device":                           28,
	"No data available":                                 61,
	"Invalid or incomplete multibyte or wide character": 84,
	"Connection timed out":                              110,
	"Remote I/O error":                                  121,
}

// StderrIOError reads one line of fio's stderr during a measurement:
// when it is fio's report of an I/O the drive failed ("fio: io_u error on
// file /dev/nvme1n1: Input/output error: read offset=33554432,
// buflen=131072"), drive is the index in paths (the step's drives' paths,
// in order) of the file it names, and msg says what failed in the words
// DriveIOErrors' caller uses ("errno 5 (input/output error): read
// offset=..."). An errno of the job's own making (EINVAL), a file that is
// none of paths, or any other line: ok is false.
func StderrIOError(line string, paths []string) (drive int, msg string, ok bool) {
	const head = "fio: io_u error on file "
	rest, found := strings.CutPrefix(strings.TrimRight(line, "\r\n"), head)
	if !found {
		return 0, "", false
	}
	drive, best := -1, ""
	for i, p := range paths {
		for _, name := range []string{p, fiojob.EscapeFilename(p)} {
			if strings.HasPrefix(rest, name+": ") && len(name) > len(best) {
				drive, best = i, name
			}
		}
	}
	if drive < 0 {
		return 0, "", false
	}
	rest = rest[len(best)+2:]
	text, what, _ := strings.Cut(rest, ": ")
	errno, known := strerrors[text]
	if !known {
		return 0, "", false
	}
	msg = fmt.Sprintf("errno %d (%s)", errno, strings.ToLower(text[:1])+text[1:])
	if what != "" {
		msg += ": " + what
	}
	return drive, msg, true
}

// StderrIOErrors reads fio's stderr of one measurement, line by line as
// fio writes it, for the I/O errors its drives fail (StderrIOError), each
// drive once.
type StderrIOErrors struct {
	list   []plan.Drive
	drives []int
	paths  []string
	seen   map[int]bool
}

// NewStderrIOErrors reads the stderr of a measurement of drives (indices
// into list, the run's drives, in the step's order).
func NewStderrIOErrors(list []plan.Drive, drives []int) *StderrIOErrors {
	s := &StderrIOErrors{list: list, drives: drives, seen: map[int]bool{}}
	for _, d := range drives {
		s.paths = append(s.paths, list[d].Path)
	}
	return s
}

// Next reads one line: the I/O error it names of a drive not named
// before, in the words a measurement's I/O error is recorded with; none
// for any other line.
func (s *StderrIOErrors) Next(line string) []DriveIOError {
	i, what, ok := StderrIOError(line, s.paths)
	if !ok || s.seen[i] {
		return nil
	}
	s.seen[i] = true
	return []DriveIOError{{s.drives[i], "fio's jobs on " + s.paths[i] + " failed: " + what + " (named on fio's stderr as it happened)"}}
}

// DriveIOError is a drive's I/O error in a measurement.
type DriveIOError struct {
	Drive   int // index into the run's drives
	Message string
}

// MeasurementIOErrors is the I/O errors (DriveIOErrors) that fio's output
// stdout of a measurement of drives (indices into list, the run's drives,
// in the step's order: fio's drive group i is drive i) names, in drive
// order. Output that does not parse, or whose groups are not the step's
// drives, names none.
func MeasurementIOErrors(list []plan.Drive, drives []int, stdout []byte) []DriveIOError {
	out, err := fiojob.Parse(stdout)
	if err != nil || len(out.Groups()) != len(drives) {
		return nil
	}
	found := DriveIOErrors(out)
	var errs []DriveIOError
	for _, i := range slices.Sorted(maps.Keys(found)) {
		path := list[drives[i]].Path
		errs = append(errs, DriveIOError{drives[i], "fio's jobs on " + path + " failed: " + strings.Join(found[i], "; ")})
	}
	return errs
}
