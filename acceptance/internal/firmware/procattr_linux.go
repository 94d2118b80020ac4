package firmware

import "syscall"

// procAttr puts the load's fio in a process group of its own, killed
// (SIGKILL) when the thread that started it ends: Step holds that thread
// until the load has been waited for.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
