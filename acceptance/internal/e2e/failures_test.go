//go:build linux

package e2e

// A drive's failure is a fact of the run: a read-back I/O error, a
// mismatch fio named before the run was killed, a fill error and a
// critical warning are written to run.json as they happen, and a resume
// keeps the drive disqualified while its neighbour goes on; a peak
// temperature seen before a kill is still the run's peak after it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// readRun is run.json in dir as it is now; ok is false while it does not
// read.
func readRun(dir string) (record.Run, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return record.Run{}, false
	}
	var r record.Run
	return r, json.Unmarshal(data, &r) == nil
}

// killWhen runs the suite and kills it with SIGKILL, as the OOM killer
// would, once ready says so of the recording in raw; it fails the test
// when that does not happen within 3 minutes.
func killWhen(t *testing.T, raw string, ready func(record.Run) bool, env []string, goFlags []string, args ...string) result {
	t.Helper()
	killed := make(chan error, 1)
	r := runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) {
		go func() {
			deadline := time.Now().Add(3 * time.Minute)
			for time.Now().Before(deadline) {
				if run, ok := readRun(raw); ok && ready(run) {
					killed <- syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			killed <- fmt.Errorf("the recording in %s never got to where the test kills the run", raw)
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		}()
	}, env, goFlags, args...)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
	noFioLeft(t)
	return r
}

// stepsOn lists the steps of kind ("fill", "verify") the run ran on
// drive dev, as results.json has them.
func stepsOn(t *testing.T, r result, kind, dev string) []string {
	t.Helper()
	var out []string
	for _, st := range r.results(t).Steps {
		if st.Kind == kind && slices.Contains(st.Drives, dev) && st.Skipped == "" {
			out = append(out, fmt.Sprintf("%d %s: %s", st.N, st.Kind, st.Name))
		}
	}
	return out
}

// The second of two drives reads back with I/O errors past its first half
// (its image is cut short between the fill and the read-back: the loop
// device answers EIO there, and fio's read-back job fails without a
// mismatch). run.json records the drive's failure as "read-back failed"
// before the run is killed; the image is then given its size back (the
// drive reads again, as one with intermittent errors does), and the
// resume neither fills nor reads that drive again (a fill would mend it,
// and a second read-back pass it), fails its cells
// unmeasured naming the failed read-back and when, and results.json names
// the read-back as its cause; the first drive qualifies its own cells, and
// a replay judges the same.
func TestReadBackIOErrorStaysFailedAfterResume(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, safetySize)
	bad, img := imageLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "integrity.toml"), "-drives=" + good + "," + bad, "-destructive", "-report=" + rep}
	env := corruptingFio(t, img, "CORRUPT_TRUNCATE="+strconv.Itoa(safetySize/2))
	killWhen(t, raw, func(r record.Run) bool { return len(r.Failures) > 0 }, env, nil, args...)

	run, ok := readRun(raw)
	require.True(t, ok)
	require.Len(t, run.Failures, 1, "%+v", run.Failures)
	f := run.Failures[0]
	assert.Equal(t, 1, f.Drive)
	assert.Equal(t, bad, f.Path)
	assert.Equal(t, report.CauseReadBack, f.Cause)
	assert.Regexp(t, `(?i)input/output error|errno 5|EIO`, f.Message)
	assert.NotEmpty(t, f.At)

	// The drive reads again, its tail as zeros (setup reads both ends of
	// a drive to look for signatures): a fill would mend it, and a second
	// read-back pass it.
	require.NoError(t, os.Truncate(img, safetySize))
	res := runSuite(t, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotEqual(t, 0, res.Code, "a drive whose read-back failed does not qualify")
	assert.Empty(t, stepsOn(t, res, "fill", bad), "the failed drive is not filled again")
	assert.Empty(t, stepsOn(t, res, "verify", bad), "nor read back again")
	got := byTest(res.results(t))
	badIntegrity, goodIntegrity := "TestIntegrity/"+filepath.Base(bad), "TestIntegrity/"+filepath.Base(good)
	require.Contains(t, got, badIntegrity)
	assert.Equal(t, report.Fail, got[badIntegrity].Verdict)
	assert.Equal(t, report.CauseReadBack, got[badIntegrity].Cause, "results.json names the failed read-back")
	assert.Equal(t, report.Pass, got[goodIntegrity].Verdict, got[goodIntegrity].Error)
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read",
		"TestScaling/1_drives/128KB_Sequential_Write", "TestScaling/1_drives/128KB_Sequential_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s, on the neighbour: %s", test, got[test].Error)
	}
	for _, test := range []string{"TestScaling/2_drives/128KB_Sequential_Write", "TestScaling/2_drives/128KB_Sequential_Read"} {
		x := got[test]
		assert.Equal(t, report.Fail, x.Verdict, test)
		assert.Equal(t, report.CauseReadBack, x.Cause, test)
		assert.Contains(t, x.Error, "not measured", test)
		assert.Contains(t, x.Error, bad+" failed "+f.Step+" earlier in this run, at "+f.At, "%s names the original failure and when", test)
		assert.Zero(t, x.Actual, test)
	}
	after, _ := readRun(raw)
	assert.Equal(t, run.Failures, after.Failures, "the resume keeps the failure as it was recorded")

	rp := byTest(runSuite(t, nil, "-replay="+raw).results(t))
	assert.Equal(t, report.CauseReadBack, rp[badIntegrity].Cause, "a replay")
	assert.Equal(t, report.CauseReadBack, rp["TestScaling/2_drives/128KB_Sequential_Read"].Cause, "a replay")
}

// ioErrorCell is the cell the I/O error tests cut the second drive's image
// before: the 2-drive read of testdata/integrity.toml, fio's last cell.
const ioErrorCell = "TestScaling/2_drives/128KB_Sequential_Read"

// lotOf is the TestLot cell of the 64MiB lot of workload (its subtest
// name) in run.
func lotOf(t *testing.T, run report.Run, workload string) report.Result {
	t.Helper()
	r, ok := byTest(run)["TestLot/64MiB/"+workload]
	require.True(t, ok, "no TestLot/64MiB/%s", workload)
	require.NotNil(t, r.Lot)
	return r
}

// The second of two drives answers reads with I/O errors in the middle of
// a measurement (its image is cut to half its size just before the 2-drive
// read, after the fill and read-back passed): fio's job on it fails with
// EIO, and run.json records that drive's failure, naming the drive and the
// cell, as it happens; the neighbour's job is not failed for it. The run
// is killed there, the image given its size back (the drive reads again,
// as one with intermittent errors does), and the resume keeps the drive
// disqualified: the cell fails with cause "i/o error", the capacity is NOT
// QUALIFIED, and TestLot counts the drive as a failing one, not as a drive
// without a figure. A replay judges the same.
func TestCellIOErrorStaysFailedAfterResume(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, safetySize)
	bad, img := imageLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	text, err := os.ReadFile(testdataFile(t, "integrity.toml"))
	require.NoError(t, err)
	spec := writeSpec(t, string(text)+"\n[lot]\ncoverage   = 0.5\nconfidence = 0.5\nmethod     = \"distribution-free\"\n")
	args := []string{"-spec=" + spec, "-drives=" + good + "," + bad, "-destructive", "-report=" + rep}
	env := corruptingFio(t, img, "CORRUPT_CELL="+ioErrorCell, "CORRUPT_TRUNCATE="+strconv.Itoa(safetySize/2))
	killWhen(t, raw, func(r record.Run) bool { return len(r.Failures) > 0 }, env, nil, args...)

	run, ok := readRun(raw)
	require.True(t, ok)
	require.Len(t, run.Failures, 1, "%+v", run.Failures)
	f := run.Failures[0]
	assert.Equal(t, 1, f.Drive)
	assert.Equal(t, bad, f.Path)
	assert.Equal(t, report.CauseIOError, f.Cause)
	assert.Equal(t, ioErrorCell, f.Test, "the cell the error arose in")
	assert.Contains(t, f.Step, ioErrorCell)
	assert.Regexp(t, `errno 5 \(input/output error\)`, f.Message)
	assert.Contains(t, f.Message, bad)
	assertNotNaming(t, f.Message, good, "the neighbour's job did not fail")
	assert.NotEmpty(t, f.At)

	require.NoError(t, os.Truncate(img, safetySize))
	res := runSuite(t, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotEqual(t, 0, res.Code, "a drive that failed an I/O mid-cell does not qualify")
	assert.Contains(t, res.Stdout, "NOT QUALIFIED")
	assert.Empty(t, stepsOn(t, res, "fill", bad), "the failed drive is not filled again")
	judged := res.results(t)
	got := byTest(judged)
	x := got[ioErrorCell]
	assert.Equal(t, report.Fail, x.Verdict, x.Error)
	assert.Equal(t, report.CauseIOError, x.Cause, x.Error)
	assert.Contains(t, x.Error, bad+" failed "+f.Step+" earlier in this run, at "+f.At)
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s, on the neighbour: %s", test, got[test].Error)
	}
	// The neighbour has a figure of the step when the kill came after the
	// cell was recorded, none when before: one failing drive either way.
	counted := "counting the 1 drive that failed (" + bad + " in " + ioErrorCell + " (i/o error)) as failing"
	l := lotOf(t, judged, "128KB_Sequential_Read")
	assert.Contains(t, l.Error, counted)
	assert.Equal(t, 1, l.Lot.N-l.Lot.Passing, "one failing drive: %s", l.Error)
	after, _ := readRun(raw)
	assert.Equal(t, run.Failures, after.Failures, "the resume keeps the failure as it was recorded")

	rp := runSuite(t, nil, "-replay="+raw)
	assert.NotEqual(t, 0, rp.Code)
	replayed := rp.results(t)
	assert.Equal(t, report.CauseIOError, byTest(replayed)[ioErrorCell].Cause, "a replay")
	rl := lotOf(t, replayed, "128KB_Sequential_Read")
	assert.Contains(t, rl.Error, counted, "a replay's lot")
	assert.Equal(t, l.Lot.N, rl.Lot.N, rl.Error)
	assert.Equal(t, l.Lot.Passing, rl.Lot.Passing, rl.Error)
}

// The run is killed during the read-back, after fio has named a mismatch
// on its stderr and before it ended (its stdout is never written): fio's
// stderr, streamed to the recording as fio wrote it, and the pass listed
// in run.json as it started, are what the resume judges: the drive is
// disqualified, naming the mismatch, and it is neither filled nor read
// back again (the fill would overwrite the changed block).
func TestKillDuringReadBackKeepsTheMismatch(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev, img := imageLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "integrity.toml"), "-drives=" + dev, "-destructive", "-report=" + rep}
	env := corruptingFio(t, img, "CORRUPT_HOLD=120")
	var stderrFile string
	killWhen(t, raw, func(r record.Run) bool {
		if len(r.Verify) == 0 || !r.Verify[0].Running {
			return false
		}
		stderrFile = filepath.Join(raw, strings.TrimSuffix(filepath.FromSlash(r.Verify[0].Raw), record.OutputExt)+record.StderrExt)
		data, _ := os.ReadFile(stderrFile)
		return strings.Contains(string(data), "verify failed")
	}, env, nil, args...)

	run, _ := readRun(raw)
	require.Len(t, run.Verify, 1)
	assert.True(t, run.Verify[0].Running, "the pass was killed before it ended")
	assert.NoFileExists(t, filepath.Join(raw, filepath.FromSlash(run.Verify[0].Raw)), "fio's stdout was never written")
	stderr, err := os.ReadFile(stderrFile)
	require.NoError(t, err)
	assert.Contains(t, string(stderr), "verify failed at file "+dev)

	res := runSuite(t, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotEqual(t, 0, res.Code, "a drive that returned other data does not qualify")
	assert.Empty(t, stepsOn(t, res, "fill", dev), "the drive is not filled again")
	assert.Empty(t, stepsOn(t, res, "verify", dev), "nor read back again")
	got := byTest(res.results(t))
	integrity := "TestIntegrity/" + filepath.Base(dev)
	require.Contains(t, got, integrity)
	assert.Equal(t, report.Fail, got[integrity].Verdict)
	assert.Equal(t, report.CauseIntegrity, got[integrity].Cause)
	assert.Contains(t, got[integrity].Error, "offset 1,048,576")
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read"} {
		assert.Equal(t, report.Fail, got[test].Verdict, test)
		assert.Equal(t, report.CauseIntegrity, got[test].Cause, "%s: %s", test, got[test].Error)
		assert.Zero(t, got[test].Actual, "%s is not measured", test)
	}
	assert.Equal(t, report.CauseIntegrity, byTest(runSuite(t, nil, "-replay="+raw).results(t))[integrity].Cause, "a replay")
}

// The second of two drives fails its fill (a loop device over a sparse
// file on a 16 MiB tmpfs: writes past 16 MiB fail). run.json records that
// drive's failure, and only its: fio names the job that failed, and the
// neighbour's fill finished. The resume after a kill does not fill the
// failed drive again, fails its cells naming the fill error and when it
// happened, and measures the neighbour's.
func TestFillErrorIsRecordedPerDriveAndSurvivesResume(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, safetySize)
	dying := testenv.TmpfsLoop(t, safetySize, 16<<20)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "integrity.toml"), "-drives=" + good + "," + dying, "-destructive", "-report=" + rep}
	killWhen(t, raw, func(r record.Run) bool { return len(r.Failures) > 0 }, nil, nil, args...)
	run, _ := readRun(raw)
	require.Len(t, run.Failures, 1, "%+v", run.Failures)
	f := run.Failures[0]
	assert.Equal(t, 1, f.Drive)
	assert.Equal(t, dying, f.Path)
	assert.Equal(t, report.CausePreparation, f.Cause)
	assert.Contains(t, f.Step, "fill")
	assert.Regexp(t, `(?i)input/output error|errno 5|No space left|errno 28`, f.Message)
	assertNotNaming(t, f.Message, good, "the neighbour's fill did not fail")

	res := runSuite(t, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotEqual(t, 0, res.Code)
	assert.Empty(t, stepsOn(t, res, "fill", dying), "the drive whose fill failed is not filled again")
	got := byTest(res.results(t))
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s, on the neighbour: %s", test, got[test].Error)
	}
	for _, test := range []string{"TestScaling/2_drives/128KB_Sequential_Write", "TestScaling/2_drives/128KB_Sequential_Read"} {
		x := got[test]
		assert.Equal(t, report.Fail, x.Verdict, test)
		assert.Equal(t, report.CausePreparation, x.Cause, test)
		assert.Contains(t, x.Error, dying+" failed "+f.Step+" earlier in this run, at "+f.At, test)
	}
	after, _ := readRun(raw)
	assert.Equal(t, run.Failures, after.Failures)
}

// warningLogs serves the stand-in nvme-cli's logs for two drives: small's
// own logs clean until read from, then with critical_warning 0x08 (media
// read-only) from there on; big's the clean shared log.
func warningLogs(t *testing.T, small string, from int) []string {
	t.Helper()
	env := healthLogs(t, "", []string{})
	dir := strings.TrimPrefix(env[1], "NVME_STANDIN_DIR=")
	own := filepath.Join(dir, strings.ReplaceAll(small, "/", "_"))
	require.NoError(t, os.Mkdir(own, 0o755))
	clean, err := os.ReadFile(filepath.Join(dir, "smart-log.1.json"))
	require.NoError(t, err)
	readOnly := strings.Replace(string(clean), `"critical_warning":0`, `"critical_warning":8`, 1)
	for i := 1; i <= from; i++ {
		text := string(clean)
		if i == from {
			text = readOnly
		}
		require.NoError(t, os.WriteFile(filepath.Join(own, "smart-log."+strconv.Itoa(i)+".json"), []byte(text), 0o644))
	}
	return env
}

// A drive raises a read-only critical warning before its fill (its third
// log read), and the run is killed right after run.json records it. The
// resume's setup reads the warning again: it does not refuse the run (as
// it would a fresh one, "the run wrote nothing"), since the recording
// holds the warning as that drive's failure; the drive's cells fail
// naming the warning and when it was read, and the other drive's cells
// are measured and pass.
func TestWarningInTheRecordingKeepsTheDriveFailedOnResume(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	small, big := newLoop(t, 64<<20), newLoop(t, 96<<20)
	env := warningLogs(t, small, 3)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "health-two.toml"), "-drives=" + small + "," + big, "-destructive", "-report=" + rep}
	killWhen(t, raw, func(r record.Run) bool { return len(r.Failures) > 0 }, env, nil, args...)
	run, _ := readRun(raw)
	require.Len(t, run.Failures, 1)
	f := run.Failures[0]
	assert.Equal(t, report.CauseCriticalWarning, f.Cause)
	assert.Equal(t, small, f.Path)
	assert.Contains(t, f.Message, "media is read-only")

	res := runSuiteIn(t, env, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotContains(t, res.Stderr, "the run wrote nothing")
	got := byTest(res.results(t))
	for _, test := range []string{"TestSingleDrive/64MiB/4KB_Random_Write", "TestSingleDrive/64MiB/4KB_Random_Read"} {
		x := got[test]
		assert.Equal(t, report.Fail, x.Verdict, test)
		assert.Equal(t, report.CauseCriticalWarning, x.Cause, test)
		assert.Contains(t, x.Error, small+" failed "+f.Step+" earlier in this run, at "+f.At, test)
		assert.Contains(t, x.Error, "media is read-only", test)
	}
	for _, test := range []string{"TestSingleDrive/96MiB/4KB_Random_Write", "TestSingleDrive/96MiB/4KB_Random_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s: the other drive goes on: %s", test, got[test].Error)
		assert.NotZero(t, got[test].Actual, test)
	}
	assert.Empty(t, stepsOn(t, res, "fill", small), "nothing more is written to the warned drive")
	assert.Contains(t, res.Stdout, "--- PASS: TestVerdict/96MiB")
	assert.Contains(t, res.Stdout, "--- FAIL: TestVerdict/64MiB")
}

// The drive reads 60 °C (333 K) once, at its third log read, and 37 °C
// otherwise. run.json holds the peak as soon as it is read: the run is
// killed then, and the resume's health check still reports it as the
// run's highest.
func TestPeakTemperatureSurvivesAKill(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	same := []string{}
	env := healthLogs(t, "", same, same, []string{`"temperature":310`, `"temperature":333`}, same)
	dev := newLoop(t, 64<<20)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + healthSpec(t), "-drives=" + dev, "-destructive", "-report=" + rep}
	killWhen(t, raw, func(r record.Run) bool { return r.MaxTemp(0) == 333 }, env, nil, args...)

	res := runSuiteIn(t, env, nil, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	run, _ := readRun(raw)
	assert.Equal(t, 333, run.MaxTemp(0), "the resumed run's peak is the one read before the kill")
	h := healthOf(t, res)
	require.Contains(t, h, "temperature")
	assert.Contains(t, h["temperature"].Message, "highest 60 °C", h["temperature"].Message)
}

// A loop device over a sparse 64 MiB image on an 8 MiB tmpfs, measured
// without preconditioning: the random write cell's writes past 8 MiB of
// pages fail (ENOSPC or EIO from the loop device), and the drive's failure
// is in run.json as it happens, naming the cell. The cell keeps its 20 s:
// fio ends it at the first failed write, about a second in at the cap's
// 3,000 writes a second, and a starved host that writes slower still
// fills the 8 MiB well within it (1 s, as it was, filled it only with a
// third to spare, and under load once did not). The cell fails with cause
// "i/o error", the drive's next cell fails unmeasured naming the failure,
// and a replay of the recording judges both the same.
func TestCellIOErrorOnAFullDeviceFailsTheDrive(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev := testenv.TmpfsLoop(t, safetySize, 8<<20)
	r := runSuite(t, []string{"-test.run=TestSingleDrive"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none")
	noFioLeft(t)
	noPanic(t, r)
	assert.NotEqual(t, 0, r.Code)
	raw := filepath.Join(r.Report, "raw")
	run, ok := readRun(raw)
	require.True(t, ok)
	require.Len(t, run.Failures, 1, "%+v\n%s", run.Failures, r.Stdout)
	f := run.Failures[0]
	assert.Equal(t, dev, f.Path)
	assert.Equal(t, report.CauseIOError, f.Cause)
	assert.Equal(t, cellWrite, f.Test)
	assert.Regexp(t, `errno (5|28) \((input/output error|no space left on device)\)`, f.Message)

	check := func(what string, res map[string]report.Result) {
		w := res[cellWrite]
		assert.Equal(t, report.Fail, w.Verdict, "%s: %s", what, w.Error)
		assert.Equal(t, report.CauseIOError, w.Cause, "%s: %s", what, w.Error)
		rd := res[cellRead]
		assert.Equal(t, report.Fail, rd.Verdict, "%s: %s", what, rd.Error)
		assert.Equal(t, report.CauseIOError, rd.Cause, "%s: the next cell fails on the drive's failure: %s", what, rd.Error)
		assert.Contains(t, rd.Error, dev+" failed "+f.Step+" earlier in this run, at "+f.At, what)
	}
	check("the run", byTest(r.results(t)))
	check("a replay", byTest(runSuite(t, nil, "-spec="+faultSpec(t), "-replay="+raw).results(t)))
}

// assertNotNaming asserts msg does not name the device path as a whole
// path: /dev/loop1 is a prefix of /dev/loop10.
func assertNotNaming(t *testing.T, msg, path, why string) {
	t.Helper()
	assert.NotRegexp(t, regexp.QuoteMeta(path)+`\b`, msg, why)
}
