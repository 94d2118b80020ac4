package fleetcheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// A cell output reached through a symlinked directory of the recording
// is not hashed: the fleet's check of copies reads only the recording's
// own files, as the replay does. Before, only the last component was
// opened without following a symlink, and a file outside was read.
func TestOutputSumsReadOnlyTheRecording(t *testing.T) {
	top := t.TempDir()
	dir, outside := filepath.Join(top, "rec"), filepath.Join(top, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "TestSingleDrive", "1TB"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TestSingleDrive", "1TB", "A.json"), []byte("{}"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "B.json"), []byte("CANARY"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "TestSingleDrive", "2TB")))
	sums := outputSums(dir, record.Run{Tests: []string{"TestSingleDrive/1TB/A", "TestSingleDrive/2TB/B"}})
	assert.Contains(t, sums, "TestSingleDrive/1TB/A.json")
	assert.NotContains(t, sums, "TestSingleDrive/2TB/B.json", "hashed through a symlinked directory")
}
