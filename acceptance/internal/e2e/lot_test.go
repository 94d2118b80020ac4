package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setFigures edits the recorded fio output of test in dir so that drive
// g (fio's reporting group g) reads or writes want[g] MB/s: every job's
// io_bytes is scaled by want / the drive's recorded figure, Σ io_bytes /
// the longest runtime of its directions. Nothing else changes.
func setFigures(t *testing.T, dir, test string, want []float64) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(test)+".json")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	require.NoError(t, dec.Decode(&out))
	num := func(v any) float64 { f, _ := v.(json.Number).Float64(); return f }
	bytesOf, runtime := map[int]float64{}, map[int]float64{}
	jobs := out["jobs"].([]any)
	for _, j := range jobs {
		job := j.(map[string]any)
		g := int(num(job["groupid"]))
		for _, d := range []string{"read", "write"} {
			dir := job[d].(map[string]any)
			bytesOf[g] += num(dir["io_bytes"])
			runtime[g] = max(runtime[g], num(dir["runtime"]))
		}
	}
	require.Len(t, bytesOf, len(want))
	for _, j := range jobs {
		job := j.(map[string]any)
		g := int(num(job["groupid"]))
		f := want[g] / (bytesOf[g] / runtime[g] * 1000 / 1e6)
		for _, d := range []string{"read", "write"} {
			dir := job[d].(map[string]any)
			dir["io_bytes"] = int64(num(dir["io_bytes"]) * f)
		}
	}
	edited, err := json.Marshal(out)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, edited, 0o644))
}

// The lot gate decides the exit status like the other gates: the recorded
// 6-drive step (fixtures/lot-6-drives, a real loop-device recording) with
// its drives' figures set tight at 300 MB/s (edited: io_bytes scaled)
// exits 0 judged without a [lot] rule, and with one whose every cell is
// accepted (the 32MiB capacity dropped from the spec); the same rule with
// the 32MiB capacity, whose one drive decides no lot, exits non-zero
// with the lot gate's INCONCLUSIVE as the closing line; the recording as
// made (two drives below the pass line) fails TestVerdict/lot.
func TestLotGateDecidesTheExitStatus(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	fixture := filepath.Join(acceptanceDir, "..", "fixtures", "lot-6-drives")
	dir := filepath.Join(t.TempDir(), "lot")
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixture)))
	tight := []float64{300, 303, 297, 301, 299, 302}
	setFigures(t, dir, "TestScaling/6_drives/128KB_Sequential_Read", tight)
	setFigures(t, dir, "TestScaling/6_drives/128KB_Sequential_Write", tight)

	rule, err := os.ReadFile(filepath.Join(fixture, "lot-rule.toml"))
	require.NoError(t, err)
	text := string(rule)
	i, j := strings.Index(text, "[[capacity]]\nname  = \"32MiB\""), strings.Index(text, "[scaling]")
	require.True(t, i > 0 && j > i)
	only64 := filepath.Join(t.TempDir(), "lot-64.toml")
	require.NoError(t, os.WriteFile(only64, []byte(text[:i]+text[j:]), 0o644))
	noLot := filepath.Join(t.TempDir(), "no-lot.toml")
	require.NoError(t, os.WriteFile(noLot, []byte(text[:strings.Index(text, "\n[lot]\n")]), 0o644))

	r := runSuite(t, nil, "-replay="+dir, "-spec="+noLot)
	assert.Equal(t, 0, r.Code, "without [lot]:\n%s", r.Stdout)
	assert.Contains(t, r.Stdout, "--- SKIP: TestLot ")

	r = runSuite(t, nil, "-replay="+dir, "-spec="+only64)
	assert.Equal(t, 0, r.Code, "every lot accepted:\n%s", r.Stdout)
	assert.Contains(t, r.Stdout, "--- PASS: TestVerdict/lot ")
	assert.Contains(t, r.Stdout, "lot accepted at coverage 95 %, confidence 95 %")
	assert.Regexp(t, `drivequal: QUALIFIED: 64MiB, .*scaling and lot: \d+ of \d+ cells passed`, r.Stdout)

	r = runSuite(t, nil, "-replay="+dir, "-spec="+filepath.Join(fixture, "lot-rule.toml"))
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "--- FAIL: TestVerdict/lot ")
	assert.Contains(t, r.Stdout, "drivequal: INCONCLUSIVE: lot: 2 of 4 cells inconclusive")

	r = runSuite(t, nil, "-replay="+fixture, "-spec="+only64)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "--- FAIL: TestLot/64MiB/128KB_Sequential_Read ")
	assert.Contains(t, r.Stdout, "--- FAIL: TestVerdict/lot ")
}

// The [lot] method decides, end to end: the recorded step with six tight
// figures (edited, io_bytes scaled) exits non-zero under a spec whose
// method is distribution-free, TestLot INCONCLUSIVE saying 59 drives
// would decide it; a method the spec does not know is refused, naming
// the file and line; and the recording as made (two drives below the
// line) judged as measured without preconditioning (run.json's
// precondition edited to "quick") leaves TestLot INCONCLUSIVE, not FAIL,
// while TestScaling still fails the step.
func TestLotMethodAndMissingFigures(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	fixture := filepath.Join(acceptanceDir, "..", "fixtures", "lot-6-drives")
	rule, err := os.ReadFile(filepath.Join(fixture, "lot-rule.toml"))
	require.NoError(t, err)
	text := string(rule)
	i, j := strings.Index(text, "[[capacity]]\nname  = \"32MiB\""), strings.Index(text, "[scaling]")
	require.True(t, i > 0 && j > i)
	only64 := text[:i] + text[j:]
	write := func(name, body string) string {
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		return path
	}
	free := write("lot-free.toml", strings.Replace(only64, "confidence = 0.95\n", "confidence = 0.95\nmethod     = \"distribution-free\"\n", 1))
	bad := write("lot-bad.toml", strings.Replace(only64, "confidence = 0.95\n", "confidence = 0.95\nmethod     = \"order-statistic\"\n", 1))

	dir := filepath.Join(t.TempDir(), "lot")
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixture)))
	tight := []float64{300, 303, 297, 301, 299, 302}
	setFigures(t, dir, "TestScaling/6_drives/128KB_Sequential_Read", tight)
	setFigures(t, dir, "TestScaling/6_drives/128KB_Sequential_Write", tight)
	r := runSuite(t, nil, "-replay="+dir, "-spec="+free)
	assert.NotEqual(t, 0, r.Code, r.Stdout)
	assert.Contains(t, r.Stdout, "--- SKIP: TestLot/64MiB/128KB_Sequential_Read ")
	assert.Contains(t, r.Stdout, "lot inconclusive at coverage 95 %, confidence 95 % (distribution-free): 59 drives (53 more, all passing) would accept it")

	r = runSuite(t, nil, "-replay="+dir, "-spec="+bad)
	assert.NotEqual(t, 0, r.Code)
	assert.Regexp(t, `lot-bad\.toml:\d+: lot: method "order-statistic" is not one of normal, distribution-free`, r.Stdout+r.Stderr)

	quick := filepath.Join(t.TempDir(), "quick")
	require.NoError(t, os.CopyFS(quick, os.DirFS(fixture)))
	runJSON := filepath.Join(quick, "run.json")
	data, err := os.ReadFile(runJSON)
	require.NoError(t, err)
	require.Contains(t, string(data), `"precondition": "full"`)
	require.NoError(t, os.WriteFile(runJSON, []byte(strings.Replace(string(data), `"precondition": "full"`, `"precondition": "quick"`, 1)), 0o644))
	r = runSuite(t, nil, "-replay="+quick, "-spec="+write("lot-64.toml", only64))
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "--- FAIL: TestScaling/6_drives/128KB_Sequential_Read ")
	assert.Contains(t, r.Stdout, "--- SKIP: TestLot/64MiB/128KB_Sequential_Read ")
	assert.NotContains(t, r.Stdout, "--- FAIL: TestLot/")
	assert.Contains(t, r.Stdout, "6 drives whose figure is not the drive's own")
}
