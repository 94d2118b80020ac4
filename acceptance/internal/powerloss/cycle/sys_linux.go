package cycle

import (
	"os"
	"os/exec"
	"syscall"
)

// openDirect opens path for reading past the page cache, so that what is
// read is what the drive returns.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
}

// setpgid puts fio in its own process group, killed with the suite.
func setpgid(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// ownGroup puts a cut or restore command in a process group of its own,
// which killGroup kills whole. It gets no death signal: a command that
// cuts or restores power is let finish if the suite dies.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills p's process group (see ownGroup).
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
