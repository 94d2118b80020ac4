package firmware

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// fio's latency logs of a step are found by name in the step's own
// directory: a glob of the whole path read a -record directory "run[1]"
// as a pattern and read run1's.
func TestLogFilesInTheirOwnDirectory(t *testing.T) {
	mine, _ := testenv.GlobTwins(t, "step-load_clat.1.log")
	_, err := readLogFiles(filepath.Join(mine, "step"))
	assert.ErrorContains(t, err, "fio wrote no latency log under "+filepath.Join(mine, "step"))
}
