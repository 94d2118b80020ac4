package e2e

// Faults, interruptions and bad input never lose a result: each test here
// breaks one thing under the compiled suite (fio killed, fio failing, fio
// printing garbage or hanging, a recorded file cut short, the operator
// pressing Ctrl-C, a bad flag) and checks what the suite says about it,
// which results it kept and that no fio is left behind.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The cells of testdata/faults.toml, in plan order.
const (
	cell512   = "TestSingleDrive/64MiB/512B_Random_Read"
	cellWrite = "TestSingleDrive/64MiB/4KB_Random_Write" // 20 s unless -runtime says otherwise
	cellRead  = "TestSingleDrive/64MiB/4KB_Random_Read"
)

// byTest indexes a run's results by test name.
func byTest(run report.Run) map[string]report.Result {
	m := map[string]report.Result{}
	for _, r := range run.Results {
		m[r.Test] = r
	}
	return m
}

// assertMeasured checks that a cell was measured and judged on its figures
// (inconclusive when the run had -precondition=none).
func assertMeasured(t *testing.T, res map[string]report.Result, test string) {
	t.Helper()
	r, ok := res[test]
	if !assert.True(t, ok, "%s has no result", test) {
		return
	}
	assert.Greater(t, r.Actual, 0.0, "%s: a real measurement", test)
	assert.NotEqual(t, report.Fail, r.Verdict, "%s: %s", test, r.Error)
	assert.FileExists(t, r.Raw, "%s: its raw output", test)
}

// noPanic fails t if the suite panicked (go test's own -timeout panics the
// binary), quoting the panic rather than the whole output.
func noPanic(t *testing.T, r result) {
	t.Helper()
	out := r.Stdout + r.Stderr
	if i := strings.Index(out, "panic:"); i >= 0 {
		end := min(len(out), i+400)
		t.Errorf("the suite panicked: %s...", out[i:end])
	}
}

// fioRunning returns the pid of the suite's fio running jobFile, waiting
// for it up to within.
func fioRunning(jobFile string, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		pids := fioProcesses(func(p proc) bool { return suiteFio(p) && p.argv[len(p.argv)-1] == jobFile })
		if len(pids) > 0 {
			return pids[0], nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, fmt.Errorf("no fio started by the suite ran %s within %s", jobFile, within)
}

// alive reports whether any thread of process pid still lives (is not a
// zombie): a fio killed by a signal may have its main thread a zombie
// while a job thread still exits in the kernel, waiting for its queued
// I/O.
func alive(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z' {
			return true
		}
	}
	return false
}

// In the middle of a measurement, fio is killed from outside: that cell
// fails naming the signal, its job file and output stay, and the next cell
// still runs.
func TestFioKilledDuringMeasurement(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	job := filepath.Join(rep, "raw", filepath.FromSlash(cellWrite)+".fio")
	killed := make(chan error, 1)
	r := runSuiteCtx(context.Background(), t, func(*exec.Cmd) {
		go func() {
			pid, err := fioRunning(job, 3*time.Minute)
			if err == nil {
				// Let it get well into its 20 s of I/O first.
				time.Sleep(time.Second)
				err = syscall.Kill(pid, syscall.SIGKILL)
			}
			killed <- err
		}()
	}, nil, []string{"-test.run=TestSingleDrive"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-report="+rep)
	noFioLeft(t)
	require.NoError(t, <-killed)
	assert.NotEqual(t, 0, r.Code, "a run with a failed cell must fail")
	noPanic(t, r)

	res := byTest(r.results(t))
	require.Len(t, res, 3, "every cell has a result")
	w := res[cellWrite]
	assert.Equal(t, report.Fail, w.Verdict)
	assert.Contains(t, w.Error, "4KB Random Write: ")
	assert.Contains(t, w.Error, "SIGKILL")
	assert.Contains(t, r.Stdout, "--- FAIL: "+cellWrite)
	assert.FileExists(t, job, "the job file of the failed step is kept")
	assert.Equal(t, filepath.Join(rep, "raw", filepath.FromSlash(cellWrite)+".json"), w.Raw)
	assert.FileExists(t, w.Raw, "what fio printed before it was killed is kept")
	assertMeasured(t, res, cell512)
	assertMeasured(t, res, cellRead)
}

// fio fails on its own: 512-byte direct I/O on a device with 4096-byte
// sectors is EINVAL. The cell fails with fio's exit status, its error text
// and errno; the other cells are judged.
func TestFioIOError(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev := newLoop(t, safetySize, "--sector-size", "4096")
	r := runSuite(t, []string{"-test.run=TestSingleDrive"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-runtime=1s")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	noPanic(t, r)

	res := byTest(r.results(t))
	require.Len(t, res, 3)
	e := res[cell512]
	assert.Equal(t, report.Fail, e.Verdict)
	assert.Regexp(t, `^512B Random Read: fio failed: fio exited with status [1-9][0-9]* `, e.Error)
	assert.Contains(t, e.Error, "Invalid argument", "fio's own error text")
	assert.Contains(t, e.Error, "errno 22", "fio's errno")
	assert.Contains(t, r.Stdout, "--- FAIL: "+cell512)
	stderr, err := os.ReadFile(strings.TrimSuffix(e.Raw, ".json") + ".stderr")
	require.NoError(t, err, "fio's stderr is kept beside its output")
	assert.Contains(t, string(stderr), "Invalid argument")
	assertMeasured(t, res, cellWrite)
	assertMeasured(t, res, cellRead)

	// Replaying the recording fails the same cell with the same message:
	// fio's exit status is recorded beside its output.
	replay := runSuite(t, nil, "-spec="+faultSpec(t), "-replay="+filepath.Join(r.Report, "raw"))
	again := byTest(replay.results(t))
	assert.Equal(t, e.Verdict, again[cell512].Verdict)
	assert.Equal(t, e.Error, strings.Replace(again[cell512].Error, filepath.Join(replay.Report, ""), filepath.Join(r.Report, ""), 1))
}

// standIn puts testdata/fio-standin.sh first in PATH as "fio" and returns
// the environment for the suite; vars set its STANDIN_* knobs. Runs it
// does not intercept go to the real fio.
func standIn(t *testing.T, vars ...string) []string {
	t.Helper()
	real, err := exec.LookPath("fio")
	require.NoError(t, err)
	real, err = filepath.Abs(real)
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join("testdata", "fio-standin.sh"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fio"), script, 0o755))
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "STANDIN_REAL=" + real}
	return append(env, vars...)
}

// fio prints text that is not JSON for one cell and nothing at all for
// another: each fails naming its raw file and what was wrong, the raw
// files keep exactly what was printed, and the third cell is judged.
func TestFioPrintsNoJSON(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	dev := newLoop(t, safetySize)
	env := standIn(t, "STANDIN_GARBAGE=512B_Random_Read.fio", "STANDIN_EMPTY=4KB_Random_Write.fio")
	r := runSuiteIn(t, env, []string{"-test.run=TestSingleDrive"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-runtime=1s")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	noPanic(t, r)

	res := byTest(r.results(t))
	require.Len(t, res, 3)
	g := res[cell512]
	assert.Equal(t, report.Fail, g.Verdict)
	assert.Equal(t, "512B Random Read: "+g.Raw+`: fio printed no JSON object; its output begins "fio: this is not JSON"`, g.Error)
	raw, err := os.ReadFile(g.Raw)
	require.NoError(t, err)
	assert.Equal(t, "fio: this is not JSON\n<html>garbage</html>\n", string(raw), "the raw file holds fio's stdout byte for byte")

	e := res[cellWrite]
	assert.Equal(t, report.Fail, e.Verdict)
	assert.Equal(t, "4KB Random Write: "+e.Raw+": fio printed no JSON object: the output is empty", e.Error)
	assert.FileExists(t, e.Raw)

	assertMeasured(t, res, cellRead)
}

// A fio older than the harness accepts: one error before anything runs,
// saying how to install a newer one, and no results.
func TestFioTooOld(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	dev := newLoop(t, safetySize)
	r := runSuiteIn(t, standIn(t, "STANDIN_VERSION=fio-3.27"), nil,
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none")
	assertRefused(t, r, "refusing to run (1 problem)", "is fio-3.27, older than fio-3.28", "apt-get install fio")
}

// fio hangs in a measurement and ignores SIGINT (as a process stuck in the
// kernel does) until go test's -timeout is near: the suite stops it, keeps
// the results finished before, writes the report and exits non-zero before
// go test's own timeout panics the binary.
func TestFioHangsUntilTimeout(t *testing.T) {
	runParallel(t) // it mostly waits for the -timeout
	dev := newLoop(t, safetySize)
	pidFile := filepath.Join(t.TempDir(), "pids")
	env := standIn(t, "STANDIN_HANG=4KB_Random_Read.fio", "STANDIN_PIDS="+pidFile)
	r := runSuiteIn(t, env, []string{"-test.run=TestSingleDrive", "-test.timeout=25s"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-runtime=1s")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	noPanic(t, r)

	data, err := os.ReadFile(pidFile)
	require.NoError(t, err, "the stand-in never hung")
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		assert.False(t, alive(pid), "stand-in process %d is still running", pid)
	}

	res := byTest(r.results(t))
	assertMeasured(t, res, cell512)
	assertMeasured(t, res, cellWrite)
	h, ok := res[cellRead]
	require.True(t, ok, "the interrupted cell is recorded")
	assert.Equal(t, report.Inconclusive, h.Verdict, "an interrupted measurement says nothing about the drive")
	assert.Contains(t, h.Error, "4KB Random Read: not finished: the -timeout is near")
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "4KB Random Read: not finished")
}

// A recorded output cut in half: that cell fails naming the file and
// "truncated"; every other cell gets the verdict it gets from the intact
// recording.
func TestReplayTruncatedFile(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	fixtures := filepath.Join(filepath.Dir(acceptanceDir), "fixtures", "solidigm-d7-ps1010")
	dir := filepath.Join(t.TempDir(), "recorded")
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixtures)))

	intact := runSuite(t, nil, "-replay="+dir)
	require.Equal(t, 0, intact.Code, "the intact fixtures pass\nstdout:\n%s\nstderr:\n%s", intact.Stdout, intact.Stderr)
	want := intact.verdicts(t)

	const cut = "TestSingleDrive/1.92TB/4KB_Random_Read"
	file := filepath.Join(dir, filepath.FromSlash(cut)+".json")
	st, err := os.Stat(file)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(file, st.Size()/2))

	r := runSuite(t, nil, "-replay="+dir)
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	noPanic(t, r)
	res := byTest(r.results(t))
	assert.Equal(t, report.Fail, res[cut].Verdict)
	assert.Contains(t, res[cut].Error, file)
	assert.Contains(t, res[cut].Error, "truncated")
	assert.Contains(t, r.Stdout, "--- FAIL: "+cut)

	want[cut] = report.Fail
	if diff := cmp.Diff(want, r.verdicts(t)); diff != "" {
		t.Errorf("only %s may change verdict (-intact +truncated):\n%s", cut, diff)
	}
}

// Ctrl-C or SIGTERM during a live measurement: the suite stops fio within
// seconds, keeps the results finished before and writes the report.
func TestInterruptKeepsResults(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testInterrupt(t, sig) })
	}
}

func testInterrupt(t *testing.T, sig syscall.Signal) {
	dev := newLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	job := filepath.Join(rep, "raw", filepath.FromSlash(cellWrite)+".fio")
	type sent struct {
		at  time.Time
		err error
	}
	signalled := make(chan sent, 1)
	r := runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) {
		go func() {
			// The first cell's result is written; the 20 s one is running.
			_, err := fioRunning(job, 3*time.Minute)
			if err == nil {
				if n := resultCount(filepath.Join(rep, "results.json")); n != 1 {
					err = fmt.Errorf("results.json holds %d results while %s runs, want 1", n, cellWrite)
				}
			}
			if err == nil {
				time.Sleep(500 * time.Millisecond)
				err = cmd.Process.Signal(sig)
			}
			signalled <- sent{time.Now(), err}
		}()
	}, nil, []string{"-test.run=TestSingleDrive"},
		"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-report="+rep)
	ended := time.Now()
	noFioLeft(t)
	s := <-signalled
	require.NoError(t, s.err)
	if took := ended.Sub(s.at); took > 15*time.Second {
		t.Errorf("the suite took %s to end after %v, want under 15s", took.Round(time.Second), sig)
	}
	assert.NotEqual(t, 0, r.Code, "an interrupted run must not pass")
	noPanic(t, r)

	res := byTest(r.results(t))
	assertMeasured(t, res, cell512)
	w, ok := res[cellWrite]
	require.True(t, ok, "the interrupted cell is recorded")
	assert.Equal(t, report.Inconclusive, w.Verdict)
	assert.Contains(t, w.Error, "4KB Random Write: not finished: the run was interrupted")
	// A cell the run was stopped before is listed as never reached, and
	// counted: the capacity's gate is not QUALIFIED on the cells it ran.
	never, ok := res[cellRead]
	require.True(t, ok, "a cell that never ran is listed")
	assert.Equal(t, report.Inconclusive, never.Verdict)
	assert.Equal(t, report.CauseInterrupted, never.Cause)
	assert.Contains(t, never.Error, "never reached: the run was stopped (interrupted) before this cell")
	assert.Contains(t, r.Stdout, cellRead, "go test says the last cell did not run")
	assert.Contains(t, r.Stdout, "not run: the run was stopped (interrupted)")
	// The command that continues it: the same, plus -resume.
	assert.Regexp(t, `drivequal: to continue this run, from \S+: go test ./acceptance -count=1 -v -run=TestSingleDrive -args -spec=\S+ -drives=`+regexp.QuoteMeta(dev)+` -destructive -precondition=none -report=`+regexp.QuoteMeta(rep)+` -resume\n`, r.Stdout)

	summary, err := os.ReadFile(filepath.Join(rep, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "| 512B Random Read | 100 IOPS | ")
	assert.NotContains(t, string(summary), "| 512B Random Read | 100 IOPS | - |", "the finished cell has its figure")
	assert.Regexp(t, `\| 4KB Random Read \| [0-9,]+ IOPS \| - \| - \| NOT REACHED: the run was stopped \[\^\d+\] \|`, string(summary))
	assert.Contains(t, string(summary), "cells inconclusive", "the gate counts the cell never reached")

	// The recording replays with the same verdicts: the interrupted cell's
	// partial output does not become a pass.
	replay := runSuite(t, nil, "-spec="+faultSpec(t), "-replay="+filepath.Join(rep, "raw"))
	again := byTest(replay.results(t))
	assert.Equal(t, report.Inconclusive, again[cellWrite].Verdict)
	assert.Equal(t, res[cell512].Verdict, again[cell512].Verdict)
}

// resultCount is how many results a results.json holds (0 when it is
// missing or unreadable).
func resultCount(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var run report.Run
	if json.Unmarshal(data, &run) != nil {
		return 0
	}
	return len(run.Results)
}

// badFlagTest is a command line the suite must refuse before it starts;
// $TMP in args and want stands for a fresh temporary directory.
type badFlagTest struct {
	name string
	args []string
	want []string // in stderr
}

var badFlagTests = []badFlagTest{
	{"missing drive", []string{"-drives=$TMP/nvme9n9", "-destructive"}, []string{"parsing -drives: $TMP/nvme9n9: does not exist"}},
	{"unknown capacity", []string{"-capacity=3TB", "-drives=$TMP/file", "-dry-run"}, []string{`parsing -capacity: "3TB" is not a capacity`}},
	{"capacity in a replay", []string{"-capacity=1.92TB"}, []string{"parsing -capacity: given without -drives"}},
	{"zero runtime", []string{"-runtime=0"}, []string{"parsing -runtime: 0 is not positive"}},
	{"negative runtime", []string{"-runtime=-5s"}, []string{"parsing -runtime: -5s is not positive"}},
	{"replay nowhere", []string{"-replay=$TMP/recorded"}, []string{"parsing -replay: $TMP/recorded is not a directory"}},
	{"unknown spec", []string{"-spec=no-such-drive"}, []string{`parsing -spec: `, `"no-such-drive"`}},
	{"report under a file", []string{"-report=$TMP/file/report"}, []string{"parsing -report: cannot create $TMP/file/report: not a directory"}},
}

func TestBadFlags(t *testing.T) {
	runParallel(t)         // refusals of flags: no drive, nothing timed
	testenv.MustHaveFio(t) // a live run's flags are checked with fio's version
	for _, tt := range badFlagTests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			tmp := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(tmp, "file"), nil, 0o644))
			var args []string
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "$TMP", tmp))
			}
			r := runSuite(t, nil, args...)
			noFioLeft(t)
			if r.Code == 0 {
				t.Errorf("suite %v: exit 0, want non-zero", args)
			}
			noPanic(t, r)
			assert.Contains(t, r.Stderr, "drivequal: refusing to run (1 problem)")
			for _, w := range tt.want {
				assert.Contains(t, r.Stderr, strings.ReplaceAll(w, "$TMP", tmp), "suite %v", args)
			}
			if _, err := os.Stat(filepath.Join(r.Report, "results.json")); err == nil {
				t.Errorf("suite %v wrote results.json", args)
			}
		})
	}
}

// A drive that disappears mid-run (here its device node is removed while
// fio writes it; a hot-unplugged NVMe drive loses its node and its sysfs
// entry) is said to have disappeared: its cells fail with cause "drive
// changed" naming what is gone, not with what fio made of the missing
// path ("you need to specify size=", errno 22).
func TestRemovedDriveIsSaidToDisappear(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	dev := newLoop(t, safetySize)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dev, &st))
	t.Cleanup(func() {
		// Put the node back so that the loop device can be detached.
		if _, err := os.Stat(dev); errors.Is(err, fs.ErrNotExist) {
			if err := unix.Mknod(dev, unix.S_IFBLK|0o660, int(st.Rdev)); err != nil {
				t.Errorf("restoring %s: %v", dev, err)
			}
		}
	})
	done := make(chan result, 1)
	go func() {
		done <- runSuite(t, []string{"-test.run=" + cellWrite + "$|" + cellRead + "$"},
			"-spec="+faultSpec(t), "-drives="+dev, "-destructive", "-precondition=none", "-runtime=4s")
	}()
	running := oursRunning(t)
	deadline := time.Now().Add(90 * time.Second)
	for len(fioProcesses(running)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the suite's fio never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, os.Remove(dev))
	r := <-done
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	res := byTest(r.results(t))
	for _, test := range []string{cellWrite, cellRead} {
		x := res[test]
		t.Logf("%s: %s", test, x.Error)
		assert.Equal(t, report.Fail, x.Verdict, test)
		assert.Equal(t, report.CauseDriveChanged, x.Cause, test)
		assert.Contains(t, x.Error, dev+" disappeared", test)
		assert.Contains(t, x.Error, "its device node "+dev+" is gone", test)
		assert.NotContains(t, x.Error, "specify size", "%s: blamed on fio", test)
	}
}
