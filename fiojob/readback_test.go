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

// buffered makes a fill of one regular file that any filesystem takes:
// psync, no O_DIRECT.
func buffered(path string, id uint64) Job {
	j := Fill([]Target{{Path: path, Size: tailSize}}, 1, id)
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
