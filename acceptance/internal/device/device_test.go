package device

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

type inspectTest struct {
	name string
	path string
	want Info
}

var inspectTests = []inspectTest{
	{
		name: "nvme namespace with padded model and serial",
		path: "/dev/nvme0n1",
		want: Info{
			Path: "/dev/nvme0n1", Resolved: "/dev/nvme0n1", Name: "nvme0n1",
			Major: 259, Minor: 0, Block: true, Size: 1_920_383_410_176, LogicalBlockSize: 4096,
			Model: "SOLIDIGM SB5PH27X019T", Serial: "PHAX4123004L1P9CGN", Firmware: "G70YG030",
			NUMANode: 0, LocalCPUs: seq(0, 15), Controller: "nvme0", Siblings: []string{"nvme0n2"},
		},
	},
	{
		name: "by-id symlink",
		path: "/dev/disk/by-id/nvme-SOLIDIGM_SB5PH27X019T_PHAX4123004L1P9CGN",
		want: Info{
			Path: "/dev/disk/by-id/nvme-SOLIDIGM_SB5PH27X019T_PHAX4123004L1P9CGN", Resolved: "/dev/nvme0n1", Name: "nvme0n1",
			Major: 259, Minor: 0, Block: true, Size: 1_920_383_410_176, LogicalBlockSize: 4096,
			Model: "SOLIDIGM SB5PH27X019T", Serial: "PHAX4123004L1P9CGN", Firmware: "G70YG030",
			NUMANode: 0, LocalCPUs: seq(0, 15), Controller: "nvme0", Siblings: []string{"nvme0n2"},
		},
	},
	{
		// The head disk hangs off nvme-subsys1; its first controller is
		// nvme3 (node 1), not nvme11 (node 0, firmware G70YG031).
		name: "native multipath through nvme-subsys",
		path: "/dev/nvme1n1",
		want: Info{
			Path: "/dev/nvme1n1", Resolved: "/dev/nvme1n1", Name: "nvme1n1",
			Major: 259, Minor: 1, Block: true, Size: 3_840_755_982_336, LogicalBlockSize: 512,
			Model: "SOLIDIGM SB5PH27X038T", Serial: "PHAX4123009Z3P8CGN", Firmware: "G70YG030",
			NUMANode: 1, LocalCPUs: seq(16, 31), Controller: "nvme3",
		},
	},
	{
		name: "unknown numa node",
		path: "/dev/nvme4n1",
		want: Info{
			Path: "/dev/nvme4n1", Resolved: "/dev/nvme4n1", Name: "nvme4n1",
			Major: 259, Minor: 4, Block: true, Size: 2048 * 512, LogicalBlockSize: 512,
			Model: "Generic NVMe", Serial: "S4", Firmware: "1.0",
			NUMANode: -1, LocalCPUs: seq(0, 31), Controller: "nvme4",
		},
	},
	{
		name: "loop device",
		path: "/dev/loop3",
		want: Info{
			Path: "/dev/loop3", Resolved: "/dev/loop3", Name: "loop3",
			Major: 7, Minor: 3, Block: true, Size: 64 << 20, LogicalBlockSize: 512, Rotational: true,
			Model: "loop", BackingFile: "/var/tmp/disk.img", NUMANode: -1,
		},
	},
	{
		// The ATA serial is read from libata's VPD pages; the kernel's
		// wwid is SAT's T10 vendor ID designator.
		name: "SATA disk",
		path: "/dev/sda",
		want: Info{
			Path: "/dev/sda", Resolved: "/dev/sda", Name: "sda",
			Major: 8, Minor: 0, Block: true, Size: 2048 * 512, LogicalBlockSize: 512, Rotational: true,
			Model: "QEMU HARDDISK", Serial: "QM00001", Firmware: "2.5+", NUMANode: 0, LocalCPUs: seq(0, 15),
			WWID: "t10.ATA     QEMU HARDDISK                           QM00001",
		},
	},
	{
		name: "read-only device",
		path: "/dev/nvme9n1",
		want: Info{
			Path: "/dev/nvme9n1", Resolved: "/dev/nvme9n1", Name: "nvme9n1",
			Major: 259, Minor: 9, Block: true, Size: 2048 * 512, ReadOnly: true, NUMANode: -1,
		},
	},
	{
		name: "regular file",
		path: "/var/tmp/disk.img",
		want: Info{Path: "/var/tmp/disk.img", Resolved: "/var/tmp/disk.img", NUMANode: -1},
	},
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

func TestInspect(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	for _, tt := range inspectTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sys.Inspect(tt.path)
			if err != nil {
				t.Fatalf("Inspect(%q): %v", tt.path, err)
			}
			want := tt.want
			switch {
			case !want.Block:
				// A regular file is known by its device and inode,
				want.File = statID(t, sys.p(tt.path))
			case want.BackingFile != "":
				// a loop device by the kernel's record of the file it has
				// open, which a fake tree does not have: nothing tells
				// it, whatever file its backing_file path names.
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Inspect(%q) mismatch (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

type inspectErrorTest struct {
	path    string
	want    []string // substrings of the error
	notWant []string // and what it must not say
}

var inspectErrorTests = []inspectErrorTest{
	// A missing device is not to be made as a file in /dev.
	{"/dev/nvme42n1", []string{"/dev/nvme42n1: no such device", "nvme list", "lsblk"}, []string{"truncate", "regular file"}},
	{"/dev/../dev/nosuchdrive", []string{"no such device"}, []string{"truncate"}},
	{"/images/missing.img", []string{"/images/missing.img: does not exist", "truncate -s SIZE /images/missing.img"}, nil},
	{"/sys", []string{"/sys: is a directory, not a block device or regular file", "give a block device"}, nil},
	{"", []string{"empty path"}, nil},
}

func TestInspectErrors(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	if err := os.Symlink("nowhere", filepath.Join(sys.Root, "dev", "dangling")); err != nil {
		t.Fatal(err)
	}
	tests := append(inspectErrorTests, inspectErrorTest{"/dev/dangling", []string{"/dev/dangling: is a broken symlink"}, nil})
	for _, tt := range tests {
		_, err := sys.Inspect(tt.path)
		if err == nil {
			t.Errorf("Inspect(%q) = nil error, want one containing %q", tt.path, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Inspect(%q) = %q, want it to contain %q", tt.path, err, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(err.Error(), w) {
				t.Errorf("Inspect(%q) = %q, want it not to contain %q", tt.path, err, w)
			}
		}
	}
}

// On the running system a regular file is never taken for a block device,
// even when its name is a kernel block device name.
func TestInspectRealRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "loop0")
	if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := System{}.Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Path: path, Resolved: path, Size: 4096, NUMANode: -1, File: statID(t, path)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inspect(%q) mismatch (-want +got):\n%s", path, diff)
	}
	if _, err := (System{}).Inspect(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Inspect(%q) = %v, want a directory error", dir, err)
	}
}

func TestOnlineCPUs(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	got, err := sys.OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seq(0, 31), got); diff != "" {
		t.Errorf("OnlineCPUs() mismatch (-want +got):\n%s", diff)
	}
	if _, err := (System{Root: t.TempDir()}).OnlineCPUs(); err == nil {
		t.Error("OnlineCPUs() on an empty tree = nil error, want one")
	}
}

// PCIePath reads the links of a controller of the inspected system: the
// fake tree's, not this machine's.
func TestPCIePath(t *testing.T) {
	sys := buildTree(t, "backplane.tree")
	p, ok, err := sys.PCIePath("nvme7")
	if err != nil || !ok || len(p) != 2 || p[0].PCI != "0000:0c:00.0" || p[1].Where() != "switch port 0000:09:00.0" {
		t.Errorf("PCIePath(nvme7) = %+v, %v, %v; want the endpoint 0000:0c:00.0 below switch port 0000:09:00.0", p, ok, err)
	}
	if p, ok, err := sys.PCIePath(""); p != nil || ok || err != nil {
		t.Errorf("PCIePath(\"\") = %+v, %v, %v; want no path, not ok", p, ok, err)
	}
}

// statID is the device and inode of the file at path, as stat(2) gives
// them, with its generation and birth time.
func statID(t *testing.T, path string) identity.FileID {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	id := identity.FileID{Dev: fmt.Sprintf("%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))), Inode: st.Ino}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	birth := identity.Of(path, fi)
	id.Generation, id.Born = birth.Generation, birth.Born
	return id
}

// Disks lists the whole disks that identify themselves by what they
// report: NVMe namespaces and SCSI or SATA disks, not their partitions,
// loop devices or hidden multipath paths.
func TestDisks(t *testing.T) {
	got := buildTree(t, "two-sockets.tree").Disks()
	for _, want := range []string{"/dev/nvme0n1", "/dev/sda", "/dev/nvme2n1"} {
		if !slices.Contains(got, want) {
			t.Errorf("Disks() = %v, want it to hold %s", got, want)
		}
	}
	for _, not := range []string{"/dev/loop3", "/dev/nvme2n1p1"} {
		if slices.Contains(got, not) {
			t.Errorf("Disks() = %v, holds %s", got, not)
		}
	}
}
