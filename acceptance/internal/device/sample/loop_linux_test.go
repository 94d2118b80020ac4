//go:build linux

package sample

import (
	"os"
	"path/filepath"
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
