//go:build linux

package host

import "golang.org/x/sys/unix"

// kernelRelease is uname's release ("6.12.48+deb13-amd64"); "" when uname
// fails.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
