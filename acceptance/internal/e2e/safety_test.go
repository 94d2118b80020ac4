package e2e

// Never write the wrong disk: each test here gives the suite's real entry
// point a target it must refuse (or, for -dry-run, must only describe) and
// checks that the refusal names the device and the reason, that no fio ran
// and that the device holds the same bytes as before.

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// safetySize is the size of the loop devices the safety tests guard, in
// bytes: small enough to hash in a moment.
const safetySize = 64 << 20

// faultSpec is the testdata spec for 64 MiB loop devices.
func faultSpec(t *testing.T) string { return testdataFile(t, "faults.toml") }

// guardedLoop is a 64 MiB loop device filled with random bytes, so that
// "unchanged" says something about data and not only about zeros.
func guardedLoop(t *testing.T, losetupArgs ...string) string {
	t.Helper()
	dev := newLoop(t, safetySize, losetupArgs...)
	fillRandom(t, dev, safetySize)
	return dev
}

// fillRandom writes size pseudo-random bytes to path and syncs them.
func fillRandom(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Read fills the buffer a block at a time: byte by byte, under -race,
	// a 64 MiB device took a fifth of a second of CPU.
	rng := rand.NewChaCha8([32]byte{'d', 'r', 'i', 'v', 'e', 'q', 'u', 'a', 'l'})
	buf := make([]byte, 1<<20)
	for n := 0; n < size; n += len(buf) {
		_, _ = rng.Read(buf)
		if _, err := f.Write(buf[:min(len(buf), size-n)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// command runs a setup command and fails t if it fails.
func command(t *testing.T, stdin string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// assertRefused checks a run the suite refused: a non-zero exit without a
// panic, every want in the refusal on stderr, no fio left and nothing
// measured or reported.
func assertRefused(t *testing.T, r result, want ...string) {
	t.Helper()
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "a refused run must exit non-zero")
	assert.Contains(t, r.Stderr, "drivequal: refusing to run")
	noPanic(t, r)
	for _, w := range want {
		assert.Contains(t, r.Stderr, w)
	}
	assert.NotContains(t, r.Stdout, "=== RUN", "no subtest may start after a refusal")
	assertNoReport(t, r)
}

// assertNoReport checks that a run left nothing in its -report directory
// (which flag validation may have created, empty, to check it is
// writable): no results, no summary, no raw fio output.
func assertNoReport(t *testing.T, r result) {
	t.Helper()
	ents, err := os.ReadDir(r.Report)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, "%s must stay empty", r.Report)
}

func TestRefusesWithoutDestructive(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	dev := guardedLoop(t)
	before := testenv.SHA256(t, dev)
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-precondition=none")
	assertRefused(t, r, dev+": -destructive not given", "add -destructive if everything on "+dev+" may be destroyed")
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)
}

func TestRefusesMountedFileSystem(t *testing.T) {
	testenv.MustHave(t, "mkfs.ext4", "apt-get install e2fsprogs")
	dev := guardedLoop(t)
	command(t, "", "mkfs.ext4", "-q", "-F", dev)
	mnt := t.TempDir()
	mounted := false
	mount := func(opts ...string) {
		t.Helper()
		command(t, "", "mount", append(opts, dev, mnt)...)
		mounted = true
	}
	umount := func() {
		t.Helper()
		command(t, "", "umount", mnt)
		mounted = false
	}
	t.Cleanup(func() {
		if mounted {
			umount()
		}
	})
	mount()
	sentinel := filepath.Join(mnt, "sentinel")
	want := []byte("written before the suite ran " + strconv.Itoa(os.Getpid()) + "\n")
	require.NoError(t, os.WriteFile(sentinel, want, 0o644))
	command(t, "", "sync", "-f", sentinel)

	// Read-write mount: the file system journals and updates its superblock
	// on its own, so the device's hash says nothing here. What must hold is
	// that the refusal names the mount, that no fio ran (no raw output, no
	// report) and that the sentinel file is intact.
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none")
	assertRefused(t, r, dev+": is mounted: ", " at "+mnt, "umount "+mnt)
	got, err := os.ReadFile(sentinel)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the sentinel file must survive")

	// Read-only mount without journal replay: the kernel writes nothing to
	// the device, so byte-for-byte comparison is meaningful again, from the
	// hash of the cleanly unmounted file system to the hash after the
	// refused run and the unmount.
	umount()
	before := testenv.SHA256(t, dev)
	mount("-o", "ro,noload")
	// -wipe-signatures leaves the mount as the only reason to refuse.
	r = runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-wipe-signatures", "-precondition=none")
	assertRefused(t, r, dev+": is mounted: ", " at "+mnt)
	umount()
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed while mounted read-only", dev)
}

func TestRefusesPartitionTable(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	testenv.MustHave(t, "sfdisk", "apt-get install fdisk")
	const table = "label: gpt\n,,L\n"

	t.Run("signature", func(t *testing.T) {
		// Without partition scanning the kernel shows no partitions: the
		// GPT itself is the reason to refuse.
		dev := guardedLoop(t)
		command(t, table, "sfdisk", "-q", dev)
		before := testenv.SHA256(t, dev)
		r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none")
		assertRefused(t, r, dev+": has a partition table or file-system signature: ", "gpt", "-wipe-signatures")
		assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)

		// -wipe-signatures lets the target past the refusal; only a dry run
		// is tried here, which must still write nothing.
		r = runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-wipe-signatures", "-dry-run")
		noFioLeft(t)
		assert.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		assert.NotContains(t, r.Stderr, "refusing")
		assert.Contains(t, r.Stdout, "filename="+dev)
		assert.NoDirExists(t, r.Report, "a dry run creates no report")
		assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed in a dry run", dev)
	})

	t.Run("partitions", func(t *testing.T) {
		// With partition scanning the kernel shows loopNp1: refused even
		// with -wipe-signatures.
		dev := guardedLoop(t, "--partscan")
		command(t, table, "sfdisk", "-q", dev)
		part := filepath.Base(dev) + "p1"
		partition := filepath.Join("/sys/class/block", part, "partition")
		if _, err := os.Stat(partition); err != nil {
			// sfdisk asks the kernel to re-read the table, which some
			// containers ignore; partx adds the partition directly.
			testenv.MustHave(t, "partx", "apt-get install util-linux")
			command(t, "", "partx", "-a", dev)
		}
		require.FileExists(t, partition, "sfdisk and partx should have made %s", part)
		before := testenv.SHA256(t, dev)
		r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-wipe-signatures", "-precondition=none")
		assertRefused(t, r, dev+": has partitions: "+part)
		assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)
	})
}

func TestRefusesActiveSwap(t *testing.T) {
	testenv.MustHave(t, "mkswap", "apt-get install util-linux")
	dev := guardedLoop(t)
	command(t, "", "mkswap", "-q", dev)
	before := testenv.SHA256(t, dev)
	out := swappedOut(t)
	command(t, "", "swapon", "--priority=0", dev)
	on := true
	swapoff := func() {
		t.Helper()
		if on {
			command(t, "", "swapoff", dev)
			on = false
		}
	}
	t.Cleanup(swapoff)

	// -wipe-signatures: the swap signature alone would be waved through;
	// the active swap must not.
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-wipe-signatures", "-precondition=none")
	assertRefused(t, r, dev+": is active swap: "+dev, "swapoff "+dev)

	// The kernel may page out to the swap by itself; the hash is only
	// comparable when it did not. "Used" in /proc/swaps falls back to 0
	// once the pages are read back in; the pages the kernel ever swapped
	// out (pswpout) do not.
	used := swapUsed(t, dev)
	swapoff()
	if n := swappedOut(t) - out; used > 0 || n > 0 {
		t.Logf("the kernel swapped out to %s during the test (%d KiB in use at the end, %d pages written): its hash is not comparable", dev, used, n)
		return
	}
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)
}

// swappedOut is the number of pages the kernel has swapped out since it
// booted (/proc/vmstat pswpout), to any swap.
func swappedOut(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/vmstat")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "pswpout" {
			n, err := strconv.Atoi(f[1])
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("/proc/vmstat has no pswpout:\n%s", data)
	return 0
}

// swapUsed is the "Used" column of /proc/swaps for dev, in KiB.
func swapUsed(t *testing.T, dev string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/swaps")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == dev {
			n, err := strconv.Atoi(f[3])
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("%s is not in /proc/swaps:\n%s", dev, data)
	return 0
}

func TestRefusesSameDriveTwice(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	dev := guardedLoop(t)
	link := filepath.Join(t.TempDir(), "same-drive")
	require.NoError(t, os.Symlink(dev, link))
	before := testenv.SHA256(t, dev)
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev+","+link, "-destructive", "-precondition=none")
	assertRefused(t, r, link+": is the same target as "+dev+", given earlier", "remove the duplicate from -drives")
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed", dev)
}

func TestDryRunWritesNothing(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	dev := guardedLoop(t)
	before := testenv.SHA256(t, dev)
	r := runSuite(t, nil, "-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-dry-run")
	noFioLeft(t)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	noPanic(t, r)

	out := r.Stdout
	for _, want := range []string{
		// identity
		dev + " -> " + dev, `model "loop"`, "67,108,864 bytes", "as 64MiB",
		// plan, with the preparation the spec asks for
		"plan (", "purge (discard)", "sequential fill", "TestSingleDrive/64MiB/4KB_Random_Write",
		// job files
		"fio job files:", "filename=" + dev, "rw=randwrite", "bs=512",
		// bytes and duration
		"bytes written per drive (estimate):", dev + ": ", "estimated duration: ",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "=== RUN", "a dry run runs no subtest")
	assert.Equal(t, before, testenv.SHA256(t, dev), "%s changed in a dry run", dev)
	assert.NoDirExists(t, r.Report, "a dry run creates no report directory")
}
