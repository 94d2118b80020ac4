//go:build linux

package qual

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A resume reads each drive's data sample before it trusts anything
// recorded of it, and refuses run.json unless its sha256 beside it
// matches; each refusal leaves the drives and the recording as they were.
func TestResumeChecksDataAndRunJSON(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	drives := sparseDrives(t, 2, 64<<20)
	cfg := interruptedAtSetup(t, spec, drives)
	recordingSums := func() map[string]string {
		out := map[string]string{}
		for _, f := range []string{record.RunFile, record.SumFile} {
			out[f] = testenv.SHA256(t, filepath.Join(cfg.Record, f))
		}
		for _, d := range drives {
			out[d] = testenv.SHA256(t, d)
		}
		return out
	}
	_, errs := resumeSetup(t, cfg)
	require.Empty(t, errs, "the same drives, as they were left")

	t.Run("a drive written since", func(t *testing.T) {
		f, err := os.OpenFile(drives[1], os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("written since"), 64<<20-4096)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		t.Cleanup(func() {
			// Blank again, as recorded.
			require.NoError(t, os.Truncate(drives[1], 0))
			require.NoError(t, os.Truncate(drives[1], 64<<20))
		})
		before := recordingSums()
		_, errs := resumeSetup(t, cfg)
		require.Len(t, errs, 1, errText(errs))
		assert.Contains(t, errs[0].Error(), "parsing -resume: "+drives[1]+" (drive 2 of the interrupted run in "+cfg.Record+") does not hold what the interrupted run left on it: the 128 KiB block at byte offset 66977792 (region 32 of the 32 sampled) holds other data now, was zeros; nothing was writing it when the run stopped (its sample was read after setup, before the run's first step, no step of the run had written it)")
		assert.Contains(t, errs[0].Error(), "start a new run with a new -record directory (without -resume)")
		assert.Equal(t, before, recordingSums(), "a refused resume changes nothing")
	})
	t.Run("run.json edited", func(t *testing.T) {
		path := filepath.Join(cfg.Record, record.RunFile)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, os.WriteFile(path, data, 0o644)) })
		require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
		before := recordingSums()
		_, errs := resumeSetup(t, cfg)
		require.Len(t, errs, 1, errText(errs))
		assert.Regexp(t, `^parsing -resume: run.json \(edited after recording: sha256 [0-9a-f]{12}…, recorded [0-9a-f]{12}…\) in `, errs[0].Error())
		assert.Equal(t, before, recordingSums(), "a refused resume changes nothing")
	})
	t.Run("no sha256 of run.json", func(t *testing.T) {
		sum := filepath.Join(cfg.Record, record.SumFile)
		data, err := os.ReadFile(sum)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, os.WriteFile(sum, data, 0o644)) })
		require.NoError(t, os.Remove(sum))
		_, errs := resumeSetup(t, cfg)
		require.Len(t, errs, 1, errText(errs))
		assert.Contains(t, errs[0].Error(), "parsing -resume: "+filepath.Join(cfg.Record, record.RunFile)+" has no run.json.sha256 beside it: it was recorded by a drivequal that did not keep run.json's sha256, or the file was removed")
		assert.Contains(t, errs[0].Error(), "-replay="+cfg.Record)
	})
	_, errs = resumeSetup(t, cfg)
	require.Empty(t, errs, "restored: the same run resumes again")
}
