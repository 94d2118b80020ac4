package identity

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fsIocGetversion is FS_IOC_GETVERSION, _IOR('v', 1, long): the inode's
// generation, which ext4 and XFS draw anew for each file created.
const fsIocGetversion = 0x80007601 | uint(unsafe.Sizeof(uintptr(0)))<<16

// fileBirth is the inode generation and birth time of the file at path,
// whose inode is ino; zero where the file system keeps none or the file
// at path is no longer that inode.
func fileBirth(path string, ino uint64) (gen uint32, born string) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_INO|unix.STATX_BTIME, &st); err == nil && st.Ino == ino && st.Mask&unix.STATX_BTIME != 0 {
		born = time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)).UTC().Format(time.RFC3339Nano)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, born
	}
	defer f.Close()
	var fst unix.Stat_t
	if unix.Fstat(int(f.Fd()), &fst) != nil || fst.Ino != ino {
		return 0, born
	}
	if g, err := unix.IoctlGetUint32(int(f.Fd()), fsIocGetversion); err == nil {
		gen = g
	}
	return gen, born
}
