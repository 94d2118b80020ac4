// Package testenv skips a test that cannot have what it needs here, or
// fails it when every test must run.
//
// A test asks for root, fio, loop devices or a command; when one is
// missing it is skipped, saying why, unless DRIVEQUAL_REQUIRE_LOOP=1 (as
// .ci/run sets) says everything must run, and then it fails.
package testenv

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
)

// Skipf skips t for the reason given, which reads after "this test"
// ("needs a mounted ext4: mount: ..."), or fails t with it when
// DRIVEQUAL_REQUIRE_LOOP=1. It is for what only trying tells, such as
// losetup failing to attach a device or mount refusing one; the MustHave
// helpers use it for what can be looked up first.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	what := fmt.Sprintf(format, args...)
	if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
		t.Fatalf("DRIVEQUAL_REQUIRE_LOOP=1 but this test %s", what)
	}
	t.Skip(what)
}

// MustHaveRoot needs the test to run as root.
func MustHaveRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Skipf(t, "needs root for loop devices")
	}
}

// MustHave needs the command cmd on PATH and returns its path; install
// says how to get it ("apt-get install libxml2-utils").
func MustHave(t testing.TB, cmd, install string) string {
	t.Helper()
	path, err := exec.LookPath(cmd)
	if err != nil {
		Skipf(t, "needs %s (%s)", cmd, install)
	}
	return path
}

// MustHaveFio needs fio on PATH and returns its path.
func MustHaveFio(t testing.TB) string {
	t.Helper()
	return MustHave(t, "fio", "apt-get install fio")
}

// MustHaveLoop needs root, fio and losetup: everything a test that runs fio
// on a loop device drives.
func MustHaveLoop(t testing.TB) {
	t.Helper()
	MustHaveRoot(t)
	MustHaveFio(t)
	MustHave(t, "losetup", "apt-get install mount")
}

// MustHaveQEMU needs what boots a QEMU guest with emulated NVMe (see
// package qemu): qemu-system-x86_64, an installed kernel with its modules,
// and a static busybox, besides fio and nvme-cli for the guest to run. It
// returns the kernel and busybox's path.
func MustHaveQEMU(t testing.TB) (qemu.Kernel, string) {
	t.Helper()
	MustHaveFio(t)
	MustHave(t, "nvme", "apt-get install nvme-cli")
	return MustHaveGuest(t)
}

// MustHaveGuest needs what boots a QEMU guest (see package qemu):
// qemu-system-x86_64, an installed kernel with its modules, and a static
// busybox. It returns the kernel and busybox's path.
func MustHaveGuest(t testing.TB) (qemu.Kernel, string) {
	t.Helper()
	const install = "apt-get install qemu-system-x86 linux-image-amd64 busybox-static"
	MustHave(t, "qemu-system-x86_64", install)
	k, err := qemu.FindKernel()
	if err != nil {
		Skipf(t, "needs a guest kernel: %v (%s)", err, install)
	}
	const busybox = "/bin/busybox"
	if out, err := exec.Command(busybox, "--list").Output(); err != nil || !strings.Contains(string(out), "insmod") {
		Skipf(t, "needs a static busybox at %s (%s)", busybox, install)
	}
	// The guest boots the kernel unpacked where it can (see
	// qemu.Kernel.Unpacked), the bzImage otherwise; qemu's
	// TestUnpackedInstalledKernel fails where it cannot.
	if u, err := k.Unpacked(t.Context(), t.TempDir()); err != nil {
		t.Logf("the guest boots %s as it is: %v", k.Image, err)
	} else {
		k = u
	}
	return k, busybox
}

// Initramfs builds the guest's initramfs for k (see qemu.Initramfs); a
// kernel the guest cannot boot with (a module it needs neither built in
// nor installed, or compressed in a way that cannot be read) skips t
// naming what is missing (see Skipf).
func Initramfs(t testing.TB, k qemu.Kernel, busybox string) []byte {
	t.Helper()
	return InitramfsWith(t, k, busybox)
}

// InitramfsWith is Initramfs with more modules loaded at boot (see
// qemu.InitramfsWith); one the kernel lacks skips t naming it.
func InitramfsWith(t testing.TB, k qemu.Kernel, busybox string, extra ...string) []byte {
	t.Helper()
	img, err := qemu.InitramfsWith(k, busybox, extra)
	if errors.Is(err, qemu.ErrKernel) {
		Skipf(t, "needs a guest kernel with what the guest loads (%s): %v", strings.Join(append(slices.Clone(qemu.Modules), extra...), ", "), err)
	}
	if err != nil {
		t.Fatalf("building the initramfs: %v", err)
	}
	return img
}

// LoopWritesLanded is a shell command for a test's power cut, run after
// the cut has set the loop devices over img read-only and before it
// writes img itself: it waits for the writes those devices had already
// accepted to reach img (0.2 s for those a cgroup's throttle still holds,
// then until each device's inflight reads 0 0, at most 10 s, saying so on
// stderr when it gives up). inflight counts requests, not the bios a
// throttle holds, so the 0.2 s is a margin, not a guarantee: the tests'
// fio has at most one write per job held. A write of the cut's own then
// lands after them; and a direct write of the loop device that met a
// buffered one of the cut's on the same file would have the kernel fail
// the file's next fsync with EIO ("Page cache invalidation failure on
// direct I/O"), which is why the cuts write with direct I/O too.
func LoopWritesLanded(img string) string {
	return "sleep 0.2; for d in $(losetup -j '" + img + "' | cut -d: -f1); do i=0; " +
		"while [ $i -lt 200 ] && ! grep -Eq '^ *0 +0 *$' /sys/block/${d#/dev/}/inflight; do sleep 0.05; i=$((i+1)); done; " +
		"[ $i -lt 200 ] || echo \"$d: writes still in flight after 10 s\" >&2; done"
}

// Loop makes a loop device with direct I/O over a sparse file of size
// bytes, with extra losetup flags (such as "--sector-size", "4096"); it is
// detached when t ends. It needs root and losetup (a test that also runs
// fio on it calls MustHaveLoop).
func Loop(t testing.TB, size int64, flags ...string) string {
	t.Helper()
	MustHaveRoot(t)
	MustHave(t, "losetup", "apt-get install mount")
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return Attach(t, img, flags...)
}

// LosetupLock is the file that every test here locks (flock(1), for at
// most a minute) while losetup attaches a device. losetup -f opens the
// free device it was given and retries with the next when another losetup
// bound it first; two at once would so briefly hold open, for writing, a
// device that another test has just attached and is handing to the suite,
// which then refuses it as in use. It is in /run, which only root writes
// (attaching needs root anyway), so no other user can hold it. fiojob's
// tests, which cannot import this package, lock the same file.
const LosetupLock = "/run/drivequal-losetup.lock"

// Attach attaches the image file img to a free loop device with direct
// I/O and extra losetup flags (such as "-P", to scan its partition table),
// and returns the device; it is detached when t ends. It needs root and
// losetup, and skips (see Skipf) when losetup cannot attach it.
func Attach(t testing.TB, img string, flags ...string) string {
	t.Helper()
	MustHaveRoot(t)
	MustHave(t, "losetup", "apt-get install mount")
	MustHave(t, "flock", "apt-get install util-linux")
	args := append([]string{"--direct-io=on", "-f", "--show"}, flags...)
	out, err := exec.Command("flock", append([]string{"-w", "60", LosetupLock, "losetup"}, append(args, img)...)...).CombinedOutput()
	if err != nil {
		Skipf(t, "needs a loop device: losetup %s %s: %v: %s", strings.Join(args, " "), img, err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	// A loop number keeps the read-only flag set on it while it was free
	// (a power-cut test's blockdev --setro of a device detached since).
	if !slices.Contains(flags, "-r") && !slices.Contains(flags, "--read-only") {
		if out, err := exec.Command("blockdev", "--setrw", dev).CombinedOutput(); err != nil {
			t.Errorf("blockdev --setrw %s: %v: %s", dev, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// SHA256 hashes the whole device or file at path: a test compares it
// before and after to prove a refused run left the target byte for byte
// unchanged.
func SHA256(t testing.TB, path string) string {
	t.Helper()
	return sum(t, path, sha256.New())
}

// MD5 is SHA256 for the devices of a test that runs in a QEMU guest:
// under TCG the guest's CPU has neither SHA-NI nor the AVX2 and BMI2 that
// Go's SHA-256 assembly needs, and Go hashes with its generic code, at
// a tenth of MD5's speed (70 against 720 MB/s under QEMU 7.2's x86
// translator, qemu-x86_64 -cpu qemu64); hashing the guests' namespaces
// before and after each refused run was most of their test binary's
// CPU. Telling whether a run changed a device's bytes needs no
// resistance to collisions crafted on purpose, which a bug in the suite
// does not craft; the files of a recording, which a hostile one could
// be, keep SHA256 there too.
func MD5(t testing.TB, path string) string {
	t.Helper()
	return sum(t, path, md5.New())
}

// sum is h's digest of the whole device or file at path, in hex.
func sum(t testing.TB, path string, h hash.Hash) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// In 1 MiB reads, not io.Copy's 32 KiB: hashing the tests' devices
	// and images (64 MiB to 1 GiB, some twice a test) was a third of
	// e2e.test's own CPU, most of it in the read calls. f is wrapped so
	// that io.CopyBuffer uses the buffer: *os.File's WriteTo would copy
	// through io.Copy's own.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TmpfsLoop is a loop device over a sparse file of size bytes on a tmpfs
// of room bytes. With room below size, writes past room fail with an I/O
// error, as a dying drive's would; with room to spare, the device runs at
// memory speed, unmoved by what the machine's disk is doing. It is
// detached and the tmpfs unmounted when t ends.
func TmpfsLoop(t testing.TB, size, room int64) string {
	t.Helper()
	MustHaveLoop(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(room, 10), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	img := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	return Attach(t, img)
}
