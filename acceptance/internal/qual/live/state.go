package live

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// unusable says why a cell cannot be measured at all.
type unusable struct{ cause, text string }

// drives is what the runner knows of each drive as the plan runs: its
// state (what its last steps left on it), when it last wrote, the
// steady-state records of its current state, and why it must not be
// used again. Indexed like the run's drives.
type drives struct {
	list []plan.Drive
	// guard and sys check that a held drive is still the one set up; nil
	// guard: nothing is held (a regular file's test, a replay).
	guard Guard
	sys   device.System

	mu        sync.Mutex
	states    []plan.State
	lastWrite []time.Time
	basis     [][]report.Steady
	broken    []unusable
	// onChanged, when set, records in run.json that drive d disappeared
	// (text says when and how), so that a resume after a reboot that
	// brings it back does not forget it.
	onChanged func(d int, text string)
}

func newDrives(list []plan.Drive, guard Guard, sys device.System) *drives {
	n := len(list)
	return &drives{list: list, guard: guard, sys: sys, states: make([]plan.State, n), lastWrite: make([]time.Time, n),
		basis: make([][]report.Steady, n), broken: make([]unusable, n)}
}

// unusable says why one of cell's drives must not be used again: an
// earlier step failed on it, or it changed; zero when all can be.
func (s *drives) unusable(cell plan.Cell) unusable {
	s.mu.Lock()
	defer s.mu.Unlock()
	var why []string
	cause := ""
	for _, d := range cell.Drives {
		if b := s.broken[d]; b.text != "" {
			why = append(why, b.text)
			if cause == "" || b.cause == report.CauseDriveChanged {
				cause = b.cause
			}
		}
	}
	if len(why) == 0 {
		return unusable{}
	}
	return unusable{cause: cause, text: strings.Join(why, "; ")}
}

// brokenText is why drive d must not be used again; "" when it can be.
func (s *drives) brokenText(d int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken[d].text
}

// markBroken records that drives failed with err, so that their remaining
// cells fail at once instead of repeating hours of preparation on a drive
// that already failed.
func (s *drives) markBroken(drives []int, cause, step string, err error) {
	for _, d := range drives {
		s.breakWith(d, unusable{cause: cause, text: fmt.Sprintf("%s failed %s earlier in this run: %v", s.list[d].Path, step, err)}, false)
	}
}

// breakWith marks drive d broken with why, unless it already is (or,
// with changed, is for another cause than a changed drive).
func (s *drives) breakWith(d int, why unusable, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.broken[d]; b.text == "" || changed && b.cause != report.CauseDriveChanged {
		s.broken[d] = why
	}
}

// vanished says which of drives have disappeared since setup (device node
// or sysfs entry gone), marking each so that its remaining cells fail
// saying so rather than quoting what fio or nvme-cli made of a missing
// path; "" when none has. when says where in the run it was noticed
// ("during TestX"). Drives that are not held have nothing to check.
func (s *drives) vanished(drives []int, when string) string {
	if s.guard == nil {
		return ""
	}
	var why []string
	for _, d := range drives {
		gone := s.sys.Gone(s.list[d].Info)
		if gone == "" {
			continue
		}
		text := fmt.Sprintf("%s disappeared %s (noticed at %s): %s (the drive was removed, or its controller reset); nothing more is run on it",
			s.list[d].Path, when, time.Now().Format("15:04:05"), gone)
		s.breakWith(d, unusable{cause: report.CauseDriveChanged, text: text}, true)
		if s.onChanged != nil {
			s.onChanged(d, text)
		}
		why = append(why, text)
	}
	return strings.Join(why, "; ")
}

// lost says, by drive, why each drive that disappeared or changed since
// setup cannot be read as itself any more: those a cell found so (see
// vanished and recheck), and those gone now. A held drive only.
func (s *drives) lost() map[int]string {
	if s.guard == nil {
		return nil
	}
	all := make([]int, len(s.list))
	for d := range all {
		all[d] = d
	}
	s.vanished(all, "by the end of the run")
	out := map[int]string{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for d, b := range s.broken {
		if b.cause == report.CauseDriveChanged && b.text != "" {
			out[d] = b.text
		}
	}
	return out
}

// changed says why drive d disappeared or changed since setup (see
// vanished and recheck), "" when it did not: nothing is read at its path
// again.
func (s *drives) changed(d int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.broken[d]; b.cause == report.CauseDriveChanged {
		return b.text
	}
	return ""
}

// present is drives without those that disappeared or changed since
// setup: nothing is read from their paths again, where another drive may
// be now.
func (s *drives) present(drives []int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, d := range drives {
		if s.broken[d].cause != report.CauseDriveChanged {
			out = append(out, d)
		}
	}
	return out
}

// recheck makes sure each drive is still the one set up (device number,
// serial and size), before anything is written to it. Each drive that is
// not is marked broken and listed in changed; err says why the first is
// not.
func (s *drives) recheck(drives []int) (changed []int, err error) {
	if s.guard == nil {
		return nil, nil
	}
	for _, d := range drives {
		if cerr := s.guard.Recheck(s.list[d].Info); cerr != nil {
			cerr = &DriveChangedError{Err: cerr}
			s.markBroken([]int{d}, report.CauseDriveChanged, "its identity check", cerr)
			changed = append(changed, d)
			if err == nil {
				err = cerr
			}
		}
	}
	return changed, err
}

// idle lists those of drives that have written nothing for longer than limit.
func (s *drives) idle(drives []int, limit time.Duration) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	now := time.Now()
	for _, d := range drives {
		if t := s.lastWrite[d]; !t.IsZero() && now.Sub(t) > limit {
			out = append(out, d)
		}
	}
	return out
}

// reset forgets the state of drives: the next cell starts over.
func (s *drives) reset(drives []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range drives {
		s.states[d] = plan.State{}
		s.basis[d] = nil
	}
}

// applied records that step st ran on its drives at now.
func (s *drives) applied(st plan.Step, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	plan.Apply(s.states, st)
	for _, d := range st.Drives {
		s.lastWrite[d] = now
		if st.Kind == plan.StepPurge || st.Kind == plan.StepFill {
			s.basis[d] = nil
		}
	}
}

// wrote records that drives wrote at now.
func (s *drives) wrote(drives []int, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range drives {
		s.lastWrite[d] = now
	}
}

// notIn says which of drives is not in state, the state a measurement
// needs; "" when all are.
func (s *drives) notIn(drives []int, state string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range drives {
		if s.states[d].Last != state {
			return s.list[d].Path
		}
	}
	return ""
}

// steady adds rec to drive d's steady-state records: a random step's
// starts them anew, a top-up's adds to them.
func (s *drives) steady(d int, rec report.Steady, random bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if random {
		s.basis[d] = []report.Steady{rec}
	} else {
		s.basis[d] = append(s.basis[d], rec)
	}
}

// basisOf is the steady-state records of drives' current state.
func (s *drives) basisOf(drives []int) []report.Steady {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []report.Steady
	for _, d := range drives {
		out = append(out, s.basis[d]...)
	}
	return out
}
