package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
)

// recorder is a testing.TB whose Skip and Fatalf end the goroutine, as the
// real ones do, after noting what was said.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// call runs f with a recorder in a goroutine of its own and returns the
// recorder once f has returned or ended it.
func call(t *testing.T, f func(testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

const absent = "drivequal-no-such-command"

func TestMustHaveSkips(t *testing.T) {
	t.Setenv("DRIVEQUAL_REQUIRE_LOOP", "")
	r := call(t, func(tb testing.TB) { MustHave(tb, absent, "apt-get install it") })
	if want := "needs " + absent + " (apt-get install it)"; r.skipped != want || r.failed != "" {
		t.Errorf("MustHave(%s) skipped %q, failed %q; want skipped %q", absent, r.skipped, r.failed, want)
	}
}

func TestMustHaveFailsWhenRequired(t *testing.T) {
	t.Setenv("DRIVEQUAL_REQUIRE_LOOP", "1")
	r := call(t, func(tb testing.TB) { MustHave(tb, absent, "apt-get install it") })
	if want := "DRIVEQUAL_REQUIRE_LOOP=1 but this test needs " + absent + " (apt-get install it)"; r.failed != want || r.skipped != "" {
		t.Errorf("MustHave(%s) failed %q, skipped %q; want failed %q", absent, r.failed, r.skipped, want)
	}
}

func TestMustHaveFinds(t *testing.T) {
	t.Setenv("DRIVEQUAL_REQUIRE_LOOP", "1")
	var path string
	r := call(t, func(tb testing.TB) { path = MustHave(tb, "go", "install Go") })
	if path == "" || r.failed != "" || r.skipped != "" {
		t.Errorf("MustHave(go) = %q, failed %q, skipped %q; want go's path", path, r.failed, r.skipped)
	}
}

// TestInitramfsUnfitKernel: a kernel missing a module the guest loads
// skips the test naming the module, and fails it under
// DRIVEQUAL_REQUIRE_LOOP=1.
func TestInitramfsUnfitKernel(t *testing.T) {
	mods := t.TempDir()
	if err := os.WriteFile(filepath.Join(mods, "modules.dep"), []byte("kernel/fs/ext4/ext4.ko:\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := qemu.Kernel{Version: "6.8.0-45-generic", Modules: mods}
	const want = "needs a guest kernel with what the guest loads (nvme, virtio_pci, 9pnet_virtio, 9p): kernel 6.8.0-45-generic: module nvme is neither built in (modules.builtin) nor installed (modules.dep)"
	t.Setenv("DRIVEQUAL_REQUIRE_LOOP", "")
	r := call(t, func(tb testing.TB) { Initramfs(tb, k, "/nonexistent/busybox") })
	if !strings.HasPrefix(r.skipped, want) || r.failed != "" {
		t.Errorf("Initramfs skipped %q, failed %q; want skipped %q...", r.skipped, r.failed, want)
	}
	t.Setenv("DRIVEQUAL_REQUIRE_LOOP", "1")
	r = call(t, func(tb testing.TB) { Initramfs(tb, k, "/nonexistent/busybox") })
	if !strings.HasPrefix(r.failed, "DRIVEQUAL_REQUIRE_LOOP=1 but this test "+want) || r.skipped != "" {
		t.Errorf("Initramfs failed %q, skipped %q; want failed with DRIVEQUAL_REQUIRE_LOOP=1 ... %q", r.failed, r.skipped, want)
	}
}

// TestWriteThrottle: a process started in the throttle's cgroup writes
// through it, so the cgroup counts its writes to the device and holds
// them to its rate, and the limit the kernel holds is the one asked for.
// The time is a floor only, which a loaded machine can only raise.
func TestWriteThrottle(t *testing.T) {
	dev := Loop(t, 16<<20)
	th := WriteThrottle(t, dev, 100)
	if limit, err := th.Limit(); err != nil || !strings.HasSuffix(limit, " 100") && !strings.HasSuffix(limit, " wiops=100") {
		t.Errorf("the cgroup's limit = %q, %v; want %s's writes at 100 a second", limit, err, dev)
	}
	ddHeld(t, th, dev)
	if n, err := th.Writes(); err != nil || n < 64 {
		t.Errorf("the cgroup counted %d writes to %s (%v), want the 64 that dd made in it", n, dev, err)
	}
	// A write from outside the cgroup is not its.
	before, _ := th.Writes()
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+dev, "bs=4096", "count=8", "oflag=direct").CombinedOutput(); err != nil {
		t.Fatalf("dd: %v: %s", err, out)
	}
	if after, _ := th.Writes(); after != before {
		t.Errorf("the cgroup counted %d writes made outside it", after-before)
	}
}

// ddHeld runs dd in th's cgroup, writing 64 blocks to dev, and fails t
// unless they took 0.3 s at least, as at 100 writes a second (0.64 s less
// the throttle's first slice). The time is a floor only, which a loaded
// machine can only raise.
func ddHeld(t *testing.T, th Throttle, dev string) {
	t.Helper()
	start := time.Now()
	if out, err := th.Command("dd", "if=/dev/zero", "of="+dev, "bs=4096", "count=64", "oflag=direct").CombinedOutput(); err != nil {
		t.Fatalf("dd in the cgroup: %v: %s", err, out)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("64 writes at 100 a second took %v, want at least 0.3 s", took)
	}
}

// CapOther holds a read throttle's writes too: the cgroup keeps its read
// limit and gains a write limit of the cap, and dd writing in it is held
// to that rate.
func TestReadThrottleCapOther(t *testing.T) {
	dev := Loop(t, 16<<20)
	th := ReadThrottle(t, dev, 1000)
	th.CapOther(t, 100)
	file, want, read := "blkio.throttle.write_iops_device", th.majMin+" 100", th.majMin+" 1000"
	if th.v2 {
		file, want, read = "io.max", "wiops=100", "riops=1000"
	}
	b, err := os.ReadFile(filepath.Join(th.dir, file))
	if err != nil || !slices.Contains(strings.Fields(string(b)), want) && !slices.Contains(strings.Split(strings.TrimSpace(string(b)), "\n"), want) {
		t.Errorf("the cgroup's %s = %q, %v; want %s's writes at 100 a second", file, b, err, dev)
	}
	limit, err := th.Limit()
	if err != nil || !slices.Contains(strings.Fields(limit), read) && !slices.Contains(strings.Split(limit, "\n"), read) {
		t.Errorf("the cgroup's read limit = %q, %v; want %s's reads at 1000 a second still", limit, err, dev)
	}
	ddHeld(t, th, dev)
}

// Also holds a second device in the same cgroup, and Script runs a
// program in the cgroup by path: dd started by the script is counted
// by the cgroup and held to the second device's rate.
func TestThrottleAlsoAndScript(t *testing.T) {
	one, two := Loop(t, 16<<20), Loop(t, 16<<20)
	th := WriteThrottle(t, one, 1000)
	th.Also(t, two, 100)
	if limit, err := th.Limit(); err != nil || !strings.Contains(limit, " 100") && !strings.Contains(limit, "wiops=100") {
		t.Errorf("the cgroup's limits = %q, %v; want %s's writes at 100 a second too", limit, err, two)
	}
	start := time.Now()
	if out, err := exec.Command(th.Script(t, "dd"), "if=/dev/zero", "of="+two, "bs=4096", "count=64", "oflag=direct").CombinedOutput(); err != nil {
		t.Fatalf("dd by the script: %v: %s", err, out)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("64 writes to %s at 100 a second took %v, want at least 0.3 s", two, took)
	}
}
