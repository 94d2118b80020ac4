//go:build linux

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// sparseImage makes a sparse image file of size bytes in dir.
func sparseImage(t *testing.T, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Truncate(p, size))
	return p
}

// pointAt makes link a symlink to dev, replacing what it pointed at, as
// udev repoints /dev/disk/by-id after a reboot.
func pointAt(t *testing.T, link, dev string) {
	t.Helper()
	_ = os.Remove(link)
	require.NoError(t, os.Symlink(dev, link))
}

// Two loop devices behind stable links (as /dev/disk/by-id links are),
// the suite killed with SIGKILL after its first cell, the images
// detached and attached again under other numbers (a blank image
// attached first takes one of the old ones), the links pointed at them
// again, as a reboot leaves a server:
//   - a new run without -resume on the same -record is refused and
//     changes nothing in the recording or on the drives;
//   - the blank image given at a recorded loop number is refused, naming
//     both identities, and nothing is written;
//   - -resume with the new kernel paths in swapped order continues:
//     drive 1 is still the first image, the cells recorded before the
//     kill are kept byte for byte, and every cell is judged;
//   - -resume with the links matches the same drives;
//   - a kept cell edited after recording: a replay still judges it and
//     says so, a resume refuses it, naming the file.
func TestResumeAfterReattach(t *testing.T) {
	testenv.MustHaveLoop(t)
	runParallel(t) // it mostly waits on fio's steady-state rounds
	dir := t.TempDir()
	imgA, imgB := sparseImage(t, dir, "a.img", safetySize), sparseImage(t, dir, "b.img", safetySize)
	bay := filepath.Join(dir, "bay")
	require.NoError(t, os.Mkdir(bay, 0o755))
	linkA, linkB := filepath.Join(bay, "a"), filepath.Join(bay, "b")
	rep := filepath.Join(dir, "report")
	raw := filepath.Join(rep, "raw")
	spec := "-spec=" + testdataFile(t, "resume.toml")
	sel := []string{"-test.run=" + resumeRun}

	var oldA, oldB string
	var kept []string
	var before map[string]string
	t.Run("interrupted", func(t *testing.T) {
		// Detached when this subtest ends.
		oldA, oldB = testenv.Attach(t, imgA), testenv.Attach(t, imgB)
		pointAt(t, linkA, oldA)
		pointAt(t, linkB, oldB)
		start, killed := sigkillWhen(func() bool {
			if tests := recordedTests(raw, 0); len(tests) >= 1 {
				kept = tests[:1]
				return true
			}
			return false
		}, 3*time.Minute, "no cell was recorded within 3 min")
		r := runSuiteCtx(context.Background(), t, start, nil, sel, spec, "-drives="+linkA+","+linkB, "-destructive", "-runtime=1s", "-report="+rep)
		require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
		noFioLeft(t)
		require.Equal(t, []string{cell512}, kept, "the plan's first cell")
		before = sums(t, raw, cell512+".", "prepare/", "health/")
		require.NotEmpty(t, before)
	})
	if t.Failed() {
		return
	}

	// "After the reboot": a blank image attached first, then the two
	// images under other numbers.
	blank := testenv.Loop(t, safetySize)
	newA, newB := testenv.Attach(t, imgA), testenv.Attach(t, imgB)
	pointAt(t, linkA, newA)
	pointAt(t, linkB, newB)
	t.Logf("recorded at %s and %s; now %s and %s, blank image at %s", oldA, oldB, newA, newB, blank)
	devices := func() map[string]string {
		return map[string]string{blank: deviceSum(t, blank), newA: deviceSum(t, newA), newB: deviceSum(t, newB)}
	}
	drivesBefore, recording := devices(), sums(t, raw, "")

	// A new run on the unfinished run's -record is refused.
	fresh := runSuite(t, sel, spec, "-drives="+linkA+","+linkB, "-destructive", "-runtime=1s", "-report="+rep)
	assert.Equal(t, 2, fresh.Code, "stdout:\n%s\nstderr:\n%s", fresh.Stdout, fresh.Stderr)
	for _, w := range []string{"parsing -record: " + raw + " holds the recording of an unfinished run", "continue it with -resume", "a new -record directory", "-overwrite"} {
		assert.Contains(t, fresh.Stderr, w)
	}
	assert.NotContains(t, fresh.Stdout, "=== RUN", "no subtest may start after a refusal")
	assert.Equal(t, recording, sums(t, raw, ""), "a refused new run changes nothing in the recording")
	assert.Equal(t, drivesBefore, devices(), "a refused new run writes nothing to the drives")

	// The blank image, at whatever number it got, is no drive of the run.
	ref := runSuite(t, sel, spec, "-drives="+blank+","+newB, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	assert.Equal(t, 2, ref.Code, "stdout:\n%s\nstderr:\n%s", ref.Stdout, ref.Stderr)
	assert.Contains(t, ref.Stderr, "loop device over "+imgA, "the recorded drive it is not, by identity")
	if blank == oldA || blank == oldB {
		assert.Contains(t, ref.Stderr, "parsing -drives: "+blank+" is not the drive the interrupted run in "+raw+" measured at device number ")
		assert.Contains(t, ref.Stderr, "in this boot (recorded at ")
	} else {
		assert.Contains(t, ref.Stderr, "parsing -drives: "+blank+" is none of the drives of the interrupted run in "+raw)
	}
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
	assert.Equal(t, drivesBefore, devices(), "a refused resume writes nothing to the drives")

	// The new kernel paths, in swapped order: the run goes on.
	res := runSuite(t, sel, spec, "-drives="+newB+","+newA, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	noFioLeft(t)
	require.Equal(t, 0, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	if newA != oldA {
		// Other tests attach loop devices too: the number may, rarely,
		// come back the same.
		assert.Contains(t, res.Stderr, "drivequal: warning: "+newA+" (drive 1 of the interrupted run in "+raw+") has device number ", "attached again in this boot")
	}
	assert.Contains(t, res.Stdout, "drives matched by identity: drive 1 (recorded at "+linkA+") is "+newA+"; drive 2 (recorded at "+linkB+") is "+newB)
	assert.NotContains(t, res.Stdout, "measuring "+cell512+" ", "recorded whole before the kill: not measured again")
	assert.Contains(t, res.Stdout, "measuring "+cellWrite+" ")
	assert.Regexp(t, "measuring "+regexp.QuoteMeta(cellWrite)+" on \\S*"+filepath.Base(newA)+"\\b", res.Stdout, "the cells are measured on the first image, drive 1")
	after := sums(t, raw, cell512+".", "prepare/", "health/")
	for f, sum := range before {
		assert.Equal(t, sum, after[f], "%s, recorded before the kill, is byte for byte as it was", f)
	}
	got := res.verdicts(t)
	for _, test := range []string{cell512, cellWrite, cellRead, "TestIntegrity/" + filepath.Base(newA), "TestIntegrity/" + filepath.Base(newB)} {
		assert.Equal(t, report.Pass, got[test], "%s judged in the resumed run", test)
	}
	run := res.results(t)
	require.Len(t, run.Resumptions, 1)
	assert.Equal(t, kept, run.Resumptions[0].Kept)
	assert.Equal(t, []string{"drive 1 (recorded at " + linkA + ") is " + newA, "drive 2 (recorded at " + linkB + ") is " + newB}, run.Resumptions[0].Drives)

	// The links again: the same drives, nothing left to measure.
	again := runSuite(t, sel, spec, "-drives="+linkB+","+linkA, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	require.Equal(t, 0, again.Code, "stdout:\n%s\nstderr:\n%s", again.Stdout, again.Stderr)
	assert.NotContains(t, again.Stdout, "measuring ")
	for _, c := range []string{cell512, cellWrite, cellRead} {
		assert.Equal(t, report.Pass, again.verdicts(t)[c], c)
	}

	// A kept cell edited after recording.
	edited := filepath.Join(raw, filepath.FromSlash(cell512)+".json")
	data, err := os.ReadFile(edited)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(edited, append(data, '\n'), 0o644))
	rp := runSuite(t, nil, "-replay="+raw)
	for _, c := range []string{cell512, cellWrite, cellRead} {
		assert.Equal(t, report.Pass, rp.verdicts(t)[c], "a replay still judges %s", c)
	}
	want := cell512 + ".json (edited after recording: sha256 "
	assert.Contains(t, rp.Stdout, want, "the terminal names the edited file")
	summary, err := os.ReadFile(filepath.Join(rp.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "were edited after recording")
	assert.Contains(t, string(summary), want)
	check := rp.results(t).Recording
	require.NotNil(t, check)
	require.Len(t, check.Edited, 1)
	assert.True(t, strings.HasPrefix(check.Edited[0], want), check.Edited[0])
	assert.Greater(t, check.Files, 10, "every file listed carries a sha256")

	recording, drivesBefore = sums(t, raw, ""), devices()
	refused := runSuite(t, sel, spec, "-drives="+linkA+","+linkB, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	assert.Equal(t, 2, refused.Code, "stdout:\n%s\nstderr:\n%s", refused.Stdout, refused.Stderr)
	assert.Contains(t, refused.Stderr, "parsing -resume: "+want)
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
	assert.Equal(t, drivesBefore, devices())
	assert.False(t, slices.Contains(strings.Split(refused.Stdout, "\n"), "=== RUN   TestSingleDrive"))
}

// Another image bind-mounted over a recorded image's path (as a bind
// mount, an overmount or another mount namespace makes a path name
// another file): a one-drive run on a.img's loop device killed after its
// first cell, a.img detached, c.img attached, and a.img bind-mounted over
// c.img's path, so that c.img's loop device's backing_file path now
// leads to a.img. A resume given c.img's loop device is refused, naming
// the recorded drive, and writes nothing: the kernel's record of the file
// it has open (LOOP_GET_STATUS64) is c.img, whatever its path says. Every
// image and the recording hash the same after the refusal.
func TestResumeRefusesImageBindMountedOverAnother(t *testing.T) {
	testenv.MustHaveLoop(t)
	testenv.MustHave(t, "mount", "apt-get install mount")
	runParallel(t) // it mostly waits on fio
	dir := t.TempDir()
	imgA, imgC := sparseImage(t, dir, "a.img", safetySize), sparseImage(t, dir, "c.img", safetySize)
	rep := filepath.Join(dir, "report")
	raw := filepath.Join(rep, "raw")
	spec := "-spec=" + testdataFile(t, "resume.toml")
	sel := []string{"-test.run=" + resumeRun}

	var oldA string
	t.Run("interrupted", func(t *testing.T) {
		oldA = testenv.Attach(t, imgA) // detached when this subtest ends
		start, killed := sigkillWhen(func() bool { return len(recordedTests(raw, 0)) >= 1 }, 3*time.Minute, "no cell was recorded within 3 min")
		r := runSuiteCtx(context.Background(), t, start, nil, sel, spec, "-drives="+oldA, "-destructive", "-runtime=1s", "-report="+rep)
		require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
		noFioLeft(t)
	})
	if t.Failed() {
		return
	}

	loopC := testenv.Attach(t, imgC)
	out, err := exec.Command("mount", "--bind", imgA, imgC).CombinedOutput()
	require.NoError(t, err, "mount --bind %s %s: %s", imgA, imgC, out)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", imgC).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", imgC, err, out)
		}
	})
	t.Logf("recorded at %s over %s; now %s over %s, with %s bind-mounted over it", oldA, imgA, loopC, imgC, imgA)
	images := func() map[string]string {
		// a.img through its own path; c.img through its loop device, the
		// only way to it while a.img is mounted over its path.
		return map[string]string{imgA: testenv.SHA256(t, imgA), loopC: deviceSum(t, loopC)}
	}
	imagesBefore, recording := images(), sums(t, raw, "")

	r := runSuite(t, sel, spec, "-drives="+loopC, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	noFioLeft(t)
	assert.Equal(t, 2, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stderr, "parsing -drives: "+loopC+" is n", "c.img's loop device is no drive of the run")
	assert.Contains(t, r.Stderr, "drive 1, recorded at "+oldA+": loop device over "+imgA, "the recorded drive, named")
	assert.NotContains(t, r.Stdout, "=== RUN   TestSingleDrive", "no subtest may start after a refusal")
	assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
	assert.Equal(t, imagesBefore, images(), "a refused resume writes no image")
}
