package fwrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
)

func drives(paths ...string) []plan.Drive {
	var out []plan.Drive
	for _, p := range paths {
		out = append(out, plan.Drive{Info: device.Info{Path: p}})
	}
	return out
}

func writeRun(t *testing.T, dir string, info record.Run) {
	t.Helper()
	b, err := json.Marshal(info)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, record.RunFile), b, 0o644))
}

func writeEntries(t *testing.T, dir string, es ...Entry) {
	t.Helper()
	b, err := json.Marshal(map[string][]Entry{"steps": es})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, File), b, 0o644))
}

func idx(d int) *int { return &d }

// A passing step as the run writes it.
func passed(drive, step string) firmware.Result {
	return firmware.Result{Drive: drive, Step: step, Verdict: firmware.Pass, Before: "OLD", After: "NEW", StallMS: 200, MaxStallMS: 1000,
		Commands: []string{"nvme fw-download", "nvme fw-commit"}, Verified: true, Message: drive + ": OLD to NEW"}
}

// A firmware.json alone is no recording (a replay of it would judge
// hand-written verdicts with no run behind them); with run.json asking
// for firmware, or listing its sha256, it is.
func TestRecordedNeedsRunJSON(t *testing.T) {
	dir := t.TempDir()
	writeEntries(t, dir, Entry{Result: passed("/dev/a", firmware.StepActivate)})
	assert.False(t, Recorded(dir))
	writeRun(t, dir, record.Run{Format: record.Format})
	assert.False(t, Recorded(dir))
	writeRun(t, dir, record.Run{Format: record.Format, Firmware: []record.FirmwareAsked{{Step: firmware.StepActivate, Drives: []int{0}}}})
	assert.True(t, Recorded(dir))
	writeRun(t, dir, record.Run{Format: record.Format, Files: map[string]string{File: "00"}})
	assert.True(t, Recorded(dir))
}

// run.json records what was asked: the image's path, size and sha256
// and the drives of each step planned; a resume keeps what the run asked
// and adds only what it asks anew.
func TestAsking(t *testing.T) {
	img := filepath.Join(t.TempDir(), "fw.bin")
	require.NoError(t, os.WriteFile(img, []byte("NEWREV01"), 0o644))
	pl := plan.Plan{Steps: []plan.Step{{Kind: plan.StepMeasure}, {Kind: plan.StepFirmware, Purge: firmware.StepActivate, Drives: []int{0, 2}}}}
	got := Asking(nil, pl, &cmdline.Config{Firmware: img})
	require.Len(t, got, 1)
	sum := sha256.Sum256([]byte("NEWREV01"))
	assert.Equal(t, record.FirmwareAsked{Step: firmware.StepActivate, Image: img, Bytes: 8, SHA256: hex.EncodeToString(sum[:]), Drives: []int{0, 2}}, got[0])
	again := Asking([]record.FirmwareAsked{{Step: firmware.StepActivate, Image: "/earlier", Drives: []int{0}}}, pl, &cmdline.Config{Firmware: img})
	require.Len(t, again, 1)
	assert.Equal(t, "/earlier", again[0].Image)
	assert.Empty(t, Asking(nil, plan.Plan{}, &cmdline.Config{}))
}

// A step run.json asked for whose verdict is missing (firmware.json
// deleted, or its entry dropped) fails on replay, naming the step, the
// image and the file; a kept step started and never judged fails as
// interrupted, naming its commands.
func TestKeptMissingAndInterrupted(t *testing.T) {
	dir := t.TempDir()
	asked := []record.FirmwareAsked{{Step: firmware.StepActivate, Image: "/img/new.bin", Bytes: 8, SHA256: "abcd", Drives: []int{0, 1}}}
	ds := drives("/dev/a", "/dev/b")

	rs, why, refused := kept(dir, asked, ds, nil)
	assert.Empty(t, why)
	assert.False(t, refused)
	require.Len(t, rs, 2)
	for i, r := range rs {
		assert.Equal(t, ds[i].Path, r.Drive)
		assert.Equal(t, firmware.Fail, r.Verdict)
		assert.Contains(t, r.Message, "run.json records firmware activate asked of this drive (/img/new.bin, 8 bytes, sha256 abcd), but "+filepath.Join(dir, File)+" holds no verdict for it")
	}

	st := started(firmware.Input{Drive: "/dev/b", Step: firmware.StepActivate, Image: "/img/new.bin", Admin: "/dev/nvme1", Slot: 2, Action: specs.FirmwareActivateNow}, 1)
	writeEntries(t, dir, Entry{Result: passed("/dev/a", firmware.StepActivate), DriveIndex: idx(0)}, st)
	rs, _, _ = kept(dir, asked, ds, nil)
	require.Len(t, rs, 2)
	assert.Equal(t, firmware.Pass, rs[0].Verdict)
	assert.Equal(t, firmware.Fail, rs[1].Verdict)
	assert.Contains(t, rs[1].Message, "/dev/b: interrupted during the activation: nvme fw-download /dev/nvme1 --fw=/img/new.bin; nvme fw-commit /dev/nvme1 --slot=2 --action=3 (started ")

	// Nothing asked, nothing kept: nothing to judge.
	_, why, _ = kept(t.TempDir(), nil, ds, nil)
	assert.Equal(t, "the recording holds no firmware activation (-firmware)", why)
}

// A started step is not a failure KeepList keeps: its verdict replaces
// it; a failure is never replaced.
func TestStartedIsReplaced(t *testing.T) {
	dir := t.TempDir()
	st := started(firmware.Input{Drive: "/dev/a", Step: firmware.StepActivate, Image: "/i", Admin: "/dev/a"}, 0)
	require.NoError(t, saveEntries(dir, []Entry{st}))
	require.NoError(t, saveEntries(dir, []Entry{{Result: passed("/dev/a", firmware.StepActivate), DriveIndex: idx(0)}}))
	es, err := loadEntries(dir)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, firmware.Pass, es[0].Verdict)
}

// Entries follow the drive by its index in the run, whatever its path
// now: a drive recorded at /dev/loop1 and resumed at /dev/loop5 keeps its
// verdict, under its new path, its message naming the old one.
func TestKeptFollowsTheDrive(t *testing.T) {
	dir := t.TempDir()
	f := passed("/dev/loop1", firmware.StepActivate)
	f.Verdict, f.Message = firmware.Fail, "/dev/loop1: I/O stalled 3010 ms"
	writeEntries(t, dir, Entry{Result: f, DriveIndex: idx(0)})
	rs, _, refused := kept(dir, []record.FirmwareAsked{{Step: firmware.StepActivate, Drives: []int{0}}}, drives("/dev/loop5"), nil)
	require.False(t, refused)
	require.Len(t, rs, 1)
	assert.Equal(t, "/dev/loop5", rs[0].Drive)
	assert.Equal(t, firmware.Fail, rs[0].Verdict)
	assert.Equal(t, "[recorded at /dev/loop1, this drive's path then] /dev/loop1: I/O stalled 3010 ms", rs[0].Message)
}

// CheckKept refuses what a run could not have written.
func TestCheckKept(t *testing.T) {
	ds := drives("/dev/a", "/dev/b")
	ok := Entry{Result: passed("/dev/a", firmware.StepActivate), DriveIndex: idx(0)}
	mod := func(f func(e *Entry)) Entry {
		e := ok
		e.Result.Commands = append([]string(nil), ok.Commands...)
		f(&e)
		return e
	}
	for _, c := range []struct {
		name string
		es   []Entry
		want string
	}{
		{"whole", []Entry{ok, mod(func(e *Entry) { e.Step = firmware.StepBack })}, ""},
		{"inconclusive", []Entry{mod(func(e *Entry) { e.Verdict = "inconclusive"; e.After = "" })}, ""},
		{"old entry by path", []Entry{mod(func(e *Entry) { e.DriveIndex = nil })}, ""},
		{"not a drive", []Entry{mod(func(e *Entry) { e.DriveIndex = nil; e.Drive = "/dev/z" })}, `steps[0] ("/dev/z", "activate"): not a drive of the run (/dev/a, /dev/b)`},
		{"index out of range", []Entry{mod(func(e *Entry) { e.DriveIndex = idx(2) })}, "not a drive of the run"},
		{"twice", []Entry{ok, mod(func(e *Entry) { e.Verdict = firmware.Fail })}, `steps[1] ("/dev/a", "activate"): a second entry for the drive's step`},
		{"step", []Entry{mod(func(e *Entry) { e.Step = "../../evil" })}, `step "../../evil" is neither "activate" nor "back"`},
		{"verdict", []Entry{mod(func(e *Entry) { e.Verdict = "skipped" })}, `verdict "skipped" is none of`},
		{"stall over", []Entry{mod(func(e *Entry) { e.StallMS = 3010 })}, "verdict pass contradicts its own stall: 3010 ms over its max_stall of 1000 ms"},
		{"revision unchanged", []Entry{mod(func(e *Entry) { e.After = "OLD" })}, `verdict pass contradicts its revisions: "OLD" before, "OLD" after (unchanged)`},
		{"nothing sent", []Entry{mod(func(e *Entry) { e.Commands = nil })}, "verdict pass with no command sent"},
		{"fail without why", []Entry{mod(func(e *Entry) { e.Verdict, e.Message = firmware.Fail, "" })}, "verdict fail with no message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckKept(c.es, ds)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), File+": ")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A refused firmware.json fails every drive of every step asked.
func TestKeptRefused(t *testing.T) {
	dir := t.TempDir()
	writeEntries(t, dir, Entry{Result: firmware.Result{Drive: "/dev/a", Step: "../../evil", Verdict: firmware.Pass}, DriveIndex: idx(0)})
	rs, _, refused := kept(dir, []record.FirmwareAsked{{Step: firmware.StepActivate, Drives: []int{0, 1}}}, drives("/dev/a", "/dev/b"), nil)
	assert.True(t, refused)
	require.Len(t, rs, 2)
	for _, r := range rs {
		assert.Equal(t, firmware.Fail, r.Verdict)
		assert.Contains(t, r.Message, "the recorded firmware verdicts are refused: ")
	}
}

// fakeNVMe is an nvme-cli that copies firmware.json (as it is when the
// command arrives) to dir/at-<command>, appends its arguments to
// dir/sent, and fails: the step stops before any firmware command.
func fakeNVMe(t *testing.T, rec string) (nvme.CLI, string) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "nvme")
	script := "#!/bin/sh\necho \"$*\" >> " + dir + "/sent\ncp " + filepath.Join(rec, File) + " " + dir + "/at-$1 2>/dev/null\necho refused >&2\nexit 1\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return nvme.CLI{Binary: bin, WaitDelay: time.Second}, dir
}

func fwIn(t *testing.T, rec string, cli nvme.CLI, resumed bool, ds []plan.Drive, steps ...plan.Step) In {
	return In{Drives: ds, Plan: plan.Plan{Steps: steps}, Record: rec, Resumed: resumed, NVMe: cli,
		Spec: &specs.Spec{Firmware: &specs.Firmware{Action: specs.FirmwareActivateNow, Slot: 2, MaxStall: time.Second}}}
}

func activate(drives ...int) plan.Step {
	return plan.Step{Kind: plan.StepFirmware, Purge: firmware.StepActivate, Drives: drives, Name: "firmware activate: /img/new.bin (8 bytes)"}
}

// The step is kept as started before the first command reaches the
// drive (the real nvme process finds it in firmware.json), and replaced
// by its verdict once judged.
func TestJudgeKeepsStartedFirst(t *testing.T) {
	rec := t.TempDir()
	cli, fake := fakeNVMe(t, rec)
	rs, why := Judge(context.Background(), fwIn(t, rec, cli, false, drives("/dev/a"), activate(0)), t.Logf)
	require.Empty(t, why)
	require.Len(t, rs, 1)
	assert.Equal(t, firmware.Fail, rs[0].Verdict)
	at, err := os.ReadFile(filepath.Join(fake, "at-id-ctrl"))
	require.NoError(t, err, "firmware.json when the first command was sent")
	assert.Contains(t, string(at), `"verdict": "started"`)
	assert.Contains(t, string(at), `"drive_index": 0`)
	es, err := loadEntries(rec)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, firmware.Fail, es[0].Verdict)
}

// A resume finds the step started and never judged: it fails it as
// interrupted and sends the drive nothing; a drive with a kept verdict
// at another path now (matched by identity) is not flashed again either.
func TestJudgeResumeNeverFlashesAgain(t *testing.T) {
	rec := t.TempDir()
	cli, fake := fakeNVMe(t, rec)
	f := passed("/dev/loop1", firmware.StepActivate)
	writeEntries(t, rec, started(firmware.Input{Drive: "/dev/a", Step: firmware.StepActivate, Image: "/img/new.bin", Admin: "/dev/a"}, 0),
		Entry{Result: f, DriveIndex: idx(1)})
	in := fwIn(t, rec, cli, true, drives("/dev/a", "/dev/loop5"), activate(0, 1))
	in.Asked = []record.FirmwareAsked{{Step: firmware.StepActivate, Drives: []int{0, 1}}}
	rs, why := Judge(context.Background(), in, t.Logf)
	require.Empty(t, why)
	require.Len(t, rs, 2)
	assert.Equal(t, firmware.Fail, rs[0].Verdict)
	assert.Contains(t, rs[0].Message, "interrupted during the activation: nvme fw-download /dev/a --fw=/img/new.bin")
	assert.Equal(t, "/dev/loop5", rs[1].Drive)
	assert.Equal(t, firmware.Pass, rs[1].Verdict)
	_, err := os.Stat(filepath.Join(fake, "sent"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the resume sent the drives nothing")
}

// A resume without -firmware keeps the run's firmware verdicts: a
// failure stays failed, and a step asked without a verdict fails.
func TestJudgeResumeWithoutFirmware(t *testing.T) {
	rec := t.TempDir()
	f := passed("/dev/a", firmware.StepActivate)
	f.Verdict, f.Message = firmware.Fail, "/dev/a: I/O stalled 3010 ms, over max_stall 1s"
	writeEntries(t, rec, Entry{Result: f, DriveIndex: idx(0)})
	in := fwIn(t, rec, nvme.CLI{}, true, drives("/dev/a", "/dev/b"))
	in.Asked = []record.FirmwareAsked{{Step: firmware.StepActivate, Image: "/img/new.bin", Drives: []int{0, 1}}}
	rs, why := Judge(context.Background(), in, t.Logf)
	require.Empty(t, why)
	require.Len(t, rs, 2)
	assert.Equal(t, f.Message, rs[0].Message)
	assert.Equal(t, firmware.Fail, rs[1].Verdict)
	assert.True(t, strings.HasPrefix(rs[1].Message, "/dev/b: run.json records firmware activate asked of this drive"), rs[1].Message)

	// Nothing kept, nothing asked: TestFirmware skips.
	_, why = Judge(context.Background(), fwIn(t, t.TempDir(), nvme.CLI{}, true, drives("/dev/a")), t.Logf)
	assert.Contains(t, why, "no firmware activation")
}
