package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/e2e/suiterun"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

var (
	// suiteBin is the acceptance suite compiled once for every test here.
	suiteBin string
	// acceptanceDir is where go test would run the suite.
	acceptanceDir string
)

// parallel is the fewest of the tests that mark themselves parallel that
// run at once unless -test.parallel says: go test's default, GOMAXPROCS,
// is 2 on a 2-core machine, and these tests spend most of their time in
// fio's fixed runtimes and steady-state rounds and waiting on the disk
// under their loop devices, not on the CPU (a run of the suite on a
// 64 MiB loop device used 5 s of CPU in 27 s). A machine with more CPUs
// keeps go test's default.
const parallel = 6

// defaultParallel is -test.parallel when it is not given, with procs
// GOMAXPROCS.
func defaultParallel(procs int) int { return max(parallel, procs) }

// goParallel is go test's own -test.parallel here: more than the
// parallel tests and subtests there are, so that none waits on go test's
// limit, which lets them in in no order, and slots decides (see
// runParallel).
const goParallel = 1 << 12

func TestMain(m *testing.M) {
	flag.Parse()
	n := defaultParallel(runtime.GOMAXPROCS(0))
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			n, _ = strconv.Atoi(f.Value.String())
		}
	})
	if n < 1 {
		fmt.Fprintln(os.Stderr, "-test.parallel must be at least 1")
		os.Exit(2)
	}
	slots.resize(n)
	if err := flag.Set("test.parallel", strconv.Itoa(goParallel)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(setup(m))
}

func setup(m *testing.M) int {
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	acceptanceDir = filepath.Join(root, "acceptance")
	dir, err := os.MkdirTemp("", "drivequal-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	suiteBin = filepath.Join(dir, "acceptance.test")
	if out, err := suiterun.BuildCommand(acceptanceDir, suiteBin).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the acceptance suite: %v\n%s", err, out)
		return 2
	}
	return m.Run()
}

// On 2 CPUs six parallel tests run at once; on more, as many as there
// are CPUs, as go test runs them by default.
func TestDefaultParallel(t *testing.T) {
	for procs, want := range map[int]int{1: 6, 2: 6, 4: 6, 8: 8, 64: 64} {
		if got := defaultParallel(procs); got != want {
			t.Errorf("defaultParallel(%d) = %d, want %d", procs, got, want)
		}
	}
}

// newLoop makes a loop device for a test that runs the suite (and so fio)
// on it: see testenv.Loop.
func newLoop(t *testing.T, size int64, losetupArgs ...string) string {
	t.Helper()
	testenv.MustHaveLoop(t)
	return testenv.Loop(t, size, losetupArgs...)
}

// result is one run of the suite.
type result struct {
	Code           int
	Stdout, Stderr string
	Report         string // the -report directory
}

// runSuite runs the compiled suite like `go test ./acceptance -args ARGS`
// would, with its own report directory unless args name one. goFlags are
// test flags (-test.run=..., -test.timeout=...).
func runSuite(t *testing.T, goFlags []string, args ...string) result {
	t.Helper()
	return runSuiteCtx(context.Background(), t, nil, nil, goFlags, args...)
}

// runSuiteIn is runSuite with env added to the suite's environment.
func runSuiteIn(t *testing.T, env []string, goFlags []string, args ...string) result {
	t.Helper()
	return runSuiteCtx(context.Background(), t, nil, env, goFlags, args...)
}

// runSuiteCtx runs the suite as runSuiteIn does, calling started once it
// has started. The suite, and every fio it starts, carries t's marker in
// its environment (see ours).
func runSuiteCtx(ctx context.Context, t *testing.T, started func(*exec.Cmd), env []string, goFlags []string, args ...string) result {
	t.Helper()
	return runSuiteVia(ctx, t, nil, started, env, goFlags, args...)
}

// runSuiteVia is runSuiteCtx with the suite run by via (a command and
// its arguments, which runs the rest of its arguments: unshare ...).
func runSuiteVia(ctx context.Context, t *testing.T, via []string, started func(*exec.Cmd), env []string, goFlags []string, args ...string) result {
	t.Helper()
	res := result{Report: filepath.Join(t.TempDir(), "report")}
	hasReport := false
	for _, a := range args {
		if strings.HasPrefix(a, "-report=") {
			hasReport = true
			res.Report = strings.TrimPrefix(a, "-report=")
		}
	}
	if !hasReport {
		args = append(args, "-report="+res.Report)
	}
	all := append([]string{"-test.count=1", "-test.v=true"}, goFlags...)
	all = append(all, args...)
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	defer cancel()
	argv := append(append(slices.Clone(via), suiteBin), all...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = acceptanceDir
	cmd.Env = append(append(os.Environ(), env...), marker(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var capped testenv.Throttle
	isCapped := false
	iops := loopIOPS
	if v, ok := testCaps.Load(t); ok {
		iops = v.(int)
	}
	if iops > 0 {
		capped, isCapped = testenv.CapIOPS(t, iops, cappedDevices(args)...)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Into the capped cgroup before started, which may move it into a
	// cgroup of its own. A suite that has already exited (refusing its
	// flags) cannot join, and needs no cap.
	if isCapped {
		if err := capped.Join(cmd.Process.Pid); err != nil {
			t.Logf("the suite runs uncapped: %v", err)
		}
	}
	if started != nil {
		started(cmd)
	}
	err := cmd.Wait()
	if isCapped {
		// What the device holds once the suite is gone is what its fio
		// wrote, the writes the throttle held included: at loopIOPS the
		// most a suite's fio queues (8 jobs of depth 64) drain in 0.2 s.
		// Not longer: a fio that outlived the suite is the test's to
		// find.
		if err := capped.Drained(2 * time.Second); err != nil {
			t.Logf("the capped suite's processes: %v", err)
		}
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	t.Logf("suite %s: exit %d", strings.Join(all, " "), res.Code)
	return res
}

// loopIOPS caps the reads and writes of the loop devices a suite is given,
// and of those under the files it is given (cappedDevices; see
// testenv.CapIOPS): six times the 500 IOPS of the loop spec's cells,
// and 390 MB/s at 128 KiB, twenty times its 20 MB/s. A test that needs
// more of a loop device's speed sets its own cap (capAt), and one that
// throttles a device itself moves the suite into a cgroup of its own once
// started. A lower cap would save little: most of a capped suite's fio
// CPU is not its reads and writes.
const loopIOPS = 3000

// testCaps are the tests whose suites run at another cap than loopIOPS
// (see capAt): *testing.T: int, 0 for uncapped.
var testCaps sync.Map

// capAt has t's suites run on loop devices held to iops reads and iops
// writes a second, or as fast as they go when iops is 0: for a test that
// checks that nothing writes a device once the suite is killed, where the
// writes the throttle still held when fio died would land a moment after
// it (0), or one whose edits of a recording need a loop device's figure
// well above loopIOPS. It holds for the suites t itself runs: a subtest
// that runs a suite has loopIOPS unless it calls capAt too.
func capAt(t *testing.T, iops int) {
	testCaps.Store(t, iops)
	t.Cleanup(func() { testCaps.Delete(t) })
}

// uncapped has t's suites run on loop devices as fast as they go (see
// capAt).
func uncapped(t *testing.T) { capAt(t, 0) }

// cappedDevices are what CapIOPS holds for the suite args run, each once:
// the loop devices they give it (-drives=), by their paths or links to
// them, and the loop device under each regular file they give it that is
// on one (loopUnder; newTargetFile's are, as root). A file on the machine's own
// disk is not held: a cap on that disk would be the suite's cgroup's
// alone, but the disk's journal would make every other writer wait
// behind it.
func cappedDevices(args []string) []string {
	var devs []string
	for _, a := range args {
		list, ok := strings.CutPrefix(a, "-drives=")
		if !ok {
			continue
		}
		for _, d := range strings.Split(list, ",") {
			p, err := filepath.EvalSymlinks(d)
			if err != nil {
				continue
			}
			dev := ""
			if strings.HasPrefix(p, "/dev/loop") {
				dev = p
			} else if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				dev = loopUnder(p)
			}
			if dev != "" && !slices.Contains(devs, dev) {
				devs = append(devs, dev)
			}
		}
	}
	return devs
}

// results reads the run's results.json.
func (r result) results(t *testing.T) report.Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.Report, "results.json"))
	if err != nil {
		t.Fatalf("results.json: %v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

// verdicts maps each test of a run to its verdict.
func (r result) verdicts(t *testing.T) map[string]string {
	t.Helper()
	v := map[string]string{}
	for _, res := range r.results(t).Results {
		v[res.Test] = res.Verdict
	}
	return v
}

// proc is a running process as /proc shows it.
type proc struct {
	pid  int
	comm string
	argv []string
	cwd  string   // working directory
	env  []string // its environment, as it started
}

// fioProcesses lists the pids of the running fio processes match accepts.
// Every test looks for fio, so the rest are passed over on their comm
// alone: reading every process's command line, directory and environment
// was a quarter of e2e.test's own CPU, the tests that wait on fio polling
// it beside a loaded host's hundreds of processes.
func fioProcesses(match func(proc) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		comm, err1 := os.ReadFile(filepath.Join(dir, "comm"))
		if err1 != nil || strings.TrimSpace(string(comm)) != "fio" {
			continue
		}
		cmdline, err2 := os.ReadFile(filepath.Join(dir, "cmdline"))
		cwd, err3 := os.Readlink(filepath.Join(dir, "cwd"))
		environ, err4 := os.ReadFile(filepath.Join(dir, "environ"))
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			continue
		}
		p := proc{pid: pid, comm: strings.TrimSpace(string(comm)), cwd: cwd,
			argv: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"),
			env:  strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")}
		if match(p) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// suiteFio reports whether p is a fio the suite started: named fio and
// working in the suite's directory, which fio inherits and keeps when
// orphaned.
func suiteFio(p proc) bool { return p.comm == "fio" && p.cwd == acceptanceDir }

// marker is the environment variable that names this test binary and t
// (its whole name, subtests included) in every suite it runs, and so in
// every fio those start: another binary's run of the same test (a second
// checkout's make test) carries another.
func marker(t *testing.T) string {
	return "DRIVEQUAL_E2E_TEST=" + strconv.Itoa(os.Getpid()) + "/" + t.Name()
}

// carries reports whether env holds the marker of t or of one of its
// subtests.
func carries(env []string, t *testing.T) bool {
	m := marker(t)
	return slices.ContainsFunc(env, func(e string) bool { return e == m || strings.HasPrefix(e, m+"/") })
}

// ours matches the fio processes that t's own runs of the suite started
// (its subtests' included), and no other test's: tests that wait more
// than they work run in parallel (t.Parallel), and so do the subtests of
// some, each checking its own.
func ours(t *testing.T) func(proc) bool {
	return func(p proc) bool { return suiteFio(p) && carries(p.env, t) }
}

// oursRunning matches ours that run a job: not the "fio --version" the
// suite asks at setup, before it holds its drives.
func oursRunning(t *testing.T) func(proc) bool {
	isOurs := ours(t)
	return func(p proc) bool { return isOurs(p) && !slices.Contains(p.argv, "--version") }
}

// noFioLeft fails t if a fio the suite started is still running a few
// seconds after the suite ended. Only the suite's own fio count: go test
// runs packages in parallel, and other packages' tests run fio too.
// A leak runs on for good; a fio the suite stopped may take seconds to
// exit on a starved machine (one was still there 5 s after its suite
// beside the whole of make test), so the check waits up to 20 s.
func noFioLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		pids := fioProcesses(ours(t))
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("fio processes started by the suite left running: %v", pids)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loopSpec is the testdata spec scaled to what a loop device does.
func loopSpec(t *testing.T) string { return testdataFile(t, "loop.toml") }

// testdataFile is the absolute path of testdata/name, for the suite, which
// runs in another directory.
func testdataFile(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
