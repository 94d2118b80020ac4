package testenv

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// cgroupMounts finds where the cgroup v1 blkio hierarchy and the cgroup v2
// hierarchy are mounted, "" for one that is not, at the places systemd
// and the distributions mount them: /sys/fs/cgroup/blkio for v1's blkio,
// and /sys/fs/cgroup (v2 alone) or /sys/fs/cgroup/unified (beside v1)
// for v2.
func cgroupMounts() (v1blkio, v2 string) {
	is := func(dir string, magic int64) bool {
		var fs unix.Statfs_t
		return unix.Statfs(dir, &fs) == nil && int64(fs.Type) == magic
	}
	if dir := "/sys/fs/cgroup/blkio"; is(dir, unix.CGROUP_SUPER_MAGIC) {
		if _, err := os.Stat(filepath.Join(dir, "blkio.throttle.write_iops_device")); err == nil {
			v1blkio = dir
		}
	}
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if is(dir, unix.CGROUP2_SUPER_MAGIC) {
			return v1blkio, dir
		}
	}
	return v1blkio, ""
}
