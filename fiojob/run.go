package fiojob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// MinVersion is the oldest fio the harness accepts: json+ output with the
// fields Parse reads, and client/server support for the same job files.
const MinVersion = "fio-3.28"

const installHint = "install fio >= 3.28 (Debian/Ubuntu: apt-get install fio)"

// Runner starts fio as a child process in its own process group, tied to
// the life of the process that runs it.
//
// fio is started with Setpgid, so that a Ctrl-C at the terminal reaches the
// suite alone and the suite decides how fio stops (SIGINT, then SIGKILL;
// see Run). It is also started with Pdeathsig SIGKILL: when the process
// running Run dies without a chance to clean up (SIGKILL, the OOM killer, a
// CI runner's hard cancel), the kernel kills fio instead of leaving it
// writing to the drive until its runtime ends. Linux sends that signal when
// the OS thread that forked the child ends, not the process, so Run locks
// its goroutine to its OS thread from before fio starts until fio has been
// waited for: while fio runs, no other goroutine can take that thread and
// end it (a goroutine that exits while locked ends its thread).
//
// Pdeathsig covers fio itself and nothing it forks: fio's job processes
// (job files without thread=1) call setsid and do not inherit it. While
// Run is alive they are found and killed (through /proc); if the process
// running Run is killed, they outlive fio. Job files from Job.File use
// thread=1, so they have no such processes.
//
// Starting fio this way needs Linux: on other systems Version and Run
// return an error saying so. The rest of the package (job files, parsing,
// aggregation, iolog and status reports) works on every system.
type Runner struct {
	// Binary is the fio executable; "" means "fio", looked up in PATH.
	Binary string
	// Grace is how long fio has to stop after an interrupt (SIGINT to its
	// process group) when the context is done, before the whole group is
	// killed with SIGKILL. 0 means DefaultGrace.
	Grace time.Duration
	// Format is fio's --output-format: FormatJSONPlus when "" (latency
	// bins, which latency percentiles and QoS limits are judged from), or
	// FormatJSON (no bins: a quarter of the bytes a report, for runs judged
	// on I/O counts and errors alone).
	Format string
	// Args are extra arguments placed before the job file,
	// e.g. "--client=127.0.0.1".
	Args []string
	// Started, when not nil, is called with fio's pid, which is also its
	// process group id, as soon as fio has started.
	Started func(pid int)
	// Watch, when not nil, also receives fio's stdout as fio writes it
	// (with --status-interval, each report as it is printed; see
	// WatchStatus). Run still returns all of stdout. Watch must not block:
	// fio waits while its stdout is being written.
	Watch io.Writer
	// Stderr, when not nil, also receives fio's stderr as fio writes it
	// (a file, so that what fio said is on disk if this process is killed
	// before fio ends). Run still returns all of stderr.
	Stderr io.Writer
	// StderrLine, when not nil, is given each line of fio's stderr
	// (without its newline) as fio ends it, before Stderr receives it:
	// what it records of a line is recorded before the line is on disk.
	StderrLine func(line string)
}

// lineWriter gives each whole line written to it to line, then passes
// what it was written on to next.
type lineWriter struct {
	next    io.Writer
	line    func(string)
	partial []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return l.next.Write(p)
}

// flush gives line the last line when fio ended it without a newline.
func (l *lineWriter) flush() {
	if len(l.partial) > 0 {
		l.line(string(l.partial))
		l.partial = nil
	}
}

func (r Runner) binary() string {
	if r.Binary == "" {
		return "fio"
	}
	return r.Binary
}

// DefaultGrace is Runner.Grace when none is set: how long fio has to stop
// after SIGINT before it is killed.
const DefaultGrace = 5 * time.Second

func (r Runner) grace() time.Duration {
	if r.Grace <= 0 {
		return DefaultGrace
	}
	return r.Grace
}

var versionRE = regexp.MustCompile(`^fio-(\d+)\.(\d+)[0-9A-Za-z.+~-]*$`)

// Version runs "fio --version" and returns what it prints ("fio-3.33"). It
// fails, saying how to install fio, when fio is missing or older than
// MinVersion.
func (r Runner) Version(ctx context.Context) (string, error) {
	path, err := exec.LookPath(r.binary())
	if err != nil {
		return "", fmt.Errorf("fio not found (%w); %s", err, installHint)
	}
	out, stderr, err := r.run(ctx, path, []string{"--version"}, false)
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	v := strings.TrimSpace(string(out))
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		printed := fmt.Sprintf("%q", v)
		if l := firstLine(stderr); l != "" {
			printed += fmt.Sprintf(" and %q on stderr", l)
		}
		return "", fmt.Errorf("%s --version printed %s, not fio-MAJOR.MINOR; %s", path, printed, installHint)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 3 || major == 3 && minor < 28 {
		return "", fmt.Errorf("%s is %s, older than %s; %s", path, v, MinVersion, installHint)
	}
	return v, nil
}

// fio's output formats that Parse reads (Runner.Format).
const (
	FormatJSONPlus = "json+"
	FormatJSON     = "json"
)

// Run runs "fio --output-format=json+ [r.Args] jobFile" (r.Format instead
// of json+ when set) and returns what fio wrote to stdout and to stderr.
//
// A non-zero exit is an *ExitError. When ctx is done before fio ends, fio's
// process group gets SIGINT, then SIGKILL after r.Grace; the error then wraps
// ctx.Err() (and the *ExitError, if any), and stdout holds what fio printed
// until then. In every case the whole process group is sent SIGKILL once fio
// has been waited for, and so is every job process fio forked that is still
// alive (they leave the group; see Runner), so no fio worker outlives Run.
// Should the process running Run die first, the kernel kills fio (see
// Runner for what that does not cover).
func (r Runner) Run(ctx context.Context, jobFile string) (stdout, stderr []byte, err error) {
	format := r.Format
	if format == "" {
		format = FormatJSONPlus
	}
	args := append([]string{"--output-format=" + format}, r.Args...)
	args = append(args, jobFile)
	return r.run(ctx, r.binary(), args, true)
}

// ExitError is fio ending with a non-zero status or by a signal.
type ExitError struct {
	// Code is the exit status; fio exits with the number of jobs that
	// failed, or 128 when it stopped on SIGINT/SIGTERM. -1 when killed.
	Code int
	// Signal names the signal that ended fio ("SIGKILL"): either the
	// process was killed, or it exited with a status 128+N for a standard
	// signal N (129..159), as a shell does when its child is killed.
	Signal string
	// Stderr is what fio wrote to stderr.
	Stderr string
}

func newExitError(ps *os.ProcessState, stderr []byte) *ExitError {
	e := &ExitError{Code: -1, Stderr: string(stderr)}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return e
	}
	switch {
	case ws.Signaled():
		e.Signal = unix.SignalName(ws.Signal())
	case ws.Exited():
		e.Code = ws.ExitStatus()
		if n := e.Code - 128; n >= 1 && n <= 31 {
			if name := unix.SignalName(syscall.Signal(n)); name != "" {
				e.Signal = name
			}
		}
	}
	return e
}

// Error reads "fio exited with status N (N jobs failed): <first stderr
// line>" or "fio killed by signal SIGKILL".
func (e *ExitError) Error() string {
	if e.Signal != "" {
		return "fio killed by signal " + e.Signal
	}
	var msg string
	if e.Code == 128 {
		// fio's own exit value after SIGINT/SIGTERM ("fio: terminating on signal N").
		msg = "fio exited with status 128 (stopped by a signal)"
	} else {
		msg = fmt.Sprintf("fio exited with status %d (%d jobs failed)", e.Code, e.Code)
	}
	if l := firstLine([]byte(e.Stderr)); l != "" {
		msg += ": " + l
	}
	return msg
}

// firstLine returns the first non-blank line of b, trimmed.
func firstLine(b []byte) string {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			return s
		}
	}
	return ""
}
