//go:build unix

package qual

import "syscall"

// noFollow refuses to open a symlink; nonBlock never waits on a FIFO.
const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)
