package purge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

const fixtures = "../../../fixtures/nvme"

// fakeNVMe puts an nvme script on PATH that appends its argv to a file and
// answers sanitize-log, per controller, with the fixture in-progress log on
// the first poll and with $dir/final-<ctrl>.json after it. It returns the
// argv file and dir.
func fakeNVMe(t *testing.T) (argvFile, dir string) {
	t.Helper()
	dir = t.TempDir()
	argvFile = filepath.Join(dir, "argv")
	inProgress, err := filepath.Abs(filepath.Join(fixtures, "sanitize-log-v2.8-in-progress.json"))
	if err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
echo "$@" >> ` + argvFile + `
case "$1" in
sanitize|format) exit 0;;
sanitize-log)
	c=$(basename "$2")
	if [ -e ` + dir + `/polled-$c ]; then cat ` + dir + `/final-$c.json; else touch ` + dir + `/polled-$c; cat ` + inProgress + `; fi;;
*) echo "fake nvme: unexpected $1" >&2; exit 1;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "nvme"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argvFile, dir
}

func final(t *testing.T, dir, ctrl, fixture string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "final-"+ctrl+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type recordingDiscarder struct {
	mu    sync.Mutex
	paths []string
}

func (d *recordingDiscarder) Discard(path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paths = append(d.paths, path)
	return nil
}

type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func TestRunSanitizeOncePerController(t *testing.T) {
	argvFile, dir := fakeNVMe(t)
	final(t, dir, "nvme0", "sanitize-log-v2.16-completed-no-dealloc.json") // status 4 is done
	final(t, dir, "nvme1", "sanitize-log-v2.3-completed.json")
	a := []string{"nvme0n1", "nvme0n2"}
	targets := []device.Info{ns("nvme0n1", "nvme0", a...), ns("nvme0n2", "nvme0", a...), ns("nvme1n1", "nvme1", "nvme1n1"),
		{Path: "/dev/loop0", Resolved: "/dev/loop0", Name: "loop0", Block: true}}
	ctrls := map[string]nvme.Controller{"nvme0": perNamespace, "nvme1": eraseAll}
	steps, errs := Plan(targets, Sanitize, ctrls)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var d recordingDiscarder
	var l logs
	if err := (Runner{Poll: time.Millisecond}).Run(context.Background(), steps, &d, l.logf); err != nil {
		t.Fatalf("Run = %v", err)
	}
	b, _ := os.ReadFile(argvFile)
	var sanitizes []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "sanitize ") {
			sanitizes = append(sanitizes, line)
		}
	}
	sort.Strings(sanitizes)
	want := []string{"sanitize /dev/nvme0 --sanact=2", "sanitize /dev/nvme1 --sanact=4"}
	if strings.Join(sanitizes, "\n") != strings.Join(want, "\n") {
		t.Errorf("nvme sanitize ran as\n%s\nwant once per controller:\n%s", strings.Join(sanitizes, "\n"), strings.Join(want, "\n"))
	}
	if strings.Count(string(b), "sanitize-log /dev/nvme0 -o json") != 2 {
		t.Errorf("sanitize log of nvme0 read %d times, want 2 (in progress, then done):\n%s", strings.Count(string(b), "sanitize-log /dev/nvme0"), b)
	}
	if strings.Join(d.paths, ",") != "/dev/loop0" {
		t.Errorf("discarded %v, want the loop device only", d.paths)
	}
	joined := strings.Join(l.lines, "\n")
	for _, w := range []string{"50.0% done", "/dev/nvme0: sanitize (block erase) done", "/dev/loop0: purge \"sanitize\" needs an NVMe namespace"} {
		if !strings.Contains(joined, w) {
			t.Errorf("log does not say %q:\n%s", w, joined)
		}
	}
}

func TestRunSanitizeFailed(t *testing.T) {
	_, dir := fakeNVMe(t)
	final(t, dir, "nvme0", "sanitize-log-v2.16-failed.json")
	steps, errs := Plan([]device.Info{ns("nvme0n1", "nvme0", "nvme0n1")}, Sanitize, map[string]nvme.Controller{"nvme0": perNamespace})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	err := Runner{Poll: time.Millisecond}.Run(context.Background(), steps, nil, nil)
	if err == nil {
		t.Fatal("Run = nil, want the failed sanitize")
	}
	for _, w := range []string{"/dev/nvme0n1", "/dev/nvme0", "failed", "Most Recent Sanitize Command Failed.", "--sanact=1", "purge with format"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Run error %q does not say %q", err, w)
		}
	}
}

func TestRunPunchHole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drive.img")
	data := []byte(strings.Repeat("x", 1<<16))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	steps, _ := Plan([]device.Info{{Path: path, Size: int64(len(data))}}, Format, nil)
	if err := Run(context.Background(), steps, nil, nil); err != nil {
		t.Skipf("this file system cannot punch holes: %v", err)
	}
	got, _ := os.ReadFile(path)
	if len(got) != len(data) || strings.Trim(string(got), "\x00") != "" {
		t.Errorf("after the punch hole the file is %d bytes, not all zero", len(got))
	}
}

func TestRunCancelled(t *testing.T) {
	fakeNVMe(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	steps, _ := Plan([]device.Info{ns("nvme0n1", "nvme0", "nvme0n1")}, Format, map[string]nvme.Controller{"nvme0": perNamespace})
	if err := Run(ctx, steps, nil, nil); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Run(cancelled) = %v, want context canceled", err)
	}
}
