package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// recheckFix is the fix of every Recheck error.
const recheckFix = "the drive is not the one that was checked: stop and check the host"

// Gone says how want has disappeared since setup: "its device node
// /dev/nvme0n1 is gone", "its sysfs entry /sys/dev/block/259:0 is gone"
// (a drive removed, or a controller that reset and came back as another
// device), or its capacity dropped to 0 (sysfs size 0: being removed);
// "" when both are still there. A regular file is gone when its
// path is.
func (s System) Gone(want Info) string {
	var why []string
	if _, err := os.Stat(s.p(want.Path)); errors.Is(err, fs.ErrNotExist) {
		if want.Block {
			why = append(why, "its device node "+want.Path+" is gone")
		} else {
			why = append(why, want.Path+" is gone")
		}
	}
	if want.Block && (want.Major != 0 || want.Minor != 0) {
		sys := fmt.Sprintf("/sys/dev/block/%d:%d", want.Major, want.Minor)
		if _, err := os.Stat(s.p(sys)); errors.Is(err, fs.ErrNotExist) {
			why = append(why, "its sysfs entry "+sys+" is gone")
		} else if size, err := os.ReadFile(s.p(sys + "/size")); err == nil && strings.TrimSpace(string(size)) == "0" && want.Size > 0 {
			// The kernel sets a removed namespace's capacity to 0 first;
			// its node and sysfs entry go seconds later (a guest's kernel
			// under emulation took 7 s), after fio may have read it.
			why = append(why, "its capacity dropped to 0 ("+sys+"/size reads 0: the kernel is removing it)")
		}
	}
	return strings.Join(why, " and ")
}

// Recheck makes sure the target is still the one Inspect described as want,
// before a destructive step (purge, fill, write workload): it stats the path
// and rereads sysfs, and returns a Refusal (as the error) when the path is
// gone or is no longer the same kind of target, or when its device number,
// serial, size or (loop devices) backing file differ. A regular file whose
// size was 0 may have grown (fio lays it out); any other size change counts.
// nil means unchanged.
func (s System) Recheck(want Info) error {
	r := Refusal{Path: want.Path, Fix: recheckFix}
	if _, err := os.Stat(s.p(want.Path)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.Reason = "is gone since setup"
		} else {
			r.Reason = "cannot be inspected since setup: " + err.Error()
		}
		return r
	}
	got, err := s.Inspect(want.Path)
	if err != nil {
		r.Reason = "changed since setup: " + strings.TrimPrefix(err.Error(), want.Path+": ")
		return r
	}
	var changes []string
	kind := func(b bool) string {
		if b {
			return "block device"
		}
		return "regular file"
	}
	if got.Block != want.Block {
		changes = append(changes, kind(want.Block)+" -> "+kind(got.Block))
	} else {
		if got.Major != want.Major || got.Minor != want.Minor {
			changes = append(changes, fmt.Sprintf("device number %d:%d -> %d:%d", want.Major, want.Minor, got.Major, got.Minor))
		}
		if got.Serial != want.Serial {
			changes = append(changes, fmt.Sprintf("serial %q -> %q", want.Serial, got.Serial))
		}
		if got.Size != want.Size && (want.Block || want.Size != 0) {
			changes = append(changes, fmt.Sprintf("size %s -> %s bytes", units.Thousands(float64(want.Size)), units.Thousands(float64(got.Size))))
		}
		if got.BackingFile != want.BackingFile {
			changes = append(changes, fmt.Sprintf("backing file %q -> %q", want.BackingFile, got.BackingFile))
		}
	}
	if len(changes) == 0 {
		return nil
	}
	r.Reason = "changed since setup: " + strings.Join(changes, ", ")
	return r
}
