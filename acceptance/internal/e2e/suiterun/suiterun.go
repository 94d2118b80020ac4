// Package suiterun runs the acceptance suite as a user would, for the
// integration tests that are packages of their own.
//
// Those are packages of their own so that go test runs them beside the
// others; suiterun compiles the suite's test binary, runs it and reads the
// results.json it wrote.
package suiterun

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Build compiles the acceptance suite's test binary into dir (BuildCommand)
// and returns its path, for a test that runs the suite as a user would.
func Build(t testing.TB, dir string) string {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "acceptance.test")
	if out, err := BuildCommand(filepath.Join(root, "acceptance"), bin).CombinedOutput(); err != nil {
		t.Fatalf("building the acceptance suite: %v\n%s", err, out)
	}
	return bin
}

// BuildCommand is go test -c of the suite in acceptanceDir, the module's
// acceptance directory, into bin. Without vet (-vet=off): go vet ./...
// (make test, make lint) vets the suite's package, and go test -c ran vet
// again over it and, for their facts, the 340-odd packages it imports, for
// each test package that builds it (340 vet processes, 21 CPU-seconds of a
// make test with a cold build cache).
func BuildCommand(acceptanceDir, bin string) *exec.Cmd {
	build := exec.Command("go", "test", "-c", "-vet=off", "-o", bin, ".")
	build.Dir = acceptanceDir
	return build
}

// Run runs the compiled suite bin with args, as go test would run it
// once with -timeout (-test.count=1), and returns what it printed; a
// non-zero exit fails t with that output.
func Run(t testing.TB, bin string, timeout time.Duration, args ...string) string {
	t.Helper()
	return run(t, exec.Command(bin, append([]string{"-test.count=1", "-test.timeout=" + timeout.String()}, args...)...), bin, args)
}

// RunThrottled is Run at the lowest CPU priority (nice 19), fio included,
// in th's cgroup: a test that keeps fio busy for minutes leaves the CPUs
// to the tests that go test runs beside it, which measure against
// figures, and its device's write IOPS stay at th's rate, whatever those
// tests leave it.
func RunThrottled(t testing.TB, th testenv.Throttle, bin string, timeout time.Duration, args ...string) string {
	t.Helper()
	return run(t, th.Command("nice", append([]string{"-n", "19", bin, "-test.count=1", "-test.timeout=" + timeout.String()}, args...)...), bin, args)
}

func run(t testing.TB, cmd *exec.Cmd, bin string, args []string) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Results reads the results.json of a run's -report directory.
func Results(t testing.TB, reportDir string) report.Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(reportDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	return run
}
