package fiojob

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// standIn puts an executable "fio" shell script with body on a PATH of its
// own for the rest of t.
func standIn(t *testing.T, body string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fio"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

// testContext is bounded by the test's deadline, minus time to report.
func testContext(t *testing.T) context.Context {
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		c, cancel := context.WithDeadline(ctx, d.Add(-5*time.Second))
		t.Cleanup(cancel)
		ctx = c
	}
	return ctx
}

// waitGone polls, for up to 5 s, until process pid (or process group -pid)
// is gone. A zombie counts as gone: it does no more I/O, and who reaps it
// (an orphan's is init) is no business of Run.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || pid > 0 && isZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s %d still exists 5 s after Run returned (kill 0: %v)", what, pid, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestVersion(t *testing.T) {
	needFio(t)
	v, err := Runner{}.Version(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if !versionRE.MatchString(v) {
		t.Errorf("Version() = %q, want fio-MAJOR.MINOR", v)
	}
}

type versionErrorTest struct {
	name   string
	script string // "" means no fio on PATH
	want   []string
}

var versionErrorTests = []versionErrorTest{
	{"missing", "", []string{"fio not found", "install fio >= 3.28 (Debian/Ubuntu: apt-get install fio)"}},
	{"too old", "echo fio-3.27", []string{"is fio-3.27, older than fio-3.28", "install fio >= 3.28"}},
	{"not fio", "echo hello", []string{`printed "hello", not fio-MAJOR.MINOR`, "install fio >= 3.28"}},
	{"fails", "echo broken >&2; exit 3", []string{"fio exited with status 3", "broken"}},
}

func TestVersionErrors(t *testing.T) {
	for _, tt := range versionErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.script == "" {
				t.Setenv("PATH", t.TempDir())
			} else {
				standIn(t, tt.script)
			}
			v, err := Runner{}.Version(testContext(t))
			if err == nil {
				t.Fatalf("Version() = %q, nil; want an error", v)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Version() error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestVersionAccepts(t *testing.T) {
	standIn(t, "echo fio-3.28-12-gdeadbeef")
	if v, err := (Runner{}).Version(testContext(t)); err != nil || v != "fio-3.28-12-gdeadbeef" {
		t.Errorf("Version() = %q, %v; want fio-3.28-12-gdeadbeef, nil", v, err)
	}
}

type exitTest struct {
	name   string
	script string
	code   int
	signal string
	msg    string
}

var exitTests = []exitTest{
	{"jobs failed", "echo '{}'; echo 'fio: pid=1, err=22/file:io_u.c:1876, func=io_u error' >&2; exit 2",
		2, "", "fio exited with status 2 (2 jobs failed): fio: pid=1, err=22/file:io_u.c:1876, func=io_u error"},
	{"no stderr", "exit 1", 1, "", "fio exited with status 1 (1 jobs failed)"},
	{"fio interrupted", "echo 'fio: terminating on signal 2'; exit 128", 128, "",
		"fio exited with status 128 (stopped by a signal)"},
	{"shell 128+SIGINT", "exit 130", 130, "SIGINT", "fio killed by signal SIGINT"},
	{"killed", "kill -9 $$", -1, "SIGKILL", "fio killed by signal SIGKILL"},
}

func TestRunExitError(t *testing.T) {
	for _, tt := range exitTests {
		t.Run(tt.name, func(t *testing.T) {
			standIn(t, tt.script)
			_, _, err := Runner{}.Run(testContext(t), "job.fio")
			var ee *ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("Run() error = %v, want an *ExitError", err)
			}
			if ee.Code != tt.code || ee.Signal != tt.signal || ee.Error() != tt.msg {
				t.Errorf("ExitError = {Code %d, Signal %q, %q}, want {Code %d, Signal %q, %q}",
					ee.Code, ee.Signal, ee.Error(), tt.code, tt.signal, tt.msg)
			}
		})
	}
}

func TestRunArgs(t *testing.T) {
	standIn(t, `printf '%s\n' "$@"`)
	stdout, _, err := Runner{Args: []string{"--client=127.0.0.1"}}.Run(testContext(t), "a job.fio")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(stdout), "--output-format=json+\n--client=127.0.0.1\na job.fio\n"; got != want {
		t.Errorf("fio got arguments %q, want %q", got, want)
	}
	stdout, _, err = Runner{Format: FormatJSON}.Run(testContext(t), "a job.fio")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(stdout), "--output-format=json\na job.fio\n"; got != want {
		t.Errorf("with Format json, fio got arguments %q, want %q", got, want)
	}
}

// TestRunFailingJob runs real fio with a job whose every I/O fails
// (O_DIRECT with a 1000-byte block size).
func TestRunFailingJob(t *testing.T) {
	needFio(t)
	target := filepath.Join(t.TempDir(), "data")
	job := Job{Name: "fails", RW: "read", BS: 1000, IODepth: 1, NumJobs: 1, RWMixRead: -1,
		IOEngine: "psync", Direct: true, Runtime: time.Second,
		Targets: []Target{{Path: target, Size: 1 << 20}}}
	stdout, stderr, err := Runner{}.Run(testContext(t), writeJobFile(t, job.File()))
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run() error = %v, want an *ExitError\nstderr: %s", err, stderr)
	}
	if ee.Code != 1 || !strings.HasPrefix(ee.Error(), "fio exited with status 1 (1 jobs failed): fio: ") {
		t.Errorf("ExitError = %q (code %d), want status 1 and fio's first stderr line", ee, ee.Code)
	}
	if ee.Stderr != string(stderr) {
		t.Errorf("ExitError.Stderr differs from the stderr Run returned")
	}
	out, perr := Parse(stdout)
	if perr != nil {
		t.Fatalf("Parse: %v", perr)
	}
	if errs := out.Total().Errors; len(errs) != 1 || !strings.HasPrefix(errs[0], `job "drive0": errno `) {
		t.Errorf("Total().Errors = %q, want one error for drive0", errs)
	}
}

// TestRunCancel cancels a real 30 s fio run whose jobs are forked processes
// (no thread=) and checks that nothing of it is left: neither fio's process
// group nor the job processes, which fio moves to sessions of their own.
func TestRunCancel(t *testing.T) {
	needFio(t)
	target := filepath.Join(t.TempDir(), "data")
	jobFile := writeJobFile(t, `[global]
ioengine=psync
rw=randread
bs=4096
size=4m
time_based=1
runtime=30
numjobs=2

[drive0]
filename=`+EscapeFilename(target)+`
`)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var pgid atomic.Int64
	var workers atomic.Value // []procKey
	// fio ends within a second of SIGINT on an idle machine; the grace is
	// for a loaded one (make test runs this beside the loop-device
	// packages' fio), where 10 s once ran out before fio's report.
	r := Runner{Grace: 30 * time.Second, Started: func(pid int) {
		pgid.Store(int64(pid))
		go func() {
			// Cancel once both job processes run, each in the session of
			// its own it makes as it starts. fio 3.33 can deadlock on a
			// SIGINT that reaches a job process forked but not yet in its
			// session (its handler takes a lock the job holds), and then
			// prints nothing: on a loaded host the first look caught
			// jobs that early (5 of 23 runs at load 7 to 9).
			for ctx.Err() == nil {
				if kids := descendants(pid); len(kids) >= 2 && inOwnSessions(kids) {
					workers.Store(kids)
					time.Sleep(200 * time.Millisecond)
					cancel()
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}}
	stdout, stderr, err := r.Run(ctx, jobFile)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() error = %v, want one wrapping context.Canceled\nstderr: %s", err, stderr)
	}
	kids, _ := workers.Load().([]procKey)
	if len(kids) < 2 {
		t.Fatalf("saw %d fio job processes before cancelling, want 2", len(kids))
	}
	waitGone(t, "process group", -int(pgid.Load()))
	for _, k := range kids {
		if _, start, ok := readStat(k.pid); ok && start == k.start {
			waitGone(t, "fio job process", k.pid)
		}
	}
	// fio stopped on SIGINT within the grace period and still reported.
	out, err := Parse(stdout)
	if err != nil {
		t.Fatalf("Parse(stdout after SIGINT): %v", err)
	}
	if len(out.Notes) == 0 || !strings.Contains(strings.Join(out.Notes, "\n"), "fio: terminating on signal 2") {
		t.Errorf("Notes = %q, want fio's terminating note", out.Notes)
	}
}

// inOwnSessions reports whether every one of kids leads a session.
func inOwnSessions(kids []procKey) bool {
	for _, k := range kids {
		if sid, err := unix.Getsid(k.pid); err != nil || sid != k.pid {
			return false
		}
	}
	return true
}

// TestRunGraceKill: a stand-in that ignores SIGINT and leaves a child in a
// session of its own, as fio's job processes do; both must be killed once
// the grace period is over.
func TestRunGraceKill(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		unavailable(t, "no /proc: %v", err)
	}
	// The stand-in's PATH holds only itself, so call setsid and sleep by path.
	setsid, sleep := lookTool(t, "setsid"), lookTool(t, "sleep")
	standIn(t, "trap '' INT\n"+setsid+" "+sleep+" 30 &\n"+sleep+" 30\n")
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var pgid atomic.Int64
	var child atomic.Value // procKey
	r := Runner{Grace: 300 * time.Millisecond, Started: func(pid int) {
		pgid.Store(int64(pid))
		go func() {
			for ctx.Err() == nil {
				for _, k := range descendants(pid) {
					if sid, _ := unix.Getsid(k.pid); sid == k.pid {
						child.Store(k)
						cancel()
						return
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}}
	_, _, err := r.Run(ctx, "job.fio")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run() error = %v, want one wrapping context.Canceled", err)
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != "SIGKILL" {
		t.Errorf("Run() error = %v, want it to hold fio killed by signal SIGKILL", err)
	}
	k, ok := child.Load().(procKey)
	if !ok {
		t.Fatal("never saw the stand-in's setsid child")
	}
	waitGone(t, "process group", -int(pgid.Load()))
	if _, start, ok := readStat(k.pid); ok && start == k.start {
		waitGone(t, "child in its own session", k.pid)
	}
}

func lookTool(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range []string{"/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	unavailable(t, "%s is not installed", name)
	return ""
}

// TestLiveRandRead runs a short random read with group_reporting on a loop
// device and checks that Result.IOPS is fio's own iops for the run.
func TestLiveRandRead(t *testing.T) {
	dev := loopDevice(t, 256<<20)
	job := Job{Name: "live", RW: "randread", BS: 4096, IODepth: 16, NumJobs: 4, RWMixRead: -1,
		IOEngine: "libaio", Direct: true, Runtime: time.Second, RampTime: 200 * time.Millisecond,
		GroupReporting: true, Targets: []Target{{Path: dev}}}
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := Runner{}.Run(testContext(t), writeJobFile(t, job.File()))
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	out, err := Parse(stdout)
	if err != nil {
		t.Fatal(err)
	}
	fioJobs := lastObject(t, stdout).jobs()
	if len(fioJobs) != 1 {
		t.Fatalf("fio printed %d job entries, want 1 with group_reporting", len(fioJobs))
	}
	want := fioJobs[0].obj("read").num("iops")
	got := out.Total()
	if got.Read.TotalIOs == 0 || !closeTo(got.IOPS, want) {
		t.Errorf("Total().IOPS = %.6f, fio printed iops %.6f", got.IOPS, want)
	}
	if g := out.Groups(); len(g) != 1 || !closeTo(g[0].IOPS, want) {
		t.Errorf("Groups() = %+v, want one group with IOPS %.6f", g, want)
	}
	if len(got.Errors) != 0 {
		t.Errorf("Errors = %q, want none", got.Errors)
	}
	t.Logf("%s: %.0f IOPS, p99 %.0f ns", dev, got.IOPS, got.Read.P99Ns)
}

// TestRunKillsOrphans: the stand-in ends by itself while a child it left in
// a session of its own runs on, as fio's job processes do when fio dies;
// Run must not return with that child alive.
func TestRunKillsOrphans(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		unavailable(t, "no /proc: %v", err)
	}
	setsid, sleep := lookTool(t, "setsid"), lookTool(t, "sleep")
	// The child's stdout and stderr do not go to Run's pipes; if they did,
	// Run would wait Grace for it to close them before finishing.
	standIn(t, setsid+" "+sleep+" 30 >/dev/null 2>&1 &\necho $!\n"+sleep+" 2\n")
	stdout, _, err := Runner{}.Run(testContext(t), "job.fio")
	if err != nil {
		t.Fatalf("Run() error = %v, want nil", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(stdout)))
	if err != nil {
		t.Fatalf("stand-in printed %q, want its child's pid", stdout)
	}
	waitGone(t, "child in its own session", pid)
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}
