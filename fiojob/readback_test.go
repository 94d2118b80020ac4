package fiojob

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tailSize is 64 MiB and the 90,112 bytes an IDEMA capacity holds past
// its last 128 KiB block.
const tailSize = 64<<20 + 90112

// runFio runs job with real fio and returns its parsed output and stderr.
func runFio(t *testing.T, fio string, job Job) (*Output, string, error) {
	t.Helper()
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), fio, "--output-format=json", writeJobFile(t, job.File()))
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	out, perr := Parse(stdout)
	if perr != nil {
		t.Fatalf("%v\n%s", perr, stderr.Bytes())
	}
	return out, stderr.String(), err
}

// buffered makes a one-pass fill of one regular file that any filesystem
// takes: psync, no O_DIRECT.
func buffered(path string, id uint64) Job { return bufferedPasses(path, 1, id) }

// bufferedPasses is buffered with passes passes.
func bufferedPasses(path string, passes int, id uint64) Job {
	j := Fill([]Target{{Path: path, Size: tailSize}}, passes, id)
	j.IOEngine, j.Direct, j.IODepth = "psync", false, 1
	return j
}

// TestReadBackEveryByte fills a file of an IDEMA-like size (a tail past
// the last 128 KiB block) and reads it back with real fio: the read-back,
// split over 4 jobs, reads every byte in one group; a change in the last
// 4 KiB fails at that offset; another fill's blocks (another id) fail at
// byte 8 of the first block of each job, the fill's id.
func TestReadBackEveryByte(t *testing.T) {
	fio := needFio(t)
	path := filepath.Join(t.TempDir(), "drive.img")
	fill := buffered(path, 0x1111111111111111)
	if _, stderr, err := runFio(t, fio, fill); err != nil {
		t.Fatalf("fill: %v\n%s", err, stderr)
	}
	read := VerifyPass(fill, 4)
	out, stderr, err := runFio(t, fio, read)
	if err != nil {
		t.Fatalf("read-back of a good file: %v\n%s", err, stderr)
	}
	if g := out.Groups(); len(g) != 1 || g[0].Read.IOBytes != tailSize || g[0].Jobs != 1 {
		t.Fatalf("read-back: %d groups, %+v; want one group that read %d bytes", len(g), g, tailSize)
	}

	// The last 4 KiB changed: the tail's last 8 KiB block fails at its byte 4,096.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, 4096), tailSize-4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, stderr, err = runFio(t, fio, read)
	if err == nil {
		t.Fatal("a changed tail read back clean")
	}
	if want := "pattern: verify failed at file " + path + " offset 67190784,"; !strings.Contains(stderr, want) {
		t.Errorf("fio's stderr does not say %q:\n%s", want, stderr)
	}

	// Another fill (another id) over the same file.
	if _, stderr, err := runFio(t, fio, buffered(path, 0x2222222222222222)); err != nil {
		t.Fatalf("second fill: %v\n%s", err, stderr)
	}
	_, stderr, err = runFio(t, fio, read)
	if err == nil {
		t.Fatal("another fill's data read back clean")
	}
	if n := strings.Count(stderr, "fio: bad pattern block offset 8\n"); n != 5 {
		t.Errorf("%d jobs failed at byte 8 (the fill's id), want all 5 (4 ranges and the tail):\n%s", n, stderr)
	}
}

// A drive that kept the first pass of a two-pass fill and dropped the
// last must fail the read-back: each pass of a fill writes its own
// pattern (the pass number in the fill's id), and the read-back expects
// the last pass's. The first pass of a fill writes what a one-pass fill
// of the same id writes; with real fio, a file that holds only that fails
// at byte 14 or 15 of its blocks (the pass number), while the whole fill
// reads back clean.
func TestReadBackRefusesAnEarlierPass(t *testing.T) {
	fio := needFio(t)
	path := filepath.Join(t.TempDir(), "drive.img")
	const id = 0x3333333333333333
	fill := bufferedPasses(path, 2, id)
	first := buffered(path, id)
	if !strings.Contains(fill.File(), "verify_pattern="+first.VerifyPattern+"\n") {
		t.Fatalf("the two-pass fill does not write the one-pass fill's pattern in its first pass:\n%s", fill.File())
	}
	read := VerifyPass(fill, 4)

	if _, stderr, err := runFio(t, fio, fill); err != nil {
		t.Fatalf("fill: %v\n%s", err, stderr)
	}
	if _, stderr, err := runFio(t, fio, read); err != nil {
		t.Fatalf("read-back of the whole two-pass fill: %v\n%s", err, stderr)
	}

	// The last pass dropped: the drive holds what the first pass wrote.
	if _, stderr, err := runFio(t, fio, first); err != nil {
		t.Fatalf("first pass: %v\n%s", err, stderr)
	}
	_, stderr, err := runFio(t, fio, read)
	if err == nil {
		t.Fatal("a drive holding only the fill's first pass read back clean")
	}
	if n := strings.Count(stderr, "fio: bad pattern block offset 14\n") + strings.Count(stderr, "fio: bad pattern block offset 15\n"); n != 5 {
		t.Errorf("%d jobs failed at the pass number (byte 14 or 15), want all 5 (4 ranges and the tail):\n%s", n, stderr)
	}
}
