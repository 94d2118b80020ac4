package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// corruptOffset is the byte the integrity test changes: 4 KiB into the
// 128 KiB block at 1 MiB, past its verify header, so that the header
// still reads and the block's checksum does not.
const corruptOffset = 1<<20 + 4096

// corruptingFio puts testdata/fio-corrupt.sh first in PATH as "fio": it
// changes 512 bytes of img at corruptOffset just before the verify pass,
// between the fill and the read-back, and runs the real fio for all.
// extra are more of its settings (CORRUPT_BYTES=, CORRUPT_OFFSET=,
// CORRUPT_RESTORE=), which override the defaults.
func corruptingFio(t *testing.T, img string, extra ...string) []string {
	t.Helper()
	real, err := exec.LookPath("fio")
	require.NoError(t, err)
	real, err = filepath.Abs(real)
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join("testdata", "fio-corrupt.sh"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fio"), script, 0o755))
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"CORRUPT_REAL=" + real, "CORRUPT_IMG=" + img, "CORRUPT_OFFSET=" + strconv.Itoa(corruptOffset)}
	return append(env, extra...)
}

// Two drives at the default preconditioning (a discard, the spec's two
// fill passes, the verify pass): the second drive's backing file has a
// block changed between the fill and the verify pass. TestIntegrity
// passes the first drive and fails the second, quoting fio's pattern
// mismatch with the offset, LBA and byte; the capacity is NOT QUALIFIED; the second
// drive's cells fail at once while the first drive's are measured; and a
// replay of the recording fails the same way.
func TestIntegrityFindsAChangedBlock(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	testenv.MustHaveLoop(t)
	good := newLoop(t, safetySize)
	img := filepath.Join(t.TempDir(), "bad.img")
	require.NoError(t, os.WriteFile(img, nil, 0o644))
	require.NoError(t, os.Truncate(img, safetySize))
	bad := testenv.Attach(t, img)
	spec := testdataFile(t, "integrity.toml")

	r := runSuiteIn(t, corruptingFio(t, img), nil, "-spec="+spec, "-drives="+good+","+bad, "-destructive")
	noFioLeft(t)
	noPanic(t, r)
	assert.NotEqual(t, 0, r.Code, "a drive that returns other data must not pass the gate")

	res := byTest(r.results(t))
	goodName, badName := "TestIntegrity/"+strings.TrimPrefix(good, "/dev/"), "TestIntegrity/"+strings.TrimPrefix(bad, "/dev/")
	require.Contains(t, res, goodName)
	require.Contains(t, res, badName)
	g, b := res[goodName], res[badName]
	assert.Equal(t, report.Pass, g.Verdict, g.Error)
	assert.Equal(t, report.KindIntegrity, g.Kind)
	require.NotNil(t, g.Integrity)
	assert.Equal(t, int64(safetySize), g.Integrity.BytesVerified, "every byte of the good drive was read back")

	assert.Equal(t, report.Fail, b.Verdict)
	assert.Equal(t, report.CauseIntegrity, b.Cause)
	for _, want := range []string{
		bad + " returned other data, not what this run wrote",
		"pattern: verify failed at offset 1,048,576 (LBA 2,048, 256 blocks of 512 bytes): byte 4096 of the block: expected 00, received a5",
		"fio: got pattern 'a5', wanted '00'",
		"pattern: verify failed at file " + bad + " offset 1048576,",
	} {
		assert.Contains(t, b.Error, want)
	}
	require.NotNil(t, b.Integrity)
	assert.Equal(t, int64(1<<20), b.Integrity.Offset, "the changed block is named by its offset")
	assert.Equal(t, int64(2048), b.Integrity.LBA)
	assert.NotEmpty(t, b.Integrity.Expected)
	assert.NotEqual(t, b.Integrity.Expected, b.Integrity.Received)
	assert.Contains(t, r.Stdout, "--- FAIL: "+badName)
	assert.Contains(t, r.Stdout, "--- PASS: "+goodName)

	// The good drive is measured; every cell with the bad drive fails at
	// once, naming the mismatch.
	assert.Equal(t, report.Pass, res["TestSingleDrive/64MiB/128KB_Sequential_Read"].Verdict)
	for _, cell := range []string{"TestScaling/2_drives/128KB_Sequential_Write", "TestScaling/2_drives/128KB_Sequential_Read"} {
		x := res[cell]
		assert.Equal(t, report.Fail, x.Verdict, cell)
		assert.Equal(t, report.CauseIntegrity, x.Cause, cell)
		assert.Contains(t, x.Error, "not measured: "+bad+" failed the verify pass", cell)
		assert.Contains(t, x.Error, "offset 1,048,576", cell)
	}
	assert.Contains(t, r.Stdout, "drivequal: NOT QUALIFIED: 64MiB:")

	run := r.results(t)
	var kinds []string
	for _, st := range run.Steps {
		kinds = append(kinds, st.Kind)
	}
	assert.Equal(t, []string{"purge", "fill", "verify"}, kinds[:3], "the verify pass is a step of its own, right after the fill")
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Data integrity")
	assert.Contains(t, string(summary), bad+": **FAIL**")
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `classname="TestIntegrity"`)
	assert.Contains(t, string(junit), `type="data integrity"`)

	// The recording: run.json lists the verify pass under prepare/.
	raw := filepath.Join(r.Report, "raw")
	var info record.Run
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	require.Len(t, info.Verify, 1)
	assert.True(t, strings.HasPrefix(info.Verify[0].Raw, "prepare/"), info.Verify[0].Raw)
	assert.FileExists(t, filepath.Join(raw, filepath.FromSlash(info.Verify[0].Raw)))

	// A replay judges TestIntegrity from the recorded fio output: the same
	// verdicts and the same words.
	replay := runSuite(t, nil, "-replay="+raw)
	noPanic(t, replay)
	assert.NotEqual(t, 0, replay.Code)
	again := byTest(replay.results(t))
	assert.Equal(t, report.Pass, again[goodName].Verdict)
	assert.Equal(t, b.Verdict, again[badName].Verdict)
	assert.Equal(t, b.Cause, again[badName].Cause)
	assert.Equal(t, b.Error, again[badName].Error)
	assert.Contains(t, replay.Stdout, "--- FAIL: "+badName)
	assert.Contains(t, replay.Stdout, "drivequal: NOT QUALIFIED: 64MiB:")
}

// tailSize is 64 MiB and the 90,112 bytes an IDEMA capacity holds past
// its last 128 KiB block.
const tailSize = 64<<20 + 90112

// imageLoop is a loop device over a fresh sparse image of size bytes, and
// the image, which a test changes behind the device's back (a stand-in
// fio corrupts it, or it is cut short to fail reads).
func imageLoop(t *testing.T, size int64) (dev, img string) {
	t.Helper()
	testenv.MustHaveLoop(t)
	img = filepath.Join(t.TempDir(), "drive.img")
	require.NoError(t, os.WriteFile(img, nil, 0o644))
	require.NoError(t, os.Truncate(img, size))
	return testenv.Attach(t, img), img
}

// Drives of an IDEMA shape (64 MiB + 90,112 B): the fill writes and the
// read-back reads every byte, the tail's included, so a good drive passes;
// the last 4 KiB of the other changed before the read-back fail it, naming
// the tail block's offset.
func TestIntegrityReadsTheTail(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, tailSize)
	bad, img := imageLoop(t, tailSize)
	env := corruptingFio(t, img, "CORRUPT_BYTES=4096", "CORRUPT_OFFSET="+strconv.Itoa(tailSize-4096))
	r := runSuiteIn(t, env, []string{"-test.run=TestIntegrity|TestVerdict"},
		"-spec="+testdataFile(t, "readback.toml"), "-drives="+good+","+bad, "-destructive")
	noFioLeft(t)
	noPanic(t, r)
	assert.NotEqual(t, 0, r.Code)
	res := byTest(r.results(t))
	g, b := res["TestIntegrity/"+strings.TrimPrefix(good, "/dev/")], res["TestIntegrity/"+strings.TrimPrefix(bad, "/dev/")]
	assert.Equal(t, report.Pass, g.Verdict, g.Error)
	require.NotNil(t, g.Integrity)
	assert.Equal(t, int64(tailSize), g.Integrity.BytesVerified, "every byte, the tail's too")
	assert.Equal(t, report.Fail, b.Verdict)
	assert.Equal(t, report.CauseIntegrity, b.Cause)
	require.NotNil(t, b.Integrity)
	// The tail is read in 8 KiB blocks: the last one is at 64 MiB + 81,920.
	assert.Equal(t, int64(tailSize-8192), b.Integrity.Offset, b.Error)
	assert.Equal(t, "other data", b.Integrity.Returned)
	assert.Contains(t, b.Error, "pattern: verify failed at offset 67,190,784 (LBA 131,232, 16 blocks of 512 bytes): byte 4096 of the block: expected 00, received a5")
}

// A drive that dropped this run's writes and still holds an earlier run's
// fill fails (no purge between the runs, the earlier image written back
// just before the read-back); every cell of the drive fails unmeasured,
// and the recording, which measured nothing, replays the same failure and
// lists those cells as failed.
func TestIntegrityRefusesAnEarlierRunsData(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev, img := imageLoop(t, tailSize)
	spec := testdataFile(t, "readback.toml")
	first := runSuite(t, []string{"-test.run=TestIntegrity|TestVerdict"}, "-spec="+spec, "-drives="+dev, "-destructive")
	noPanic(t, first)
	require.Equal(t, 0, first.Code, "the first run's read-back passes: %s", first.Stdout)
	earlier := filepath.Join(t.TempDir(), "earlier.img")
	data, err := os.ReadFile(img)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(earlier, data, 0o644))

	r := runSuiteIn(t, corruptingFio(t, img, "CORRUPT_RESTORE="+earlier), nil, "-spec="+spec, "-drives="+dev, "-destructive")
	noFioLeft(t)
	noPanic(t, r)
	assert.NotEqual(t, 0, r.Code)
	name := "TestIntegrity/" + strings.TrimPrefix(dev, "/dev/")
	res := byTest(r.results(t))
	in := res[name]
	assert.Equal(t, report.Fail, in.Verdict)
	assert.Equal(t, report.CauseIntegrity, in.Cause)
	assert.Contains(t, in.Error, dev+" returned data of an earlier write, not what this run wrote")
	assert.Contains(t, in.Error, "byte 8 of the block", "the fill's id differs, not its magic")
	cells := []string{"TestSingleDrive/64MiB+tail/128KB_Sequential_Write", "TestSingleDrive/64MiB+tail/128KB_Sequential_Read"}
	for _, c := range cells {
		assert.Equal(t, report.Fail, res[c].Verdict, c)
		assert.Equal(t, report.CauseIntegrity, res[c].Cause, c)
	}
	assert.Contains(t, r.Stdout, "drivequal: NOT QUALIFIED")

	replay := runSuite(t, nil, "-replay="+filepath.Join(r.Report, "raw"))
	noPanic(t, replay)
	assert.NotEqual(t, 0, replay.Code)
	again := byTest(replay.results(t))
	assert.Equal(t, in.Verdict, again[name].Verdict)
	assert.Equal(t, in.Cause, again[name].Cause)
	assert.Equal(t, in.Error, again[name].Error)
	for _, c := range cells {
		assert.Equal(t, report.Fail, again[c].Verdict, "%s is listed as failed, not left out", c)
		assert.Equal(t, report.CauseIntegrity, again[c].Cause, c)
		assert.Equal(t, res[c].Error, again[c].Error, c)
	}
	assert.Contains(t, replay.Stdout, "drivequal: NOT QUALIFIED")
}

// A drive that kept the first of the fill's two passes and dropped the
// last (the stand-in fio runs the fill without the last pass's sections)
// fails: the read-back expects the last pass's pattern, and the drive
// returns the first's, which differs in the pass number at the end of the
// fill's id. A drive that kept both passes passes.
func TestIntegrityRefusesAnEarlierPass(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, tailSize)
	r := runSuite(t, []string{"-test.run=TestIntegrity|TestVerdict"},
		"-spec="+testdataFile(t, "readback-2-passes.toml"), "-drives="+good, "-destructive")
	noFioLeft(t)
	noPanic(t, r)
	require.Equal(t, 0, r.Code, "both passes kept: %s", r.Stdout)

	bad := newLoop(t, tailSize)
	r = runSuiteIn(t, corruptingFio(t, "", "CORRUPT_DROP_LAST=1"), []string{"-test.run=TestIntegrity|TestVerdict"},
		"-spec="+testdataFile(t, "readback-2-passes.toml"), "-drives="+bad, "-destructive")
	noFioLeft(t)
	noPanic(t, r)
	assert.NotEqual(t, 0, r.Code)
	in := byTest(r.results(t))["TestIntegrity/"+strings.TrimPrefix(bad, "/dev/")]
	assert.Equal(t, report.Fail, in.Verdict)
	assert.Equal(t, report.CauseIntegrity, in.Cause)
	require.NotNil(t, in.Integrity, in.Error)
	assert.Equal(t, "data of an earlier write", in.Integrity.Returned)
	assert.Contains(t, in.Error, bad+" returned data of an earlier write, not what this run wrote")
	assert.Contains(t, in.Error, "byte 15 of the block: expected 02, received 01", "pass 1's blocks, not pass 2's")
	assert.Contains(t, r.Stdout, "drivequal: NOT QUALIFIED")
}
