//go:build unix

package fleetcheck

import "syscall"

// noFollow refuses to open a symlink; nonBlock never waits on a FIFO.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
