//go:build linux

package qual

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// stepsOf lists, by kind, the drives the plan's steps of that kind run on.
func stepsOf(s *Suite) map[plan.StepKind][]int {
	out := map[plan.StepKind][]int{}
	for _, st := range s.Plan.Steps {
		for _, d := range st.Drives {
			if !slices.Contains(out[st.Kind], d) {
				out[st.Kind] = append(out[st.Kind], d)
			}
		}
	}
	return out
}

// A recorded read-back passed both drives, and then a purge or fill
// began on the second (run.json marks it written_since_read_back): the
// resume no longer trusts that read-back for it, and purges, fills and
// reads it back again before its cells; the first drive's fill stands.
func TestResumeRefillsADriveWrittenSinceItsReadBack(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	cfg := interruptedAtSetup(t, spec, drives)
	pass := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size, size})
	editRunJSON(t, cfg, func(r *record.Run) { r.Verify = []record.Verify{pass} })
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	assert.Empty(t, stepsOf(s)[plan.StepFill], "both fills were read back whole: nothing is filled again")

	editRunJSON(t, cfg, func(r *record.Run) { r.WrittenSinceReadBack = []bool{false, true} })
	s, errs = resumeSetup(t, cfg)
	require.Empty(t, errs)
	steps := stepsOf(s)
	assert.Equal(t, []int{1}, steps[plan.StepFill], "the drive written since its read-back is filled again, and only it")
	assert.Equal(t, []int{1}, steps[plan.StepVerify], "and read back again")
	assert.Equal(t, []bool{true, false}, s.resume.verified)
}

// A drive's failure recorded in run.json (here a critical warning read
// mid-run) keeps it disqualified on resume, whatever its read-back said:
// nothing is planned for it, its cells fail unmeasured naming the
// failure and when, and the other drive goes on.
func TestResumeKeepsARecordedFailure(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	cfg := interruptedAtSetup(t, spec, drives)
	pass := writeVerify(t, cfg, 3, "003-verify", drives, size, []int64{size, size})
	f := record.DriveFailure{Drive: 1, Path: drives[1], Cause: report.CauseCriticalWarning, Step: "its health log check (read after TestSingleDrive/64MiB/4KB_Random_Write)",
		Message: drives[1] + " raised critical_warning 0x08: media is read-only", At: "2026-01-01T00:10:00Z"}
	editRunJSON(t, cfg, func(r *record.Run) {
		r.Verify = []record.Verify{pass}
		r.WrittenSinceReadBack = []bool{true, true}
		r.Failures = []record.DriveFailure{f}
	})
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	assert.Equal(t, report.CauseCriticalWarning, s.resume.causes[1])
	assert.Contains(t, s.resume.broken[1], drives[1]+" failed its health log check (read after TestSingleDrive/64MiB/4KB_Random_Write) earlier in this run, at 2026-01-01T00:10:00Z: ")
	for kind, ds := range stepsOf(s) {
		assert.NotContains(t, ds, 1, "a %s step is planned on the disqualified drive", kind)
	}
	assert.Equal(t, []int{0}, stepsOf(s)[plan.StepFill], "the other drive, written since its read-back, is filled again")
}

// markingExec is fakeExec that reads run.json's written_since_read_back
// as each purge and fill starts.
type markingExec struct {
	*fakeExec
	record string
	marks  map[plan.StepKind][]bool
}

func (m *markingExec) Prepare(ctx context.Context, st plan.Step, d []plan.Drive, logf func(string, ...any), w *live.Watch) (live.Prepared, error) {
	if st.Kind == plan.StepPurge || st.Kind == plan.StepFill {
		data, _ := os.ReadFile(filepath.Join(m.record, "run.json"))
		var r record.Run
		_ = json.Unmarshal(data, &r)
		m.marks[st.Kind] = r.WrittenSinceReadBack
	}
	return m.fakeExec.Prepare(ctx, st, d, logf, w)
}

// A purge and a fill mark their drive written since its read-back in
// run.json before they write to it: a kill during either leaves a
// recording whose resume does not trust the drive's older read-back.
func TestPurgeAndFillMarkTheDriveFirst(t *testing.T) {
	fe := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), verify: fixture(t, "error-bs1000.json"), rounds: steadyRounds}
	s := liveSuite(t, fe)
	m := &markingExec{fakeExec: fe, record: s.Cfg.Record, marks: map[plan.StepKind][]bool{}}
	s.runner.Exec = m
	c := s.SingleCells()[0].Cells[0]
	_, err := s.Run(context.Background(), c, t.Logf)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, m.marks[plan.StepPurge], "marked before the purge")
	assert.Equal(t, []bool{true}, m.marks[plan.StepFill], "marked before the fill")
	data, err := os.ReadFile(filepath.Join(s.Cfg.Record, "run.json"))
	require.NoError(t, err)
	var r record.Run
	require.NoError(t, json.Unmarshal(data, &r))
	assert.True(t, r.Written(0), "a read-back that failed leaves the mark")
}

// -dry-run -resume says a disqualified drive is not written again, and
// why, rather than that it is purged and filled.
func TestResumeDryRunNamesADisqualifiedDrive(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	cfg := interruptedAtSetup(t, spec, drives)
	editRunJSON(t, cfg, func(r *record.Run) {
		r.Failures = []record.DriveFailure{{Drive: 1, Path: drives[1], Cause: report.CausePreparation, Step: "a preparation step (step 2 fill: sequential fill)",
			Message: "preparing " + drives[1] + ": sequential fill failed: fio failed: input/output error", At: "2026-01-01T00:10:00Z"}}
	})
	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	var out strings.Builder
	s.resume.print(&out, s)
	assert.Contains(t, out.String(), "drive   "+drives[1]+": disqualified, nothing more is written to it: "+drives[1]+" failed a preparation step (step 2 fill: sequential fill) earlier in this run, at 2026-01-01T00:10:00Z")
	assert.NotContains(t, out.String(), "drives  "+drives[1]+":")
}

// The run was killed during a read-back after fio named a mismatch on
// the second drive's streamed stderr (the pass listed as it started, no
// report written): the resume disqualifies the drive from that stderr,
// and its run.json records the failure, so that a resume of that resume
// keeps the drive disqualified from run.json alone, whatever became of
// the stderr the first resume judged.
func TestResumeRecordsAFailureItReadInAKilledReadBack(t *testing.T) {
	spec := filepath.Join(moduleRoot(t), "acceptance", "internal", "e2e", "testdata", "faults.toml")
	const size = 64 << 20
	drives := sparseDrives(t, 2, size)
	cfg := interruptedAtSetup(t, spec, drives)
	pass := record.Verify{Step: 3, Name: "verify pass", Raw: "prepare/003-verify.json", Running: true}
	for _, d := range drives {
		pass.Drives = append(pass.Drives, record.VerifyDrive{Path: d, Target: d, Bytes: size})
	}
	stderr := filepath.Join(cfg.Record, "prepare", "003-verify.stderr")
	require.NoError(t, os.MkdirAll(filepath.Dir(stderr), 0o755))
	require.NoError(t, os.WriteFile(stderr, []byte("verify: bad magic header 0, wanted acca at file "+drives[1]+" offset 1048576, length 131072\n"), 0o644))
	editRunJSON(t, cfg, func(r *record.Run) { r.Verify = []record.Verify{pass} })

	s, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	require.Equal(t, report.CauseIntegrity, s.resume.causes[1])
	info := s.resume.info(s)
	f, ok := info.FailureOf(1)
	require.True(t, ok, "the resumed run.json records the failure the resume read: %+v", info.Failures)
	assert.Equal(t, report.CauseIntegrity, f.Cause)
	assert.Equal(t, drives[1], f.Path)
	assert.Contains(t, f.Message, "returned different data than was written")
	assert.NotEmpty(t, f.At)
	_, other := info.FailureOf(0)
	assert.False(t, other, "the drive read without a mismatch until the kill is not failed")

	// The resume's recording, then the stderr gone: still disqualified.
	editRunJSON(t, cfg, func(r *record.Run) { r.Failures = info.Failures })
	require.NoError(t, os.Remove(stderr))
	again, errs := resumeSetup(t, cfg)
	require.Empty(t, errs)
	assert.Equal(t, report.CauseIntegrity, again.resume.causes[1], "a resume of the resume keeps the drive disqualified")
	assert.NotContains(t, stepsOf(again)[plan.StepFill], 1, "nothing is planned on the disqualified drive")
}

// Verdict precedence in a replay: the recording's drive failure (a
// read-only warning read after another cell) outranks the cell's own
// inconclusive "not steady", which FAILs naming the warning and when;
// the same cell measured as a pass stays a pass.
func TestReplayAppliesADrivesFailureOverAnInconclusiveCell(t *testing.T) {
	f := record.DriveFailure{Drive: 0, Path: "/dev/loop7", Cause: report.CauseCriticalWarning,
		Step:    "its health log check (read after TestSingleDrive/256MiB/4KB_Random_Write)",
		Test:    "TestSingleDrive/256MiB/4KB_Random_Write",
		Message: "/dev/loop7 raised critical_warning 0x08: media is read-only", At: "2026-01-01T00:10:00Z"}
	withFailure := func(dir string) string {
		path := filepath.Join(dir, "run.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var r record.Run
		require.NoError(t, json.Unmarshal(data, &r))
		r.Failures = []record.DriveFailure{f}
		writeJSON(t, path, r)
		return dir
	}
	o, _ := replayCell(t, withFailure(recordedRun(t, false)))
	require.Equal(t, report.Fail, o.Result.Verdict, o.Message)
	require.Equal(t, report.CauseCriticalWarning, o.Result.Cause)
	require.Contains(t, o.Message, "/dev/loop7 failed its health log check (read after TestSingleDrive/256MiB/4KB_Random_Write) earlier in this run, at 2026-01-01T00:10:00Z: ")
	require.Contains(t, o.Message, "the cell's own verdict was INCONCLUSIVE")

	o, _ = replayCell(t, withFailure(recordedRun(t, true)))
	require.Equal(t, report.Pass, o.Result.Verdict, "a cell measured as a pass stays one: %s", o.Message)
}
