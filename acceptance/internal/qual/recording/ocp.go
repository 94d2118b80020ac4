package recording

import (
	"errors"
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
)

// readOCP reads a drive's recorded OCP C0 logs (health/<i>.c0-before.json
// and c0-after.json) with read; a drive without C0 has its reason
// recorded as c0-before, an object with an "error" field, as nvme-cli 3
// prints it. A recording without them has no OCP checks. version is the
// nvme-cli version the run recorded: what nvme-cli printed means what
// that version meant by it (see nvme.ParseOCPSmart).
func readOCP(read func(what string) ([]byte, error), version string) evidence.OCPHealth {
	before, err := read("c0-before")
	if err != nil {
		return evidence.OCPHealth{}
	}
	b, err := nvme.ParseOCPSmart(before, version)
	var no *nvme.NoOCPLog
	if errors.As(err, &no) {
		return evidence.OCPHealth{Skip: no.Error()}
	}
	if err != nil {
		return evidence.OCPHealth{Skip: fmt.Sprintf("the recorded OCP C0 log does not parse (%v)", err)}
	}
	after, err := read("c0-after")
	if err != nil {
		return evidence.OCPHealth{Skip: "no OCP C0 log was recorded after the run (it was stopped before the end)"}
	}
	a, err := nvme.ParseOCPSmart(after, version)
	if errors.As(err, &no) {
		// The live run could not read it after the run: recorded as an
		// "error" object, what failed the drive.
		return evidence.OCPHealth{Lost: no.Why}
	}
	if err != nil {
		return evidence.OCPHealth{Skip: fmt.Sprintf("the OCP C0 log recorded after the run does not parse (%v)", err)}
	}
	return evidence.OCPHealth{Read: true, Before: b, Last: a}
}
