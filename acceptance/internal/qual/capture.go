package qual

import (
	"context"
	"slices"

	"github.com/drivequal/drivequal/acceptance/internal/report"
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
	failed := map[int]bool{}
	index := map[string]int{}
	for i, d := range s.Drives {
		index[d.Path] = i
	}
	for d := range s.runner.Broken() {
		failed[d] = true
	}
	s.out.mu.Lock()
	run := s.out.run
	for _, res := range run.Results {
		if res.Verdict != report.Fail {
			continue
		}
		switch {
		case res.Integrity != nil:
			if i, ok := index[res.Integrity.Drive]; ok {
				failed[i] = true
			}
		case res.Kind == report.KindSingle:
			for _, i := range s.drivesOf(res.Capacity) {
				failed[i] = true
			}
		}
	}
	for _, c := range append(slices.Clone(run.Health), run.Receipt...) {
		if c.Verdict == report.Fail {
			if i, ok := index[c.Drive]; ok {
				failed[i] = true
			}
		}
	}
	s.out.mu.Unlock()
	var list []int
	for d := range failed {
		list = append(list, d)
	}
	slices.Sort(list)
	caps := s.runner.CaptureFailures(ctx, list)
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	for i := range s.out.run.Drives {
		if d, ok := index[s.out.run.Drives[i].Path]; ok {
			if c, ok := caps[d]; ok {
				c := c
				s.out.run.Drives[i].Failure = &c
			}
		}
	}
	if len(caps) > 0 {
		s.out.wroteOnce = false // the drives table changed: write it again
	}
}
