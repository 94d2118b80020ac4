//go:build linux

package qual

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
)

// A new run on the -record directory of a run that did not run to its
// end is refused before anything is written, naming the directory and
// the three ways on; -overwrite replaces it, saying so; once the run is
// marked finished, a new run replaces it and says so.
func TestNewRunOverUnfinishedRecording(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	drives := sparseDrives(t, 1, 64<<20)
	cfg := interruptedAtSetup(t, spec, drives)
	tree := func() map[string]string {
		out := map[string]string{}
		require.NoError(t, filepath.WalkDir(cfg.Record, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, rerr := os.ReadFile(p)
				require.NoError(t, rerr)
				out[p] = string(data)
			}
			return err
		}))
		return out
	}
	before := tree()

	c := *cfg
	_, errs := setupOne(t, &c)
	require.Len(t, errs, 1, errText(errs))
	assert.Equal(t, "parsing -record: "+cfg.Record+" holds the recording of an unfinished run (Loop device (faults), 0 cells recorded, 1 drives): it did not run to its end; a new run would destroy it: continue it with -resume, start the new run with a new -record directory, or give -overwrite to replace it", errs[0].Error())
	assert.Equal(t, before, tree(), "the refusal writes nothing")

	c.DryRun = true
	s, errs := setupOne(t, &c)
	require.Empty(t, errs, "a dry run writes nothing: it warns")
	assert.Contains(t, s.Warnings, "a real run is refused: "+"parsing -record: "+cfg.Record+" holds the recording of an unfinished run (Loop device (faults), 0 cells recorded, 1 drives): it did not run to its end; a new run would destroy it: continue it with -resume, start the new run with a new -record directory, or give -overwrite to replace it")

	c.DryRun, c.Overwrite = false, true
	r, errs := Setup(context.Background(), &c, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	assert.Contains(t, r.ResumeLine(), "replacing, as -overwrite says, "+cfg.Record+" holds the recording of an unfinished run")
	require.NoError(t, r.Start())
	require.NoError(t, r.Finish(context.Background()))
	require.NoError(t, r.Close())

	// Finished: a new run replaces it, and says so.
	c.Overwrite = false
	r, errs = Setup(context.Background(), &c, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs, errText(errs))
	assert.Equal(t, "replacing the finished recording in "+cfg.Record, r.ResumeLine())
	require.NoError(t, r.Start())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, r.Finish(ctx), "a stopped run is not marked")
	require.NoError(t, r.Close())
	_, errs = setupOne(t, &c)
	require.Len(t, errs, 1, "stopped: unfinished again")
}

// A recording made before run.json listed the sha256 of its files (the
// 24-drive loop run of fixtures/loop24, format 2) still replays, saying
// it carries none.
func TestReplayOfUnhashedRecording(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "fixtures", "loop24")
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Replays: []string{dir}, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := setupOne(t, cfg)
	require.Empty(t, errs, errText(errs))
	require.NotNil(t, s.Report.Recording)
	assert.True(t, s.Report.Recording.Unhashed)
	assert.Contains(t, s.Warnings, dir+" carries no sha256 of its files (run.json format 2): whether one was edited after recording cannot be told")
}

// A resume refuses a recording whose listed file was edited since it was
// recorded, naming it; a file that is gone is said, and what needs it is
// measured again.
func TestResumeRefusesAnEditedFile(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	cfg := interruptedAtSetup(t, spec, sparseDrives(t, 1, 64<<20))
	const test = "TestSingleDrive/64MiB/4KB_Random_Read"
	out, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010", "TestSingleDrive", "1.92TB", "4KB_Random_Read.json"))
	require.NoError(t, err)
	p := record.Base(cfg.Record, test) + record.OutputExt
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, out, 0o644))
	sums, err := record.HashFiles(cfg.Record, []string{test + ".json"})
	require.NoError(t, err)
	editRunJSON(t, cfg, func(r *record.Run) { r.Tests, r.Files = []string{test}, sums })
	_, errs := resumeSetup(t, cfg)
	require.Empty(t, errs, errText(errs))

	require.NoError(t, os.WriteFile(p, append(out, ' '), 0o644))
	_, errs = resumeSetup(t, cfg)
	require.Len(t, errs, 1, errText(errs))
	assert.Regexp(t, `^parsing -resume: TestSingleDrive/64MiB/4KB_Random_Read.json \(edited after recording: sha256 [0-9a-f]{12}…, recorded [0-9a-f]{12}…\) in `+cfg.Record+`: a resume keeps the recording as measured; restore the file, judge the recording as it is with -replay=`, errs[0].Error())

	require.NoError(t, os.Remove(p))
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs, errText(errs))
	assert.Contains(t, s.Warnings, cfg.Record+": "+test+".json (missing since it was recorded): what needs it is measured again")
	assert.False(t, s.resume.kept[test], "measured again")
}
