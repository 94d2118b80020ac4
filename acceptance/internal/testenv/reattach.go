package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Reattach detaches each of devs and attaches imgs[i] (with direct I/O)
// at devs[i], holding LosetupLock throughout: the numbers it frees are
// free only to it, where another test's losetup -f beside it would take
// one (as it did beside the rest of make test). between, when not nil, runs
// once every device is detached and before any is attached: a test that
// needs a deleted image's inode given to a new one creates it there; it
// must attach nothing (the lock is held: Attach would wait a minute). Each
// device is still detached when t ends by the cleanup that attached it
// first (Attach's).
func Reattach(t testing.TB, devs, imgs []string, between func()) {
	t.Helper()
	MustHaveRoot(t)
	lock, err := os.OpenFile(LosetupLock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close() // unlocks
	// At most a minute, as every flock(1) of it waits.
	for i := 0; ; i++ {
		err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK || i == 600 {
			t.Fatalf("flock %s: %v", LosetupLock, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, dev := range devs {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Fatalf("losetup -d %s: %v: %s", dev, err, out)
		}
	}
	// A device still open somewhere (a probe) is detached, and its file
	// closed, only at its last close.
	for _, dev := range devs {
		backing := "/sys/block/" + filepath.Base(dev) + "/loop/backing_file"
		for i := 0; ; i++ {
			if _, err := os.Stat(backing); os.IsNotExist(err) {
				break
			}
			if i == 200 {
				t.Fatalf("%s is still attached 10 s after losetup -d: something holds it open", dev)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if between != nil {
		between()
	}
	for i, dev := range devs {
		out, err := exec.Command("losetup", "--direct-io=on", dev, imgs[i]).CombinedOutput()
		if err != nil {
			t.Fatalf("attaching %s at %s, freed holding the lock: losetup: %v: %s", imgs[i], dev, err, strings.TrimSpace(string(out)))
		}
	}
}

// Ext4Dir is a directory on an ext4 file system of its own (a sparse
// image of size bytes on a loop device, mounted), which no other process
// writes: ext4 gives a deleted file's inode to the next file created in
// it, for certain, where on a shared file system another test may create
// a file first. It is unmounted and detached when t ends (a test's loop
// devices over files in it must be detached first: register them after).
func Ext4Dir(t testing.TB, size int64) string {
	t.Helper()
	MustHave(t, "mkfs.ext4", "apt-get install e2fsprogs")
	MustHave(t, "mount", "apt-get install mount")
	img := filepath.Join(t.TempDir(), "fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	dev := Attach(t, img)
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4 %s: %v: %s", dev, err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "ext4", dev, dir).CombinedOutput(); err != nil {
		Skipf(t, "needs an ext4 file system mounted: mount %s: %v: %s", dev, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		// A loop device over a file in it, detached while something held
		// it open, lets go of the file only at its last close.
		var out []byte
		var err error
		for i := 0; i < 100; i++ {
			if out, err = exec.Command("umount", dir).CombinedOutput(); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("umount %s: %v: %s", dir, err, out)
		// Detached from the tree now, so that nothing walks into it.
		_ = exec.Command("umount", "-l", dir).Run()
	})
	return dir
}
