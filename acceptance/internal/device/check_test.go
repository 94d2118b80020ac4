package device

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refusal is the part of a Refusal the table checks exactly: "PATH: REASON".
type checkTest struct {
	name  string
	paths []string
	opt   Options
	want  []string // "PATH: REASON", in order
}

var destructive = Options{Destructive: true}

const byID = "/dev/disk/by-id/nvme-SOLIDIGM_SB5PH27X019T_PHAX4123004L1P9CGN"

var checkTests = []checkTest{
	{"clean drive with -destructive", []string{"/dev/nvme0n1", "/dev/nvme1n1"}, destructive, nil},
	{
		"no -destructive", []string{"/dev/nvme0n1"}, Options{},
		[]string{"/dev/nvme0n1: -destructive not given: writing would destroy the data on this block device"},
	},
	{
		"same drive under two names", []string{"/dev/nvme0n1", byID}, destructive,
		[]string{byID + ": is the same target as /dev/nvme0n1, given earlier"},
	},
	{
		"loop device and its backing file", []string{"/dev/loop3", "/var/tmp/disk.img"}, destructive,
		[]string{"/var/tmp/disk.img: is the same target as /dev/loop3, given earlier"},
	},
	{
		"signature", []string{"/dev/nvme4n1"}, destructive,
		[]string{"/dev/nvme4n1: has a partition table or file-system signature: xfs at offset 0"},
	},
	{"signature with -wipe-signatures", []string{"/dev/nvme4n1"}, Options{Destructive: true, WipeSignatures: true}, nil},
	{
		"partition mounted", []string{"/dev/nvme5n1"}, destructive,
		[]string{
			"/dev/nvme5n1: is mounted: nvme5n1p1 at /srv/my data",
			"/dev/nvme5n1: has partitions: nvme5n1p1",
		},
	},
	{
		"held by device-mapper", []string{"/dev/nvme6n1"}, destructive,
		[]string{"/dev/nvme6n1: is in use by dm-0 (vg-data)"},
	},
	{
		"root on dm on a partition", []string{"/dev/nvme7n1"}, destructive,
		[]string{
			"/dev/nvme7n1: is mounted: nvme7n1p1 at /boot",
			"/dev/nvme7n1: has partitions: nvme7n1p1, nvme7n1p2",
			"/dev/nvme7n1: is in use by dm-1 (vg-root) on nvme7n1p2",
			`/dev/nvme7n1: backs the running system: "/" is mounted from /dev/mapper/vg-root through dm-1 on partition nvme7n1p2`,
		},
	},
	{
		"root logical volume", []string{"/dev/mapper/vg-root"}, destructive,
		[]string{
			"/dev/mapper/vg-root: is mounted: dm-1 at /",
			`/dev/mapper/vg-root: backs the running system: "/" is mounted from /dev/mapper/vg-root`,
		},
	},
	{
		"boot partition", []string{"/dev/nvme7n1p1"}, destructive,
		[]string{
			"/dev/nvme7n1p1: is partition 1 of /dev/nvme7n1; a purge erases the whole disk",
			"/dev/nvme7n1p1: is mounted: nvme7n1p1 at /boot",
			`/dev/nvme7n1p1: backs the running system: "/boot" is mounted from /dev/nvme7n1p1`,
		},
	},
	{
		// Nothing else is wrong with it: it is refused as a partition
		// alone, naming the whole disk.
		"unused partition", []string{"/dev/nvme2n1p1"}, destructive,
		[]string{"/dev/nvme2n1p1: is partition 1 of /dev/nvme2n1; a purge erases the whole disk"},
	},
	{
		"disk of an unused partition", []string{"/dev/nvme2n1"}, destructive,
		[]string{"/dev/nvme2n1: has partitions: nvme2n1p1"},
	},
	{
		"active swap", []string{"/dev/nvme8n1"}, destructive,
		[]string{"/dev/nvme8n1: is active swap: /dev/nvme8n1"},
	},
	{
		"read-only", []string{"/dev/nvme9n1"}, destructive,
		[]string{"/dev/nvme9n1: is read-only"},
	},
	{
		// Every problem of every target is listed in one go.
		"all at once", []string{"/dev/nvme0n1", "/dev/nvme8n1", byID, "/dev/nvme9n1"}, Options{},
		[]string{
			"/dev/nvme0n1: -destructive not given: writing would destroy the data on this block device",
			"/dev/nvme8n1: -destructive not given: writing would destroy the data on this block device",
			"/dev/nvme8n1: is active swap: /dev/nvme8n1",
			byID + ": is the same target as /dev/nvme0n1, given earlier",
			byID + ": -destructive not given: writing would destroy the data on this block device",
			"/dev/nvme9n1: -destructive not given: writing would destroy the data on this block device",
			"/dev/nvme9n1: is read-only",
		},
	},
}

func reasons(rs []Refusal) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path+": "+r.Reason)
	}
	return out
}

func TestCheck(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	for _, tt := range checkTests {
		t.Run(tt.name, func(t *testing.T) {
			var infos []Info
			for _, p := range tt.paths {
				in, err := sys.Inspect(p)
				if err != nil {
					t.Fatalf("Inspect(%q): %v", p, err)
				}
				infos = append(infos, in)
			}
			got := sys.Check(infos, tt.opt)
			if diff := cmp.Diff(tt.want, reasons(got)); diff != "" {
				t.Errorf("Check(%q, %+v) mismatch (-want +got):\n%s", tt.paths, tt.opt, diff)
			}
			for _, r := range got {
				if r.Fix == "" {
					t.Errorf("Check(%q): refusal %q has no fix", tt.paths, r.Reason)
				}
			}
		})
	}
}

type refusalFixTest struct {
	path string
	opt  Options
	want string // the whole Error() of the first refusal
}

var refusalFixTests = []refusalFixTest{
	{"/dev/nvme4n1", destructive, "/dev/nvme4n1: has a partition table or file-system signature: xfs at offset 0; " +
		"-wipe-signatures, after checking with `wipefs /dev/nvme4n1` that nothing on it is needed"},
	{"/dev/nvme5n1", destructive, "/dev/nvme5n1: is mounted: nvme5n1p1 at /srv/my data; " +
		"unmount it (umount '/srv/my data') or choose another device"},
	{"/dev/nvme2n1p1", destructive, "/dev/nvme2n1p1: is partition 1 of /dev/nvme2n1; a purge erases the whole disk; " +
		"give /dev/nvme2n1 (and nothing else on it) instead"},
	{"/dev/nvme8n1", destructive, "/dev/nvme8n1: is active swap: /dev/nvme8n1; " +
		"turn the swap off (swapoff /dev/nvme8n1) or choose another device"},
	{"/dev/nvme0n1", Options{}, "/dev/nvme0n1: -destructive not given: writing would destroy the data on this block device; " +
		"add -destructive if everything on /dev/nvme0n1 may be destroyed"},
}

func TestRefusalError(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	for _, tt := range refusalFixTests {
		in, err := sys.Inspect(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		got := sys.Check([]Info{in}, tt.opt)
		if len(got) == 0 {
			t.Errorf("Check(%q) = no refusal, want %q", tt.path, tt.want)
			continue
		}
		if got[0].Error() != tt.want {
			t.Errorf("Check(%q)[0].Error() = %q, want %q", tt.path, got[0].Error(), tt.want)
		}
	}
}

// An Info that does not describe a block device or regular file (built by
// hand, or a path that changed after Inspect) is refused, not trusted.
func TestCheckNotATarget(t *testing.T) {
	sys := buildTree(t, "two-sockets.tree")
	got := sys.Check([]Info{{Path: "/sys", Resolved: "/sys"}, {Path: "/gone", Resolved: "/gone"}}, destructive)
	want := []string{
		"/sys: is a directory, not a block device or regular file",
		"/gone: cannot be inspected: stat " + filepath.Join(sys.Root, "gone") + ": no such file or directory",
	}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check mismatch (-want +got):\n%s", diff)
	}
}

func TestCheckRegularFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	full := filepath.Join(dir, "full")
	link := filepath.Join(dir, "link")
	hard := filepath.Join(dir, "hard")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("full", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(full, hard); err != nil {
		t.Fatal(err)
	}
	var sys System
	inspect := func(p string) Info {
		in, err := sys.Inspect(p)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}

	// An empty file may be written without -destructive; a non-empty one
	// may not.
	got := reasons(sys.Check([]Info{inspect(empty), inspect(full)}, Options{}))
	want := []string{full + ": -destructive not given: writing would destroy the data on this non-empty file (8192 bytes)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check without -destructive mismatch (-want +got):\n%s", diff)
	}

	// The same file through a symlink and a hard link is refused twice.
	got = reasons(sys.Check([]Info{inspect(full), inspect(link), inspect(hard)}, destructive))
	want = []string{
		link + ": is the same target as " + full + ", given earlier",
		hard + ": is the same target as " + full + ", given earlier",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check of one file under three names mismatch (-want +got):\n%s", diff)
	}
}

type mountinfoTest struct {
	in   string
	want mount
}

var mountinfoTests = []mountinfoTest{
	{"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
		mount{dev: devnum{98, 0}, point: "/mnt2", source: "/dev/root"}},
	{"24 22 259:50 / /srv/my\\040data rw,relatime - xfs /dev/nvme5n1p1 rw",
		mount{dev: devnum{259, 50}, point: "/srv/my data", source: "/dev/nvme5n1p1"}},
	{"30 1 0:27 / / rw - btrfs /dev/sda2 rw,subvol=/",
		mount{dev: devnum{0, 27}, point: "/", source: "/dev/sda2"}},
}

func TestParseMountinfo(t *testing.T) {
	for _, tt := range mountinfoTests {
		got, err := parseMountinfo(tt.in)
		if err != nil {
			t.Errorf("parseMountinfo(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("parseMountinfo(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "1 2 3", "36 35 98:0 /mnt1 /mnt2 rw - ext3", "36 35 x /mnt1 /mnt2 rw - ext3 /dev/root rw"} {
		if _, err := parseMountinfo(bad); err == nil {
			t.Errorf("parseMountinfo(%q) = nil error, want one", bad)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/dev/nvme0n1": "/dev/nvme0n1",
		"/srv/my data": "'/srv/my data'",
		"/mnt/it's":    `'/mnt/it'\''s'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	if strings.Contains(shellQuote(""), " ") {
		t.Errorf("shellQuote(\"\") = %q", shellQuote(""))
	}
}
