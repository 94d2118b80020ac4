package fiojob

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IODir is the data direction of a log sample, numbered as fio's logs
// number it.
type IODir int

const (
	DirRead  IODir = 0
	DirWrite IODir = 1
	DirTrim  IODir = 2
)

func (d IODir) String() string {
	switch d {
	case DirRead:
		return "read"
	case DirWrite:
		return "write"
	case DirTrim:
		return "trim"
	}
	return "direction " + strconv.Itoa(int(d))
}

// Sample is one line of an averaged fio IOPS log (write_iops_log with
// log_avg_msec): the I/Os of one direction completed in one averaging
// window, per second.
type Sample struct {
	// At is the end of the window, from the start of the job (fio logs it
	// in milliseconds).
	At time.Duration
	// IOPS is the window's I/Os per second: fio's I/Os completed in the
	// window × 1000 / the window's length in ms, truncated to an integer.
	IOPS float64
	Dir  IODir
}

// ParseIOPSLog reads one fio IOPS log, as written with write_iops_log and
// log_avg_msec (fio 3.33: "time_ms, value, direction, bs, prio", with the
// byte offset before prio when log_offset=1; older fio writes
// "time, value, direction, bs"). Only the first three columns are read.
//
// With log_avg_msec, fio writes one line per direction per window in which
// that direction completed an I/O: a window without I/O has no line, and
// a job's last, partial window may have none either (the 6 s run of
// fixtures/fio/iops-log.json logged up to 5.08 s). Without log_avg_msec
// every I/O is a line with value 1, which is not an IOPS series; such a log
// reads without error, so callers should set log_avg_msec. A log written
// with log_max_value=2 (fio ≥ 3.36: mean and max in two columns) is not
// supported.
//
// Errors name the line: "line 3: ...".
func ParseIOPSLog(r io.Reader) ([]Sample, error) {
	var out []Sample
	err := EachLogLine(r, 4, "time, value, direction, block size", func(f []string) error {
		ms, err := strconv.ParseUint(f[0], 10, 63)
		if err != nil {
			return fmt.Errorf("time %q is not a number of milliseconds", f[0])
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("value %q is not a count of I/Os per second", f[1])
		}
		d, err := strconv.Atoi(f[2])
		if err != nil || d < 0 || d > 2 {
			return fmt.Errorf("direction %q is not 0 (read), 1 (write) or 2 (trim)", f[2])
		}
		out = append(out, Sample{At: time.Duration(ms) * time.Millisecond, IOPS: float64(v), Dir: IODir(d)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachLogLine calls fn with the comma-separated fields, each trimmed, of
// every non-blank line of one of fio's logs (its IOPS, bandwidth and
// latency logs share the form), stopping at the first error. A line of
// fewer than min fields (named by what) is an error; every error names
// its line: "line 3: ...".
func EachLogLine(r io.Reader, min int, what string, fn func(f []string) error) error {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < min {
			return fmt.Errorf("line %d: %q has %d fields, want at least %d (%s)", line, text, len(f), min, what)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if err := fn(f); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", line+1, err)
	}
	return nil
}

// ReadIOPSLog reads the fio IOPS log at path (see ParseIOPSLog). Errors
// read "path:line: ...".
func ReadIOPSLog(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ParseIOPSLog(f)
	if err != nil {
		return nil, fmt.Errorf("%s:%s", path, strings.TrimPrefix(err.Error(), "line "))
	}
	return s, nil
}

// IOPSLogFiles lists the IOPS logs fio wrote for write_iops_log=prefix, in
// the order of fio's job numbers: prefix_iops.N.log for each job (fio's
// default per_job_logs=1; N counts the jobs of the whole job file from 1,
// clones included), or prefix_iops.log alone with per_job_logs=0. It is an
// error when there are none.
//
// A job file that gives each target its own prefix (write_iops_log in the
// target's section) gets each target's logs, and so each drive's, from one
// call.
func IOPSLogFiles(prefix string) ([]string, error) { return LogFiles(prefix, "iops") }

// LogFiles lists the logs of kind ("iops", "bw", "lat", "clat", "slat")
// fio wrote for the prefix given to its write_<kind>_log, as IOPSLogFiles
// lists the IOPS logs.
func LogFiles(prefix, kind string) ([]string, error) {
	matches, err := filepath.Glob(globEscape(prefix) + "_" + kind + ".*.log")
	if err != nil {
		return nil, err
	}
	type numbered struct {
		n    int
		path string
	}
	var logs []numbered
	for _, m := range matches {
		// Glob cleans the directory part ("./a" → "a"), so compare names.
		mid := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), filepath.Base(prefix)+"_"+kind+"."), ".log")
		n, err := strconv.Atoi(mid)
		if err != nil || n < 1 {
			continue // not a job number: another prefix's file
		}
		logs = append(logs, numbered{n, m})
	}
	slices.SortFunc(logs, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	out := make([]string, len(logs))
	for i, l := range logs {
		out[i] = l.path
	}
	if single := prefix + "_" + kind + ".log"; len(out) == 0 {
		if _, err := os.Stat(single); err == nil {
			out = append(out, single)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fio %s log %s_%s.N.log or %s_%s.log", kind, prefix, kind, prefix, kind)
	}
	return out, nil
}

// globEscape quotes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ReadIOPSLogs reads each target's IOPS logs, one series per job; nil when a
// target has none or one does not read.
func ReadIOPSLogs(targets []Target) [][][]Sample {
	out := make([][][]Sample, len(targets))
	for i, t := range targets {
		files, err := IOPSLogFiles(t.IOPSLog)
		if err != nil {
			return nil
		}
		for _, f := range files {
			samples, err := ReadIOPSLog(f)
			if err != nil {
				return nil
			}
			out[i] = append(out[i], samples)
		}
	}
	return out
}
