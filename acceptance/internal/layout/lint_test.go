package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRunsLint: .ci/run stops on the first failing command (set -e)
// and runs make lint before make test, and make lint's first check,
// gofmt, fails a tree that holds an unformatted Go file, naming it. The
// other checks (go vet for Linux and macOS, the macOS build, actionlint)
// are commands whose failure make reports as its own.
func TestCIRunsLint(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(moduleRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(script), "\n")
	at := func(want string) int {
		for i, l := range lines {
			if strings.TrimSpace(l) == want {
				return i
			}
		}
		return -1
	}
	if at("set -euo pipefail") < 0 {
		t.Error(".ci/run does not stop on a failing command (set -euo pipefail)")
	}
	if lint, test := at("make lint"), at("make test"); lint < 0 || test < 0 || lint > test {
		t.Errorf(".ci/run: make lint at line %d, make test at %d; want make lint first", lint+1, test+1)
	}
	makefile := readMakefile(t)
	for _, check := range []string{"gofmt", "$(GO) vet ./...", "GOOS=darwin $(GO) vet ./...", "GOOS=darwin $(GO) build ./...",
		"GOOS=darwin $(GO) test -c -o /dev/null ./acceptance", "$(GO) tool actionlint"} {
		if !strings.Contains(string(makefile), check) {
			t.Errorf("make lint does not run %q", check)
		}
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), makefile, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte("package bad\nfunc  F( ) {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "bad.go"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command("make", "-C", dir, "lint")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "gofmt would change:") || !strings.Contains(string(out), "bad.go") {
		t.Errorf("make lint on an unformatted file: %v\n%s\nwant it failed naming bad.go", err, out)
	}
}
