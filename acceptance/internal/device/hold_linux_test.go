package device

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Hold takes its locks with Linux's O_EXCL and flock, so these tests run
// on Linux only; the refusals they explain are tested in hold_test.go.

// Hold on a fake tree: a block device cannot be held (it is a regular file
// here); a regular file is locked, then refused because fio (pid 500) has it
// open for writing; and, refused, nothing stays held.
func TestHoldFakeTree(t *testing.T) {
	sys := buildTree(t, "busy.tree")
	var infos []Info
	for _, p := range []string{"/dev/loop11", "/var/tmp/locked.img"} {
		in, err := sys.Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, in)
	}
	h, got := sys.Hold(infos)
	if h != nil {
		t.Errorf("Hold returned holds with refusals %q", got)
	}
	want := []string{
		"/dev/loop11: is a block device of a fake tree (System.Root), which cannot be opened exclusively",
		"/var/tmp/locked.img: is open for writing by pid 500 (fio)",
	}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Hold mismatch (-want +got):\n%s", diff)
	}
	// Released: a second Hold of the file gets the lock again, and is
	// refused for the writer only.
	_, got = sys.Hold(infos[1:])
	if diff := cmp.Diff(want[1:], reasons(got)); diff != "" {
		t.Errorf("second Hold mismatch (-want +got):\n%s", diff)
	}
}

// A regular file is held by an exclusive flock: a second Hold, even by the
// same process, is refused naming this process, the file is unchanged, and
// Discard punches it to zeros through the held descriptor, keeping its size.
// Needs no root.
func TestHoldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.img")
	data := bytes.Repeat([]byte("drivequal"), 1<<16)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var sys System
	in, err := sys.Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	h, rs := sys.Hold([]Info{in})
	if len(rs) != 0 {
		t.Fatalf("Hold(%s) = %q, want it held", path, rs)
	}
	defer h.Close()

	h2, rs := sys.Hold([]Info{in})
	if h2 != nil {
		h2.Close()
		t.Fatalf("second Hold(%s) held it again, want a refusal", path)
	}
	self := "open by " + (&procTable{sys: sys, self: os.Getpid()}).who(os.Getpid())
	if len(rs) != 1 || !strings.HasPrefix(rs[0].Reason, "is locked by another holder: ") || !strings.Contains(rs[0].Reason, self) {
		t.Errorf("second Hold(%s) = %q, want one refusal, locked, naming %q", path, rs, self)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Errorf("%s changed by a refused Hold (err %v)", path, err)
	}

	if err := h.Discard(path); err != nil {
		if strings.Contains(err.Error(), "cannot punch holes") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(data) || !bytes.Equal(got, make([]byte, len(data))) {
		t.Errorf("after Discard, %s holds %d bytes, not all zero; want %d zero bytes", path, len(got), len(data))
	}
	if err := h.Discard(filepath.Join(t.TempDir(), "other")); err == nil || !strings.Contains(err.Error(), "is not held") {
		t.Errorf("Discard(unheld file) = %v, want a not-held error", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// Released: it can be held again.
	h3, rs := sys.Hold([]Info{in})
	if len(rs) != 0 {
		t.Errorf("Hold(%s) after Close = %q, want it held", path, rs)
	}
	h3.Close()
}
