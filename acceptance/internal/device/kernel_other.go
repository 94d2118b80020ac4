//go:build !linux

package device

import (
	"fmt"
	"os"
	"runtime"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
)

// haveSysfs: the running system has no /sys describing its block devices.
const haveSysfs = false

func needsLinux(what string) error {
	return fmt.Errorf("%s %w, not %s", what, errNeedsLinux, runtime.GOOS)
}

func claimBlock(path string, major, minor uint32) (*os.File, error) {
	return nil, needsLinux("holding a block device (O_EXCL)")
}

func claimFile(path string) (*os.File, error) {
	return nil, needsLinux("holding a file (flock)")
}

func discardBlock(path string, f *os.File) error {
	return fmt.Errorf("%s: discarding: %w", path, needsLinux("BLKDISCARD"))
}

// PunchHole deallocates the first size bytes of the regular file f and
// keeps its size; it needs Linux, and here returns an error saying so.
func PunchHole(f *os.File, size int64) error {
	return needsLinux("punching a hole in a file (fallocate)")
}

func loopFile(path string) (identity.FileID, error) {
	return identity.FileID{}, needsLinux("LOOP_GET_STATUS64")
}
