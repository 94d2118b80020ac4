package qual

import (
	"context"
	"errors"
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report/hashes"
)

// checkRecord refuses a new run (no -resume) whose -record directory
// holds a live run that did not run to its end, unless -overwrite is
// given: the run would replace its run.json, its kept cells, prepare/
// and the health logs read on receipt. A finished recording is replaced,
// and the terminal says so. Nothing is written here.
func (b *builder) checkRecord() []error {
	s, cfg := b.s, b.cfg
	dir := cfg.Record
	prior, found, err := readPrior(dir)
	if !found {
		return nil
	}
	why := ""
	if err != nil {
		why = fmt.Sprintf("its run.json does not read (%v)", err)
	} else {
		why = record.Unfinished(prior)
	}
	if why == "" {
		if prior.Mode == "record" {
			s.replacing = "replacing the finished recording in " + dir
		}
		return nil
	}
	what := fmt.Sprintf("%s holds a recorded run that a new run would replace, and %s", dir, why)
	if err == nil {
		what = fmt.Sprintf("%s holds the recording of an unfinished run (%s, %d cells recorded, %d drives): %s", dir, prior.Spec, len(prior.Tests), len(prior.Drives), why)
	}
	if cfg.Overwrite {
		s.replacing = "replacing, as -overwrite says, " + what
		return nil
	}
	err = fmt.Errorf("parsing -record: %s; a new run would destroy it: continue it with -resume, start the new run with a new -record directory, or give -overwrite to replace it", what)
	if cfg.DryRun {
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
// run.json lists: the replay still judges them, and the report and the
// terminal name each file edited after recording.
func (s *Suite) checkFiles(dir string, info record.Run) {
	c := &hashes.Check{Files: len(info.Files), Unhashed: len(info.Files) == 0}
	s.Report.Recording = c
	if c.Unhashed {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s carries no sha256 of its files (run.json format %d): whether one was edited after recording cannot be told", dir, info.Format))
		return
	}
	changed, err := record.Check(dir, info)
	if err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	for _, ch := range changed {
		c.Edited = append(c.Edited, ch.String())
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s; it is judged as it is now", dir, ch))
	}
}
