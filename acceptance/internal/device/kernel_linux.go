package device

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// What only Linux can do for this package: own a target the way
// util-linux does (O_EXCL on a block device, flock on a file), discard a
// block device and punch holes in a file. Everything else reads files, of
// the running system or of a fake tree.

// haveSysfs: the running system describes its block devices in /sys.
const haveSysfs = true

// claimBlock opens block device path O_RDWR|O_EXCL and checks that it is
// still device major:minor.
func claimBlock(path string, major, minor uint32) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	// The path may have been pointed at another device since Inspect.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK || unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != minor {
		f.Close()
		return nil, fmt.Errorf("%w: it is not device %d:%d any more", errChanged, major, minor)
	}
	return f, nil
}

// claimFile opens regular file path O_RDWR and takes an exclusive,
// non-blocking flock on it.
func claimFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: it is not a regular file any more", errChanged)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// discardBlock discards the whole of block device f, named path, with the
// BLKDISCARD ioctl over [0, size).
func discardBlock(path string, f *os.File) error {
	fd := int(f.Fd())
	size, err := unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
	if err != nil {
		return fmt.Errorf("%s: discarding: reading its size (BLKGETSIZE64): %w", path, err)
	}
	r := [2]uint64{0, size}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKDISCARD, uintptr(unsafe.Pointer(&r))); e != 0 {
		if e == unix.EOPNOTSUPP {
			return fmt.Errorf("%s: discarding %s bytes: the device does not support discard (%w); choose another purge (format, sanitize or none)", path, units.Thousands(float64(size)), e)
		}
		return fmt.Errorf("%s: discarding %s bytes (BLKDISCARD): %w", path, units.Thousands(float64(size)), e)
	}
	return nil
}

// PunchHole deallocates the first size bytes of the regular file f and
// keeps its size (fallocate with FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE):
// they read as zeros afterwards. The kernel's error is returned as it is;
// errors.Is(err, unix.EOPNOTSUPP) when f's file system cannot punch holes.
// On systems other than Linux it returns an error saying it needs Linux.
func PunchHole(f *os.File, size int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, size)
}

// loopFile is the file the kernel has open for the loop device at path,
// by its own record (LOOP_GET_STATUS64, what losetup -a prints): the
// device its file system is on and its inode. Unlike the backing_file
// path in sysfs, no bind mount, overmount or mount namespace changes it.
func loopFile(path string) (identity.FileID, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return identity.FileID{}, err
	}
	defer f.Close()
	li, err := unix.IoctlLoopGetStatus64(int(f.Fd()))
	if err != nil {
		return identity.FileID{}, fmt.Errorf("LOOP_GET_STATUS64: %w", err)
	}
	return identity.FileID{Dev: fmt.Sprintf("%d:%d", unix.Major(li.Device), unix.Minor(li.Device)), Inode: li.Inode}, nil
}
