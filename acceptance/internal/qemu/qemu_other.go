//go:build !linux

package qemu

import (
	"os/exec"
	"runtime"
)

// start cannot start QEMU here: the guest is tied to the life of this
// process with Linux's parent-death signal, and boots the host's Linux
// kernel and modules.
func start(cmd *exec.Cmd) (started bool, err error) {
	return false, needsLinux(runtime.GOOS)
}
