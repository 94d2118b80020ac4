package steadyrec

import (
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
)

// A drive's steady-state record names it by its serial beside its path:
// a cell a resume keeps from before a reboot is judged with records made
// under the paths of that boot, and the lot tells its drives apart by
// serial (lot.notSteadyDrives).
func TestRecordNamesTheDriveBySerial(t *testing.T) {
	st := plan.Step{N: 3, Name: "random preconditioning (4KB Random Write)", Kind: plan.StepRandom, Round: time.Minute}
	d := plan.Drive{Info: device.Info{Path: "/dev/nvme0n1", Serial: "PHAB123400AB1P9SGN"}}
	rounds := []float64{1000, 1000, 1000, 1000, 1000}
	rec := Record(st, d, steady.DefaultRule.Hold(rounds), "fio status reports")
	if rec.Drive != "/dev/nvme0n1" || rec.Serial != "PHAB123400AB1P9SGN" || !rec.Attained || rec.StopRound != 5 {
		t.Errorf("Record() = drive %q, serial %q, attained %v, stop round %d; want /dev/nvme0n1, PHAB123400AB1P9SGN, true, 5",
			rec.Drive, rec.Serial, rec.Attained, rec.StopRound)
	}
}
