//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

const resumeRun = "^(TestIntegrity|TestSingleDrive|TestVerdict)$"

// sigkillWhen returns a start hook for runSuiteCtx that kills the suite
// with SIGKILL, as the OOM killer would, once ready holds (polled every
// 10 ms), and the channel that then carries the kill's error; when ready
// does not hold within, the suite is killed and the channel carries msg.
func sigkillWhen(ready func() bool, within time.Duration, msg string) (start func(*exec.Cmd), killed <-chan error) {
	ch := make(chan error, 1)
	return func(cmd *exec.Cmd) {
		go func() {
			deadline := time.Now().Add(within)
			for time.Now().Before(deadline) {
				if ready() {
					ch <- syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			ch <- errors.New(msg)
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		}()
	}, ch
}

// recordedTests is run.json's tests in dir, once it records at least
// resumed resumptions; nil before.
func recordedTests(dir string, resumed int) []string {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil
	}
	var r record.Run
	if json.Unmarshal(data, &r) != nil || len(r.Resumptions) < resumed {
		return nil
	}
	return r.Tests
}

// sums is the sha256 of every file under dir whose path (relative, with
// slashes) has one of prefixes.
func sums(t *testing.T, dir string, prefixes ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		for _, pre := range prefixes {
			if strings.HasPrefix(rel, pre) {
				out[rel] = testenv.SHA256(t, p)
			}
		}
		return nil
	}))
	return out
}

// The suite is killed with SIGKILL right after its second cell was
// recorded, as the OOM killer or a CI runner's hard cancel would. The
// same command with -resume judges every cell and TestIntegrity as one
// run, leaves the recordings made before the kill byte for byte as they
// were, and measures none of those cells again; a replay of the
// recording and a resume of the finished run give the same verdicts;
// and -resume with a spec whose runtime changed is refused before any
// fio starts.
func TestResumeAfterSIGKILL(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "resume.toml"), "-drives=" + dev, "-destructive", "-runtime=1s", "-report=" + rep}
	var kept []string
	start, killed := sigkillWhen(func() bool {
		if tests := recordedTests(raw, 0); len(tests) >= 2 {
			kept = tests[:2]
			return true
		}
		return false
	}, 2*time.Minute, "no second cell was recorded within 2 min")
	// The third cell's fio waits for a file that never comes: the kill
	// lands before it is measured, however late on a loaded host (one
	// landed after it was recorded, beside the rest of make test).
	hold := holdingFio(t, cellRead)
	r := runSuiteCtx(context.Background(), t, start, hold, []string{"-test.run=" + resumeRun}, args...)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	require.Equal(t, -1, r.Code, "the suite ended by SIGKILL")
	noFioLeft(t)
	require.Equal(t, []string{cell512, cellWrite}, kept, "the plan's first two cells")
	var prefixes []string
	for _, c := range kept {
		prefixes = append(prefixes, c+".")
	}
	before := sums(t, raw, append(prefixes, "prepare/", "health/")...)
	require.NotEmpty(t, before)
	t.Logf("recorded before the kill: %d files", len(before))

	res := runSuite(t, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	noFioLeft(t)
	require.Equal(t, 0, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	after := sums(t, raw, append(prefixes, "prepare/", "health/")...)
	for f, sum := range before {
		assert.Equal(t, sum, after[f], "%s, recorded before the kill, is byte for byte as it was", f)
	}
	for _, c := range kept {
		assert.NotContains(t, res.Stdout, "measuring "+c+" ", "%s was recorded whole: not measured again", c)
	}
	assert.Contains(t, res.Stdout, "measuring "+cellRead+" ")
	assert.Contains(t, res.Stdout, "random preconditioning (4KB Random Write", "the remaining random cell's twin is preconditioned again")
	assert.NotContains(t, res.Stdout, "sequential fill", "the fill was read back whole before the kill: not filled again")

	run := res.results(t)
	got := res.verdicts(t)
	integrity := "TestIntegrity/" + filepath.Base(dev)
	for _, test := range []string{cell512, cellWrite, cellRead, integrity} {
		assert.Equal(t, report.Pass, got[test], "%s judged in the resumed run", test)
	}
	require.Len(t, run.Resumptions, 1)
	assert.Equal(t, kept, run.Resumptions[0].Kept)
	require.Len(t, run.Resumptions[0].Redone, 1)
	assert.Equal(t, cellRead, run.Resumptions[0].Redone[0].Test)
	summary, err := os.ReadFile(filepath.Join(rep, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "Resumed once after an interruption")
	// Started is the run's first start, before the kill; the resume's own
	// is listed after it.
	var rec record.Run
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	require.NotEmpty(t, rec.Started)
	assert.Equal(t, rec.Started, run.Started, "results.json's start is the run's first")
	assert.LessOrEqual(t, rec.Started, run.Resumptions[0].At)
	assert.Contains(t, string(summary), "Started "+rec.Started+", finished ")
	assert.Contains(t, string(summary), "Resumed once after an interruption: at "+run.Resumptions[0].At)
	assert.Contains(t, res.Stdout, "drivequal: QUALIFIED")
	assert.Contains(t, res.Stdout, "drivequal: resuming the run recorded in "+raw+": 2 cells kept from the recording and judged again, 1 to measure")

	// The resumed recording replays to the same verdicts.
	rp := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, got, rp.verdicts(t), "a replay of the resumed recording")
	assert.Len(t, rp.results(t).Resumptions, 1)

	// A resume of the finished run measures nothing and judges the same.
	all := sums(t, raw, "TestSingleDrive/", "prepare/", "health/")
	again := runSuite(t, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	require.Equal(t, 0, again.Code, "stdout:\n%s\nstderr:\n%s", again.Stdout, again.Stderr)
	assert.NotContains(t, again.Stdout, "measuring ")
	assert.NotContains(t, again.Stdout, "step 1 of")
	assert.Equal(t, got, again.verdicts(t))
	assert.Len(t, again.results(t).Resumptions, 2)
	assert.Equal(t, all, sums(t, raw, "TestSingleDrive/", "prepare/", "health/"))

	// Another spec (its runtime changed) is refused before any fio starts.
	text, err := os.ReadFile(testdataFile(t, "resume.toml"))
	require.NoError(t, err)
	edited := filepath.Join(t.TempDir(), "resume-2s.toml")
	require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(string(text), `runtime   = "1s"`, `runtime   = "2s"`, 1)), 0o644))
	devBefore := deviceSum(t, dev)
	everything := sums(t, raw, "")
	ref := runSuite(t, nil, "-spec="+edited, "-drives="+dev, "-destructive", "-runtime=1s", "-report="+rep, "-resume")
	noFioLeft(t)
	assert.Equal(t, 2, ref.Code, "a refused run exits 2")
	for _, w := range []string{"refusing to run (1 problem)", "parsing -spec: " + edited, "is not the spec the interrupted run in " + raw + " was made with", "a new -record directory"} {
		assert.Contains(t, ref.Stderr, w)
	}
	assert.NotContains(t, ref.Stdout, "=== RUN", "no subtest may start after a refusal")
	assert.Equal(t, everything, sums(t, raw, ""), "a refused resume leaves the recording as it was")
	assert.Equal(t, devBefore, deviceSum(t, dev), "a refused resume writes nothing to the drive")
}

// SIGINT stops the suite in the middle of a cell: fio is stopped, the
// cell's recording says it was interrupted, and the run ends. The resume
// measures that cell again from its start, and is itself killed with
// SIGKILL once it recorded it; a second resume measures only what is
// left, and the run ends QUALIFIED with every cell judged.
func TestResumeAfterSIGINTTwice(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "resume.toml"), "-drives=" + dev, "-destructive", "-runtime=3s", "-report=" + rep}
	job := filepath.Join(raw, filepath.FromSlash(cellWrite)+".fio")
	sent := make(chan error, 1)
	r := runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) {
		go func() {
			_, err := fioRunning(job, 2*time.Minute)
			if err == nil {
				err = cmd.Process.Signal(syscall.SIGINT)
			}
			sent <- err
		}()
	}, nil, []string{"-test.run=" + resumeRun}, args...)
	require.NoError(t, <-sent)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "an interrupted run is not QUALIFIED")
	var status record.Failure
	found, err := record.ReadJSON(raw, cellWrite, record.StatusExt, &status)
	require.NoError(t, err)
	require.True(t, found && status.Interrupted, "the interrupted cell's recording says so: %+v\nstdout:\n%s", status, r.Stdout)
	first := sums(t, raw, cell512+".")

	start, killed := sigkillWhen(func() bool {
		return slices.Contains(recordedTests(raw, 1), cellWrite)
	}, 2*time.Minute, "the interrupted cell was not recorded again within 2 min")
	// The next cell's fio waits for a file that never comes: the kill
	// lands before it is measured, however late on a loaded host (one
	// landed after it was recorded, beside the rest of make test).
	hold := holdingFio(t, cellRead)
	r1 := runSuiteCtx(context.Background(), t, start, hold, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", r1.Stdout, r1.Stderr)
	noFioLeft(t)
	assert.Contains(t, r1.Stdout, "measuring "+cellWrite+" ", "the interrupted cell is measured again from its start")
	assert.NotContains(t, r1.Stdout, "measuring "+cell512+" ")
	found, err = record.ReadJSON(raw, cellWrite, record.StatusExt, &status)
	require.NoError(t, err)
	assert.False(t, found, "the cell measured again to its end has no interrupted status left")
	second := sums(t, raw, cell512+".", cellWrite+".")

	r2 := runSuite(t, []string{"-test.run=" + resumeRun}, append(args, "-resume")...)
	noFioLeft(t)
	require.Equal(t, 0, r2.Code, "stdout:\n%s\nstderr:\n%s", r2.Stdout, r2.Stderr)
	assert.NotContains(t, r2.Stdout, "measuring "+cell512+" ")
	assert.NotContains(t, r2.Stdout, "measuring "+cellWrite+" ")
	assert.Contains(t, r2.Stdout, "measuring "+cellRead+" ")
	for f, sum := range first {
		assert.Equal(t, sum, second[f], "%s is kept through the first resume", f)
	}
	assert.Equal(t, second, sums(t, raw, cell512+".", cellWrite+"."), "and through the second")
	run := r2.results(t)
	require.Len(t, run.Resumptions, 2)
	assert.Equal(t, []report.Redone{{Test: cellWrite, Why: "its measurement was interrupted (" + status.Message + ")"}, {Test: cellRead, Why: "not recorded before the interruption"}},
		run.Resumptions[0].Redone)
	assert.Equal(t, []report.Redone{{Test: cellRead, Why: "not recorded before the interruption"}}, run.Resumptions[1].Redone)
	v := r2.verdicts(t)
	for _, test := range []string{cell512, cellWrite, cellRead, "TestIntegrity/" + filepath.Base(dev)} {
		assert.Equal(t, report.Pass, v[test], test)
	}
	summary, err := os.ReadFile(filepath.Join(rep, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "Resumed 2 times after an interruption")
	junitXML, err := os.ReadFile(filepath.Join(rep, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junitXML), `<property name="resumed_2" value="`+run.Resumptions[1].At+`">`)
	assert.Equal(t, v, runSuite(t, nil, "-replay="+raw).verdicts(t), "a replay of the twice-resumed recording")
}

// A fio killed mid-cell from outside (as the OOM killer kills it) fails
// its cell and the run goes on to its end; a resume measures that cell
// again, and only that one: a signal is an interruption, not the drive's
// verdict.
func TestResumeAfterFioKilled(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := []string{"-spec=" + testdataFile(t, "resume.toml"), "-drives=" + dev, "-destructive", "-precondition=none", "-runtime=3s", "-report=" + rep}
	job := filepath.Join(raw, filepath.FromSlash(cellWrite)+".fio")
	killed := make(chan error, 1)
	r := runSuiteCtx(context.Background(), t, func(*exec.Cmd) {
		go func() {
			pid, err := fioRunning(job, 3*time.Minute)
			if err == nil {
				time.Sleep(time.Second)
				err = syscall.Kill(pid, syscall.SIGKILL)
			}
			killed <- err
		}()
	}, nil, []string{"-test.run=^(TestSingleDrive|TestVerdict)$"}, args...)
	require.NoError(t, <-killed)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	first := r.results(t)
	byTest := map[string]report.Result{}
	for _, res := range first.Results {
		byTest[res.Test] = res
	}
	require.Equal(t, report.Fail, byTest[cellWrite].Verdict, "stdout:\n%s", r.Stdout)
	assert.Equal(t, report.CauseFioFailed, byTest[cellWrite].Cause)
	kept := sums(t, raw, cell512+".", cellRead+".")

	res := runSuite(t, []string{"-test.run=^(TestSingleDrive|TestVerdict)$"}, append(args, "-resume")...)
	noFioLeft(t)
	assert.Contains(t, res.Stdout, "measuring "+cellWrite+" ")
	assert.NotContains(t, res.Stdout, "measuring "+cell512+" ")
	assert.NotContains(t, res.Stdout, "measuring "+cellRead+" ")
	assert.Equal(t, kept, sums(t, raw, cell512+".", cellRead+"."))
	run := res.results(t)
	require.Len(t, run.Resumptions, 1)
	require.Len(t, run.Resumptions[0].Redone, 1)
	assert.Equal(t, cellWrite, run.Resumptions[0].Redone[0].Test)
	assert.Contains(t, run.Resumptions[0].Redone[0].Why, "its fio was killed mid-measurement (fio killed by signal SIGKILL)")
	v := res.verdicts(t)
	// Measured with -precondition=none: a cell that meets its figure is
	// inconclusive, never a pass, and no longer fails.
	for _, test := range []string{cell512, cellWrite, cellRead} {
		assert.Equal(t, report.Inconclusive, v[test], test)
	}
}

// holdingFio is the environment of a suite whose fio for cell waits for a
// file that never comes (fio-corrupt.sh's CORRUPT_WAIT_CELL): a test that
// kills the suite once the cells before it are recorded kills it before
// cell is measured, however late the kill lands on a loaded host.
func holdingFio(t *testing.T, cell string) []string {
	t.Helper()
	return corruptingFio(t, "", "CORRUPT_WAIT_CELL="+cell, "CORRUPT_WAIT_FILE="+filepath.Join(t.TempDir(), "never"))
}
