package recdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// A verify pass killed before fio printed its report is judged from its
// streamed stderr, which the live run could not hash: the replay names
// it as unvouched evidence, until run.json vouches for it.
func TestCheckFilesNamesAKilledPassStderr(t *testing.T) {
	dir := t.TempDir()
	const raw = "prepare/003-verify_pass.json"
	const stderr = "prepare/003-verify_pass.stderr"
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "prepare"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prepare", "003-verify_pass.fio"), []byte("[job]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(stderr)), []byte("fio: verify type mismatch\n"), 0o644))
	sums, err := record.HashFiles(dir, []string{"prepare/003-verify_pass.fio"})
	require.NoError(t, err)
	info := record.Run{Format: record.Format, Mode: "record", Files: sums,
		Verify: []record.Verify{{Step: 3, Name: "verify pass", Raw: raw, Running: true}}}

	c, warnings := CheckFiles(dir, info)
	require.Len(t, c.Unvouched, 1)
	assert.Contains(t, c.Unvouched[0], stderr+" (the stderr of a verify pass killed before fio printed its report")
	assert.Contains(t, c.Evidence(), "judged from 1 file run.json vouches for by no sha256 ("+stderr+")")
	assert.Contains(t, c.Line(), "whether it was edited cannot be told")
	assert.Len(t, warnings, 1)

	// Vouched for by its sha256, it is checked like every file.
	info.Files[stderr] = "0000"
	c, _ = CheckFiles(dir, info)
	assert.Empty(t, c.Unvouched)
	require.Len(t, c.Edited, 1)
	assert.Contains(t, c.Edited[0], stderr+" (edited after recording")

	// A pass whose output is on disk is judged from it, not its stderr.
	delete(info.Files, stderr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(raw)), []byte("{}"), 0o644))
	c, _ = CheckFiles(dir, info)
	assert.Empty(t, c.Unvouched)
}

// A -replay given a report directory is pointed at the recording in it:
// its raw/ first, else the first directory that holds one; a user's own
// directory of other files is not taken for one.
func TestWithinFindsTheRecordingInAReportDirectory(t *testing.T) {
	dir := t.TempDir()
	assert.Equal(t, "", Within(dir), "an empty directory holds no recording")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "charts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "charts", "a.json"), []byte("{}"), 0o644))
	assert.Equal(t, "", Within(dir), "a directory of other files is no recording")

	other := filepath.Join(dir, "a-run", "TestSingleDrive", "1.92TB")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "4KB_Random_Read.json"), []byte("{}"), 0o644))
	assert.Equal(t, filepath.Join(dir, "a-run"), Within(dir))

	raw := filepath.Join(dir, "raw", "TestScaling", "2_drives")
	require.NoError(t, os.MkdirAll(raw, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(raw, "4KB_Random_Read.json"), []byte("{}"), 0o644))
	assert.Equal(t, filepath.Join(dir, "raw"), Within(dir), "raw/ is where a run records by default")
}

// A purge.json run.json holds no sha256 of (a recording made before
// run.json hashed it) is named as unvouched; vouched for, it is checked.
func TestCheckFilesNamesAnUnhashedPurgeJSON(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.fio"), []byte("[job]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, kept.File), []byte(`{"drives": []}`), 0o644))
	sums, err := record.HashFiles(dir, []string{"run.fio"})
	require.NoError(t, err)
	info := record.Run{Format: record.Format, Mode: "record", Files: sums}
	c, _ := CheckFiles(dir, info)
	require.Len(t, c.Unvouched, 1)
	assert.Contains(t, c.Unvouched[0], kept.File+" (the purge verdicts")
	info.Files[kept.File] = "0000"
	c, _ = CheckFiles(dir, info)
	assert.Empty(t, c.Unvouched)
	require.Len(t, c.Edited, 1)
	assert.Contains(t, c.Edited[0], kept.File+" (edited after recording")
}

// A firmware.json run.json holds no sha256 of (its entry dropped from
// files) is named as unvouched.
func TestCheckFilesNamesAnUnhashedFirmwareJSON(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.fio"), []byte("[job]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, fwrun.File), []byte(`{"steps": []}`), 0o644))
	sums, err := record.HashFiles(dir, []string{"run.fio"})
	require.NoError(t, err)
	info := record.Run{Format: record.Format, Mode: "record", Files: sums}
	c, _ := CheckFiles(dir, info)
	require.Len(t, c.Unvouched, 1)
	assert.Contains(t, c.Unvouched[0], fwrun.File+" (the firmware verdicts, which run.json holds no sha256 of")
}

// A run.json whose files were emptied after recording is not taken for a
// recording made before drivequal kept the sha256s: run.json no longer
// matches the sha256 kept beside it, and the check names it as edited.
func TestCheckFilesNamesAnEmptiedRunJSON(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, record.WriteRun(dir, []byte(`{"format": 3, "files": {"powerloss/loop1/cycle_1.json": "ab"}}`), nil))
	info := record.Run{Format: record.Format, Mode: "record"}
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunFile), []byte(`{"format": 3, "files": {}}`), 0o644))
	c, warnings := CheckFiles(dir, info)
	assert.False(t, c.Unhashed, "an edited run.json is no recording made before the sha256s were kept")
	require.Len(t, c.Edited, 1)
	assert.Contains(t, c.Edited[0], record.RunFile)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "its list of files' sha256 is empty")

	// The run.json drivequal wrote, without sha256s: an old recording.
	require.NoError(t, record.WriteRun(dir, []byte(`{"format": 2}`), nil))
	c, warnings = CheckFiles(dir, info)
	assert.True(t, c.Unhashed)
	assert.Contains(t, warnings[0], "carries no sha256 of its files")
}
