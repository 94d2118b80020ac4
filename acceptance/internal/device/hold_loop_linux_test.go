package device

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// These tests hold real loop devices; see loop_linux_test.go for what they need.

// holdWhenSettled is Hold, tried again for a while as long as a refusal
// names losetup: a losetup -f of a parallel test that raced for the same
// free device opens it read-write for a moment before it finds it taken.
func holdWhenSettled(t *testing.T, in Info) (*Holds, []Refusal) {
	t.Helper()
	var sys System
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		h, rs := sys.Hold([]Info{in})
		if len(rs) == 0 || time.Now().After(deadline) ||
			!slices.ContainsFunc(rs, func(r Refusal) bool { return strings.Contains(r.Reason, " (losetup)") }) {
			return h, rs
		}
	}
}

// holdLoop inspects dev and holds it, failing the test on a refusal; the
// hold is released in t.Cleanup.
func holdLoop(t *testing.T, dev string) (*Holds, Info) {
	t.Helper()
	var sys System
	in, err := sys.Inspect(dev)
	if err != nil {
		t.Fatal(err)
	}
	h, rs := holdWhenSettled(t, in)
	if len(rs) != 0 {
		t.Fatalf("Hold(%s) = %q, want it held", dev, rs)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h, in
}

// exclusiveOpenFails reports whether the kernel refuses another exclusive
// opener of dev with EBUSY, as it refuses mkfs, wipefs and mount.
func exclusiveOpenFails(t *testing.T, dev string) bool {
	t.Helper()
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	if !errors.Is(err, unix.EBUSY) {
		t.Fatalf("open(%s, O_EXCL) = %v, want EBUSY or success", dev, err)
	}
	return true
}

// A held loop device cannot be held a second time: the refusal names this
// process, the device is unchanged, and released it can be held again.
func TestLoopHoldTwice(t *testing.T) {
	t.Parallel()
	dev, _ := newLoop(t, loopOpts{})
	before := testenv.SHA256(t, dev)
	h, in := holdLoop(t, dev)
	if !exclusiveOpenFails(t, dev) {
		t.Errorf("while held, another exclusive open of %s succeeded", dev)
	}

	var sys System
	h2, rs := sys.Hold([]Info{in})
	if h2 != nil {
		h2.Close()
		t.Fatalf("second Hold(%s) held it, want a refusal", dev)
	}
	self := fmt.Sprintf("open by this process (pid %d, ", os.Getpid())
	if len(rs) != 1 || !strings.HasPrefix(rs[0].Reason, "is in use: ") || !strings.Contains(rs[0].Reason, self) {
		t.Errorf("second Hold(%s) = %q, want one refusal, in use, naming %q", dev, rs, self)
	}
	// fio opens without O_EXCL: reading (sha) works while held.
	if after := testenv.SHA256(t, dev); after != before {
		t.Errorf("%s changed: sha256 %s before, %s after", dev, before, after)
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if exclusiveOpenFails(t, dev) {
		t.Errorf("after Close, an exclusive open of %s still fails", dev)
	}
	h3, rs := holdWhenSettled(t, in)
	if len(rs) != 0 {
		t.Errorf("Hold(%s) after Close = %q, want it held", dev, rs)
	}
	h3.Close()
}

// A device another process has open for writing (without O_EXCL, so the
// kernel lets Hold have it) is refused, naming that process.
func TestLoopHoldWriter(t *testing.T) {
	t.Parallel()
	needTools(t, "sh", "sleep")
	dev, _ := newLoop(t, loopOpts{})
	before := testenv.SHA256(t, dev)
	// 3<> opens read-write without truncating: nothing is written.
	cmd := exec.Command("sh", "-c", `exec 3<>"$1"; exec sleep 60`, "sh", dev)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait for the child to be sleep with the device open on fd 3.
	fd3 := fmt.Sprintf("/proc/%d/fd/3", cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
		if _, err := os.Stat(fd3); err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never opened %s", dev)
		}
	}

	var sys System
	in, err := sys.Inspect(dev)
	if err != nil {
		t.Fatal(err)
	}
	h, rs := sys.Hold([]Info{in})
	if h != nil {
		h.Close()
		t.Fatalf("Hold(%s) held it while pid %d writes it, want a refusal", dev, cmd.Process.Pid)
	}
	// Other processes may have it open for writing meanwhile (losetup of a
	// parallel test, setting up a free loop device): the child must be
	// among the writers named.
	want := fmt.Sprintf("pid %d (sleep)", cmd.Process.Pid)
	if len(rs) != 1 || !strings.HasPrefix(rs[0].Reason, "is open for writing by ") || !strings.Contains(rs[0].Reason, want) {
		t.Errorf("Hold(%s) = %q, want one refusal, open for writing, naming %q", dev, rs, want)
	}
	if exclusiveOpenFails(t, dev) {
		t.Errorf("after a refused Hold, %s is still held", dev)
	}
	if after := testenv.SHA256(t, dev); after != before {
		t.Errorf("%s changed: sha256 %s before, %s after", dev, before, after)
	}
}

// Discard through the held descriptor zeroes a loop device (the loop driver
// punches holes in its backing file) while it stays held.
func TestLoopDiscard(t *testing.T) {
	t.Parallel()
	dev, img := newLoop(t, loopOpts{})
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, loopSize); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	zero := shaOf(make([]byte, loopSize))
	if testenv.SHA256(t, dev) == zero {
		t.Fatalf("%s reads as zeros after writing random data to it", dev)
	}

	h, _ := holdLoop(t, dev)
	if err := h.Discard(dev); err != nil {
		t.Fatal(err)
	}
	if !exclusiveOpenFails(t, dev) {
		t.Errorf("after Discard, another exclusive open of %s succeeded: it is no longer held", dev)
	}
	if got := testenv.SHA256(t, dev); got != zero {
		t.Errorf("after Discard, %s has sha256 %s, want that of %d zero bytes (%s)", dev, got, loopSize, zero)
	}
	var st unix.Stat_t
	if err := unix.Stat(img, &st); err != nil {
		t.Fatal(err)
	}
	if allocated := st.Blocks * 512; allocated > loopSize/16 {
		t.Errorf("after Discard, the backing file %s still has %d of %d bytes allocated", img, allocated, loopSize)
	}
}

func shaOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
