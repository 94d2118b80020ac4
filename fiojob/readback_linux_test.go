package fiojob

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
func TestReadBackMemoryIsBounded(t *testing.T) {
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
	cmd := exec.CommandContext(t.Context(), fio, "--output-format=json", writeJobFile(t, job.File()))
	cmd.Stderr = &stderr
	stdout, _ := cmd.Output()
	out, err := Parse(stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	if g := out.Groups(); len(g) != 24 || len(g[0].Errors) == 0 {
		t.Fatalf("fio reported %d groups, want 24 that fail on the zeros they read", len(g))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage for fio")
	}
	peak := ru.Maxrss << 10 // KiB on Linux
	t.Logf("fio's peak resident memory for 24 × %d bytes: %d MiB", size, peak>>20)
	if peak >= 256<<20 {
		t.Errorf("fio peaked at %d MiB, want below 256 MiB", peak>>20)
	}
}
