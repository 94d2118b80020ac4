//go:build !linux

package firmware

import "syscall"

// procAttr puts the load's fio in a process group of its own (a live run
// is Linux only; this keeps the package building elsewhere).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
