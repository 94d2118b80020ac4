// Package testenv says whether a test can have what it needs here (root,
// fio, loop devices) and skips it when not, or fails it when
// DRIVEQUAL_REQUIRE_LOOP=1 (as .ci/run sets) says everything must run.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// missing skips or fails t for what it lacks.
func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
		t.Fatalf("DRIVEQUAL_REQUIRE_LOOP=1 but this test %s", what)
	}
	t.Skip(what)
}

// MustHaveRoot needs the test to run as root.
func MustHaveRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		missing(t, "needs root for loop devices")
	}
}

// MustHaveFio needs fio on PATH.
func MustHaveFio(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		missing(t, "needs fio (apt-get install fio)")
	}
}

// MustHaveLoop needs root, fio and losetup: everything a loop-device test
// drives.
func MustHaveLoop(t testing.TB) {
	t.Helper()
	MustHaveRoot(t)
	MustHaveFio(t)
	if _, err := exec.LookPath("losetup"); err != nil {
		missing(t, "needs losetup (apt-get install util-linux)")
	}
}

// Loop makes a loop device with direct I/O over a sparse file of size
// bytes; it is detached when t ends.
func Loop(t testing.TB, size int64) string {
	t.Helper()
	MustHaveLoop(t)
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command("losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}
