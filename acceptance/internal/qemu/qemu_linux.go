package qemu

import (
	"os/exec"
	"runtime"
	"syscall"
)

// start runs cmd in its own process group, which gets SIGTERM when cmd's
// context is done and SIGKILL once cmd has ended, so that nothing of the
// guest outlives it. QEMU also gets SIGKILL from the kernel should this
// process die first (a parent-death signal). started is false when cmd did
// not start, and err is then Start's error; otherwise it is Wait's.
func start(cmd *exec.Cmd) (started bool, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	// The parent-death signal fires when the OS thread that started the
	// child exits, not the process: keep this goroutine on its thread from
	// Start to Wait so that the runtime cannot retire the thread under QEMU.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return false, err
	}
	err = cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return true, err
}
