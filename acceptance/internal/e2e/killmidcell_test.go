//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// The second of two drives answers the 2-drive read with I/O errors at
// once (its image cut to half its size just before the cell), while fio's
// job on the first drive reads on for the cell's 20 s. The run is killed
// there, 3 s after fio named the I/O error on its stderr and long before
// fio ended: the error is the drive's failure all the same, in run.json
// before the kill, and the resume (the drive reading again, every block
// as the fill left it) keeps it failed rather than measuring the cell
// again as though nothing happened.
func TestCellIOErrorKilledBeforeFioEndsStaysFailed(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, safetySize)
	bad, img := imageLoop(t, safetySize)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	text, err := os.ReadFile(testdataFile(t, "integrity.toml"))
	require.NoError(t, err)
	spec := writeSpec(t, string(text))
	args := []string{"-spec=" + spec, "-drives=" + good + "," + bad, "-destructive", "-report=" + rep, "-runtime=20s"}
	only := []string{"-test.run=TestScaling/2_drives/128KB_Sequential_Read$"}
	saved := filepath.Join(t.TempDir(), "saved.img")
	env := corruptingFio(t, img, "CORRUPT_CELL="+ioErrorCell, "CORRUPT_TRUNCATE="+strconv.Itoa(safetySize/2), "CORRUPT_SAVE="+saved)
	stderrFile := filepath.Join(raw, filepath.FromSlash(ioErrorCell)+record.StderrExt)
	var named time.Time
	killWhen(t, raw, func(record.Run) bool {
		// A few seconds after fio named the error (the cell runs 20 s).
		if data, _ := os.ReadFile(stderrFile); named.IsZero() && strings.Contains(string(data), "io_u error") {
			named = time.Now()
		}
		return !named.IsZero() && time.Since(named) > 3*time.Second
	}, env, only, args...)

	data, err := os.ReadFile(stderrFile)
	require.NoError(t, err)
	t.Logf("fio's stderr when killed:\n%s", data)
	run, ok := readRun(raw)
	require.True(t, ok)
	if assert.Len(t, run.Failures, 1, "the I/O error fio named before the kill is the drive's failure: %+v", run.Failures) {
		f := run.Failures[0]
		assert.Equal(t, bad, f.Path)
		assert.Equal(t, report.CauseIOError, f.Cause)
		assert.Equal(t, ioErrorCell, f.Test)
		assert.Regexp(t, `errno 5 \(input/output error\)`, f.Message)
		assertNotNaming(t, f.Message, good, "the neighbour's job did not fail")
	}

	// The drive reads again, every block as the fill left it (the
	// error was intermittent): only run.json can keep its failure.
	whole, err := os.ReadFile(saved)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(img, whole, 0o644))
	res := runSuite(t, only, append(args, "-resume")...)
	noFioLeft(t)
	require.NotEqual(t, 2, res.Code, "the resume is not refused: stderr:\n%s", res.Stderr)
	assert.NotEqual(t, 0, res.Code, "a drive that failed an I/O mid-cell does not qualify")
	x := byTest(res.results(t))[ioErrorCell]
	assert.Equal(t, report.Fail, x.Verdict, x.Error)
	assert.Equal(t, report.CauseIOError, x.Cause, x.Error)

	rp := runSuite(t, nil, "-replay="+raw)
	assert.NotEqual(t, 0, rp.Code, "a replay")
	assert.Equal(t, report.CauseIOError, byTest(rp.results(t))[ioErrorCell].Cause, "a replay")
}
