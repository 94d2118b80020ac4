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
