package qual

import (
	"context"

	"github.com/drivequal/drivequal/acceptance/internal/qual/live/capture"
)

// CaptureFailures reads, after a live run's tests, the error log and
// telemetry of every drive that failed anything (a cell, its read-back, a
// health or receipt check, a critical warning or a preparation step) into
// the recording, and names them in the drives table of results.json and
// summary.md (see live.Runner.CaptureFailures). It changes no verdict; a
// replay has nothing to read and does nothing.
func (r *Run) CaptureFailures(ctx context.Context) {
	for _, m := range r.Members {
		m.Suite.captureFailures(ctx)
	}
}

func (s *Suite) captureFailures(ctx context.Context) {
	if s.runner == nil {
		return
	}
	index := map[string]int{}
	for i, d := range s.Drives {
		index[d.Path] = i
	}
	broken := s.runner.Broken()
	s.out.Lock()
	list := capture.Failed(s.out.Run, index, broken, s.drivesOf)
	s.out.Unlock()
	caps := s.runner.CaptureFailures(ctx, list)
	s.out.Lock()
	defer s.out.Unlock()
	for i := range s.out.Run.Drives {
		if d, ok := index[s.out.Run.Drives[i].Path]; ok {
			if c, ok := caps[d]; ok {
				c := c
				s.out.Run.Drives[i].Failure = &c
			}
		}
	}
	if len(caps) > 0 {
		s.out.Stale() // the drives table changed: write it again
	}
}
