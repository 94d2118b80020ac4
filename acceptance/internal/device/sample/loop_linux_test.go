//go:build linux

package sample

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// At the built-in spec's 1.92TB, on a loop device over a sparse image
// of that size (direct I/O, as a drive is read): the sample reads 4 MiB,
// the tail block included; a block written into the image's tail is
// named, and nothing else is. The time is logged, never asserted (a
// shared machine).
func TestReadLoopAt192TB(t *testing.T) {
	img := filepath.Join(t.TempDir(), "drive.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(idema192); err != nil {
		f.Close()
		testenv.Skipf(t, "a sparse image of %d bytes: %v", int64(idema192), err)
	}
	f.Close()
	dev := testenv.Attach(t, img)
	start := time.Now()
	blank, err := Read(dev, idema192, true)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sample of %s (%d bytes): %d bytes read in %s", dev, int64(idema192), blank.Bytes(), took)
	if blank.Bytes() != 4<<20 || !blank.Zeros() {
		t.Fatalf("sample of the blank image: %d bytes, zeros %v; want 4 MiB of zeros", blank.Bytes(), blank.Zeros())
	}
	tail := blank.Offsets[len(blank.Offsets)-1]
	if tail != idema192-90_112-RegionBytes {
		t.Fatalf("last region at %d, want the last full block at %d", tail, int64(idema192-90_112-RegionBytes))
	}
	w, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("another drive's data"), tail+4096); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	now, err := Read(dev, idema192, true)
	if err != nil {
		t.Fatal(err)
	}
	d := Compare(blank, now)
	if d == nil || d.Region != len(blank.Offsets)-1 || d.Now != "other data" {
		t.Fatalf("Compare after a write into the tail = %v, want the last region holding other data", d)
	}
	t.Logf("%s", d)
}

// idema1536 is a 15.36 TB drive's size by the IDEMA rule (LBA1-03): a
// multiple of 4096, 90,112 bytes past a 128 KiB boundary.
const idema1536 = 15_362_991_415_296

// A 4Kn drive (4096-byte logical blocks) rejects direct I/O that is not
// aligned to 4096 bytes: at the largest capacity of the built-in spec,
// on a loop device over a sparse image with 4096-byte sectors, the
// sample reads its 32 regions, the last one the last full 128 KiB block
// before the tail, and names a block written into it.
func TestReadLoop4KnAt1536TB(t *testing.T) {
	img := filepath.Join(t.TempDir(), "drive.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(idema1536); err != nil {
		f.Close()
		testenv.Skipf(t, "a sparse image of %d bytes: %v", int64(idema1536), err)
	}
	f.Close()
	dev := testenv.Attach(t, img, "--sector-size", "4096")
	lbs, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "queue", "logical_block_size"))
	if err != nil || strings.TrimSpace(string(lbs)) != "4096" {
		t.Fatalf("%s: logical block size %q (%v), want 4096", dev, lbs, err)
	}
	// The device is strict: a direct read at a 512-byte offset fails.
	d, err := os.OpenFile(dev, os.O_RDONLY|oDirect, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, misaligned := d.ReadAt(aligned(4096), 512)
	d.Close()
	if misaligned == nil {
		t.Fatalf("%s: a direct read at byte offset 512 succeeded: not a 4Kn device", dev)
	}
	blank, err := Read(dev, idema1536, true)
	if err != nil {
		t.Fatal(err)
	}
	if blank.Bytes() != 4<<20 || !blank.Zeros() {
		t.Fatalf("sample of the blank image: %d bytes, zeros %v; want 4 MiB of zeros", blank.Bytes(), blank.Zeros())
	}
	tail := blank.Offsets[len(blank.Offsets)-1]
	if tail != idema1536-90_112-RegionBytes {
		t.Fatalf("last region at %d, want the last full block at %d", tail, int64(idema1536-90_112-RegionBytes))
	}
	w, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("another drive's data"), tail+RegionBytes-4096); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	now, err := Read(dev, idema1536, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := Compare(blank, now); diff == nil || diff.Region != len(blank.Offsets)-1 || diff.Now != "other data" {
		t.Fatalf("Compare after a write into the last 4 KiB of the last region = %v, want that region holding other data", diff)
	}
}
