package cycle

import (
	"context"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
)

// An NVMe drive whose SMART log read before the cut but not after it
// (the evidence is missing) is INCONCLUSIVE with the read error, not a
// PASS as "keeps no count".
func TestCountersUnreadableAfter(t *testing.T) {
	d, _ := loopDrive(t, nil)
	calls := 0
	d.Counters = func(context.Context) ([]powerloss.Counter, string) {
		calls++
		if calls == 1 {
			return []powerloss.Counter{{Name: "unsafe shutdowns", Before: 7}}, ""
		}
		return nil, "its SMART log does not read: exit status 1"
	}
	got := Run(context.Background(), d, config(t, d, "true", "true"), 1, t.Logf)
	v := powerloss.Judge(got)
	t.Logf("%s: %s", v.Verdict, v.Message)
	if v.Verdict != powerloss.Inconclusive || !strings.Contains(v.Message, "unsafe shutdowns read before the cut but not after (its SMART log does not read: exit status 1)") {
		t.Errorf("%s with the counters unreadable after the cut: %s", v.Verdict, v.Message)
	}
	if strings.Contains(v.Message, "keeps no count") {
		t.Errorf("says the drive keeps no count, though it was read before the cut")
	}
}

// A restore command that fails says nothing of the drive: the cycle is
// INCONCLUSIVE "the restore command failed", not the drive's FAIL "did
// not return".
func TestRestoreCommandFailed(t *testing.T) {
	d, _ := loopDrive(t, nil)
	got := Run(context.Background(), d, config(t, d, "true", "echo no outlet 7 >&2; exit 3"), 1, t.Logf)
	v := powerloss.Judge(got)
	if v.Verdict != powerloss.Inconclusive || !strings.Contains(v.Message, "the restore command failed (exit status 3: no outlet 7)") {
		t.Errorf("%s: %s", v.Verdict, v.Message)
	}
}

// An NVMe drive that keeps counts of power losses and whose SMART log
// does not read before the cut has no evidence the cut happened: the
// cycle is INCONCLUSIVE, not a pass on its data alone.
func TestCountedUnreadBefore(t *testing.T) {
	d, _ := loopDrive(t, nil)
	d.Counted = true
	d.Counters = func(context.Context) ([]powerloss.Counter, string) {
		return nil, "its SMART log does not read: exit status 1"
	}
	got := Run(context.Background(), d, config(t, d, "blockdev --setro "+d.Path, "blockdev --setrw "+d.Path), 1, t.Logf)
	v := powerloss.Judge(got)
	if v.Verdict != powerloss.Inconclusive || !strings.Contains(v.Message, "no evidence the cut happened: its counts of power losses did not read before the cut (its SMART log does not read: exit status 1)") {
		t.Errorf("Judge = %s: %s, want inconclusive", v.Verdict, v.Message)
	}
}
