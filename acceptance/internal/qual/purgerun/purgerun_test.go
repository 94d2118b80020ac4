package purgerun

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

func drives() []plan.Drive {
	return []plan.Drive{{Info: device.Info{Path: "/dev/nonexistent-a", Size: 1 << 20}, Capacity: "64MiB"}}
}

func proofPlan() plan.Plan {
	return plan.Plan{Steps: []plan.Step{{Kind: plan.StepPurgeProof, Drives: []int{0}, Purge: "discard", Proof: purgeproof.Sample}}}
}

// A resumed run keeps the failure its recording holds: the drive is not
// purged again (it no longer holds the fill), and the verdict stays.
func TestResumeKeepsTheFailure(t *testing.T) {
	dir := t.TempDir()
	failed := purgeproof.Result{Drive: "/dev/nonexistent-a", Verdict: purgeproof.Fail, Message: "the purge did not erase: LBAs 0-2047"}
	if err := kept.Save(dir, []purgeproof.Result{failed}); err != nil {
		t.Fatal(err)
	}
	rs, why := Judge(context.Background(), In{Drives: drives(), Plan: proofPlan(), Record: dir, Resumed: true}, t.Logf)
	if why != "" || len(rs) != 1 || rs[0].Verdict != purgeproof.Fail || rs[0].Message != failed.Message {
		t.Fatalf("Judge on resume = %+v, %q; want the recorded failure", rs, why)
	}
	res := Report(rs[0], drives())
	if res.Test != "TestPurge/nonexistent-a" || res.Verdict != report.Fail || res.Cause != report.CausePurge || res.Capacity != "64MiB" {
		t.Errorf("Report = %+v", res)
	}
}

// A new run in the same directory does not take an earlier run's verdict
// for its own: it purges, here a drive that cannot be read, and fails.
func TestNewRunForgetsTheOldDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := kept.Save(dir, []purgeproof.Result{{Drive: "/dev/nonexistent-a", Verdict: purgeproof.Pass}}); err != nil {
		t.Fatal(err)
	}
	rs, _ := Judge(context.Background(), In{Drives: drives(), Plan: proofPlan(), Record: dir}, t.Logf)
	if len(rs) != 1 || rs[0].Verdict != purgeproof.Fail {
		t.Fatalf("Judge = %+v, want this run's own failure", rs)
	}
}

// Without the step there is nothing to judge, and why says how to ask.
func TestNotAsked(t *testing.T) {
	if _, why := Judge(context.Background(), In{Drives: drives()}, t.Logf); why == "" {
		t.Error("no purge step: no reason given")
	}
}

// The run's fill ids are read from the fill's patterns.
func TestFills(t *testing.T) {
	pl := plan.Plan{Steps: []plan.Step{{Kind: plan.StepFill, Job: fiojob.Job{VerifyPattern: fiojob.FillPattern(0x1234567890abcdef), EarlierPattern: fiojob.FillPattern(0x42)}}}}
	got := fills(pl)
	if len(got) != 2 || got[0] != 0x1234567890abcdef || got[1] != 0x42 {
		t.Errorf("fills = %x, want 1234567890abcdef, 42", got)
	}
}

func passed(drive string) purgeproof.Result {
	return purgeproof.Result{Drive: drive, Command: "discard " + drive + " (BLKDISCARD)", Promise: "zeros", ReadBack: purgeproof.Sample,
		BytesRead: 1 << 20, SectorBytes: 512, Sectors: 2048, FillBefore: 2048, Verdict: purgeproof.Pass, Message: drive + ": all 2048 sectors as promised"}
}

// markedInfo is run.json with the purge at the end marked writing drive 0.
func markedInfo() record.Run {
	return record.Run{Samples: &record.Samples{Drives: []record.DriveSample{{Writing: "7 purge-proof: purge (discard) again"}}}}
}

// A replay never takes a missing, foreign or contradictory purge.json for
// a run without a purge: each drive of the run fails, by its own name.
func TestReplayRefusesWhatTheRunCouldNotHaveKept(t *testing.T) {
	bad := passed("/dev/nonexistent-a")
	bad.Bad, bad.LBAs = 8, []string{"0-7"}
	odd := passed("/dev/nonexistent-a")
	odd.Verdict = "qualified"
	for _, tc := range []struct {
		name  string
		kept  []purgeproof.Result
		info  record.Run
		asked bool
		want  string
	}{
		{"missing, run.json marks the purge", nil, markedInfo(), false, "run.json records the purge at the end"},
		{"missing, the spec asks", nil, record.Run{}, true, "the run asked for a purge at the end"},
		{"missing, -purge-after recorded", nil, record.Run{PurgeAfter: purgeproof.Sample}, false, "the run asked for a purge at the end"},
		{"missing, run.json vouches for it", nil, record.Run{Files: map[string]string{kept.File: "00"}}, false, "run.json lists the sha256 of purge.json"},
		{"a drive not in the run", []purgeproof.Result{passed("/dev/nonexistent-a"), passed("/dev/other")}, record.Run{}, false, `"/dev/other"): not a drive of the run`},
		{"a pass with bad sectors", []purgeproof.Result{bad}, record.Run{}, false, "verdict pass contradicts its 8 bad sectors"},
		{"an unknown verdict", []purgeproof.Result{odd}, record.Run{}, false, `verdict "qualified" is none of`},
		{"a pass that read nothing", []purgeproof.Result{{Drive: "/dev/nonexistent-a", FillBefore: 8, Verdict: purgeproof.Pass}}, record.Run{}, false, "nothing read back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.kept != nil {
				if err := kept.Save(dir, tc.kept); err != nil {
					t.Fatal(err)
				}
			}
			pl := plan.Plan{}
			if tc.asked {
				pl = proofPlan()
			}
			rs, why := Judge(context.Background(), In{Drives: drives(), Plan: pl, Reader: &recording.Reader{Dir: dir, Info: tc.info}}, t.Logf)
			if why != "" || len(rs) != 1 {
				t.Fatalf("Judge = %+v, %q; want the drive's failure", rs, why)
			}
			if rs[0].Drive != "/dev/nonexistent-a" || rs[0].Verdict != purgeproof.Fail || !strings.Contains(rs[0].Message, tc.want) {
				t.Errorf("Judge = %+v; want a failure of /dev/nonexistent-a saying %q", rs[0], tc.want)
			}
		})
	}
	// A drive that held none of the fill is judged inconclusive, as
	// recorded, not refused.
	dir := t.TempDir()
	none := passed("/dev/nonexistent-a")
	none.FillBefore, none.Verdict = 0, purgeproof.Inconclusive
	if err := kept.Save(dir, []purgeproof.Result{none}); err != nil {
		t.Fatal(err)
	}
	if rs, _ := Judge(context.Background(), In{Drives: drives(), Reader: &recording.Reader{Dir: dir}}, t.Logf); len(rs) != 1 || rs[0].Verdict != purgeproof.Inconclusive || rs[0].Message != none.Message {
		t.Errorf("Judge of a recorded inconclusive verdict = %+v, want it as recorded", rs)
	}
	// A run that neither asked for nor started a purge has none to judge.
	if rs, why := Judge(context.Background(), In{Drives: drives(), Reader: &recording.Reader{Dir: t.TempDir()}}, t.Logf); why == "" || rs != nil {
		t.Errorf("Judge of a recording without a purge = %+v, %q; want why", rs, why)
	}
	// A pass as a run writes it stands.
	dir = t.TempDir()
	if err := kept.Save(dir, []purgeproof.Result{passed("/dev/nonexistent-a")}); err != nil {
		t.Fatal(err)
	}
	if rs, why := Judge(context.Background(), In{Drives: drives(), Reader: &recording.Reader{Dir: dir, Info: markedInfo()}}, t.Logf); why != "" || len(rs) != 1 || rs[0].Verdict != purgeproof.Pass {
		t.Errorf("Judge of a recorded pass = %+v, %q", rs, why)
	}
}

// A resume without -purge-after still reports the failed purge the run
// kept: the failure is not forgotten because the flag was left out.
func TestResumeWithoutTheFlagKeepsTheFailure(t *testing.T) {
	dir := t.TempDir()
	failed := purgeproof.Result{Drive: "/dev/nonexistent-a", Verdict: purgeproof.Fail, Bad: 2048, Message: "the purge did not erase: LBAs 0-2047"}
	if err := kept.Save(dir, []purgeproof.Result{failed}); err != nil {
		t.Fatal(err)
	}
	rs, why := Judge(context.Background(), In{Drives: drives(), Record: dir, Resumed: true}, t.Logf)
	if why != "" || len(rs) != 1 || rs[0].Verdict != purgeproof.Fail || rs[0].Message != failed.Message {
		t.Fatalf("Judge on a resume without the purge step = %+v, %q; want the kept failure", rs, why)
	}
	// The purge started but kept no verdict: the drive fails, and the
	// message says how to purge it again.
	info, err := json.Marshal(markedInfo())
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, record.RunFile), info, 0o644); err != nil {
		t.Fatal(err)
	}
	rs, why = Judge(context.Background(), In{Drives: drives(), Record: dir, Resumed: true}, t.Logf)
	if why != "" || len(rs) != 1 || rs[0].Verdict != purgeproof.Fail || !strings.Contains(rs[0].Message, "-purge-after") {
		t.Fatalf("Judge on a resume after a purge that kept nothing = %+v, %q; want a failure", rs, why)
	}
}

// A run stopped during the read-back keeps no verdict of it (a resume
// purges again), and a live run's verdicts, once kept, are hashed into
// run.json.
func TestStoppedReadBackKeepsNoVerdict(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	landed := 0
	in := In{Drives: drives(), Plan: proofPlan(), Record: dir, Writing: func(plan.Step) { cancel() }, Landed: func() error { landed++; return nil }}
	rs, why := Judge(ctx, in, t.Logf)
	if len(rs) != 0 || why == "" {
		t.Errorf("Judge stopped during the purge = %+v, %q; want no verdict and why", rs, why)
	}
	if got, err := kept.Load(dir); err != nil || len(got) != 0 {
		t.Errorf("kept after the stop: %+v, %v; want nothing", got, err)
	}
	// Not stopped, the same drive (which does not read) fails, is kept,
	// and its purge.json is hashed.
	in.Writing = nil
	rs, _ = Judge(context.Background(), in, t.Logf)
	if len(rs) != 1 || rs[0].Verdict != purgeproof.Fail || landed != 1 {
		t.Errorf("Judge = %+v, landed %d times; want a kept failure, hashed once", rs, landed)
	}
	if got, _ := kept.Load(dir); len(got) != 1 {
		t.Errorf("kept = %+v, want the failure", got)
	}
}

// A stop keeps the verdicts that found data left: that is a failure
// whatever cut the read short.
func TestKeepable(t *testing.T) {
	rs := []purgeproof.Result{{Drive: "a", Verdict: purgeproof.Fail, Message: "context canceled"}, {Drive: "b", Verdict: purgeproof.Fail, Bad: 3}}
	if got := Keepable(context.Background(), rs); len(got) != 2 {
		t.Errorf("Keepable while running = %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := Keepable(ctx, rs); len(got) != 1 || got[0].Drive != "b" {
		t.Errorf("Keepable after the stop = %+v, want b's", got)
	}
}

// -run selects each drive's TestPurge on its own: the second drive alone,
// the first alone, or both.
func TestSelectedPerDrive(t *testing.T) {
	two := []plan.Drive{{Info: device.Info{Path: "/dev/loop5"}}, {Info: device.Info{Path: "/dev/loop6"}}}
	spec := &specs.Spec{}
	for _, c := range []struct {
		run, skip string
		want      []int
	}{
		{"TestPurge/loop6", "", []int{1}},
		{"TestPurge/loop5", "", []int{0}},
		{"TestPurge", "", []int{0, 1}},
		{"", "TestPurge/loop5", []int{1}},
		{"TestIntegrity", "", nil},
	} {
		cfg := &cmdline.Config{Run: c.run, Skip: c.skip, PurgeAfter: true}
		if got := Selected(cfg, two); !slices.Equal(got, c.want) {
			t.Errorf("-run=%q -skip=%q: Selected = %v, want %v", c.run, c.skip, got, c.want)
		}
		mode, drives := Asked(cfg, spec, two)
		if want := map[bool]string{true: purgeproof.Sample, false: ""}[c.want != nil]; mode != want || !slices.Equal(drives, c.want) {
			t.Errorf("-run=%q -skip=%q: Asked = %q, %v; want %q, %v", c.run, c.skip, mode, drives, want, c.want)
		}
	}
}

// A drive absent from a resume (it did not come back after the host's
// power cut) is never purged at the end, whatever -run selects: what is
// at its path is not the drive the run held.
func TestSelectedNeverAnAbsentDrive(t *testing.T) {
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/loop5"}}, {Info: device.Info{Path: "/dev/loop6"}, Absent: "/dev/loop6 did not come back"}}
	for _, run := range []string{"TestPurge", "TestPurge/loop6", ""} {
		cfg := &cmdline.Config{Run: run, PurgeAfter: true}
		if got := Selected(cfg, drives); slices.Contains(got, 1) {
			t.Errorf("-run=%q: Selected = %v, want the absent drive 1 left out", run, got)
		}
	}
}

// A replay fails a drive without a verdict only when the run asked for
// its purge: run.json's purge_drives lists the drives -run selected, and
// a drive it does not list has no TestPurge; without the list (an older
// recording), every drive was asked.
func TestReplayAsksTheDrivesRecorded(t *testing.T) {
	two := []plan.Drive{{Info: device.Info{Path: "/dev/nonexistent-a", Size: 1 << 20}}, {Info: device.Info{Path: "/dev/nonexistent-b", Size: 1 << 20}}}
	dir := t.TempDir()
	if err := kept.Save(dir, []purgeproof.Result{passed("/dev/nonexistent-b")}); err != nil {
		t.Fatal(err)
	}
	rs, _ := Judge(context.Background(), In{Drives: two, Reader: &recording.Reader{Dir: dir, Info: record.Run{PurgeAfter: purgeproof.Sample, PurgeDrives: []int{1}}}}, t.Logf)
	if len(rs) != 1 || rs[0].Drive != "/dev/nonexistent-b" || rs[0].Verdict != purgeproof.Pass {
		t.Errorf("Judge of a run that purged the second drive alone = %+v, want its pass alone", rs)
	}
	rs, _ = Judge(context.Background(), In{Drives: two, Reader: &recording.Reader{Dir: dir, Info: record.Run{PurgeAfter: purgeproof.Sample}}}, t.Logf)
	if len(rs) != 2 || rs[0].Verdict != purgeproof.Fail || rs[1].Verdict != purgeproof.Pass {
		t.Errorf("Judge of a run that asked for every drive = %+v, want the first failed", rs)
	}
}

// A resume renames the verdict of a drive given under another path, and
// run.json's sha256 of purge.json follows; a purge.json that does not
// read is left for TestPurge to fail, not a refusal of the resume.
func TestMovedRehashes(t *testing.T) {
	dir := t.TempDir()
	if err := kept.Save(dir, []purgeproof.Result{passed("/dev/loop1")}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{kept.File: "old"}
	if err := Moved(dir, map[string]string{"/dev/loop1": "/dev/loop5"}, files); err != nil {
		t.Fatal(err)
	}
	rs, _ := kept.Load(dir)
	sum, _ := record.HashIn(dir, kept.File)
	if len(rs) != 1 || rs[0].Drive != "/dev/loop5" || files[kept.File] != sum {
		t.Errorf("after Moved: %+v, files %v (sha256 %s)", rs, files, sum)
	}
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, kept.File), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Moved(broken, map[string]string{"/dev/loop1": "/dev/loop5"}, files); err != nil {
		t.Errorf("Moved of a purge.json that does not read: %v, want it left to TestPurge", err)
	}
}
