//go:build linux

package firmware

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A re-measure stopped by the run is interrupted (SIGINT to fio's own
// process group, so fio still writes its report), not killed outright.
// It is stopped once fio's job has its file open: a fio interrupted
// before its job started (as a loaded host can leave it for seconds)
// writes no report, which is not what this test is about.
func TestMeasureInterruptsFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skipf("needs fio: %v", err)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(target, make([]byte, 4<<20), 0o644))
	job := filepath.Join(dir, "cell.fio")
	require.NoError(t, os.WriteFile(job, []byte("[cell]\nfilename="+target+"\nsize=4m\nrw=randread\nbs=4k\ntime_based=1\nruntime=300\n"), 0o644))
	// /proc's links name the file by its resolved path.
	resolved, err := filepath.EvalSymlinks(target)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		defer cancel()
		for deadline := time.Now().Add(time.Minute); ctx.Err() == nil && !openedBySomeone(resolved); {
			if time.Now().After(deadline) {
				t.Logf("no process had %s open a minute after fio started: interrupting it anyway", resolved)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
	}()
	_, err = Measure(ctx, job, "iops", filepath.Join(dir, "out"))
	require.Error(t, err)
	b, rerr := os.ReadFile(filepath.Join(dir, "out", "cell.json"))
	require.NoError(t, rerr)
	assert.Contains(t, string(b), `"jobname" : "cell"`, "fio was interrupted and wrote its report")
}

// openedBySomeone reports whether any process has path open.
func openedBySomeone(path string) bool {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == path {
			return true
		}
	}
	return false
}
