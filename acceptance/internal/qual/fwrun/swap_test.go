package fwrun

import (
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/firmware"
)

// On a resume that found two drives swapped, drive 1 now has drive 0's
// old path: its entry is its own, beside drive 0's, not a replacement of
// it (which lost drive 0's verdict, and with a kept failure dropped
// drive 1's).
func TestSaveEntriesByDriveIndex(t *testing.T) {
	for _, kept := range []string{firmware.Pass, firmware.Fail, Started} {
		dir := t.TempDir()
		zero, one := 0, 1
		if err := saveEntries(dir, []Entry{{Result: firmware.Result{Drive: "/dev/loop1", Step: firmware.StepActivate, Verdict: kept}, DriveIndex: &zero}}); err != nil {
			t.Fatal(err)
		}
		if err := saveEntries(dir, []Entry{{Result: firmware.Result{Drive: "/dev/loop1", Step: firmware.StepActivate, Verdict: Started}, DriveIndex: &one}}); err != nil {
			t.Fatal(err)
		}
		es, err := loadEntries(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 2 || *es[0].DriveIndex != 0 || es[0].Verdict != kept || *es[1].DriveIndex != 1 {
			t.Errorf("drive 0 kept %s, then drive 1 at its old path: entries %+v, want both", kept, es)
		}
	}
}
