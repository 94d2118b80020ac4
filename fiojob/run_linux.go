package fiojob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// run runs bin with args in a new process group. With watch set it also
// records the process's descendants while it runs (see proc_linux.go) and
// kills those left once it has ended.
func (r Runner) run(ctx context.Context, bin string, args []string, watch bool) (stdout, stderr []byte, err error) {
	var outBuf, errBuf bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = &outBuf
	if r.Watch != nil && watch {
		cmd.Stdout = io.MultiWriter(&outBuf, r.Watch)
	}
	cmd.Stderr = &errBuf
	if r.Stderr != nil && watch {
		cmd.Stderr = io.MultiWriter(&errBuf, r.Stderr)
	}
	var lines *lineWriter
	if r.StderrLine != nil && watch {
		lines = &lineWriter{next: cmd.Stderr, line: r.StderrLine}
		cmd.Stderr = lines
	}
	// Pdeathsig: fio dies with this process (with the thread that forks it;
	// see Runner and the LockOSThread below).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var watcher atomic.Pointer[descendantWatch] // set after Start, read by Cancel
	cmd.Cancel = func() error {
		if w := watcher.Load(); w != nil {
			w.scanAll()
		}
		// fio stops its jobs on SIGINT and still prints its report.
		return killGroup(cmd.Process.Pid, unix.SIGINT)
	}
	cmd.WaitDelay = r.grace()
	// The kernel sends Pdeathsig when the forking thread ends. Hold this
	// thread, from before the fork until fio has been waited for and its
	// leftovers killed, so that it cannot end while fio runs. The lock is
	// counted, so a caller's own lock outlives this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, nil, fmt.Errorf("starting fio: %w; %s", err, installHint)
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("starting fio: %w", ctx.Err())
		}
		return nil, nil, fmt.Errorf("starting fio: %w", err)
	}
	pgid := cmd.Process.Pid
	if watch {
		watcher.Store(watchDescendants(pgid))
	}
	if r.Started != nil {
		r.Started(pgid)
	}
	waitErr := cmd.Wait()
	if lines != nil {
		lines.flush()
	}
	// exec only kills the leader after WaitDelay; finish the group and any
	// job process that left it, none of which may outlive Run.
	_ = killGroup(pgid, unix.SIGKILL)
	if w := watcher.Load(); w != nil {
		w.killSurvivors()
	}

	stdout, stderr = outBuf.Bytes(), errBuf.Bytes()
	var exitErr error
	if ee := (*exec.ExitError)(nil); errors.As(waitErr, &ee) {
		exitErr = newExitError(ee.ProcessState, stderr)
	} else if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		exitErr = fmt.Errorf("waiting for fio: %w", waitErr)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if exitErr != nil {
			return stdout, stderr, fmt.Errorf("fio stopped: %w (%w)", ctxErr, exitErr)
		}
		return stdout, stderr, fmt.Errorf("fio stopped: %w", ctxErr)
	}
	return stdout, stderr, exitErr
}

// killGroup sends sig to process group pgid; a group that is already gone
// is not an error.
func killGroup(pgid int, sig unix.Signal) error {
	err := unix.Kill(-pgid, sig)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}
