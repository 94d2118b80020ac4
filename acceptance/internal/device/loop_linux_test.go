package device

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/device/signature"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// These tests use real loop devices: they need root, losetup and the tools
// named in each test. Without them they skip, or fail when
// DRIVEQUAL_REQUIRE_LOOP=1. Every device is detached, unmounted and swapped
// off in t.Cleanup, and every test checks that inspecting and checking left
// the device byte-for-byte as it was. They run in parallel: each has its own
// device, and most of their time is spent waiting on I/O.

const loopSize = 64 << 20

// run runs a command, failing the test with its output on error.
func run(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

type loopOpts struct {
	partscan bool                           // losetup -P: the kernel reads the partition table
	prepare  func(t *testing.T, img string) // runs on the backing file before losetup
}

// newLoop attaches a new 64 MiB loop device (direct I/O) backed by a file in
// t.TempDir() and returns the device and backing file paths.
func newLoop(t *testing.T, o loopOpts) (dev, img string) {
	t.Helper()
	testenv.MustHaveRoot(t)
	needTools(t, "losetup")
	img = filepath.Join(t.TempDir(), "backing.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, loopSize); err != nil {
		t.Fatal(err)
	}
	if o.prepare != nil {
		o.prepare(t, img)
	}
	var flags []string
	if o.partscan {
		flags = append(flags, "-P")
	}
	return testenv.Attach(t, img, flags...), img
}

// inspectAndCheck runs Inspect on every path, Check and signature.Find, and
// fails the test if any device's contents changed meanwhile.
func inspectAndCheck(t *testing.T, opt Options, paths ...string) []Refusal {
	t.Helper()
	return inspectAndCheckBy(t, opt, func(t testing.TB, p string) string { return testenv.SHA256(t, p) }, paths...)
}

// inspectAndCheckBy is inspectAndCheck with what is compared before and
// after given: sum's of each path.
func inspectAndCheckBy(t *testing.T, opt Options, sum func(testing.TB, string) string, paths ...string) []Refusal {
	t.Helper()
	before := map[string]string{}
	for _, p := range paths {
		before[p] = sum(t, p)
	}
	var sys System
	var infos []Info
	for _, p := range paths {
		in, err := sys.Inspect(p)
		if err != nil {
			t.Fatalf("Inspect(%q): %v", p, err)
		}
		if _, err := signature.Find(p); err != nil {
			t.Fatalf("signature.Find(%q): %v", p, err)
		}
		infos = append(infos, in)
	}
	refusals := sys.Check(infos, opt)
	for _, p := range paths {
		if after := sum(t, p); after != before[p] {
			t.Errorf("%s changed: sha256 %s before, %s after", p, before[p], after)
		}
	}
	return refusals
}

func TestLoopInspect(t *testing.T) {
	t.Parallel()
	dev, img := newLoop(t, loopOpts{})
	link := filepath.Join(t.TempDir(), "by-id-like")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	before := testenv.SHA256(t, dev)
	n, err := strconv.Atoi(strings.TrimPrefix(dev, "/dev/loop"))
	if err != nil {
		t.Fatalf("losetup gave %q, not /dev/loopN", dev)
	}
	resolvedImg, err := filepath.EvalSymlinks(img)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{
		Path: link, Resolved: dev, Name: filepath.Base(dev),
		Major: 7, Minor: uint32(n), Block: true, Size: loopSize, LogicalBlockSize: 512,
		Model: "loop", BackingFile: resolvedImg, NUMANode: -1, File: statID(t, img),
	}
	want.File.Size = loopSize
	got, err := System{}.Inspect(link)
	if err != nil {
		t.Fatal(err)
	}
	// Rotational is whatever the kernel says for loop devices.
	got.Rotational = false
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inspect(%s) mismatch (-want +got):\n%s", link, diff)
	}
	if after := testenv.SHA256(t, dev); after != before {
		t.Errorf("%s changed: sha256 %s before, %s after", dev, before, after)
	}
}

func hasReason(rs []Refusal, prefix string) bool {
	return slices.ContainsFunc(rs, func(r Refusal) bool { return strings.HasPrefix(r.Reason, prefix) })
}

func TestLoopClean(t *testing.T) {
	t.Parallel()
	dev, _ := newLoop(t, loopOpts{})
	if got := inspectAndCheck(t, Options{Destructive: true}, dev); len(got) != 0 {
		t.Errorf("Check(clean %s, -destructive) = %q, want no refusal", dev, got)
	}
	got := inspectAndCheck(t, Options{}, dev)
	want := []string{dev + ": -destructive not given: writing would destroy the data on this block device"}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(clean %s, no -destructive) mismatch (-want +got):\n%s", dev, diff)
	}
}

func TestLoopTwice(t *testing.T) {
	t.Parallel()
	dev, img := newLoop(t, loopOpts{})
	link := filepath.Join(t.TempDir(), "same-disk")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	got := inspectAndCheck(t, Options{Destructive: true}, dev, link, img)
	want := []string{
		link + ": is the same target as " + dev + ", given earlier",
		img + ": is the same target as " + dev + ", given earlier",
	}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(%s twice and its backing file) mismatch (-want +got):\n%s", dev, diff)
	}
}

func TestLoopExt4(t *testing.T) {
	t.Parallel()
	needTools(t, "mkfs.ext4")
	dev, _ := newLoop(t, loopOpts{})
	run(t, "", "mkfs.ext4", "-q", "-F", dev)
	got := inspectAndCheck(t, Options{Destructive: true}, dev)
	want := []string{dev + ": has a partition table or file-system signature: ext2/3/4 at offset 1080"}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(%s with ext4) mismatch (-want +got):\n%s", dev, diff)
	}
	if got := inspectAndCheck(t, Options{Destructive: true, WipeSignatures: true}, dev); len(got) != 0 {
		t.Errorf("Check(%s with ext4, -wipe-signatures) = %q, want no refusal", dev, got)
	}
}

func TestLoopMounted(t *testing.T) {
	t.Parallel()
	needTools(t, "mkfs.ext4", "mount", "umount")
	dev, _ := newLoop(t, loopOpts{})
	// No lazy initialisation, and a read-only mount: the file system must
	// not write to the device in the background while its hash is compared.
	run(t, "", "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "ro", dev, dir).CombinedOutput(); err != nil {
		testenv.Skipf(t, "needs to mount %s: %v: %s", dev, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	got := inspectAndCheck(t, Options{Destructive: true, WipeSignatures: true}, dev)
	want := []string{dev + ": is mounted: " + filepath.Base(dev) + " at " + dir}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(mounted %s) mismatch (-want +got):\n%s", dev, diff)
	}
}

func gptOnImage(t *testing.T, img string) {
	run(t, "label: gpt\n,,L\n", "sfdisk", "-q", img)
}

func TestLoopPartitionTable(t *testing.T) {
	t.Parallel()
	needTools(t, "sfdisk")
	// Without partition scanning the kernel makes no partition nodes, so
	// only the table on the disk tells.
	dev, _ := newLoop(t, loopOpts{prepare: gptOnImage})
	got := inspectAndCheck(t, Options{Destructive: true}, dev)
	want := []string{fmt.Sprintf("%s: has a partition table or file-system signature: "+
		"PMBR at offset 510, gpt at offset 512, gpt-backup at offset %d", dev, loopSize-512)}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(%s with a GPT) mismatch (-want +got):\n%s", dev, diff)
	}
}

func TestLoopPartitions(t *testing.T) {
	t.Parallel()
	needTools(t, "sfdisk", "mkfs.ext4", "mount", "umount")
	dev, _ := newLoop(t, loopOpts{prepare: gptOnImage, partscan: true})
	part := dev + "p1"
	if _, err := os.Stat(part); err != nil {
		// A kernel built without the GPT parser (CONFIG_EFI_PARTITION)
		// makes no partitions from the table; partx reads the table in
		// user space and tells the kernel about them instead.
		needTools(t, "partx")
		if out, err := exec.Command("partx", "-a", dev).CombinedOutput(); err != nil {
			testenv.Skipf(t, "needs partition %s: losetup -P made none and partx -a failed: %v: %s", part, err, out)
		}
		if _, err := os.Stat(part); err != nil {
			testenv.Skipf(t, "needs partition node %s: %v", part, err)
		}
	}
	run(t, "", "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", part)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-o", "ro", part, dir).CombinedOutput(); err != nil {
		testenv.Skipf(t, "needs to mount %s: %v: %s", part, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	// -wipe-signatures does not make a partitioned, mounted disk writable.
	got := inspectAndCheck(t, Options{Destructive: true, WipeSignatures: true}, dev)
	name := filepath.Base(part)
	want := []string{
		dev + ": is mounted: " + name + " at " + dir,
		dev + ": has partitions: " + name,
	}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(%s with mounted %s) mismatch (-want +got):\n%s", dev, part, diff)
	}
}

func TestLoopSwap(t *testing.T) {
	t.Parallel()
	needTools(t, "mkswap", "swapon", "swapoff")
	dev, _ := newLoop(t, loopOpts{})
	run(t, "", "mkswap", "-q", dev)
	// Lowest priority, so the kernel prefers any other swap meanwhile.
	if out, err := exec.Command("swapon", "-p", "0", dev).CombinedOutput(); err != nil {
		testenv.Skipf(t, "needs swap on %s: %v: %s", dev, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("swapoff", dev).CombinedOutput(); err != nil {
			t.Errorf("swapoff %s: %v: %s", dev, err, out)
		}
	})
	// The kernel writes an active swap's pages as it needs (beside the
	// whole of make test it once did during the check); the header page,
	// which holds the signature a wipe would erase, only mkswap writes.
	header := func(t testing.TB, p string) string {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 4096)
		if _, err := io.ReadFull(f, b); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	got := inspectAndCheckBy(t, Options{Destructive: true, WipeSignatures: true}, header, dev)
	want := []string{dev + ": is active swap: " + dev}
	if diff := cmp.Diff(want, reasons(got)); diff != "" {
		t.Errorf("Check(swap on %s) mismatch (-want +got):\n%s", dev, diff)
	}
}

// The device the running system's "/" is on is refused as backing it. Its
// contents are not hashed: a mounted root file system changes all the time.
func TestRootDevice(t *testing.T) {
	var sys System
	mounts, err := sys.mounts("self")
	if err != nil {
		t.Skipf("no mountinfo: %v", err)
	}
	dev := ""
	for _, m := range mounts.mounts {
		if m.point != "/" {
			continue
		}
		if d, ok := mounts.dev(m); ok {
			if name, err := sys.nameOf(d.major, d.minor); err == nil {
				dev = "/dev/" + name
			}
		}
	}
	if dev == "" {
		t.Skip("/ is not on a block device here (overlay or tmpfs root)")
	}
	if _, err := os.Stat(dev); err != nil {
		t.Skipf("the root device has no node: %v", err)
	}
	// Without root the device cannot be read for signatures; that is
	// refused too, and the refusal as backing / must be there either way.
	in, err := sys.Inspect(dev)
	if err != nil {
		t.Fatal(err)
	}
	got := sys.Check([]Info{in}, Options{Destructive: true, WipeSignatures: true})
	if !hasReason(got, "backs the running system: \"/\" is mounted from ") {
		t.Errorf("Check(root device %s) = %q, want it refused as backing /", dev, got)
	}
	if !hasReason(got, "is mounted: ") {
		t.Errorf("Check(root device %s) = %q, want it refused as mounted", dev, got)
	}
	for _, r := range got {
		t.Log(r.Error())
	}
}

// An image deleted and created again at the same path (a blank image
// where the filled one was) is another file, though ext4 and XFS give it
// the deleted file's inode: its identity says so (inode generation,
// birth time).
func TestRecreatedFileIsAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.img")
	inspect := func() identity.FileID {
		t.Helper()
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, 64<<20); err != nil {
			t.Fatal(err)
		}
		info, err := System{}.Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.File
	}
	first := inspect()
	again, err := System{}.Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.File != first {
		t.Fatalf("the same file inspected twice: %+v, then %+v", first, again.File)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	second := inspect()
	t.Logf("first %+v, recreated %+v", first, second)
	if second.Dev == first.Dev && second.Inode == first.Inode && second.Recreated(first) == "" {
		t.Errorf("a file deleted and created again at inode %d on %s is taken for the deleted one: %+v, was %+v", first.Inode, first.Dev, second, first)
	}
}

// A loop device is the file the kernel has open, not the file its
// backing_file path names now: with another image bind-mounted over its
// backing file's path, the path leads to the other image, and the loop
// device is still known by its own file's device and inode.
func TestLoopIdentityIsTheKernelsFile(t *testing.T) {
	dev, img := newLoop(t, loopOpts{})
	other := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(other, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	own, otherID := statID(t, img), statID(t, other)
	run(t, "", "mount", "--bind", other, img)
	t.Cleanup(func() { exec.Command("umount", img).Run() })
	if through := statID(t, img); through != otherID {
		t.Fatalf("after mount --bind, %s stats as %+v, want the other image's %+v", img, through, otherID)
	}
	got, err := System{}.Inspect(dev)
	if err != nil {
		t.Fatal(err)
	}
	if got.File.Dev != own.Dev || got.File.Inode != own.Inode {
		t.Errorf("Inspect(%s).File = %+v, want the file the kernel has open, %+v (not the bind-mounted %+v)", dev, got.File, own, otherID)
	}
	if got.File.Generation != 0 || got.File.Born != "" || got.File.Size != 0 {
		t.Errorf("Inspect(%s).File = %+v: generation, birth time or size read at a path that is another file", dev, got.File)
	}
}
