package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CapIOPS makes a cgroup whose processes (see Throttle.Command) read and
// write each of the block devices devs at most iops times a second, for
// a test whose device stands in for a drive only as something fio can
// drive: its speed is not what the test proves. An uncapped loop device
// runs as fast as the host's CPUs let it, and the CPU that goes to
// moving its blocks is taken from every test beside it; capped well
// above the figures a test's spec asks, fio waits on the kernel's
// throttle instead. Measured on 2 cores, the loop spec's run on three
// 1 GiB loop devices took 73 s and 52 CPU-s uncapped, 75 s and 18 CPU-s
// at 3,000 IOPS.
//
// Unlike WriteThrottle, a machine without a cgroup I/O controller does
// not skip t: ok is false and the test runs uncapped, as fast as before.
// The cgroup is removed when t ends.
func CapIOPS(t testing.TB, iops int, devs ...string) (th Throttle, ok bool) {
	t.Helper()
	if os.Geteuid() != 0 || len(devs) == 0 {
		return th, false
	}
	var nums []string
	for _, dev := range devs {
		n, err := blockNumber(dev)
		if err != nil {
			return th, false
		}
		nums = append(nums, n)
	}
	v1, v2 := cgroupMounts()
	limits := map[string][]string{} // file: its lines
	root := v1
	switch {
	case v1 != "":
		for _, n := range nums {
			for _, op := range []string{"read", "write"} {
				f := "blkio.throttle." + op + "_iops_device"
				limits[f] = append(limits[f], fmt.Sprintf("%s %d", n, iops))
			}
		}
	case v2 != "":
		root = v2
		th.v2 = true
		// A root that refuses runs uncapped.
		if err := childrenIO(v2); err != nil {
			return th, false
		}
		for _, n := range nums {
			limits["io.max"] = append(limits["io.max"], fmt.Sprintf("%s riops=%d wiops=%d", n, iops, iops))
		}
	default:
		return th, false
	}
	if err := th.make(t, root); err != nil {
		t.Logf("running uncapped: no cgroup of its own for %s: %v", strings.Join(devs, ", "), err)
		return th, false
	}
	for f, lines := range limits {
		for _, line := range lines {
			if err := os.WriteFile(filepath.Join(th.dir, f), []byte(line), 0); err != nil {
				t.Logf("running uncapped: writing %q to %s: %v", line, filepath.Join(th.dir, f), err)
				return th, false
			}
		}
	}
	return th, true
}

// Drained waits until no process is left in th's cgroup, at most
// timeout, and says which are left after it. A process leaves the cgroup
// only once its asynchronous I/O has completed (the kernel waits for it
// as the process exits): a fio killed with writes that the throttle still
// held is in the cgroup until they have reached the device, a moment
// after its killer saw it die.
func (th Throttle) Drained(timeout time.Duration) error {
	// Every thread, not cgroup.procs: under cgroup v2 a process whose
	// main thread has exited leaves cgroup.procs while another of its
	// threads (fio's jobs, with thread=1) still waits for its I/O.
	// cgroup.events says "populated 0" only once the last has gone.
	var left []string
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if th.v2 {
			var b []byte
			b, err = os.ReadFile(filepath.Join(th.dir, "cgroup.events"))
			left = nil
			if !strings.Contains(string(b), "populated 0") {
				left = []string{"some"}
			}
		} else {
			var b []byte
			b, err = os.ReadFile(filepath.Join(th.dir, "tasks"))
			left = strings.Fields(string(b))
		}
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("threads %s are still in the cgroup %s after %s", strings.Join(left, ", "), th.dir, timeout)
		}
	}
}
