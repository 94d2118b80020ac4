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
	parent string // the hierarchy's root, which it is made in
	procs  string // its cgroup.procs
	limit  string // the file that holds the device's write limit
	stat   string // the file that counts its I/O by device
	majMin string // the device's number, "7:0"
	v2     bool
	read   bool // a read throttle (ReadThrottle)
}

// WriteThrottle makes a cgroup that limits the writes of the processes
// started in it (see Throttle.Command) on the block device dev to iops a
// second, with the cgroup v1 blkio controller where it is mounted, else
// cgroup v2's io controller. It is removed when t ends. A machine with
// neither, or one that refuses the cgroup, skips t saying why (see Skipf).
func WriteThrottle(t testing.TB, dev string, iops int) Throttle {
	t.Helper()
	return ioThrottle(t, dev, iops, false)
}

// ReadThrottle is WriteThrottle for reads: the processes in its cgroup
// read dev at most iops times a second (blkio.throttle.read_iops_device,
// or io.max riops).
func ReadThrottle(t testing.TB, dev string, iops int) Throttle {
	t.Helper()
	return ioThrottle(t, dev, iops, true)
}

func ioThrottle(t testing.TB, dev string, iops int, read bool) Throttle {
	t.Helper()
	MustHaveRoot(t)
	majMin, err := blockNumber(dev)
	if err != nil {
		t.Fatal(err)
	}

	v1, v2 := cgroupMounts()
	th := Throttle{read: read}
	op, v2key := "write", "wiops"
	if read {
		op, v2key = "read", "riops"
	}
	var line, root, limitFile, statFile string
	switch {
	case v1 != "":
		root = v1
		limitFile, statFile = "blkio.throttle."+op+"_iops_device", "blkio.throttle.io_serviced"
		line = fmt.Sprintf("%s %d", majMin, iops)
	case v2 != "":
		root = v2
		ctl, err := os.ReadFile(filepath.Join(v2, "cgroup.controllers"))
		if err != nil || !slices.Contains(strings.Fields(string(ctl)), "io") {
			Skipf(t, "needs a cgroup I/O controller to throttle %s: cgroup v2 at %s offers %q, without io (and no cgroup v1 blkio is mounted)", dev, v2, strings.TrimSpace(string(ctl)))
		}
		if err := childrenIO(v2); err != nil {
			Skipf(t, "needs a cgroup I/O controller to throttle %s: %v (EBUSY: that cgroup holds processes; run where the cgroup v2 root is the machine's)", dev, err)
		}
		th.v2, limitFile, statFile = true, "io.max", "io.stat"
		line = fmt.Sprintf("%s %s=%d", majMin, v2key, iops)
	default:
		Skipf(t, "needs a cgroup I/O controller (cgroup v1 blkio or cgroup v2 io) to throttle %s; none is mounted", dev)
	}
	if err := th.make(t, root); err != nil {
		Skipf(t, "needs a cgroup of its own to throttle %s: %v", dev, err)
	}
	th.majMin = majMin
	th.limit, th.stat = filepath.Join(th.dir, limitFile), filepath.Join(th.dir, statFile)
	if err := os.WriteFile(th.limit, []byte(line), 0); err != nil {
		Skipf(t, "needs the cgroup I/O throttle on %s: writing %q to %s: %v", dev, line, th.limit, err)
	}
	return th
}

// make makes th's cgroup in the hierarchy at root, removed when t ends.
func (th *Throttle) make(t testing.TB, root string) error {
	dir, err := os.MkdirTemp(root, "drivequal-test-")
	if err != nil {
		return err
	}
	th.dir, th.parent, th.procs = dir, root, filepath.Join(dir, "cgroup.procs")
	t.Cleanup(func() { th.remove(t) })
	return nil
}

// blockNumber is the block device dev's number, "7:0".
func blockNumber(dev string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", fmt.Errorf("%s is not a block device", dev)
	}
	rdev := uint64(st.Rdev) // int32 on macOS, where the package must build
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev)), nil
}

// childrenIO turns the io controller on for the children of the cgroup v2
// hierarchy's root at v2 (systemd usually has it on); the kernel lets a
// cgroup that holds processes, as a container's root may, have none
// (EBUSY).
func childrenIO(v2 string) error {
	sub := filepath.Join(v2, "cgroup.subtree_control")
	if on, _ := os.ReadFile(sub); slices.Contains(strings.Fields(string(on)), "io") {
		return nil
	}
	if err := os.WriteFile(sub, []byte("+io"), 0); err != nil {
		return fmt.Errorf("enabling io for the children of %s: %w", v2, err)
	}
	return nil
}

// Command is exec.Command(name, args...) in the cgroup: a shell joins it
// and then execs name, so that name and every process it starts, fio
// included, are throttled from their first write.
func (th Throttle) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, th.procs, name}, args...)...)
}

// Join moves process pid (and the children it starts from then on) into
// the cgroup.
func (th Throttle) Join(pid int) error {
	return os.WriteFile(th.procs, []byte(strconv.Itoa(pid)), 0)
}

// Limit is what the cgroup's limit file says, for a test to log.
func (th Throttle) Limit() (string, error) {
	b, err := os.ReadFile(th.limit)
	return strings.TrimSpace(string(b)), err
}

// Hold makes every write (read, for a ReadThrottle) of the cgroup's
// processes to the device wait, as a drive without power whose path
// queues its I/O does: two bytes a second (blkio.throttle.write_bps_device,
// or io.max wbps=2: kernels 5.10 to 6.12 refuse 1 there). A 4 KiB write
// in flight would take over half an hour; Release lets it go.
func (th Throttle) Hold(t testing.TB) {
	t.Helper()
	if err := th.bps("2"); err != nil {
		t.Fatal(err)
	}
}

// Release lifts Hold: the device's writes run at the cgroup's IOPS limit
// again. It fails t without stopping it, so that a cleanup goes on.
func (th Throttle) Release(t testing.TB) {
	t.Helper()
	if err := th.bps(""); err != nil {
		t.Error(err)
	}
}

func (th Throttle) bps(v string) error {
	op := "write"
	if th.read {
		op = "read"
	}
	file, line := filepath.Join(th.dir, "blkio.throttle."+op+"_bps_device"), th.majMin+" "+v
	if v == "" {
		line = th.majMin + " 0"
	}
	if th.v2 {
		if v == "" {
			v = "max"
		}
		file, line = filepath.Join(th.dir, "io.max"), th.majMin+" "+op[:1]+"bps="+v
	}
	if err := os.WriteFile(file, []byte(line), 0); err != nil {
		return fmt.Errorf("writing %q to %s: %w", line, file, err)
	}
	return nil
}

// Writes counts the writes the cgroup's processes have issued to the
// device (its reads, for a ReadThrottle): those the throttle saw, so a
// test proves its I/O went through it.
func (th Throttle) Writes() (int64, error) {
	v1op, v2key := "Write", "wios="
	if th.read {
		v1op, v2key = "Read", "rios="
	}
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
				if n, ok := strings.CutPrefix(kv, v2key); ok {
					return strconv.ParseInt(n, 10, 64)
				}
			}
		case !th.v2 && len(f) == 3 && f[0] == th.majMin && f[1] == v1op:
			// 7:0 Write 64
			return strconv.ParseInt(f[2], 10, 64)
		}
	}
	return 0, nil
}

// remove removes the cgroup once the processes in it have exited. One
// still in it after 10 s (a fio that outlived the suite) fails t, naming
// it, and is moved back to the hierarchy's root, so that the cgroup goes.
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
	t.Errorf("the cgroup %s still holds processes %s 10 s after its test: %v", th.dir, strings.Fields(string(procs)), err)
	for _, pid := range strings.Fields(string(procs)) {
		os.WriteFile(filepath.Join(th.parent, "cgroup.procs"), []byte(pid), 0)
	}
	if err := os.Remove(th.dir); err != nil {
		t.Errorf("removing the cgroup %s: %v", th.dir, err)
	}
}

// Script is an executable script in t's temporary directory that runs
// name with its arguments in the cgroup (as Command does): a stand-in
// for a binary a program under test starts by path, fio say.
func (th Throttle) Script(t testing.TB, name string) string {
	t.Helper()
	var q []string
	for _, a := range th.Command(name).Args {
		q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec "+strings.Join(q, " ")+` "$@"`+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// CapOther holds the cgroup's I/O of the other direction to its device
// (writes, for a read throttle; reads for a write throttle) to iops a
// second: a read throttle's processes otherwise write the device as fast
// as the host lets them.
func (th Throttle) CapOther(t testing.TB, iops int) {
	t.Helper()
	th.setIOPS(t, th.majMin, !th.read, iops)
}

// Also holds the cgroup's writes (reads, for a read throttle) to the
// block device dev to iops a second too: one cgroup for a process that
// writes several devices.
func (th Throttle) Also(t testing.TB, dev string, iops int) {
	t.Helper()
	majMin, err := blockNumber(dev)
	if err != nil {
		t.Fatal(err)
	}
	th.setIOPS(t, majMin, th.read, iops)
}

// setIOPS holds the cgroup's reads (read) or writes of the device majMin
// to iops a second.
func (th Throttle) setIOPS(t testing.TB, majMin string, read bool, iops int) {
	t.Helper()
	op, key := "write", "wiops"
	if read {
		op, key = "read", "riops"
	}
	file, line := "blkio.throttle."+op+"_iops_device", fmt.Sprintf("%s %d", majMin, iops)
	if th.v2 {
		file, line = "io.max", fmt.Sprintf("%s %s=%d", majMin, key, iops)
	}
	path := filepath.Join(th.dir, file)
	if err := os.WriteFile(path, []byte(line), 0); err != nil {
		t.Fatalf("writing %q to %s: %v", line, path, err)
	}
}
