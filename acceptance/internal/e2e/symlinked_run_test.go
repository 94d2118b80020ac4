//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// recordedRun is run.json in dir; zero when it does not read.
func recordedRun(dir string) record.Run {
	var r record.Run
	data, err := os.ReadFile(filepath.Join(dir, record.RunFile))
	if err == nil {
		_ = json.Unmarshal(data, &r)
	}
	return r
}

// A recording whose run.json, or its sum file, is a symlink to a copy
// elsewhere (another run's, or one edited there with its sum) is not
// resumed: the recording to resume holds its run.json itself. Refused
// before anything is written: the images and the recording (the links
// included) are left as they were.
func TestResumeRefusesASymlinkedRunJSON(t *testing.T) {
	runParallel(t)
	testenv.MustHaveLoop(t)
	img := sparseImage(t, t.TempDir(), "a.img", safetySize)
	dev := testenv.Attach(t, img)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	killedAfterACell(t, rep, dev)

	elsewhere := t.TempDir()
	for _, name := range []string{record.RunFile, record.SumFile} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(raw, name)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			copied := filepath.Join(elsewhere, name)
			require.NoError(t, os.WriteFile(copied, data, 0o644))
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink(copied, p))
			defer func() {
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.WriteFile(p, data, 0o644))
			}()

			settled(t, dev)
			devBefore, recording := deviceSum(t, dev), sums(t, raw, "")
			res := runSuite(t, []string{"-test.run=" + resumeRun}, resumeArgs(t, rep, dev)...)
			noFioLeft(t)
			assert.Equal(t, 2, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
			assert.Contains(t, res.Stderr, "parsing -resume: "+p+": is a symlink (to ")
			assert.Contains(t, res.Stderr, "not a regular file: a recording holds only regular files")
			assert.NotContains(t, res.Stdout, "=== RUN", "no subtest may start after a refusal")
			assert.Equal(t, devBefore, deviceSum(t, dev), "a refused resume writes nothing to the image")
			assert.Equal(t, recording, sums(t, raw, ""), "a refused resume changes nothing in the recording")
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is left as it was")
		})
	}
}
