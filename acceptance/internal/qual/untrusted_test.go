package qual

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/fiojob"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

const cellRR = "TestSingleDrive/256MiB/4KB_Random_Read"

// hashed is recordedRun with the sha256 of its files in run.json, as a
// live run of format 3 writes them.
func hashed(t *testing.T) string {
	t.Helper()
	dir := recordedRun(t, true)
	var info record.Run
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	require.NoError(t, jsonUnmarshal(data, &info))
	info.Files, err = record.HashFiles(dir, record.TestFiles(dir, cellRR))
	require.NoError(t, err)
	writeJSON(t, filepath.Join(dir, "run.json"), info)
	return dir
}

// A cell run.json lists as measured whose output is gone fails "recorded
// output missing", and the run is not QUALIFIED; it was skipped, and the
// run passed.
func TestReplayMissingOutputFails(t *testing.T) {
	dir := recordedRun(t, true)
	require.NoError(t, os.Remove(record.Base(dir, cellRR)+record.OutputExt))
	o, s := replayCell(t, dir)
	assert.Empty(t, o.Skip)
	require.Equal(t, report.Fail, o.Result.Verdict, o.Message)
	assert.Equal(t, report.CauseNotRecorded, o.Result.Cause)
	assert.Contains(t, o.Result.Error, "recorded output missing")
	assert.Contains(t, o.Result.Error, filepath.Join(dir, filepath.FromSlash(cellRR))+".json")
	assert.NotEqual(t, report.Qualified, s.Report.Overall().Verdict)
}

// A cell whose output run.json holds a sha256 of fails "recorded output
// missing" when the output is gone, also when run.json's tests no longer
// list it; it was left out, and the run passed without it.
func TestReplayMissingHashedOutputFails(t *testing.T) {
	dir := hashed(t)
	rewriteRun(t, dir, func(r *record.Run) { r.Tests = nil })
	require.NoError(t, os.Remove(record.Base(dir, cellRR)+record.OutputExt))
	o, s := replayCell(t, dir)
	require.Equal(t, report.Fail, o.Result.Verdict, o.Message)
	assert.Equal(t, report.CauseNotRecorded, o.Result.Cause)
	assert.Contains(t, o.Result.Error, "recorded output missing: "+filepath.Join(dir, filepath.FromSlash(cellRR))+".json")
	assert.NotEqual(t, report.Qualified, s.Report.Overall().Verdict)
}

// A recording of a run that was interrupted (run.json without
// "finished") replays its unreached cells as failed "not recorded", and
// is not QUALIFIED; they were left out, and the part of the run that
// was recorded passed as if whole.
func TestReplayInterruptedRunFailsUnreachedCells(t *testing.T) {
	dir := recordedRun(t, true)
	rewriteRun(t, dir, func(r *record.Run) { r.Finished = "" })
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := setupOne(t, cfg)
	require.Empty(t, errs)
	cells := s.SingleCells()
	require.Len(t, cells, 1)
	require.Len(t, cells[0].Cells, 2, "both cells the recorded spec plans")
	var failed int
	for _, c := range cells[0].Cells {
		o, err := s.Run(context.Background(), c, t.Logf)
		require.NoError(t, err)
		if c.Test == cellRR {
			assert.Equal(t, report.Pass, o.Result.Verdict, o.Message)
			continue
		}
		failed++
		assert.Equal(t, report.Fail, o.Result.Verdict, o.Message)
		assert.Equal(t, report.CauseNotRecorded, o.Result.Cause)
		assert.Contains(t, o.Result.Error, `has no "finished": it was interrupted`)
	}
	assert.Equal(t, 1, failed)
	assert.NotEqual(t, report.Qualified, s.Report.Overall().Verdict)
}

// A cell output that is a symlink to a file outside the recording is
// not read: the cell fails as a bad recording naming the file, and
// nothing of the file reaches the report.
func TestReplayRefusesSymlinkedOutput(t *testing.T) {
	dir := recordedRun(t, true)
	canary := filepath.Join(t.TempDir(), "canary.json")
	out, err := os.ReadFile(record.Base(dir, cellRR) + record.OutputExt)
	require.NoError(t, err)
	// The canary is a valid fio output: read, it would pass.
	require.NoError(t, os.WriteFile(canary, append([]byte("CANARY-OUTSIDE\n"), out...), 0o644))
	require.NoError(t, os.Remove(record.Base(dir, cellRR)+record.OutputExt))
	require.NoError(t, os.Symlink(canary, record.Base(dir, cellRR)+record.OutputExt))
	o, s := replayCell(t, dir)
	require.Equal(t, report.Fail, o.Result.Verdict, o.Message)
	assert.Equal(t, report.CauseBadRecording, o.Result.Cause)
	assert.Contains(t, o.Result.Error, "4KB_Random_Read.json: is a symlink")
	assert.NotContains(t, string(s.Report.Summary()), "CANARY-OUTSIDE")
}

// A sidecar the live run judged the cell by (here its thermal record)
// that is a FIFO fails the cell rather than being read as absent.
func TestReplayRefusesFIFOSidecar(t *testing.T) {
	dir := recordedRun(t, true)
	require.NoError(t, mkfifo(record.Base(dir, cellRR)+record.ThermalExt))
	o, _ := replayCell(t, dir)
	require.Equal(t, report.Fail, o.Result.Verdict, o.Message)
	assert.Contains(t, o.Result.Error, "4KB_Random_Read.thermal.json: is a FIFO")
}

// A replay of a recording whose output was edited after recording says
// so in the closing line, each gate of summary.md and junit.xml's
// verdict, naming the file.
func TestReplaySaysEditedEvidence(t *testing.T) {
	dir := hashed(t)
	o, s := replayCell(t, dir)
	require.Equal(t, report.Pass, o.Result.Verdict, o.Message)
	assert.NotContains(t, s.Report.ClosingLine(), "edited")
	assert.Contains(t, string(s.Report.Summary()), "Every one of the 2 files of the recording is as recorded")

	path := record.Base(dir, cellRR) + record.OutputExt
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
	o, s = replayCell(t, dir)
	require.Equal(t, report.Pass, o.Result.Verdict, o.Message)
	want := "judged from edited evidence: 1 of the 2 files of the recording were edited, removed or refused since it was recorded (" + cellRR + ".json)"
	assert.Contains(t, s.Report.ClosingLine(), want)
	summary := string(s.Report.Summary())
	assert.Contains(t, summary, "**256MiB: QUALIFIED** ("+want+")")
	assert.Contains(t, summary, cellRR+".json (edited after recording")
	assert.Contains(t, summary, "were edited after recording")
	assert.NotContains(t, summary, "Every one of")
	x, err := junit.Marshal(s.Report, s.Cfg.Report)
	require.NoError(t, err)
	assert.Contains(t, string(x), `<property name="recording_edited" value="`+cellRR+`.json (edited after recording`)
	assert.Contains(t, string(x), `<property name="verdict" value="QUALIFIED (`+want+`)"`)
	assert.True(t, strings.Contains(string(x), "evidence: "+want), "the Verdict testcases say it")
	assert.True(t, hasWarning(s.Warnings, cellRR+".json (edited after recording"), "warnings: %v", s.Warnings)
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// In a fleet replay, a host whose recording was edited is named on the
// terminal too (its warnings were its own suite's, never printed).
func TestFleetReplayNamesEditedHost(t *testing.T) {
	good, bad := hashed(t), hashed(t)
	// Two hosts' runs, not copies of one (a fleet refuses those): each
	// its own hostname and machine.
	for k, d := range []string{good, bad} {
		editRecorded(t, d, func(r *record.Run) {
			r.Host.Hostname, r.Host.MachineID = fmt.Sprintf("host-%d", k), fmt.Sprintf("%032x", k+1)
		})
	}
	// ... and its own fio outputs: good's started a second later (fio's
	// timestamp_ms), hashed again as recorded.
	retimeOutputs(t, good)
	editRecorded(t, good, func(r *record.Run) {
		var err error
		r.Files, err = record.HashFiles(good, record.TestFiles(good, cellRR))
		require.NoError(t, err)
	})
	path := record.Base(bad, cellRR) + record.OutputExt
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: good, Replays: []string{good, bad}, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	r, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	require.True(t, r.Fleet)
	var named []string
	for _, w := range r.AllWarnings() {
		if strings.Contains(w, cellRR+".json (edited after recording") {
			named = append(named, w)
		}
	}
	require.Len(t, named, 1, "warnings: %v", r.AllWarnings())
	assert.True(t, strings.HasPrefix(named[0], r.Members[1].Name+": "), named[0])
	// The fleet's own verdict line and summary.md, which the judge job
	// publishes and exits by, say it too, naming the host.
	want := "judged from edited evidence: 1 of the 4 files of the recording were edited, removed or refused since it was recorded (" + r.Members[1].Name + ": "
	assert.Contains(t, r.Report.ClosingLine(), want)
	assert.Contains(t, string(r.Report.Summary()), "were edited after recording")
}

func editRecorded(t *testing.T, dir string, edit func(*record.Run)) {
	t.Helper()
	var info record.Run
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	edit(&info)
	writeJSON(t, filepath.Join(dir, "run.json"), info)
}

// retimeOutputs moves every fio output in the recording dir a second
// later (its timestamp_ms): the figures of another run, not a copy.
func retimeOutputs(t *testing.T, dir string) {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(path, record.OutputExt) && filepath.Base(path) != "run.json" && retime(t, path, time.Second) {
			n++
		}
		return err
	}))
	require.NotZero(t, n, "no fio output in %s has a timestamp_ms", dir)
}
