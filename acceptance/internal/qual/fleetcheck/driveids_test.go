package fleetcheck

import (
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/fleet"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// loopRun is a run on one loop device whose image is inode 12 on device
// 0:45 (a fresh tmpfs's first files on every machine booted from one
// image), recorded on machine.
func loopRun(machine, boot string) record.Run {
	var r record.Run
	r.Host.MachineID = machine
	r.BootID = boot
	r.Drives = []report.Drive{{Path: "/dev/loop0"}}
	r.Identities = []identity.Identity{{Kind: "loop", Bytes: 64 << 20, File: identity.FileID{Dev: "0:45", Inode: 12}}}
	return r
}

type driveIDsTest struct {
	name    string
	a, b    record.Run
	refusal string // in Distinct's error; "" for none
}

var driveIDsTests = []driveIDsTest{
	{"two machines' images", loopRun("m1", "b1"), loopRun("m2", "b2"), ""},
	{"one machine's image in two boots", loopRun("m1", "b1"), loopRun("m1", "b2"), "is in a (/dev/loop0) and b (/dev/loop0)"},
	{"machines not recorded", loopRun("", "b1"), loopRun("", "b2"), "is in a (/dev/loop0) and b (/dev/loop0)"},
}

func TestDriveIDsOfFilesAreTheirMachines(t *testing.T) {
	for _, tt := range driveIDsTests {
		recs := []fleet.Recording{}
		for dir, r := range map[string]record.Run{"a": tt.a, "b": tt.b} {
			recs = append(recs, fleet.Recording{Dir: dir, RunSHA256: dir, MachineID: r.Host.MachineID, BootID: r.BootID, Drives: driveIDs(r)})
		}
		if recs[0].Dir != "a" {
			recs[0], recs[1] = recs[1], recs[0]
		}
		err := fleet.Distinct(recs)
		switch {
		case tt.refusal == "" && err != nil:
			t.Errorf("%s: Distinct = %v, want nil", tt.name, err)
		case tt.refusal != "" && (err == nil || !strings.Contains(err.Error(), tt.refusal)):
			t.Errorf("%s: Distinct = %v, want an error containing %q", tt.name, err, tt.refusal)
		}
	}
}
