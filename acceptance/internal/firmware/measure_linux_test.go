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
func TestMeasureInterruptsFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skipf("needs fio: %v", err)
	}
	dir := t.TempDir()
	job := filepath.Join(dir, "cell.fio")
	require.NoError(t, os.WriteFile(job, []byte("[cell]\nfilename="+filepath.Join(dir, "f")+"\nsize=4m\nrw=randread\nbs=4k\ntime_based=1\nruntime=60\n"), 0o644))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	_, err := Measure(ctx, job, "iops", filepath.Join(dir, "out"))
	require.Error(t, err)
	b, rerr := os.ReadFile(filepath.Join(dir, "out", "cell.json"))
	require.NoError(t, rerr)
	assert.Contains(t, string(b), `"jobname" : "cell"`, "fio was interrupted and wrote its report")
}
