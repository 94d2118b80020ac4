package qual

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/qual/absent"
	"github.com/drivequal/drivequal/acceptance/internal/qual/dryrun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/powertest"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Estimate is the plan's duration and bytes written, step by step.
type Estimate struct {
	Total time.Duration
	// Bytes is the estimated bytes written per drive, by drive index.
	Bytes []int64
	Lines []string
}

// Estimate is the plan seen as lines of text (dryrun.Steps), with its
// total duration and bytes written per drive.
func (s *Suite) Estimate() Estimate {
	return Estimate{Total: s.Plan.Total, Bytes: s.Plan.Bytes, Lines: dryrun.Steps(s.Drives, s.Plan.Steps)}
}

// PowerLoss is the run's power-loss test (TestPowerLoss).
func PowerLoss(s *Suite) *powertest.Test {
	t := powertest.New(s.Cfg, s.Spec, s.Drives, s.runner != nil, s.recorded.Files, func(c []report.HealthCheck) {
		s.out.Checks(func(r *report.Run) *[]report.HealthCheck { return &r.PowerLoss }, c)
	})
	// Each drive's cycles where the recording filed them (a resume's
	// drives are in its order, matched by identity).
	t.File(s.recorded.Samples)
	absent.Mark(t, s.recorded)
	if s.runner != nil {
		t.Rec = live.Recorder(s.runner)
	}
	return t
}

// PrintPlan writes the dry run: each drive's identity, every step with its
// estimate, every fio job file, the bytes written per drive and the total.
func (s *Suite) PrintPlan(w io.Writer) {
	fmt.Fprintf(w, "drivequal dry run: spec %s (%s), precondition %s\n\n", s.Spec.Model, s.Spec.File, s.Precondition)
	if s.reader != nil {
		// A replay runs no fio and writes to no drive: its plan is the
		// recordings it would judge.
		fmt.Fprintf(w, "replay of %s: no fio runs and nothing is written; the recordings of %d cells would be judged\n",
			s.Cfg.Replay, len(s.allCells()))
		return
	}
	dryrun.Drives(w, s.Drives)
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	s.resume.print(w, s)
	e := s.Estimate()
	fmt.Fprintln(w, "\nplan (~ estimate, ≤ bound: preconditioning ends at steady state):")
	for _, l := range e.Lines {
		fmt.Fprintln(w, l)
	}
	for _, st := range s.Plan.Steps {
		if st.Kind != plan.StepPurge && st.Kind != plan.StepPurgeProof {
			continue
		}
		// What the purge sends to each block device, and every namespace
		// it erases (a regular file is deallocated, as the step says).
		cmds, errs := s.purgeCommands(st)
		var lines []string
		for _, c := range cmds {
			if c.Kind != purge.PunchHole {
				lines = append(lines, "  "+c.String())
			}
		}
		for _, err := range errs {
			lines = append(lines, "  refused: "+err.Error())
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\nstep %d, purge (%s), sends:\n%s\n", st.N, st.Purge, strings.Join(lines, "\n"))
		}
	}
	fmt.Fprintln(w, "\nfio job files:")
	for _, st := range s.Plan.Steps {
		if st.Kind == plan.StepPurge || st.Kind == plan.StepPurgeProof || st.Kind == plan.StepFirmware {
			continue
		}
		fmt.Fprintf(w, "# step %d, %s: %s\n%s\n", st.N, st.Kind, st.Name, st.Job.File())
	}
	PowerLoss(s).Print(w)
	dryrun.Bytes(w, s.Drives, e.Bytes)
	fmt.Fprintf(w, "estimated duration: %s\n", (e.Total + PowerLoss(s).Estimate()).Round(time.Second))
}
