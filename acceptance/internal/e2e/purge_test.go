package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// -purge-after on a 64 MiB loop device, selecting TestIntegrity and
// TestPurge so that nothing overwrites the fill: the suite discards
// (the spec's purge), fills and reads back the drive, then purges it
// again and reads it back, all of it real. TestPurge passes with every
// sector of the drive read back as zeros after every one held the fill
// before; the dry run shows the step; a -resume of the recording keeps
// the verdict without purging again, and a replay judges the same verdict
// from purge.json.
func TestPurgeAfterDiscardReadsBack(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	testenv.MustHaveLoop(t)
	dev := newLoop(t, safetySize)
	spec := testdataFile(t, "integrity.toml")
	sel := []string{"-test.run=TestIntegrity|TestPurge"}

	dry := runSuite(t, sel, "-spec="+spec, "-drives="+dev, "-purge-after", "-dry-run")
	require.Equal(t, 0, dry.Code, dry.Stderr)
	assert.Regexp(t, `purge-proof +`+dev+` +purge \(discard\) again, read back \(sample, 0\.1 GB a drive before and after\)`, dry.Stdout)
	assert.Contains(t, dry.Stdout, "sends:\n  discard "+dev+" (BLKDISCARD)")

	raw := filepath.Join(t.TempDir(), "raw")
	r := runSuite(t, sel, "-spec="+spec, "-drives="+dev, "-destructive", "-purge-after", "-record="+raw)
	noFioLeft(t)
	noPanic(t, r)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	name := "TestPurge/" + strings.TrimPrefix(dev, "/dev/")
	res := byTest(r.results(t))
	require.Contains(t, res, name)
	p := res[name]
	assert.Equal(t, report.Pass, p.Verdict, p.Error)
	assert.Equal(t, report.KindPurge, p.Kind)
	require.NotNil(t, p.Purge)
	assert.Equal(t, "discard "+dev+" (BLKDISCARD)", p.Purge.Command)
	assert.Equal(t, "zeros", p.Purge.Promise)
	assert.Equal(t, int64(safetySize), p.Purge.BytesRead)
	assert.Equal(t, int64(safetySize/512), p.Purge.FillBefore, "before the purge, every sector held the fill")
	assert.Zero(t, p.Purge.Bad)
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Purge proven\n\n- **PASS**: "+dev+": after `discard "+dev)
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `classname="TestPurge"`)
	assert.Contains(t, string(junit), "command: discard "+dev+" (BLKDISCARD)\npromise: zeros")
	data, err := os.ReadFile(filepath.Join(raw, kept.File))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"verdict": "pass"`)

	// A resume keeps the verdict: the drive is not purged again (its
	// read-back is redone, since the purge wrote it), and purge.json is
	// as the run left it.
	res2 := runSuite(t, sel, "-spec="+spec, "-drives="+dev, "-destructive", "-purge-after", "-record="+raw, "-resume")
	noFioLeft(t)
	require.Equal(t, 0, res2.Code, "stdout:\n%s\nstderr:\n%s", res2.Stdout, res2.Stderr)
	kept2 := byTest(res2.results(t))[name]
	require.NotNil(t, kept2.Purge)
	assert.Equal(t, p.Purge.Message, kept2.Purge.Message, "the resume keeps the recorded verdict")
	after, err := os.ReadFile(filepath.Join(raw, kept.File))
	require.NoError(t, err)
	assert.Equal(t, string(data), string(after), "the resume purged the drive again")

	rep := runSuite(t, nil, "-replay="+raw)
	require.Equal(t, 0, rep.Code, rep.Stderr)
	again := byTest(rep.results(t))[name]
	require.NotNil(t, again.Purge)
	assert.Equal(t, p.Purge.Message, again.Purge.Message, "the replay judges the recorded verdict")
	assert.Contains(t, rep.Stdout, "--- PASS: TestPurge/"+strings.TrimPrefix(dev, "/dev/"))

	// run.json vouches for purge.json like every other file: edited, the
	// replay names it; removed, the purge the run made is not proven.
	var info record.Run
	rj, err := os.ReadFile(filepath.Join(raw, record.RunFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(rj, &info))
	sum, err := record.HashIn(raw, kept.File)
	require.NoError(t, err)
	assert.Equal(t, sum, info.Files[kept.File], "run.json's sha256 of purge.json")
	require.NoError(t, os.WriteFile(filepath.Join(raw, kept.File), []byte(strings.Replace(string(data), "all ", "every one of the ", 1)), 0o644))
	edited := runSuite(t, nil, "-replay="+raw)
	assert.Contains(t, edited.Stdout+edited.Stderr, "purge.json (edited after recording")
	require.NoError(t, os.Remove(filepath.Join(raw, kept.File)))
	gone := runSuite(t, nil, "-replay="+raw)
	assert.NotEqual(t, 0, gone.Code, "a replay without the purge's verdict qualifies")
	assert.Contains(t, gone.Stdout, "--- FAIL: TestPurge/"+strings.TrimPrefix(dev, "/dev/"))
}

// A drive that held none of the run's fill when the purge at the end came
// (-precondition=none: nothing filled it; the one cell selected, a
// second of sequential reads, writes nothing) shows no erase: TestPurge is
// INCONCLUSIVE, reported as a skip like every other inconclusive test,
// and that verdict, kept in purge.json, stays inconclusive when the run
// is resumed and when it is replayed, never refused as one a run could
// not have written.
func TestPurgeInconclusiveSurvivesResumeAndReplay(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	testenv.MustHaveLoop(t)
	dev := newLoop(t, safetySize)
	spec := testdataFile(t, "integrity.toml")
	sel := []string{"-test.run=TestSingleDrive/64MiB/128KB_Sequential_Read|TestPurge"}
	args := []string{"-spec=" + spec, "-drives=" + dev, "-destructive", "-purge-after", "-precondition=none"}
	raw := filepath.Join(t.TempDir(), "raw")
	name := "TestPurge/" + strings.TrimPrefix(dev, "/dev/")
	check := func(what string, r result) {
		t.Helper()
		noPanic(t, r)
		res := byTest(r.results(t))
		require.Contains(t, res, name, "%s:\n%s\n%s", what, r.Stdout, r.Stderr)
		p := res[name]
		assert.Equal(t, report.Inconclusive, p.Verdict, "%s: %s", what, p.Error)
		require.NotNil(t, p.Purge, what)
		assert.Zero(t, p.Purge.FillBefore, what)
		assert.Equal(t, int64(safetySize), p.Purge.BytesRead, what)
		assert.Contains(t, r.Stdout, "--- SKIP: "+name, what)
		assert.Contains(t, r.Stdout, "INCONCLUSIVE: "+dev+": the drive held none of the run's fill before the purge", what)
		assert.NotContains(t, r.Stdout+r.Stderr, "refused", what)
	}
	first := runSuite(t, sel, append(args, "-record="+raw)...)
	noFioLeft(t)
	check("the run", first)
	data, err := os.ReadFile(filepath.Join(raw, kept.File))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"verdict": "inconclusive"`)

	resumed := runSuite(t, sel, append(args, "-record="+raw, "-resume")...)
	noFioLeft(t)
	check("the resume", resumed)
	after, err := os.ReadFile(filepath.Join(raw, kept.File))
	require.NoError(t, err)
	assert.Equal(t, string(data), string(after), "the resume purged the drive again")

	check("the replay", runSuite(t, nil, "-replay="+raw))
}

// A drive's purge verdict follows the drive, matched by its identity, not
// its path: recorded on one loop device, the image attached again under
// another number (attached a second time before the first is detached:
// a number freed is any package's to take, and beside the rest of make
// test the image once got its old number back), the -resume
// matches it ("drive 1 (recorded at OLD) is NEW"), keeps its verdict
// under its new name without purging it again, and a replay of the
// resumed recording judges the same verdict, never refusing it as a drive
// not of the run.
func TestPurgeVerdictFollowsTheDrive(t *testing.T) {
	testenv.MustHaveLoop(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "a.img")
	require.NoError(t, os.WriteFile(img, nil, 0o644))
	require.NoError(t, os.Truncate(img, safetySize))
	spec := "-spec=" + testdataFile(t, "integrity.toml")
	sel := []string{"-test.run=TestIntegrity|TestPurge"}
	raw := filepath.Join(dir, "raw")
	var old, dev string
	var recorded report.Result
	outer := t
	t.Run("recorded", func(t *testing.T) {
		old = testenv.Attach(t, img) // detached when this subtest ends
		r := runSuite(t, sel, spec, "-drives="+old, "-destructive", "-purge-after", "-record="+raw)
		noFioLeft(t)
		require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		recorded = byTest(r.results(t))["TestPurge/"+strings.TrimPrefix(old, "/dev/")]
		require.NotNil(t, recorded.Purge)
		require.Equal(t, report.Pass, recorded.Verdict, recorded.Error)
		// Attached again before this subtest frees its first number,
		// and detached when the test ends.
		out, err := exec.Command("flock", "-w", "60", testenv.LosetupLock, "losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
		require.NoError(t, err, "losetup: %s", out)
		dev = strings.TrimSpace(string(out))
		outer.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
	})
	if t.Failed() {
		return
	}
	require.NotEqual(t, old, dev)
	t.Logf("recorded at %s, now %s", old, dev)
	oldName, name := "TestPurge/"+strings.TrimPrefix(old, "/dev/"), "TestPurge/"+strings.TrimPrefix(dev, "/dev/")
	moved := "[recorded at " + old + ", this drive's path then] " + recorded.Purge.Message

	res := runSuite(t, sel, spec, "-drives="+dev, "-destructive", "-purge-after", "-record="+raw, "-resume")
	noFioLeft(t)
	require.Equal(t, 0, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stderr+res.Stdout, "drive 1 (recorded at "+old+") is "+dev)
	// The purge before the fill, which TestIntegrity's read-back needs
	// again, is the one discard: the purge at the end is not sent again.
	assert.Equal(t, 1, strings.Count(res.Stdout, "purge: discard "+dev+" ("), "the resume purged the drive again at the end:\n%s", res.Stdout)
	for what, r := range map[string]result{"the resume": res, "the replay": runSuite(t, nil, "-replay="+raw)} {
		assert.NotContains(t, r.Stdout+r.Stderr, "not a drive of the run", what)
		got := byTest(r.results(t))
		assert.NotContains(t, got, oldName, "%s reports the drive under its old name", what)
		require.Contains(t, got, name, what)
		assert.Equal(t, report.Pass, got[name].Verdict, "%s: %s", what, got[name].Error)
		require.NotNil(t, got[name].Purge, what)
		assert.Equal(t, dev, got[name].Purge.Drive, what)
		assert.Equal(t, moved, got[name].Purge.Message, what)
		assert.Equal(t, 0, r.Code, "%s:\n%s\n%s", what, r.Stdout, r.Stderr)
	}
}

// -run selects each drive's TestPurge on its own: with two drives,
// TestPurge/<second> purges and reads back the second alone (the first is
// never purged at the end, and has no TestPurge), and a replay of that
// recording judges the second's verdict and asks none of the first.
func TestPurgeSelectedPerDrive(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	testenv.MustHaveLoop(t)
	a, b := newLoop(t, safetySize), newLoop(t, safetySize)
	nameA, nameB := strings.TrimPrefix(a, "/dev/"), strings.TrimPrefix(b, "/dev/")
	spec := testdataFile(t, "integrity.toml")
	sel := []string{"-test.run=TestIntegrity|TestPurge/^" + nameB + "$"}
	raw := filepath.Join(t.TempDir(), "raw")
	r := runSuite(t, sel, "-spec="+spec, "-drives="+a+","+b, "-destructive", "-purge-after", "-record="+raw)
	noFioLeft(t)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Regexp(t, `purge-proof +`+b+` +purge \(discard\) again`, r.Stdout+r.Stderr, "the plan's purge at the end is the second drive's alone")
	// The purge before the fill is the first drive's one discard. Each
	// path is counted with the " (" after it: /dev/loop1 is in
	// /dev/loop12.
	assert.Equal(t, 1, strings.Count(r.Stdout, "purge: discard "+a+" ("), "the first drive was purged at the end:\n%s", r.Stdout)
	assert.Equal(t, 2, strings.Count(r.Stdout, "purge: discard "+b+" ("), "the second drive was not purged at the end:\n%s", r.Stdout)
	for what, res := range map[string]result{"the run": r, "the replay": runSuite(t, nil, "-replay="+raw)} {
		require.Equal(t, 0, res.Code, "%s:\n%s\n%s", what, res.Stdout, res.Stderr)
		got := byTest(res.results(t))
		assert.NotContains(t, got, "TestPurge/"+nameA, what)
		require.Contains(t, got, "TestPurge/"+nameB, what)
		assert.Equal(t, report.Pass, got["TestPurge/"+nameB].Verdict, what)
	}
}
