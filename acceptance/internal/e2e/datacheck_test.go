//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// deletedLoop attaches a new sparse image of size bytes and deletes the
// image, as a CI job that cleans up after attaching does: the loop
// device has no backing file anyone can name, and is known only by its
// file's device and inode, which the data check must confirm.
func deletedLoop(t *testing.T, name string, size int64) string {
	t.Helper()
	testenv.MustHaveLoop(t)
	img := sparseImage(t, t.TempDir(), name, size)
	out, err := exec.Command("flock", "-w", "60", testenv.LosetupLock, "losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	if err != nil {
		testenv.Skipf(t, "losetup -f %s: %v: %s", img, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	require.NoError(t, os.Remove(img))
	return dev
}

// killedAfterACell runs the resume spec's cells on drives until run.json
// lists a test, then kills the suite with SIGKILL.
func killedAfterACell(t *testing.T, rep string, drives string) {
	t.Helper()
	raw := filepath.Join(rep, "raw")
	start, killed := sigkillWhen(func() bool { return len(recordedTests(raw, 0)) >= 1 }, 3*time.Minute, "no cell was recorded within 3 min")
	r := runSuiteCtx(context.Background(), t, start, nil, []string{"-test.run=" + resumeRun}, "-spec="+testdataFile(t, "resume.toml"),
		"-drives="+drives, "-destructive", "-runtime=1s", "-report="+rep)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
	noFioLeft(t)
}

// resumeArgs are the arguments of the resume of the run in rep.
func resumeArgs(t *testing.T, rep, drives string) []string {
	return []string{"-spec=" + testdataFile(t, "resume.toml"), "-drives=" + drives, "-destructive", "-runtime=1s", "-report=" + rep, "-resume"}
}

// writingMark is the step run.json in raw marks drive d as being
// written by; "" when none, or before run.json reads.
func writingMark(raw string, d int) string {
	data, err := os.ReadFile(filepath.Join(raw, record.RunFile))
	if err != nil {
		return ""
	}
	var r record.Run
	if json.Unmarshal(data, &r) != nil || r.Samples == nil || d >= len(r.Samples.Drives) {
		return ""
	}
	return r.Samples.Drives[d].Writing
}

// Reproduction 1 of "a resume never writes a drive it did not record":
// an image attached and deleted (as a CI job that cleans up after
// attaching does: the kernel still names its file's device and inode,
// but its inode generation and birth time can no longer be read), the
// run killed while a step writes it, the device detached and another
// image created where the first was (ext4 and XFS hand the freed inode
// to it), attached at the same loop number and deleted. Its device and
// inode are the recorded ones, so its identity cannot tell it from the
// recorded image, and a step was writing that one, so its data cannot
// either: the resume is refused, writes nothing to the other image and
// changes nothing in the recording.
//
// The images are on an ext4 file system of the test's own, where the
// freed inode goes to the next file created for certain (on a shared one
// another test's file could take it), and the loop number is freed and
// taken again holding the lock every test's losetup takes.
func TestResumeRefusesAnotherDeletedImageAtTheSameLoopNumber(t *testing.T) {
	testenv.MustHaveLoop(t)
	// Room for both images written whole: ext4 of its own, where the
	// deleted image's inode goes to the next file created, for certain.
	dir := testenv.Ext4Dir(t, 4*safetySize)
	img := sparseImage(t, dir, "a.img", safetySize)
	fi, err := os.Stat(img)
	require.NoError(t, err)
	inode := identity.Of(img, fi).Inode
	out, err := exec.Command("flock", "-w", "60", testenv.LosetupLock, "losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	if err != nil {
		testenv.Skipf(t, "losetup -f %s: %v: %s", img, err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	require.NoError(t, os.Remove(img))

	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	var mark string
	start, killed := sigkillWhen(func() bool {
		mark = writingMark(raw, 0)
		return strings.Contains(mark, " precondition: ")
	}, 3*time.Minute, "no random preconditioning began within 3 min")
	r := runSuiteCtx(context.Background(), t, start, nil, []string{"-test.run=" + resumeRun}, "-spec="+testdataFile(t, "resume.toml"),
		"-drives="+dev, "-destructive", "-runtime=1s", "-report="+rep)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
	noFioLeft(t)
	require.Equal(t, mark, writingMark(raw, 0), "killed while run.json marks the drive as being written")

	other := filepath.Join(dir, "b.img")
	testenv.Reattach(t, []string{dev}, []string{other}, func() {
		// The loop device may let go of the deleted image a moment after
		// it is gone from sysfs: until then its inode is not free, and a
		// file created takes the next (the lowest free, as ext4 gives
		// them in a group: a.img's once freed).
		got := uint64(0)
		for i := 0; i < 100; i++ {
			sparseImage(t, dir, "b.img", safetySize)
			fi, err = os.Stat(other)
			require.NoError(t, err)
			if got = identity.Of(other, fi).Inode; got == inode {
				return
			}
			require.NoError(t, os.Remove(other))
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("ext4 of its own gave the new image inode %d, not the deleted image's %d, for 5 s", got, inode)
	})
	require.NoError(t, os.Remove(other))
	devBefore, recording := deviceSum(t, dev), sums(t, raw, "")
	res := runSuite(t, []string{"-test.run=" + resumeRun}, resumeArgs(t, rep, dev)...)
	noFioLeft(t)
	require.Equal(t, 2, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stderr, "parsing -resume: "+dev+" (drive 1 of the interrupted run in "+raw+") is known only by its file's device and inode")
	assert.Contains(t, res.Stderr, ", and the interrupted run was writing it ("+mark+")")
	assert.NotContains(t, res.Stdout, "=== RUN", "no subtest may start after a refusal")
	assert.Equal(t, devBefore, deviceSum(t, dev), "a refused resume writes nothing to the other image")
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
}

// Reproduction 4: run.json edited to name another image's identity (its
// file's inode and path), the other image given: the resume refuses
// run.json as edited (its sha256 beside it does not match), and writes
// neither image.
func TestResumeRefusesARunJSONEditedToNameAnotherImage(t *testing.T) {
	runParallel(t)
	testenv.MustHaveLoop(t)
	dir := t.TempDir()
	imgA, imgB := sparseImage(t, dir, "a.img", safetySize), sparseImage(t, dir, "b.img", safetySize)
	devA, devB := testenv.Attach(t, imgA), testenv.Attach(t, imgB)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	killedAfterACell(t, rep, devA)

	path := filepath.Join(raw, record.RunFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var run map[string]any
	require.NoError(t, json.Unmarshal(data, &run))
	fi, err := os.Stat(imgB)
	require.NoError(t, err)
	b := identity.Of(imgB, fi)
	ids := run["identities"].([]any)
	id := ids[0].(map[string]any)
	id["backing_file"] = imgB
	id["file"] = map[string]any{"dev": b.Dev, "inode": b.Inode, "generation": b.Generation, "born": b.Born}
	run["drives"].([]any)[0].(map[string]any)["path"] = devB
	edited, err := json.MarshalIndent(run, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, edited, 0o644))

	settled(t, devA)
	settled(t, devB)
	sumA, sumB, recording := deviceSum(t, devA), deviceSum(t, devB), sums(t, raw, "")
	res := runSuite(t, []string{"-test.run=" + resumeRun}, resumeArgs(t, rep, devB)...)
	noFioLeft(t)
	require.Equal(t, 2, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stderr, "parsing -resume: run.json (edited after recording: sha256 ")
	assert.NotContains(t, res.Stdout, "=== RUN", "no subtest may start after a refusal")
	assert.Equal(t, sumA, deviceSum(t, devA))
	assert.Equal(t, sumB, deviceSum(t, devB), "a refused resume writes nothing to the image run.json was edited to name")
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")

	// A replay still judges it, and says run.json was edited.
	rp := runSuite(t, nil, "-replay="+raw)
	assert.Contains(t, rp.Stdout, "run.json (edited after recording: sha256 ")
}

// An image truncated and extended back to its size (its tail zeros now)
// keeps its inode and birth time: its identity matches, and its recorded
// read-back would be trusted. Its data sample refuses it, naming the
// first block that holds zeros; the image and the recording are left as
// they are. The same image, untouched, resumes (the finished run:
// nothing left to measure), and so does an anonymous drive (a deleted
// image) whose data is as the run left it.
func TestResumeRefusesATruncatedAndExtendedImage(t *testing.T) {
	runParallel(t)
	testenv.MustHaveLoop(t)
	dir := t.TempDir()
	img := sparseImage(t, dir, "a.img", safetySize)
	dev := testenv.Attach(t, img)
	anon := deletedLoop(t, "b.img", safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "resume.toml"), "-drives=" + dev + "," + anon, "-destructive", "-runtime=1s", "-report=" + rep}
	first := runSuite(t, []string{"-test.run=" + resumeRun}, args...)
	require.Equal(t, 0, first.Code, "stdout:\n%s\nstderr:\n%s", first.Stdout, first.Stderr)

	again := runSuite(t, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	require.Equal(t, 0, again.Code, "a genuine resume goes on, the anonymous drive's data as left:\nstdout:\n%s\nstderr:\n%s", again.Stdout, again.Stderr)
	assert.NotContains(t, again.Stdout, "measuring ")
	assert.Equal(t, report.Pass, again.verdicts(t)["TestIntegrity/"+filepath.Base(dev)])

	require.NoError(t, os.Truncate(img, safetySize/2))
	require.NoError(t, os.Truncate(img, safetySize))
	devBefore, anonBefore, recording := deviceSum(t, dev), deviceSum(t, anon), sums(t, raw, "")
	res := runSuite(t, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	noFioLeft(t)
	require.Equal(t, 2, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stderr, "parsing -resume: "+dev+" (drive 1 of the interrupted run in "+raw+") does not hold what the interrupted run left on it: the 128 KiB block at byte offset ")
	assert.Contains(t, res.Stderr, " holds zeros now, was other data; nothing was writing it when the run stopped")
	assert.NotContains(t, res.Stderr, anon+" (drive 2", "the other drive is as it was left")
	assert.NotContains(t, res.Stdout, "=== RUN", "no subtest may start after a refusal")
	assert.Equal(t, devBefore, deviceSum(t, dev), "a refused resume writes nothing to the image")
	assert.Equal(t, anonBefore, deviceSum(t, anon))
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
}
