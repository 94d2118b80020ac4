package qual

import (
	"context"
	"errors"
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// checkRecord refuses a new run (no -resume) whose -record directory
// holds a live run that did not run to its end, unless -overwrite is
// given (recdir.Replace); a dry run warns instead.
func (b *builder) checkRecord() []error {
	s, cfg := b.s, b.cfg
	replacing, err := recdir.Replace(cfg.Record, cfg.Overwrite)
	switch {
	case err == nil:
		if replacing != "" {
			s.replacing = replacing
		}
		return nil
	case cfg.DryRun:
		s.Warnings = append(s.Warnings, "a real run is refused: "+err.Error())
		return nil
	}
	return []error{err}
}

// Finish marks each live recording as a run that ran to its end, unless
// ctx (the run's) ended first: an interrupted run stays unfinished, and
// a new run in its -record directory is refused without -overwrite.
func (r *Run) Finish(ctx context.Context) error {
	if ctx.Err() != nil || r.Cfg.DryRun {
		return nil
	}
	var errs []error
	for _, m := range r.Members {
		if m.Suite.runner != nil {
			if err := m.Suite.runner.Finish(); err != nil {
				errs = append(errs, fmt.Errorf("marking %s finished: %w", m.Suite.Cfg.Record, err))
			}
		}
	}
	return errors.Join(errs...)
}

// checkFiles compares the replayed recording's files with the sha256 its
// run.json lists (recdir.CheckFiles).
func (s *Suite) checkFiles(dir string, info record.Run) {
	c, warnings := recdir.CheckFiles(dir, info)
	s.Report.Recording = c
	s.Warnings = append(s.Warnings, warnings...)
}
