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

// These tests run the fake nvme-cli, which only Linux starts.

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

// A sanitize the interrupted run sent (run.json's sanitize_sent) is still
// in progress when the run is resumed: the resume waits for it through
// the sanitize log and sends no other, which the controller would refuse;
// a controller not in the list is sanitized as always.
func TestRunWaitsForAnInterruptedSanitize(t *testing.T) {
	argv, l := resumeSanitize(t, "/dev/nvme0")
	if strings.Contains(argv, "sanitize /dev/nvme0 ") {
		t.Errorf("a second sanitize was sent to nvme0 while the first was in progress:\n%s", argv)
	}
	if !strings.Contains(argv, "sanitize /dev/nvme1 --sanact=") {
		t.Errorf("nvme1, not sent one before, was not sanitized:\n%s", argv)
	}
	joined := strings.Join(l.lines, "\n")
	for _, w := range []string{"/dev/nvme0: the sanitize the interrupted run sent is in progress (50.0% done): waiting for it, not sending another", "/dev/nvme0: sanitize (block erase) done"} {
		if !strings.Contains(joined, w) {
			t.Errorf("log does not say %q:\n%s", w, joined)
		}
	}
}

// resumeSanitize resumes a sanitize of two fake controllers, nvme0
// (whose sanitize is in progress) and nvme1 (idle), after a run that had
// sent one to sent; it returns the nvme-cli argv and the log.
func resumeSanitize(t *testing.T, sent string) (argv string, l *logs) {
	t.Helper()
	argvFile, dir := fakeNVMe(t)
	final(t, dir, "nvme0", "sanitize-log-v2.3-completed.json")
	final(t, dir, "nvme1", "sanitize-log-v2.3-completed.json")
	idle(t, dir, "nvme1")
	targets := []device.Info{ns("nvme0n1", "nvme0", "nvme0n1"), ns("nvme1n1", "nvme1", "nvme1n1")}
	steps, errs := Plan(targets, Sanitize, map[string]nvme.Controller{"nvme0": perNamespace, "nvme1": perNamespace})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	l = &logs{}
	if err := (Runner{Poll: time.Millisecond, Sent: []string{sent}}).Run(context.Background(), steps, nil, l.logf); err != nil {
		t.Fatalf("Run = %v", err)
	}
	b, _ := os.ReadFile(argvFile)
	return string(b), l
}

// idle makes the fake controller ctrl's sanitize log read its final
// state (an earlier sanitize completed) from the first read: no sanitize
// runs on it until one is sent.
func idle(t *testing.T, dir, ctrl string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "polled-"+ctrl), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A reboot between the kill and the resume named the controllers in
// the other order: the sanitize the interrupted run sent to /dev/nvme1
// runs on the controller now /dev/nvme0. The resume finds it there, in
// progress, through the sanitize log and waits for it (a second sanitize
// would be refused, failing a good drive's purge), and sanitizes the
// controller now /dev/nvme1, whose log shows only an older one.
func TestRunWaitsForAnInterruptedSanitizeOnARenamedController(t *testing.T) {
	argv, l := resumeSanitize(t, "/dev/nvme1")
	if strings.Contains(argv, "sanitize /dev/nvme0 ") {
		t.Errorf("a second sanitize was sent to nvme0 while the first was in progress:\n%s", argv)
	}
	if !strings.Contains(argv, "sanitize /dev/nvme1 --sanact=") {
		t.Errorf("nvme1, whose log shows no sanitize in progress, was not sanitized:\n%s", argv)
	}
	joined := strings.Join(l.lines, "\n")
	if w := "/dev/nvme0: the sanitize the interrupted run sent (to /dev/nvme1, named otherwise now) is in progress (50.0% done): waiting for it"; !strings.Contains(joined, w) {
		t.Errorf("log does not say %q:\n%s", w, joined)
	}
}
