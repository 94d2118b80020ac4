package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Throttle is a block I/O cgroup whose processes write to one device at
// most a set number of times a second: the kernel's own I/O throttle
// (blk-throttle), which holds a loop device's IOPS flat whatever the rest
// of the machine does, as long as the machine can deliver that rate. A
// loop device's IOPS otherwise follow the host's load: a test that runs
// fio at nice 19 beside other tests measured from 5,700 to 285,000 IOPS
// within one run.
type Throttle struct {
	dir    string // the cgroup's directory
	procs  string // its cgroup.procs
	limit  string // the file that holds the device's write limit
	stat   string // the file that counts its I/O by device
	majMin string // the device's number, "7:0"
	v2     bool
}

var throttles atomic.Int64

// WriteThrottle makes a cgroup that limits the writes of the processes
// started in it (see Throttle.Command) on the block device dev to iops a
// second, with the cgroup v1 blkio controller where it is mounted, else
// cgroup v2's io controller. It is removed when t ends. A machine with
// neither, or one that refuses the cgroup, skips t saying why (see Skipf).
func WriteThrottle(t testing.TB, dev string, iops int) Throttle {
	t.Helper()
	MustHaveRoot(t)
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		t.Fatalf("%s is not a block device", dev)
	}
	majMin := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))

	v1, v2 := cgroupMounts()
	name := fmt.Sprintf("drivequal-test-%d-%d", os.Getpid(), throttles.Add(1))
	var th Throttle
	var line string
	switch {
	case v1 != "":
		th = Throttle{dir: filepath.Join(v1, name)}
		th.limit = filepath.Join(th.dir, "blkio.throttle.write_iops_device")
		th.stat = filepath.Join(th.dir, "blkio.throttle.io_serviced")
		line = fmt.Sprintf("%s %d", majMin, iops)
	case v2 != "":
		ctl, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
		if err != nil || !slices.Contains(strings.Fields(string(ctl)), "io") {
			Skipf(t, "needs a cgroup I/O controller to throttle %s: cgroup v2 at %s offers %q, without io", dev, v2, strings.TrimSpace(string(ctl)))
		}
		if err := os.WriteFile(filepath.Join(v2, "cgroup.subtree_control"), []byte("+io"), 0); err != nil {
			Skipf(t, "needs a cgroup I/O controller to throttle %s: enabling io in %s: %v", dev, v2, err)
		}
		th = Throttle{dir: filepath.Join(v2, name), v2: true}
		th.limit = filepath.Join(th.dir, "io.max")
		th.stat = filepath.Join(th.dir, "io.stat")
		line = fmt.Sprintf("%s wiops=%d", majMin, iops)
	default:
		Skipf(t, "needs a cgroup I/O controller (cgroup v1 blkio or cgroup v2 io) to throttle %s; none is mounted", dev)
	}
	th.procs = filepath.Join(th.dir, "cgroup.procs")
	th.majMin = majMin
	if err := os.Mkdir(th.dir, 0o755); err != nil {
		Skipf(t, "needs a cgroup of its own to throttle %s: %v", dev, err)
	}
	t.Cleanup(func() { th.remove(t) })
	if err := os.WriteFile(th.limit, []byte(line), 0); err != nil {
		Skipf(t, "needs the cgroup I/O throttle on %s: writing %q to %s: %v", dev, line, th.limit, err)
	}
	return th
}

// Command is exec.Command(name, args...) in the cgroup: a shell joins it
// and then execs name, so that name and every process it starts, fio
// included, are throttled from their first write.
func (th Throttle) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, th.procs, name}, args...)...)
}

// Limit is what the cgroup's limit file says, for a test to log.
func (th Throttle) Limit() (string, error) {
	b, err := os.ReadFile(th.limit)
	return strings.TrimSpace(string(b)), err
}

// Writes counts the writes the cgroup's processes have issued to the
// device: those the throttle saw, so a test proves its I/O went through
// it.
func (th Throttle) Writes() (int64, error) {
	b, err := os.ReadFile(th.stat)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case th.v2 && len(f) > 1 && f[0] == th.majMin:
			// 7:0 rbytes=0 wbytes=262144 rios=0 wios=64 dbytes=0 dios=0
			for _, kv := range f[1:] {
				if n, ok := strings.CutPrefix(kv, "wios="); ok {
					return strconv.ParseInt(n, 10, 64)
				}
			}
		case !th.v2 && len(f) == 3 && f[0] == th.majMin && f[1] == "Write":
			// 7:0 Write 64
			return strconv.ParseInt(f[2], 10, 64)
		}
	}
	return 0, nil
}

// remove removes the cgroup once the processes in it have exited; a
// process still in it after 10 s fails t, naming it.
func (th Throttle) remove(t testing.TB) {
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err = os.Remove(th.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	procs, _ := os.ReadFile(th.procs)
	t.Errorf("removing the cgroup %s: %v (processes still in it: %s)", th.dir, err, strings.Fields(string(procs)))
}

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
