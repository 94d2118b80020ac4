package device

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A change made to the tree between Inspect and Recheck, and what Recheck
// says about it ("" for nil).
type recheckTest struct {
	name   string
	path   string
	change func(t *testing.T, root string)
	want   string
}

// write replaces a file of the tree.
func write(path, contents string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, path), []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const loop3 = "sys/devices/virtual/block/loop3/"
const nvme0n1 = "sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/nvme/nvme0/"

var recheckTests = []recheckTest{
	{"unchanged", "/dev/loop3", func(*testing.T, string) {}, ""},
	{"unchanged by id", byID, func(*testing.T, string) {}, ""},
	{
		"shrunk", "/dev/loop3", write(loop3+"size", "65536\n"),
		"/dev/loop3: changed since setup: size 67,108,864 -> 33,554,432 bytes; " + recheckFix,
	},
	{
		"new device number", "/dev/loop3", write(loop3+"dev", "7:4\n"),
		"/dev/loop3: changed since setup: device number 7:3 -> 7:4; " + recheckFix,
	},
	{
		"other backing file", "/dev/loop3", write(loop3+"loop/backing_file", "/var/tmp/other.img\n"),
		`/dev/loop3: changed since setup: backing file "/var/tmp/disk.img" -> "/var/tmp/other.img"; ` + recheckFix,
	},
	{
		// A drive swapped in the same slot: same name, another serial.
		"other serial", byID, write(nvme0n1+"serial", "PHAX9999999999999GN\n"),
		byID + `: changed since setup: serial "PHAX4123004L1P9CGN" -> "PHAX9999999999999GN"; ` + recheckFix,
	},
	{
		"gone", "/dev/loop3",
		func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "dev/loop3")); err != nil {
				t.Fatal(err)
			}
		},
		"/dev/loop3: is gone since setup; " + recheckFix,
	},
	{
		// Gone from sysfs: a regular file where the device node was.
		"block device became a file", "/dev/loop3",
		func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "sys/class/block/loop3")); err != nil {
				t.Fatal(err)
			}
		},
		"/dev/loop3: changed since setup: block device -> regular file; " + recheckFix,
	},
	// An empty file target grows when fio lays it out: no change.
	{"empty file grew", "/var/tmp/disk.img", write("var/tmp/disk.img", "laid out by fio"), ""},
}

func TestRecheck(t *testing.T) {
	for _, tt := range recheckTests {
		t.Run(tt.name, func(t *testing.T) {
			sys := buildTree(t, "two-sockets.tree")
			want, err := sys.Inspect(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, sys.Root)
			err = sys.Recheck(want)
			got := ""
			if err != nil {
				got = err.Error()
				var r Refusal
				if !errors.As(err, &r) || r.Path != tt.path {
					t.Errorf("Recheck(%s) = %#v, want a Refusal for %s", tt.path, err, tt.path)
				}
			}
			if got != tt.want {
				t.Errorf("Recheck(%s) =\n\t%q\nwant\n\t%q", tt.path, got, tt.want)
			}
		})
	}
}

// A non-empty file target that changed size is not the file that was checked.
func TestRecheckFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.img")
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	var sys System
	want, err := sys.Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Recheck(want); err != nil {
		t.Errorf("Recheck(unchanged %s) = %v, want nil", path, err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	wantErr := path + ": changed since setup: size 8,192 -> 4,096 bytes; " + recheckFix
	if err := sys.Recheck(want); err == nil || err.Error() != wantErr {
		t.Errorf("Recheck(truncated %s) = %v, want %q", path, err, wantErr)
	}
}

// A drive is gone when its device node or its sysfs entry is, or its
// capacity reads 0.
func TestGone(t *testing.T) {
	root := t.TempDir()
	sys := System{Root: root}
	want := Info{Path: "/dev/nvme0n1", Block: true, Major: 259, Minor: 0}
	for _, p := range []string{"/dev/nvme0n1", "/sys/dev/block/259:0"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := sys.Gone(want); got != "" {
		t.Errorf("Gone(present) = %q, want \"\"", got)
	}
	// Its capacity dropped to 0 (the kernel removing a namespace sets it
	// first): gone, while its node and sysfs entry are still there.
	entry := filepath.Join(root, "/sys/dev/block/259:0")
	os.Remove(entry)
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	want.Size = 1 << 30
	for size, w := range map[string]string{"2097152\n": "", "0\n": "its capacity dropped to 0 (/sys/dev/block/259:0/size reads 0: the kernel is removing it)"} {
		if err := os.WriteFile(filepath.Join(entry, "size"), []byte(size), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := sys.Gone(want); got != w {
			t.Errorf("Gone(size %q) = %q, want %q", size, got, w)
		}
	}
	// A drive of no capacity at setup has none to lose.
	if got := sys.Gone(Info{Path: want.Path, Block: true, Major: 259, Minor: 0}); got != "" {
		t.Errorf("Gone(size 0 at setup, 0 now) = %q, want \"\"", got)
	}
	os.RemoveAll(entry)
	if got, w := sys.Gone(want), "its sysfs entry /sys/dev/block/259:0 is gone"; got != w {
		t.Errorf("Gone(no sysfs entry) = %q, want %q", got, w)
	}
	os.Remove(filepath.Join(root, "/dev/nvme0n1"))
	if got, w := sys.Gone(want), "its device node /dev/nvme0n1 is gone and its sysfs entry /sys/dev/block/259:0 is gone"; got != w {
		t.Errorf("Gone(neither) = %q, want %q", got, w)
	}
}
