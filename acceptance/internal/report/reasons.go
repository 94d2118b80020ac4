package report

import (
	"github.com/drivequal/drivequal/acceptance/internal/report/drivenames"
	"strconv"
)

// DriveReason is one drive's reason for a verdict, the drive apart from
// what it says, so that a reason several drives share is said once.
type DriveReason struct {
	Drive  string // the drive's path, "/dev/nvme0n1" (or "host:/dev/nvme0n1")
	Reason string // what the drive did, without naming it: "did not reach steady state in step 20 (…) within 20s: …"
}

// MaxListed is how many entries (names or ranges) a compact drive list
// shows before "… and N more".
const MaxListed = 8

// Reasons says each distinct reason once, in the order first given: a
// reason of one drive as "/dev/loop16 <reason>", one several drives share
// as "24 of 24 drives <reason>: loop16–loop39", the drives in
// drivenames.Compact's form. total is the count of drives the cell ran on.
// Reasons with no drive are said as they are.
func Reasons(rs []DriveReason, total int) []string {
	var order []string
	by := make(map[string][]string)
	for _, r := range rs {
		if _, ok := by[r.Reason]; !ok {
			order = append(order, r.Reason)
		}
		if r.Drive != "" {
			by[r.Reason] = append(by[r.Reason], r.Drive)
		}
	}
	out := make([]string, 0, len(order))
	for _, reason := range order {
		drives := by[reason]
		switch len(drives) {
		case 0:
			out = append(out, reason)
		case 1:
			out = append(out, drives[0]+" "+reason)
		default:
			out = append(out, CountOf(len(drives), total)+" "+reason+": "+drivenames.Compact(drives, MaxListed))
		}
	}
	return out
}

// CountOf is "10 of 24 drives", or "3 drives" when the total is unknown.
func CountOf(n, total int) string {
	switch {
	case total >= n && total > 1:
		return strconv.Itoa(n) + " of " + strconv.Itoa(total) + " drives"
	case n == 1:
		return "1 drive"
	}
	return strconv.Itoa(n) + " drives"
}

// DrivesLine is "24 drives: nvme0n1–nvme23n1", or the one drive's path.
func DrivesLine(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return strconv.Itoa(len(paths)) + " drives: " + drivenames.Compact(paths, MaxListed)
}
