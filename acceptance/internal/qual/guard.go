package qual

import (
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Guard keeps the run's targets to itself while it runs: it holds each
// exclusively, discards through that hold and says whether a target is
// still the one set up.
type Guard interface {
	// Recheck fails, saying what changed, when the target is no longer
	// the one described by info.
	Recheck(info device.Info) error
	// Discard deallocates the whole target through the held descriptor.
	Discard(path string) error
	// Close lets the targets go.
	Close() error
}

// DriveChangedError says a drive is no longer the one set up: another
// device number, serial or size behind its path. Its remaining cells fail.
type DriveChangedError struct{ Err error }

func (e *DriveChangedError) Error() string { return e.Err.Error() }
func (e *DriveChangedError) Unwrap() error { return e.Err }

// unusableDrive says why a cell cannot be measured at all.
type unusableDrive struct{ cause, text string }

// unusable says why one of cell's drives must not be used again: an
// earlier preparation step failed on it, or it changed; "" when all can be.
func (s *Suite) unusable(cell plan.Cell) unusableDrive {
	s.mu.Lock()
	defer s.mu.Unlock()
	var why []string
	cause := ""
	for _, d := range cell.Drives {
		if d < len(s.broken) && s.broken[d].text != "" {
			why = append(why, s.broken[d].text)
			if cause == "" || s.broken[d].cause == report.CauseDriveChanged {
				cause = s.broken[d].cause
			}
		}
	}
	if len(why) == 0 {
		return unusableDrive{}
	}
	return unusableDrive{cause: cause, text: strings.Join(why, "; ")}
}

// markBroken records that drives failed with err, so that their remaining
// cells fail at once instead of repeating hours of preparation on a drive
// that already failed.
func (s *Suite) markBroken(drives []int, cause, step string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = make([]unusableDrive, len(s.Drives))
	}
	for _, d := range drives {
		if s.broken[d].text == "" {
			s.broken[d] = unusableDrive{cause: cause, text: fmt.Sprintf("%s failed %s earlier in this run: %v", s.Drives[d].Path, step, err)}
		}
	}
}

// vanished says which of drives have disappeared since setup (device node
// or sysfs entry gone), marking each so that its remaining cells fail
// saying so rather than quoting what fio or nvme-cli made of a missing
// path; "" when none has. when says where in the run it was noticed
// ("during TestX"). A replay, or a suite that holds no drive, has nothing
// to check.
func (s *Suite) vanished(drives []int, when string) string {
	if !s.Cfg.Live() || s.guard == nil {
		return ""
	}
	var why []string
	for _, d := range drives {
		gone := s.sys.Gone(s.Drives[d].Info)
		if gone == "" {
			continue
		}
		text := fmt.Sprintf("%s disappeared %s: %s (the drive was removed, or its controller reset); nothing more is run on it",
			s.Drives[d].Path, when, gone)
		s.mu.Lock()
		if s.broken == nil {
			s.broken = make([]unusableDrive, len(s.Drives))
		}
		if s.broken[d].text == "" || s.broken[d].cause != report.CauseDriveChanged {
			s.broken[d] = unusableDrive{cause: report.CauseDriveChanged, text: text}
		}
		s.mu.Unlock()
		why = append(why, text)
	}
	return strings.Join(why, "; ")
}

// recheck makes sure each drive is still the one set up (device number,
// serial and size), before anything is written to it. A regular file or a
// replay has nothing to check.
func (s *Suite) recheck(drives []int) error {
	if !s.Cfg.Live() || s.guard == nil {
		return nil
	}
	for _, d := range drives {
		if err := s.guard.Recheck(s.Drives[d].Info); err != nil {
			err = &DriveChangedError{Err: err}
			s.markBroken([]int{d}, report.CauseDriveChanged, "its identity check", err)
			return err
		}
	}
	return nil
}

// held is the Guard of a live run: the drives held by device.System.Hold.
type held struct {
	sys   device.System
	holds *device.Holds
}

func (h held) Recheck(info device.Info) error { return h.sys.Recheck(info) }
func (h held) Discard(path string) error      { return h.holds.Discard(path) }
func (h held) Close() error                   { return h.holds.Close() }

// purgeReach widens a purge of drives to every drive of the run that the
// purge erases too: the other namespaces of a controller that formats or
// sanitizes as a whole. Their state is then reset like the drives'.
func (s *Suite) purgeReach(drives []int, method string) []int {
	if len(s.ctrls) == 0 {
		return drives
	}
	var infos []device.Info
	group := map[string]bool{}
	for _, d := range drives {
		if g := s.Drives[d].PurgeGroup(); g != "" {
			group[g] = true
		}
	}
	index := map[string]int{}
	for i, d := range s.Drives {
		if slices.Contains(drives, i) || group[d.PurgeGroup()] && d.PurgeGroup() != "" {
			infos = append(infos, d.Info)
			index[d.Path] = i
		}
	}
	steps, _ := purge.Plan(infos, method, s.ctrls)
	out := slices.Clone(drives)
	for _, st := range steps {
		touches := false
		for _, t := range st.Targets {
			if slices.Contains(drives, index[t]) {
				touches = true
			}
		}
		if !touches || !st.ControllerWide {
			continue
		}
		for _, t := range st.Targets {
			if i, ok := index[t]; ok && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}

// purgeCommands returns what the purge step st sends, exactly as the run
// executes it: st's drives widened by purgeReach, planned by purge.Plan
// with the identify data read at setup.
func (s *Suite) purgeCommands(st plan.Step) ([]purge.Step, []error) {
	var infos []device.Info
	for _, d := range s.purgeReach(st.Drives, st.Purge) {
		infos = append(infos, s.Drives[d].Info)
	}
	return purge.Plan(infos, st.Purge, s.ctrls)
}
