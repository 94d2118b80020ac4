package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Check names each listed file edited or gone since it was recorded,
// and nothing else.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	const test = "TestSingleDrive/64MiB/4KB_Random_Read"
	require.NoError(t, os.MkdirAll(filepath.Dir(Base(dir, test)), 0o755))
	for _, ext := range []string{OutputExt, JobExt, StderrExt} {
		require.NoError(t, os.WriteFile(Base(dir, test)+ext, []byte(ext), 0o644))
	}
	require.Equal(t, []string{test + ".json", test + ".fio", test + ".stderr"}, TestFiles(dir, test))
	sums, err := HashFiles(dir, TestFiles(dir, test))
	require.NoError(t, err)
	run := Run{Files: sums}
	changed, err := Check(dir, run)
	require.NoError(t, err)
	assert.Empty(t, changed)

	require.NoError(t, os.WriteFile(Base(dir, test)+OutputExt, []byte(".json "), 0o644))
	require.NoError(t, os.Remove(Base(dir, test)+StderrExt))
	changed, err = Check(dir, run)
	require.NoError(t, err)
	require.Len(t, changed, 2)
	assert.Equal(t, test+".json", changed[0].Path)
	assert.Regexp(t, `^TestSingleDrive/64MiB/4KB_Random_Read.json \(edited after recording: sha256 [0-9a-f]{12}…, recorded [0-9a-f]{12}…\)$`, changed[0].String())
	assert.Equal(t, test+".stderr (missing since it was recorded)", changed[1].String())

	changed, err = Check(dir, Run{Files: map[string]string{"../etc/passwd": "x", "/etc/passwd": "y"}})
	require.NoError(t, err)
	require.Len(t, changed, 2)
	assert.Contains(t, changed[1].String(), `/etc/passwd (refused: "/etc/passwd" is an absolute path, outside the recording)`)
	assert.Contains(t, changed[0].String(), `../etc/passwd (refused: "../etc/passwd" climbs out of the recording (..))`)
}

// A live run's recording is unfinished until it is marked finished; a
// recording of format 2 does not say, and counts as unfinished; a replay's
// or a reconstruction's is no run to protect.
func TestUnfinished(t *testing.T) {
	for _, tt := range []struct {
		run  Run
		want string
	}{
		{Run{Format: 3, Mode: "record"}, "it did not run to its end"},
		{Run{Format: 3, Mode: "record", Resumptions: make([]report.Resumption, 2)}, "it was interrupted (resumed 2 times, not run to its end)"},
		{Run{Format: 3, Mode: "record", Finished: "2026-01-02T03:04:05Z"}, ""},
		{Run{Format: 2, Mode: "record"}, "its run.json (format 2) does not record whether it ran to its end"},
		{Run{Format: 3, Mode: "record", Reconstructed: true}, ""},
		{Run{Format: 3, Mode: "replay"}, ""},
	} {
		if got := Unfinished(tt.run); got != tt.want {
			t.Errorf("Unfinished(%+v) = %q, want %q", tt.run, got, tt.want)
		}
	}
}
