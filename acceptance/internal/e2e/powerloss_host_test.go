package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The whole host's power cut, simulated: the cut command makes the loop
// device refuse writes (blockdev --setro), optionally zeroes part of its
// image, counts itself in a file, and SIGKILLs the suite and every
// process it started (fio included, each in its own process group), so
// that nothing the suite would write after the cut is written. The
// "reboot" is blockdev --setrw and the same command line with -resume.

// hostCut is the cut command: zero, when not "", is the image whose
// first 64 KiB it zeroes; count is the file each cut appends a line to.
func hostCut(dev, zero, count string) string {
	cut := "blockdev --setro " + dev + "; echo cut >> " + count + "; "
	if zero != "" {
		cut += "dd if=/dev/zero of=" + zero + " bs=64k count=1 conv=notrunc,fsync status=none; "
	}
	return cut + "kids=$(pgrep -P $PPID | grep -vx $$); for k in $kids; do kill -KILL -- -$k 2>/dev/null || kill -KILL $k; done; kill -KILL $PPID"
}

func hostCutArgs(spec, dev, rep, cut string) []string {
	return []string{"-spec=" + filepath.Join("internal", "e2e", "testdata", spec), "-drives=" + dev, "-destructive",
		"-report=" + rep, "-power-cut=" + cut, "-power-cut-host"}
}

// reboot brings the "host" back: the device accepts writes again.
func reboot(t *testing.T, dev string) {
	t.Helper()
	require.NoError(t, exec.Command("blockdev", "--setrw", dev).Run())
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

// Two cycles, each a cut of the host that loses nothing: the run ends at
// each cut; each resume judges the cycle the cut interrupted from the
// ledger saved before it (without cutting it again) and goes on to the
// next; the last passes both.
func TestPowerLossHostCutResumes(t *testing.T) {
	t.Parallel()
	dev := newLoop(t, 64<<20)
	backFile(t, dev)
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	name := strings.TrimPrefix(dev, "/dev/")
	raw := filepath.Join(rep, "raw")
	args := hostCutArgs("powerloss2.toml", dev, rep, hostCut(dev, "", count))

	dry := runSuite(t, powerLossOnly, append(args, "-dry-run")...)
	assert.Equal(t, 0, dry.Code, dry.Stdout+dry.Stderr)
	assert.Contains(t, dry.Stdout, "the whole host's power is cut, 2 time(s) (2 cycle(s) of each of 1 drive(s), one drive written a cut): blockdev --setro "+dev)
	assert.Contains(t, dry.Stdout, "run the same command line with -resume")
	restore := runSuite(t, powerLossOnly, append(args, "-power-restore=true")...)
	assert.NotEqual(t, 0, restore.Code)
	assert.Contains(t, restore.Stderr, "parsing -power-restore: given with -power-cut-host")
	assert.Equal(t, 0, cuts(t, count), "a dry run and a refused run cut nothing")

	first := runSuite(t, powerLossOnly, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count), first.Stdout+first.Stderr)
	assert.Contains(t, first.Stdout, "ledger saved; cutting the host's power")
	rj, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	for _, f := range []string{"cycle_1.json", "cycle_1/host.json", "cycle_1/before.fnv", "cycle_1/sequential_lat.1.log", "cycle_1/random_lat.2.log"} {
		assert.Contains(t, string(rj), `"powerloss/`+name+"/"+f+`"`, "listed and hashed before the cut")
	}
	c1, err := os.ReadFile(filepath.Join(raw, "powerloss", name, "cycle_1.json"))
	require.NoError(t, err)
	assert.Contains(t, string(c1), "the host's power was cut for this cycle and the run was not resumed")

	reboot(t, dev)
	second := runSuite(t, powerLossOnly, append(args, "-resume")...)
	noFioLeft(t)
	require.Equal(t, 2, cuts(t, count), "the resume cuts cycle 2, never cycle 1 again: "+second.Stdout+second.Stderr)
	assert.Contains(t, second.Stdout, "cycle 1: the host's power was cut after its writes; reading back")
	c1, err = os.ReadFile(filepath.Join(raw, "powerloss", name, "cycle_1.json"))
	require.NoError(t, err)
	assert.Contains(t, string(c1), `"lost_writes": 0`)
	assert.NotContains(t, string(c1), `"not_run"`)
	assert.NotContains(t, string(c1), `"acknowledged": 0,`)

	reboot(t, dev)
	third := runSuite(t, powerLossOnly, append(args, "-resume")...)
	noFioLeft(t)
	assert.Equal(t, 2, cuts(t, count))
	assert.Equal(t, 0, third.Code, third.Stdout+third.Stderr)
	assert.Contains(t, third.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1")
	assert.Contains(t, third.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_2")
	assert.NotContains(t, third.Stdout, "cutting the host's power")
	assert.Contains(t, third.Stdout, "the host did not restart since the cut (the same boot id)", "a loop device's cycle says what it has for evidence")
}

// A cut that also zeroes the first 64 KiB of the image (writes the
// device acknowledged and flushed before the cut) fails after -resume,
// naming the first lost range and zeros; a second -resume keeps the
// failure without cutting again, and -replay judges it the same.
func TestPowerLossHostCutLostWrites(t *testing.T) {
	t.Parallel()
	dev := newLoop(t, 64<<20)
	img := backFile(t, dev)
	count := filepath.Join(t.TempDir(), "cuts")
	rep := filepath.Join(t.TempDir(), "report")
	name := strings.TrimPrefix(dev, "/dev/")
	args := hostCutArgs("powerloss.toml", dev, rep, hostCut(dev, img, count))

	runSuite(t, powerLossOnly, args...)
	noFioLeft(t)
	require.Equal(t, 1, cuts(t, count))
	reboot(t, dev)
	before := testenv.SHA256(t, dev)
	resumed := runSuite(t, powerLossOnly, append(args, "-resume")...)
	noFioLeft(t)
	assert.Equal(t, 1, cuts(t, count), "the resume judges the cycle the cut interrupted and cuts nothing")
	assert.NotEqual(t, 0, resumed.Code)
	require.Contains(t, resumed.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", resumed.Stdout+resumed.Stderr)
	assert.Contains(t, resumed.Stdout, "first lost range: LBA 0, 128 blocks (65536 bytes at offset 0), came back as zeros")
	assert.Contains(t, resumed.Stdout, "NOT QUALIFIED: power_loss")
	assert.Equal(t, before, testenv.SHA256(t, dev), "judging the cycle after the reboot reads the drive and writes nothing")

	again := runSuite(t, powerLossOnly, append(args, "-resume")...)
	assert.Equal(t, 1, cuts(t, count))
	assert.NotEqual(t, 0, again.Code)
	assert.Contains(t, again.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", again.Stdout+again.Stderr)
	assert.Contains(t, again.Stdout, "came back as zeros")

	replay := runSuite(t, powerLossOnly, "-replay="+filepath.Join(rep, "raw"))
	assert.NotEqual(t, 0, replay.Code)
	assert.Contains(t, replay.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", replay.Stdout+replay.Stderr)
	assert.Contains(t, replay.Stdout, "first lost range: LBA 0, 128 blocks (65536 bytes at offset 0), came back as zeros")
}
