package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The power-loss tests cut a loop device's "power" with the user's
// commands: `blockdev --setro` makes it refuse writes at once, as a drive
// that lost power does, and `blockdev --setrw` restores it.

var powerLossOnly = []string{"-test.run=TestPowerLoss"}

func backFile(t *testing.T, dev string) string {
	t.Helper()
	out, err := exec.Command("losetup", "-n", "-O", "BACK-FILE", dev).Output()
	require.NoError(t, err)
	t.Cleanup(func() { exec.Command("blockdev", "--setrw", dev).Run() })
	return strings.TrimSpace(string(out))
}

func powerLossArgs(dev, rep, cut string) []string {
	return []string{"-spec=" + filepath.Join("internal", "e2e", "testdata", "powerloss.toml"), "-drives=" + dev, "-destructive",
		"-report=" + rep, "-power-cut=" + cut, "-power-restore=blockdev --setrw {path}"}
}

// plIOPS is the writes a second each loop device of a power-loss test
// takes (blk-throttle): a cycle's jobs, 1024 blocks each in 8 MiB, do
// not write their whole region before the cut, whatever the machine's
// load.
const plIOPS = 300

// runPL runs the suite's power-loss test with env, its writes to each of
// devs held to plIOPS a second.
func runPL(t *testing.T, devs []string, env []string, args ...string) result {
	t.Helper()
	return runSuiteCtx(context.Background(), t, throttled(t, devs...), env, powerLossOnly, args...)
}

// throttled puts the suite it is given (and every fio it starts) in a
// cgroup that holds its writes to each of devs to plIOPS a second.
func throttled(t *testing.T, devs ...string) func(*exec.Cmd) {
	t.Helper()
	th := testenv.WriteThrottle(t, devs[0], plIOPS)
	for _, d := range devs[1:] {
		th.Also(t, d, plIOPS)
	}
	return func(cmd *exec.Cmd) { require.NoError(t, th.Join(cmd.Process.Pid)) }
}

func powerLossChecks(t *testing.T, r result) []report.HealthCheck {
	t.Helper()
	return r.results(t).PowerLoss
}

// A cut that also zeroes the first 64 KiB of the image (writes the device
// had acknowledged and flushed) fails, naming LBA 0 and zeros; the failed
// cycle stays failed through -replay and through -resume, which does not
// cut again.
func TestPowerLossLostWrites(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	img := backFile(t, dev)
	rep := filepath.Join(t.TempDir(), "report")
	args := powerLossArgs(dev, rep, "blockdev --setro {path}; "+testenv.LoopWritesLanded(img)+"; dd if=/dev/zero of="+img+" bs=64k count=1 oflag=direct conv=notrunc,fsync status=none")
	r := runPL(t, []string{dev}, nil, args...)
	noFioLeft(t)
	name := strings.TrimPrefix(dev, "/dev/")
	assert.NotEqual(t, 0, r.Code)
	require.Contains(t, r.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "first lost range: LBA 0, 128 blocks (65536 bytes at offset 0), came back as zeros")
	checks := powerLossChecks(t, r)
	require.Len(t, checks, 1)
	assert.Equal(t, report.Fail, checks[0].Verdict)
	assert.Equal(t, "cycle_1", checks[0].Check)
	assert.Contains(t, r.Stdout, "NOT QUALIFIED: power_loss")

	replay := runSuite(t, powerLossOnly, "-replay="+filepath.Join(rep, "raw"), "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"))
	assert.NotEqual(t, 0, replay.Code)
	assert.Contains(t, replay.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", replay.Stdout+replay.Stderr)
	assert.Contains(t, replay.Stdout, "came back as zeros")

	// The resumed run's cut would lose nothing: the recorded cycle is kept.
	resumed := runPL(t, []string{dev}, nil, append(powerLossArgs(dev, rep, "blockdev --setro {path}"), "-resume")...)
	assert.NotEqual(t, 0, resumed.Code)
	assert.Contains(t, resumed.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", resumed.Stdout+resumed.Stderr)
	assert.Contains(t, resumed.Stdout, "came back as zeros")
	assert.NotContains(t, resumed.Stdout, "power cut (", "a resume cuts no cycle recorded whole")
}

// The same cut without the zeroing loses nothing and passes, saying a
// loop device gives no evidence the cut happened.
func TestPowerLossKept(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	backFile(t, dev)
	r := runPL(t, []string{dev}, nil, powerLossArgs(dev, filepath.Join(t.TempDir(), "report"), "blockdev --setro {path}")...)
	noFioLeft(t)
	assert.Equal(t, 0, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "--- PASS: TestPowerLoss/"+strings.TrimPrefix(dev, "/dev/")+"/cycle_1")
	assert.Contains(t, r.Stdout, "no evidence the cut happened: "+dev+" is not an NVMe drive nvme-cli reads")
}

// A cut command that does nothing, on a drive whose counts of unsafe
// shutdowns (SMART) and power losses its protection took (OCP C0 PLP
// start count) the stand-in nvme-cli serves (they move only with a real
// cut), is INCONCLUSIVE, never a pass, naming both counts.
func TestPowerLossCutDidNothing(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	env := ocpStandin(t)
	r := runPL(t, []string{dev}, env, powerLossArgs(dev, filepath.Join(t.TempDir(), "report"), "true")...)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "an INCONCLUSIVE run is not QUALIFIED: it exits non-zero")
	assert.Contains(t, r.Stdout, "--- SKIP: TestPowerLoss/"+strings.TrimPrefix(dev, "/dev/")+"/cycle_1", r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "INCONCLUSIVE: the drive did not see a power loss: check the cut command (unsafe shutdowns stayed at")
	assert.Contains(t, r.Stdout, "OCP PLP start count stayed at 287")
	checks := powerLossChecks(t, r)
	require.Len(t, checks, 1)
	assert.Equal(t, report.Inconclusive, checks[0].Verdict)
	assert.Contains(t, r.Stdout, "INCONCLUSIVE: power_loss")
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `name="`+strings.TrimPrefix(dev, "/dev/")+`/cycle_1" classname="TestPowerLoss"`)
	assert.Contains(t, string(junit), `<skipped message="INCONCLUSIVE: the drive did not see a power loss`)
}

// A real cut on that drive raises both counts, and not the C0 log's
// incomplete shutdowns (a drive that completed its power-loss flush does
// not count one): the cycle passes, the drive having seen the power loss.
func TestPowerLossCountsRose(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	backFile(t, dev)
	env := ocpStandin(t)
	cut := "blockdev --setro {path}; echo cut >> \"$NVME_STANDIN_DIR/powercuts\""
	r := runPL(t, []string{dev}, env, powerLossArgs(dev, filepath.Join(t.TempDir(), "report"), cut)...)
	noFioLeft(t)
	assert.Equal(t, 0, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "--- PASS: TestPowerLoss/"+strings.TrimPrefix(dev, "/dev/")+"/cycle_1")
	assert.Contains(t, r.Stdout, "the drive saw the power loss (unsafe shutdowns 7 → 8, OCP PLP start count 287 → 288)")
}

// Without -destructive a cut is refused before anything is written, the
// device byte for byte unchanged; the dry run prints each drive's cut and
// restore commands and the data at risk.
func TestPowerLossRefusedAndDryRun(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	before := testenv.SHA256(t, dev)
	args := powerLossArgs(dev, filepath.Join(t.TempDir(), "report"), "blockdev --setro {path}")
	var noDestructive []string
	for _, a := range args {
		if a != "-destructive" {
			noDestructive = append(noDestructive, a)
		}
	}
	r := runSuite(t, powerLossOnly, noDestructive...)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "parsing -power-cut: cuts the drives' power while fio writes to them: give -destructive")
	dry := runSuite(t, powerLossOnly, append(noDestructive, "-dry-run")...)
	assert.Equal(t, 0, dry.Code, dry.Stdout+dry.Stderr)
	assert.Contains(t, dry.Stdout, dev+`: cut: blockdev --setro "$DQ_PATH"`)
	assert.Contains(t, dry.Stdout, `restore: blockdev --setrw "$DQ_PATH"`)
	assert.Contains(t, dry.Stdout, "run by sh with DQ_PATH="+dev+" ")
	assert.Contains(t, dry.Stdout, "data at risk: the first 8 MiB")
	// 1 cycle, each wait at its bound: the first writes (1 s + 30 s),
	// cut_after, the cut command (60 s, and 5 s for its output), fio's end
	// after it (66 s: what is left of fio's runtime, 36 s, and 30 s; then
	// 10 s to stop it on SIGINT and 10 s once killed), the restore (65 s),
	// ready_within (5 s), a killed fio's exit (10 s); 8 MiB read twice
	// (2 s).
	assert.Contains(t, dry.Stdout, "cut 1s after fio's first flushed writes; ≤ 4m25s)")
	// A slot cut is an orderly removal, not a power loss: refused.
	slot := runSuite(t, powerLossOnly, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"), "-drives="+dev, "-destructive",
		"-report="+filepath.Join(t.TempDir(), "report"), "-power-cut=slot ")
	assert.NotEqual(t, 0, slot.Code)
	assert.Contains(t, slot.Stderr, "parsing -power-cut: slot is refused")
	// A loop device has no serial: a command naming its outlet by it is
	// refused, in a dry run too.
	serial := runSuite(t, powerLossOnly, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"), "-drives="+dev, "-dry-run",
		"-report="+filepath.Join(t.TempDir(), "report"), "-power-cut=pdu off {serial}", "-power-restore=pdu on {serial}")
	assert.NotEqual(t, 0, serial.Code)
	assert.Contains(t, serial.Stderr, "parsing -power-cut: "+dev+" has no serial")
	assert.Equal(t, before, testenv.SHA256(t, dev), "a refused run and a dry run leave the device byte for byte unchanged")
}

// A drive swapped for another of the same size holding the same data
// (the given path a link the restore repoints) did not return: the
// cycle fails naming what came back.
func TestPowerLossSwappedDrive(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	dev := newLoop(t, 64<<20)
	backFile(t, dev)
	dev2 := newLoop(t, 64<<20)
	link := filepath.Join(t.TempDir(), "drive")
	require.NoError(t, os.Symlink(dev, link))
	cut := "blockdev --setro " + dev + "; dd if=" + dev + " of=" + dev2 + " bs=1M iflag=direct oflag=direct status=none"
	r := runPL(t, []string{dev}, nil, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"), "-drives="+link, "-destructive",
		"-report="+filepath.Join(t.TempDir(), "report"), "-power-cut="+cut, "-power-restore=ln -sfn "+dev2+" {path}")
	_ = exec.Command("blockdev", "--setrw", dev).Run()
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "did not return after the power cut: "+link+" came back as another drive: "+dev2+" is loop device over")
}

// A cut that restores a copy of the image taken half a second before
// it (the drive loses its last half second of writes, flushed ones
// included: what a drive that ignores flushes loses) fails, naming the
// lost writes. With a region fio writes whole before the cut (256 KiB),
// the cycle is not judged and says to raise size: writing the region
// again, as a time-based job did, made every lost write a rewrite of
// the same bytes, and the same cut passed.
func TestPowerLossRestoredCopy(t *testing.T) {
	runParallel(t)
	dev := newLoop(t, 64<<20)
	img := backFile(t, dev)
	dir := t.TempDir()
	cut := "dd if=" + img + " of=" + filepath.Join(dir, "copy") + " bs=1M iflag=direct status=none; sleep 0.5; blockdev --setro {path}; " + testenv.LoopWritesLanded(img) + "; dd if=" + filepath.Join(dir, "copy") +
		" of=" + img + " bs=1M oflag=direct conv=notrunc,fsync status=none"
	name := strings.TrimPrefix(dev, "/dev/")

	r := runPL(t, []string{dev}, nil, powerLossArgs(dev, filepath.Join(dir, "report"), cut)...)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	require.Contains(t, r.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1", r.Stdout+r.Stderr)
	assert.Regexp(t, `[1-9][0-9]* of [0-9]+ acknowledged writes lost`, r.Stdout)

	spec, err := os.ReadFile(filepath.Join(acceptanceDir, "internal", "e2e", "testdata", "powerloss.toml"))
	require.NoError(t, err)
	small := filepath.Join(dir, "small.toml")
	require.NoError(t, os.WriteFile(small, []byte(strings.Replace(string(spec), `size         = "8m"`, `size         = "256k"`, 1)), 0o644))
	args := powerLossArgs(dev, filepath.Join(dir, "report2"), cut)
	args[0] = "-spec=" + small
	r = runSuite(t, powerLossOnly, args...)
	noFioLeft(t)
	assert.NotContains(t, r.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1", r.Stdout+r.Stderr)
	if !strings.Contains(r.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_1") {
		// fio wrote its 64 blocks before the cut (on a loaded host the
		// cut may come first, and the lost writes fail the cycle).
		assert.Contains(t, r.Stdout, "INCONCLUSIVE: not judged: "+dev+": fio ended before the cut: it wrote its whole region (size 262144 bytes)", r.Stdout+r.Stderr)
		assert.Contains(t, r.Stdout, "raise size in [power_loss]")
	}
}
