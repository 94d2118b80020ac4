package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The whole host's power cut, simulated: the cut command makes every
// loop device refuse writes (blockdev --setro), optionally zeroes part
// of one's image, counts itself in a file, and SIGKILLs the suite and
// every process it started (fio included, each in its own process
// group), so that nothing the suite would write after the cut is
// written. The "reboot" is blockdev --setrw and the same command line
// with -resume.

// hostCut is the cut command of devs: zero, when not "", is the image
// whose first 64 KiB it zeroes; count is the file each cut appends a
// line to.
func hostCut(devs []string, zero, count string) string {
	cut := ""
	for _, dev := range devs {
		cut += "blockdev --setro " + dev + "; "
	}
	cut += "echo cut >> " + count + "; "
	if zero != "" {
		cut += testenv.LoopWritesLanded(zero) + "; dd if=/dev/zero of=" + zero + " bs=64k count=1 oflag=direct conv=notrunc,fsync status=none; "
	}
	return cut + "kids=$(pgrep -P $PPID | grep -vx $$); for k in $kids; do kill -KILL -- -$k 2>/dev/null || kill -KILL $k; done; kill -KILL $PPID"
}

func hostCutArgs(spec string, devs []string, rep, cut string) []string {
	return []string{"-spec=" + filepath.Join("internal", "e2e", "testdata", spec), "-drives=" + strings.Join(devs, ","), "-destructive",
		"-report=" + rep, "-power-cut=" + cut, "-power-cut-host"}
}

// reboot brings the "host" back: every device accepts writes again.
// The suite run after it is run by booted: the kernel cannot restart.
func reboot(t *testing.T, devs ...string) {
	t.Helper()
	for _, dev := range devs {
		require.NoError(t, exec.Command("blockdev", "--setrw", dev).Run())
	}
}

// booted runs the suite as after a reboot: in a mount namespace of its
// own whose kernel boot id (/proc/sys/kernel/random/boot_id, bound over)
// is a new one, as a restarted host's is.
func booted(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux) to give the suite another boot id")
	}
	id := filepath.Join(t.TempDir(), "boot_id")
	require.NoError(t, os.WriteFile(id, []byte(fmt.Sprintf("%08x-0000-4000-8000-%012x\n", time.Now().UnixNano()&0xffffffff, time.Now().UnixNano())), 0o644))
	return []string{"unshare", "-m", "--propagation", "private", "sh", "-c", `mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"`, id}
}

// runRebooted is runPL after a reboot (booted).
func runRebooted(t *testing.T, devs []string, args ...string) result {
	t.Helper()
	return runSuiteVia(context.Background(), t, booted(t), throttled(t, devs...), nil, powerLossOnly, args...)
}

func cuts(t *testing.T, count string) int {
	t.Helper()
	data, err := os.ReadFile(count)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "cut\n")
}

func readCycle(t *testing.T, raw, name string, k int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(raw, "powerloss", name, fmt.Sprintf("cycle_%d.json", k)))
	require.NoError(t, err)
	return string(data)
}

// Two drives, two cycles, each a cut of the host that loses nothing:
// each cycle writes both drives and cuts the host once, which ends the
// run; each resume judges both drives' cycle the cut interrupted from
// the ledgers saved before it (without cutting it again) and goes on to
// the next; the last passes all four. The host is cut twice, not four
// times.
func TestPowerLossHostCutResumes(t *testing.T) {
	runParallel(t)
	devs := []string{newLoop(t, 64<<20), newLoop(t, 64<<20)}
	var names []string
	for _, dev := range devs {
		backFile(t, dev)
		names = append(names, strings.TrimPrefix(dev, "/dev/"))
	}
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := hostCutArgs("powerloss2.toml", devs, rep, hostCut(devs, "", count))

	dry := runSuite(t, powerLossOnly, append(args, "-dry-run")...)
	assert.Equal(t, 0, dry.Code, dry.Stdout+dry.Stderr)
	assert.Contains(t, dry.Stdout, "the whole host's power is cut 2 time(s), every drive written before each cut (2 drive(s), their writes at once): blockdev --setro "+devs[0])
	assert.Contains(t, dry.Stdout, "run the same command line with -resume")
	restore := runSuite(t, powerLossOnly, append(args, "-power-restore=true")...)
	assert.NotEqual(t, 0, restore.Code)
	assert.Contains(t, restore.Stderr, "parsing -power-restore: given with -power-cut-host")
	assert.Equal(t, 0, cuts(t, count), "a dry run and a refused run cut nothing")

	first := runPL(t, devs, nil, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count), first.Stdout+first.Stderr)
	assert.Contains(t, first.Stdout, "on 2 drive(s), ledgers saved; cutting the host's power")
	rj, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	for _, name := range names {
		for _, f := range []string{"cycle_1.json", "cycle_1/host.json", "cycle_1/before.fnv", "cycle_1/sequential_lat.1.log", "cycle_1/random_lat.2.log"} {
			assert.Contains(t, string(rj), `"powerloss/`+name+"/"+f+`"`, "listed and hashed before the cut")
		}
		assert.Contains(t, readCycle(t, raw, name, 1), "the host's power was cut for this cycle and the run was not resumed")
	}

	reboot(t, devs...)
	second := runRebooted(t, devs, append(args, "-resume")...)
	noFioLeft(t)
	require.Equal(t, 2, cuts(t, count), "the resume cuts cycle 2 of both drives, never cycle 1 again: "+second.Stdout+second.Stderr)
	for _, name := range names {
		assert.Contains(t, second.Stdout, name+": cycle 1: the host's power was cut after its writes; reading back")
		c1 := readCycle(t, raw, name, 1)
		assert.Contains(t, c1, `"lost_writes": 0`)
		assert.NotContains(t, c1, `"not_run"`)
		assert.NotContains(t, c1, `"acknowledged": 0,`)
		assert.Contains(t, readCycle(t, raw, name, 2), "the host's power was cut for this cycle and the run was not resumed")
	}

	reboot(t, devs...)
	third := runRebooted(t, devs, append(args, "-resume")...)
	noFioLeft(t)
	assert.Equal(t, 2, cuts(t, count))
	assert.Equal(t, 0, third.Code, third.Stdout+third.Stderr)
	for _, name := range names {
		assert.Contains(t, third.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1")
		assert.Contains(t, third.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_2")
	}
	assert.NotContains(t, third.Stdout, "cutting the host's power")
	assert.Contains(t, third.Stdout, "the host restarted since the cut (another boot id)", "a loop device's cycle says what it has for evidence")
}

// One cut of two drives' host that also zeroes the first 64 KiB of one
// drive's image (writes the device acknowledged and flushed before the
// cut): after -resume that drive fails, naming its first lost range and
// zeros, and the other passes; a second -resume keeps both verdicts
// without cutting again, and -replay judges them the same.
func TestPowerLossHostCutLostWrites(t *testing.T) {
	runParallel(t)
	lossy, kept := newLoop(t, 64<<20), newLoop(t, 64<<20)
	img := backFile(t, lossy)
	backFile(t, kept)
	devs := []string{lossy, kept}
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	lossyName, keptName := strings.TrimPrefix(lossy, "/dev/"), strings.TrimPrefix(kept, "/dev/")
	args := hostCutArgs("powerloss.toml", devs, rep, hostCut(devs, img, count))

	runPL(t, devs, nil, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count))
	reboot(t, devs...)
	before := testenv.SHA256(t, lossy)
	resumed := runRebooted(t, devs, append(args, "-resume")...)
	noFioLeft(t)
	assert.Equal(t, 1, cuts(t, count), "the resume judges the cycle the cut interrupted and cuts nothing")
	assert.NotEqual(t, 0, resumed.Code)
	require.Contains(t, resumed.Stdout, "--- FAIL: TestPowerLoss/"+lossyName+"/cycle_1", resumed.Stdout+resumed.Stderr)
	// The zeroed 64 KiB, as far as the sequential job's acknowledged
	// writes reach into it (all of it unless the host is so loaded that
	// the job completed fewer than 16 writes before its last flush).
	lostRange := zeroedRange(t, resumed.Stdout)
	assert.Contains(t, resumed.Stdout, "--- PASS: TestPowerLoss/"+keptName+"/cycle_1")
	assert.Contains(t, resumed.Stdout, "NOT QUALIFIED: power_loss")
	assert.Equal(t, before, testenv.SHA256(t, lossy), "judging the cycle after the reboot reads the drive and writes nothing")

	again := runRebooted(t, devs, append(args, "-resume")...)
	assert.Equal(t, 1, cuts(t, count))
	assert.NotEqual(t, 0, again.Code)
	assert.Contains(t, again.Stdout, "--- FAIL: TestPowerLoss/"+lossyName+"/cycle_1", again.Stdout+again.Stderr)
	assert.Contains(t, again.Stdout, "came back as zeros")
	assert.Contains(t, again.Stdout, "--- PASS: TestPowerLoss/"+keptName+"/cycle_1")

	replay := runSuite(t, powerLossOnly, "-replay="+filepath.Join(rep, "raw"))
	assert.NotEqual(t, 0, replay.Code)
	assert.Contains(t, replay.Stdout, "--- FAIL: TestPowerLoss/"+lossyName+"/cycle_1", replay.Stdout+replay.Stderr)
	assert.Equal(t, lostRange, zeroedRange(t, replay.Stdout), "the replay names the range the resume named")
	assert.Contains(t, replay.Stdout, "--- PASS: TestPowerLoss/"+keptName+"/cycle_1")
}

// A resume judges a cycle the host's cut left pending only from the
// files run.json listed before the cut: a drive that lost flushed
// writes at the cut, whose listed ledger was removed and another put
// beside it (its writes moved off the zeroed range, under another
// name), passed; now it fails, naming the planted file. The cut's
// times were listed before the cut, as its ledger was.
func TestPowerLossHostCutPlantedLedger(t *testing.T) {
	runParallel(t)
	lossy := newLoop(t, 64<<20)
	img := backFile(t, lossy)
	devs := []string{lossy}
	name := strings.TrimPrefix(lossy, "/dev/")
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	args := hostCutArgs("powerloss.toml", devs, rep, hostCut(devs, img, count))
	runPL(t, devs, nil, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count))
	rj, err := os.ReadFile(filepath.Join(rep, "raw", "run.json"))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(rj), `"powerloss/`+name+`/cycle_1/cut.json"`), "the cut's times are listed before the cut")

	dir := filepath.Join(rep, "raw", "powerloss", name, "cycle_1")
	listed := filepath.Join(dir, "sequential_lat.1.log")
	data, err := os.ReadFile(listed)
	require.NoError(t, err)
	var moved []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(l, ",")
		require.GreaterOrEqual(t, len(f), 5, l)
		if off, _ := strconv.ParseInt(strings.TrimSpace(f[4]), 10, 64); off < 65536 {
			f[4] = " 65536"
		}
		moved = append(moved, strings.Join(f, ","))
	}
	require.NoError(t, os.Remove(listed))
	planted := filepath.Join(dir, "sequential_lat.9.log")
	require.NoError(t, os.WriteFile(planted, []byte(strings.Join(moved, "\n")+"\n"), 0o644))

	reboot(t, devs...)
	r := runRebooted(t, devs, append(args, "-resume")...)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, planted+" is not listed in run.json")
	assert.NotContains(t, r.Stdout, "QUALIFIED\n")
	rj, err = os.ReadFile(filepath.Join(rep, "raw", "run.json"))
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(rj), "cycle_1/sequential_lat.9.log"), "the judged cycle's record vouches for no file it was not listed with before the cut")
}

// zeroedRange is the first lost range out names: from LBA 0, zeros,
// within the 64 KiB (128 blocks) the cut zeroed, as many 4 KiB writes as
// the verdict counts lost (the zeroed range holds the only lost writes),
// a multiple of flush_every (4) of them: the sequential job's writes are
// held in fours, before each completed flush. All 16 unless the host is
// so loaded that the job completed fewer before its last flush.
func zeroedRange(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(\d+) of \d+ acknowledged writes lost \([^\n]*; first lost range: LBA 0, (\d+) blocks \((\d+) bytes at offset 0\), came back as zeros`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("no first lost range at LBA 0 of zeros in:\n%s", out)
		return ""
	}
	lost, _ := strconv.Atoi(m[1])
	blocks, _ := strconv.Atoi(m[2])
	if blocks > 128 || blocks != 8*lost || lost%4 != 0 || lost == 0 {
		t.Errorf("%d writes lost, the first lost range %d blocks: want the range to be the lost writes, 4 KiB each, a multiple of 4 of them, within the zeroed 64 KiB", lost, blocks)
	}
	return m[0]
}

// A -resume in the boot the cut was made in (the run killed while it
// waited for the host to go down, the command having cut nothing) does
// not judge the cycle: the host's power was not cut; it stays pending for
// the resume after a real reboot, and with two cycles nothing is written
// over it nor cut again in that boot. The resume after the reboot judges
// cycle 1 and cuts cycle 2; the next passes both.
func TestPowerLossHostCutSameBoot(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	backFile(t, dev)
	devs := []string{dev}
	name := strings.TrimPrefix(dev, "/dev/")
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := hostCutArgs("powerloss2.toml", devs, rep, hostCut(devs, "", count))
	runPL(t, devs, nil, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count))
	require.NoError(t, exec.Command("blockdev", "--setrw", dev).Run())
	r := runPL(t, devs, nil, append(args, "-resume")...)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	assert.Equal(t, 1, cuts(t, count), "nothing is cut again in the boot of the cut: "+r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "--- SKIP: TestPowerLoss/"+name+"/cycle_1", r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "INCONCLUSIVE: not judged: the host's power was not cut: the host did not restart since the cut (the same boot id")
	assert.NotContains(t, r.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1")
	assert.NoFileExists(t, filepath.Join(raw, "powerloss", name, "cycle_2.json"), "nothing written over the cycle not judged")
	// The resume after the host's power has gone (another boot id)
	// judges it, and cuts cycle 2.
	runRebooted(t, devs, append(args, "-resume")...)
	noFioLeft(t)
	assert.Equal(t, 2, cuts(t, count))
	assert.Contains(t, readCycle(t, raw, name, 1), `"lost_writes": 0`)
	reboot(t, devs...)
	after := runRebooted(t, devs, append(args, "-resume")...)
	assert.Equal(t, 0, after.Code, after.Stdout+after.Stderr)
	assert.Contains(t, after.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1")
	assert.Contains(t, after.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_2")
	assert.Equal(t, 2, cuts(t, count), "the last resume cuts nothing again")
}

// Two drives, two cycles of the host's cut; after the first cut one
// drive does not come back: its loop device is detached and its path (a
// link named as the kernel named it) is gone. The resume waits
// ready_within for it, then fails its pending cycle "did not return" and
// disqualifies it, recorded in run.json, and goes on with the other
// drive: its cycle 1 judged, its cycle 2 cut. The next resume, the drive
// still not back, judges the other drive's cycle 2 and runs nothing on
// the absent one. Then the drive comes back (its image attached again,
// the link made to it): a resume matches it by identity, keeps it
// failed, and neither writes it nor cuts the host again; -replay FAILs
// it the same way.
func TestPowerLossHostCutDriveNotBack(t *testing.T) {
	runParallel(t)
	devs, given, names, imgs, count, raw, args := cutOneLost(t, "powerloss2.toml")
	untouched := testenv.SHA256(t, imgs[1])

	// The dry run says which drive is not there and that nothing is
	// written to it, without waiting for it.
	dry := runRebooted(t, devs[:1], append(args, "-resume", "-dry-run")...)
	assert.Equal(t, 0, dry.Code, dry.Stdout+dry.Stderr)
	assert.Contains(t, dry.Stdout, "  "+given[1]+": not there: "+given[1]+" did not come back after the host's power cut: nothing was at "+given[1]+" when the resume started (drive 2 of the run")
	assert.Contains(t, dry.Stdout, "  "+given[1]+": not there, nothing written, never cut again: its pending cycle FAILs \"did not return\"")
	assert.NotContains(t, dry.Stderr, "waiting up to")
	assert.Equal(t, 1, cuts(t, count))

	resumed := runRebooted(t, devs[:1], append(args, "-resume")...)
	noFioLeft(t)
	out := resumed.Stdout + resumed.Stderr
	assert.Equal(t, 2, cuts(t, count), "the drive back goes on to its cycle 2: "+out)
	assert.Contains(t, resumed.Stderr, "nothing is at "+given[1]+" yet: waiting up to 5s (ready_within)")
	// The cut of cycle 2 ended the resume: its verdicts are on disk.
	assert.Contains(t, readCycle(t, raw, names[0], 1), `"lost_writes": 0`)
	c1 := readCycle(t, raw, names[1], 1)
	assert.Contains(t, c1, `"not_returned": "nothing was at `+given[1]+" when the resume started nor within ready_within 5s (drive 2 of the run, recorded at "+given[1]+": loop device over")
	assert.NotContains(t, c1, `"not_run"`)
	rj, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rj), `"step": "the resume's setup"`, "the drive's failure is in run.json")
	assert.Contains(t, string(rj), `"cause": "drive changed"`)
	assert.NoFileExists(t, filepath.Join(raw, "powerloss", names[1], "cycle_2.json"), "no cycle 2 of a drive that is not there")

	reboot(t, devs[0])
	again := runRebooted(t, devs[:1], append(args, "-resume")...)
	noFioLeft(t)
	out = again.Stdout + again.Stderr
	assert.NotEqual(t, 0, again.Code, out)
	assert.Equal(t, 2, cuts(t, count), out)
	assert.Contains(t, again.Stdout, "--- PASS: TestPowerLoss/"+names[0]+"/cycle_2", out)
	assert.Contains(t, again.Stdout, "--- FAIL: TestPowerLoss/"+names[1]+"/cycle_1", out)
	assert.Contains(t, again.Stdout, "did not return after the power cut: nothing was at "+given[1]+" when the resume started")
	assert.Contains(t, again.Stdout, given[1]+" failed the resume's setup earlier in this run, at ")
	assert.Contains(t, again.Stdout, "cycles 2 to 2 not run: "+given[1]+" did not return after cycle 1")

	// The drive comes back, at another loop device; its link made to it.
	back := attachOwn(t, imgs[1])
	require.NoError(t, os.Symlink(back, given[1]))
	reboot(t, devs[0])
	late := runRebooted(t, []string{devs[0], back}, append(args, "-resume")...)
	noFioLeft(t)
	out = late.Stdout + late.Stderr
	assert.NotEqual(t, 0, late.Code, out)
	assert.Equal(t, 2, cuts(t, count), "a drive back late is never cut again: "+out)
	assert.NotContains(t, out, "nothing is at ")
	assert.Contains(t, late.Stdout, "--- FAIL: TestPowerLoss/"+strings.TrimPrefix(back, "/dev/")+"/cycle_1", out)
	assert.Contains(t, late.Stdout, "cycles 2 to 2 not run: "+given[1]+" did not return after cycle 1")
	assert.NoFileExists(t, filepath.Join(raw, "powerloss", names[1], "cycle_2.json"))
	assert.Equal(t, untouched, testenv.SHA256(t, imgs[1]), "nothing writes the drive that did not come back, back or not")

	replay := runSuite(t, powerLossOnly, "-replay="+raw)
	assert.NotEqual(t, 0, replay.Code)
	assert.Regexp(t, `--- FAIL: TestPowerLoss/[^/\n]+/cycle_1`, replay.Stdout, replay.Stdout+replay.Stderr)
	assert.Contains(t, replay.Stdout, "did not return after the power cut: nothing was at "+given[1])
}

// cutOneLost runs two drives (linkedLoops) with spec's power-loss test
// until the host's first cut, and "reboots" with the second drive gone:
// its loop device detached, its link removed. It returns what linkedLoops
// does, the file the cuts are counted in, the recording and the command
// line. The cut makes only the first drive read-only: the second's loop
// number, detached, may be another test's by a later cut.
func cutOneLost(t *testing.T, spec string) (devs, given, names, imgs []string, count, raw string, args []string) {
	t.Helper()
	devs, given, names, imgs = linkedLoops(t, 2)
	count = filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	raw = filepath.Join(rep, "raw")
	args = hostCutArgs(spec, given, rep, hostCut(devs[:1], "", count))
	runPL(t, devs, nil, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count))
	reboot(t, devs[0])
	require.NoError(t, exec.Command("losetup", "-d", devs[1]).Run())
	require.NoError(t, os.Remove(given[1]))
	return devs, given, names, imgs, count, raw, args
}

// linkedLoops is n loop devices of 64 MiB (attachOwn), each given as a
// link named as the kernel named it: their devices, the links, the names
// and the images.
func linkedLoops(t *testing.T, n int) (devs, given, names, imgs []string) {
	t.Helper()
	testenv.MustHaveLoop(t)
	links := t.TempDir()
	for range n {
		img := filepath.Join(t.TempDir(), "disk.img")
		require.NoError(t, os.WriteFile(img, nil, 0o644))
		require.NoError(t, os.Truncate(img, 64<<20))
		dev := attachOwn(t, img)
		name := strings.TrimPrefix(dev, "/dev/")
		devs, names, imgs = append(devs, dev), append(names, name), append(imgs, img)
		given = append(given, filepath.Join(links, name))
		require.NoError(t, os.Symlink(dev, given[len(given)-1]))
	}
	return devs, given, names, imgs
}

// attachOwn attaches img to a free loop device (as testenv.Attach) that
// the test may detach itself: it is detached when t ends if it is still
// attached to img.
func attachOwn(t *testing.T, img string) string {
	t.Helper()
	out, err := exec.Command("flock", "-w", "60", testenv.LosetupLock, "losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	require.NoError(t, err, "%s", out)
	dev := strings.TrimSpace(string(out))
	// A loop number keeps the read-only flag a cut set while it was free.
	require.NoError(t, exec.Command("blockdev", "--setrw", dev).Run())
	t.Cleanup(func() {
		if back, err := exec.Command("losetup", "-n", "-O", "BACK-FILE", dev).Output(); err == nil && strings.TrimSpace(string(back)) == img {
			_ = exec.Command("blockdev", "--setrw", dev).Run()
			_ = exec.Command("losetup", "-d", dev).Run()
		}
	})
	return dev
}

// The resume that records a drive as not back after the host's cut is
// stopped before it judges the drive's cycle (here it runs TestHealth
// alone; a kill or a cut of the host's power does the same): the drive
// comes back, and the next resume fails its cycle "did not return", as
// recorded, without reading or writing it; the other drive passes. Its
// data is not judged: the drive failed the resume before.
func TestPowerLossHostCutBackAfterRecordedGone(t *testing.T) {
	runParallel(t)
	devs, given, names, imgs, count, raw, args := cutOneLost(t, "powerloss.toml")
	health := runSuiteVia(context.Background(), t, booted(t), throttled(t, devs[:1]...), nil, []string{"-test.run=TestHealth"}, append(args, "-resume")...)
	noFioLeft(t)
	rj, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	require.Contains(t, string(rj), `"step": "the resume's setup"`, health.Stdout+health.Stderr)
	assert.Contains(t, readCycle(t, raw, names[1], 1), hostcut.Pending, "the cycle is still pending")

	back := attachOwn(t, imgs[1])
	require.NoError(t, os.Symlink(back, given[1]))
	untouched := testenv.SHA256(t, imgs[1])
	r := runRebooted(t, []string{devs[0], back}, append(args, "-resume")...)
	noFioLeft(t)
	out := r.Stdout + r.Stderr
	assert.NotEqual(t, 0, r.Code, out)
	assert.Equal(t, 1, cuts(t, count), out)
	assert.Contains(t, r.Stdout, "--- PASS: TestPowerLoss/"+names[0]+"/cycle_1", out)
	assert.Contains(t, r.Stdout, "--- FAIL: TestPowerLoss/"+strings.TrimPrefix(back, "/dev/")+"/cycle_1", out)
	assert.Contains(t, r.Stdout, "did not return after the power cut: nothing was at "+given[1]+" when the resume started")
	assert.Contains(t, readCycle(t, raw, names[1], 1), `"acknowledged": 0,`, "its data was not judged")
	assert.Equal(t, untouched, testenv.SHA256(t, imgs[1]))

	replay := runSuite(t, powerLossOnly, "-replay="+raw)
	assert.NotEqual(t, 0, replay.Code)
	assert.Contains(t, replay.Stdout, "did not return after the power cut: nothing was at "+given[1], replay.Stdout+replay.Stderr)
}
