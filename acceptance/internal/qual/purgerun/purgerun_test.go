package purgerun

import (
	"context"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
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
