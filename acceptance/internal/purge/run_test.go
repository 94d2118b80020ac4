package purge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
