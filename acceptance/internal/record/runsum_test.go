package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run.json's sha256 is kept beside it with each write; Check names
// run.json when it does not match, and accepts it between the writes a
// kill may land between.
func TestCheckRunJSON(t *testing.T) {
	dir := t.TempDir()
	v1, v2 := []byte(`{"format": 3, "tests": []}`+"\n"), []byte(`{"format": 3, "tests": ["A"]}`+"\n")
	run := Run{Samples: &Samples{}}
	require.NoError(t, WriteRun(dir, v1, nil))
	changed, err := Check(dir, run)
	require.NoError(t, err)
	assert.Empty(t, changed, "as written")
	sumFile, err := os.ReadFile(filepath.Join(dir, SumFile))
	require.NoError(t, err)
	assert.Equal(t, sumOf(v1)+"  run.json\n", string(sumFile), "sha256sum's format")

	require.NoError(t, WriteRun(dir, v2, v1))
	changed, err = Check(dir, run)
	require.NoError(t, err)
	assert.Empty(t, changed, "rewritten")

	// Stopped between the sum file listing both and run.json's rename:
	// the old run.json is still vouched for, and so is the new one.
	require.NoError(t, os.WriteFile(filepath.Join(dir, SumFile), sumLines(sumOf(v2), sumOf(v1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunFile), v1, 0o644))
	changed, err = Check(dir, run)
	require.NoError(t, err)
	assert.Empty(t, changed, "a kill between the first two writes")

	type checkTest struct {
		name    string
		runJSON []byte
		sums    []byte // nil: no sum file
		run     Run
		want    string // the one Changed, "" for none
	}
	for _, tt := range []checkTest{
		{"edited", []byte(`{"format": 3, "tests": ["B"]}` + "\n"), sumLines(sumOf(v2)), run, "run.json (edited after recording: sha256 "},
		{"rolled back", v1, sumLines(sumOf(v2)), run, "run.json (edited after recording: sha256 " + sumOf(v1)[:12]},
		{"as written", v2, sumLines(sumOf(v2)), run, ""},
		{"sum file removed", v2, nil, run, "run.json.sha256 (missing since it was recorded)"},
		{"made before sums were kept", v2, nil, Run{}, ""},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, RunFile), tt.runJSON, 0o644))
		_ = os.Remove(filepath.Join(dir, SumFile))
		if tt.sums != nil {
			require.NoError(t, os.WriteFile(filepath.Join(dir, SumFile), tt.sums, 0o644))
		}
		changed, err := Check(dir, tt.run)
		require.NoError(t, err, tt.name)
		if tt.want == "" {
			assert.Empty(t, changed, tt.name)
			continue
		}
		if assert.Len(t, changed, 1, tt.name) {
			assert.True(t, strings.HasPrefix(changed[0].String(), tt.want), "%s: Check = %s, want %s…", tt.name, changed[0], tt.want)
		}
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, SumFile), []byte("not a sum\n"), 0o644))
	_, err = Check(dir, run)
	assert.ErrorContains(t, err, SumFile+`: "not a sum" is not "<sha256>  run.json"`)
}
