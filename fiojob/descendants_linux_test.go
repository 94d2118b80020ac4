package fiojob

import (
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// A process tree's descendants read from the children files are the ones
// a pass over /proc finds: children of the root's threads, their own
// children, a grandchild that left its process group (setsid, as fio's
// job processes do), and nothing else.
func TestDescendantsFromChildrenFiles(t *testing.T) {
	if !haveChildren() {
		t.Skip("this kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN): descendants scans /proc")
	}
	cmd := exec.Command("sh", "-c", `sleep 30 & setsid sh -c 'sleep 30 & sleep 30 & wait' & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, k := range scanDescendants(cmd.Process.Pid) {
			_ = syscall.Kill(k.pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Until the tree is whole: both listings of it are then the same.
	less := func(a, b procKey) int { return a.pid - b.pid }
	var got, want []procKey
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		want = scanDescendants(cmd.Process.Pid)
		got = descendants(cmd.Process.Pid)
		slices.SortFunc(got, less)
		slices.SortFunc(want, less)
		if len(want) == 4 && slices.Equal(got, want) {
			break
		}
	}
	if len(want) != 4 || !slices.Equal(got, want) {
		t.Errorf("descendants from the children files: %v; from /proc: %v (want the same 4: sleep, sh, and its 2 sleeps)", got, want)
	}
}
