package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The harness against raw fio, one 1-second 4 KiB random-read cell on a
// regular file: the difference is what drivequal adds around fio (setup,
// safety checks, parse, verdict, report). Run both in one go:
//
//	go test ./acceptance/internal/e2e -run='^$' -bench=Cell -benchtime=5x
func BenchmarkCellThroughSuite(b *testing.B) {
	file, args := benchTarget(b)
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(suiteBin, append([]string{"-test.run=TestSingleDrive/1GiB/4KB_Random_Read$"}, args...)...)
		cmd.Dir = acceptanceDir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("suite on %s: %v\n%s", file, err, out)
		}
	}
}

func BenchmarkCellRawFio(b *testing.B) {
	file, args := benchTarget(b)
	// Record once through the suite to get the exact job file it runs.
	cmd := exec.Command(suiteBin, append([]string{"-test.run=TestSingleDrive/1GiB/4KB_Random_Read$"}, args...)...)
	cmd.Dir = acceptanceDir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("suite on %s: %v\n%s", file, err, out)
	}
	job := filepath.Join(reportOf(args), "raw", "TestSingleDrive", "1GiB", "4KB_Random_Read.fio")
	b.ResetTimer()
	for b.Loop() {
		if out, err := exec.Command("fio", "--output-format=json+", job).CombinedOutput(); err != nil {
			b.Fatalf("fio %s: %v\n%s", job, err, out)
		}
	}
}

func benchTarget(b *testing.B) (string, []string) {
	b.Helper()
	testenv.MustHaveFio(b)
	dir := b.TempDir()
	file := filepath.Join(dir, "target.img")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(file, 1<<30); err != nil { // the spec's 1GiB
		b.Fatal(err)
	}
	return file, []string{"-spec=" + testdataFile(b, "loop.toml"), "-drives=" + file, "-capacity=1GiB", "-destructive",
		"-precondition=none", "-runtime=1s", "-report=" + filepath.Join(dir, "report")}
}

func reportOf(args []string) string {
	for _, a := range args {
		if dir, ok := strings.CutPrefix(a, "-report="); ok {
			return dir
		}
	}
	return ""
}
