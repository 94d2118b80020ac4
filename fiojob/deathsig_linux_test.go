package fiojob

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// parentEnv, when set, makes TestRunDiesWithParent the helper parent
// process: it runs the job file the variable names through Runner.Run,
// prints "fio pid N" once fio has started and blocks until it is killed.
const parentEnv = "DRIVEQUAL_FIOJOB_TEST_PARENT"

// TestRunDiesWithParent: the process running Run is killed with SIGKILL (as
// the OOM killer or a CI runner's hard cancel would), so none of its clean-up
// runs; the fio it started must die with it rather than run to the end of its
// 60 s runtime. The test binary is re-executed as that parent.
func TestRunDiesWithParent(t *testing.T) {
	if job := os.Getenv(parentEnv); job != "" {
		beParent(job)
		return
	}
	t.Run("stand-in", func(t *testing.T) {
		// A stand-in that becomes a 60 s sleep, which has no signal
		// handlers and ignores its parent's death unless the kernel acts.
		dir := t.TempDir()
		script := "#!/bin/sh\nexec " + lookTool(t, "sleep") + " 60\n"
		if err := os.WriteFile(filepath.Join(dir, "fio"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		killParent(t, dir, "job.fio")
	})
	t.Run("fio", func(t *testing.T) {
		// Real fio, one job as a thread (as Job.File writes them) doing
		// rate-limited I/O to nothing for 60 s.
		fio := needFio(t)
		job := writeJobFile(t, `[global]
ioengine=null
thread=1
rw=write
bs=4096
size=1m
rate_iops=100
time_based=1
runtime=60

[null0]
`)
		killParent(t, filepath.Dir(fio), job)
	})
}

// beParent is the helper parent: it never returns.
func beParent(job string) {
	r := Runner{Started: func(pid int) { fmt.Printf("fio pid %d\n", pid) }}
	_, stderr, err := r.Run(context.Background(), job)
	fmt.Printf("Run returned before the parent was killed: %v\n%s", err, stderr)
	os.Exit(3)
}

// killParent starts the helper parent with pathDir as its PATH (where
// "fio" is), waits for the fio it starts, kills the parent with SIGKILL
// and checks that fio is gone within 2 s.
func killParent(t *testing.T, pathDir, job string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunDiesWithParent$", "-test.count=1")
	cmd.Env = append(os.Environ(), parentEnv+"="+job, "PATH="+pathDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The pipe is read to its end (the parent's death) before Wait.
	readDone := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-readDone
		_ = cmd.Wait()
	})

	pids := make(chan int, 1)
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s, ok := strings.CutPrefix(sc.Text(), "fio pid "); ok {
				if pid, err := strconv.Atoi(s); err == nil {
					pids <- pid
				}
			} else {
				t.Logf("parent: %s", sc.Text())
			}
		}
	}()
	var fio procKey
	select {
	case pid := <-pids:
		_, start, ok := readStat(pid)
		if !ok {
			t.Fatalf("fio %d (per the parent) is not running", pid)
		}
		fio = procKey{pid, start}
	case <-time.After(10 * time.Second):
		t.Fatal("the parent printed no fio pid within 10 s")
	}
	t.Cleanup(func() {
		if !gone(fio) {
			_ = syscall.Kill(fio.pid, syscall.SIGKILL)
		}
	})
	// Give fio time to be well into its run, and check it is.
	time.Sleep(300 * time.Millisecond)
	if gone(fio) {
		t.Fatalf("fio %d ended before its parent was killed", fio.pid)
	}

	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for !gone(fio) {
		if time.Since(killed) > 2*time.Second {
			t.Fatalf("fio %d still runs 2 s after its parent was killed with SIGKILL", fio.pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("fio %d gone %v after its parent was killed", fio.pid, time.Since(killed).Round(time.Millisecond))
}

// gone reports whether process k has ended: no such pid, a zombie, or the
// pid now belongs to another process.
func gone(k procKey) bool {
	_, start, ok := readStat(k.pid)
	return !ok || start != k.start || isZombie(k.pid)
}

// TestRunOutlivesOtherThreads: Pdeathsig fires when the OS thread that
// forked fio ends, and a Go thread ends when a goroutine exits while locked
// to it. While fio runs, other goroutines of the process do exactly that;
// fio must not be killed for it. Run's goroutine parks in Started so that
// its thread would be free for them, were it not held.
func TestRunOutlivesOtherThreads(t *testing.T) {
	sleep := lookTool(t, "sleep")
	standIn(t, sleep+" 1\necho done\n")
	r := Runner{Started: func(int) {
		deadline := time.Now().Add(300 * time.Millisecond)
		for time.Now().Before(deadline) {
			var wg sync.WaitGroup
			for range 4 * runtime.GOMAXPROCS(0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
				}()
			}
			wg.Wait()
		}
	}}
	stdout, _, err := r.Run(testContext(t), "job.fio")
	var ee *ExitError
	if errors.As(err, &ee) && ee.Signal == "SIGKILL" {
		t.Fatalf("Run() error = %v: fio was killed when another goroutine's thread ended", err)
	}
	if err != nil || string(stdout) != "done\n" {
		t.Fatalf("Run() = %q, %v; want \"done\\n\", nil", stdout, err)
	}
}
