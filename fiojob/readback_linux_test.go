package fiojob

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestReadBackMemoryIsBounded runs the read-back of 24 drives of
// 15,362,991,415,296 bytes (the built-in spec's largest capacity, sparse
// files here) with real fio, split as the suite splits it (8 jobs a drive
// and the tail), and checks fio's peak resident memory: below 256 MiB,
// where verify_only logged every block before reading (about 1.6 GiB per
// 1.92 TB). The files read as zeros, so every job fails at the blocks it
// first has in flight: every buffer fio allocates is then in use, and what
// a read with verify keeps does not grow with the bytes read (the I/O
// buffers, ReadBackQueue blocks a drive, are what it holds).
//
// fio runs from a fresh process of this test binary (rssEnv), whose
// peak resident memory is small: Linux starts an exec'd program's peak at
// that of the address space exec replaces, which a child forked by Go
// shares with its parent, so fio started here reported this binary's own
// peak when that was higher (349 MiB, after the parser's memory tests).
func TestReadBackMemoryIsBounded(t *testing.T) {
	if job := os.Getenv(rssEnv); job != "" {
		runForRSS(job)
		return
	}
	fio := needFio(t)
	dir := t.TempDir()
	const size = 15362991415296
	var targets []Target
	for i := range 24 {
		p := filepath.Join(dir, fmt.Sprintf("d%d.img", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			unavailable(t, "no sparse file of %d bytes here: %v", size, err)
		}
		targets = append(targets, Target{Path: p, Size: size, CPUs: "0"})
	}
	job := VerifyPass(Fill(targets, 2, 1), 8)
	job.Direct = false // any filesystem
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	jobFile := writeJobFile(t, job.File())
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadBackMemoryIsBounded$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssEnv+"="+jobFile, "PATH="+filepath.Dir(fio)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // and fio with it (runForRSS)
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("the helper that runs fio: %v\n%s", err, stderr.Bytes())
	}
	out, err := Parse(stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	if g := out.Groups(); len(g) != 24 || len(g[0].Errors) == 0 {
		t.Fatalf("fio reported %d groups, want 24 that fail on the zeros they read", len(g))
	}
	kib, err := os.ReadFile(jobFile + ".maxrss")
	if err != nil {
		t.Fatal(err)
	}
	peak, err := strconv.ParseInt(string(kib), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	peak <<= 10 // KiB on Linux
	t.Logf("fio's peak resident memory for 24 × %d bytes: %d MiB", size, peak>>20)
	if peak >= 256<<20 {
		t.Errorf("fio peaked at %d MiB, want below 256 MiB", peak>>20)
	}
}

// rssEnv, when set, makes TestReadBackMemoryIsBounded the process that
// runs fio on the job file it names, printing fio's output and writing
// fio's peak resident memory in KiB to the file with ".maxrss" added.
const rssEnv = "DRIVEQUAL_FIOJOB_TEST_RSS"

// runForRSS is that process: it never returns.
func runForRSS(job string) {
	cmd := exec.Command("fio", "--output-format=json", job)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no resource usage for fio")
		os.Exit(2)
	}
	if err := os.WriteFile(job+".maxrss", []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}
