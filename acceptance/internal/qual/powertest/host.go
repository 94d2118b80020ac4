package powertest

import (
	"fmt"
	"io"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
)

// plpCounted says whether c0's PLP start count is evidence of a power
// loss: reported, within 64 bits, and of a drive that reports a PLP
// capacitor (capacitor health not 65535, "none"): a drive without one
// starts no power-loss protection and counts no power loss there.
func plpCounted(c0 nvme.OCPSmart) bool {
	return c0.Reported("PLP start count") && c0.PLPStartCount.Hi == 0 && c0.CapacitorHealth != 0xffff
}

// cutsSeen is how many power cuts each drive saw: with the whole host's
// power cut, every drive sees every drive's cuts (total); else the most
// cycles any one drive was cut (most).
func (t *Test) cutsSeen(most, total int) int {
	if t.Cfg.PowerCutHost {
		return total
	}
	return most
}

// printHost writes the dry run's lines of a whole host's power cut: one
// cut and reboot a cycle of each drive, each drive's writes saved before
// it, and the resume that judges it.
func (t *Test) printHost(w io.Writer) {
	p := t.Spec
	fmt.Fprintf(w, "  the whole host's power is cut, %d time(s) (%d cycle(s) of each of %d drive(s), one drive written a cut): %s\n",
		p.Cycles*len(t.Drives), p.Cycles, len(t.Drives), cmdline.PowerCommand(t.Cfg.PowerCut))
	fmt.Fprintln(w, "  each cut ends the run: once the host is back, run the same command line with -resume to judge the cycle and go on to the next")
	for _, d := range t.Drives {
		v := t.values(d)
		fmt.Fprintf(w, "  %s: run by sh with %s\n", d.Path, strings.Join(cmdline.PowerEnv(v), " "))
		fmt.Fprintf(w, "  %s  data at risk: the first %s (bytes 0 to %d), written for %s with a flush every %d writes of %d bytes, the ledger of completed writes saved and synced before the cut; every drive of the host loses power at each cut\n",
			spaces(len(d.Path)), mib(p.Size), p.Size, p.CutAfter, p.FlushEvery, p.BS)
	}
}
