package firmware

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fio's latency logs of a step are found by name in the step's own
// directory: a glob of the whole path read a -record directory "run[1]"
// as a pattern and read run1's.
func TestLogFilesInTheirOwnDirectory(t *testing.T) {
	base := t.TempDir()
	mine, other := filepath.Join(base, "run[1]"), filepath.Join(base, "run1")
	for _, d := range []string{mine, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(other, "step-load_clat.1.log"), []byte("1, 100, 1, 4096, 0\n"), 0o644))
	_, err := readLogFiles(filepath.Join(mine, "step"))
	assert.ErrorContains(t, err, "fio wrote no latency log under "+filepath.Join(mine, "step"))
}
