package nvme

import (
	"os/exec"
	"runtime"
	"syscall"
)

// run starts cmd and waits for it. started is false when cmd did not
// start, and err is then Start's error; otherwise err is Wait's.
func run(cmd *exec.Cmd) (started bool, err error) {
	// Its own process group, so that a kill reaches anything it started,
	// and SIGKILL from the kernel should this process die first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		// Signal 0 goes through the process handle: it says whether the
		// leader is still there (not yet reaped) before the group is hit.
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			return err
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	// Pdeathsig fires when the OS thread that started the child exits, not
	// the process: keep this goroutine on its thread from Start to Wait so
	// that the runtime cannot retire the thread under a running child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	return true, cmd.Wait()
}
