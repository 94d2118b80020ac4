package qual

import (
	"context"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/baseline"
	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// BaselineRun is one recorded run of -baseline, set up as a replay of its
// own: its cells are judged by the very code that judges any replay, with
// the spec recorded with it, and write nothing.
type BaselineRun struct {
	Dir   string
	Suite *Suite
}

// setupWithBaseline sets up the run as Setup does, then every -baseline
// directory as a replay, and refuses when no cell of the run has a match
// in the baseline, naming both sides.
func setupWithBaseline(ctx context.Context, cfg *cmdline.Config, timeout time.Duration, sys device.System, runner fiojob.Runner) (*Run, []error) {
	own := *cfg
	own.Baselines = nil
	s, errs := Setup(ctx, &own, timeout, sys, runner)
	var runs []BaselineRun
	for _, dir := range cfg.Baselines {
		bc := cmdline.Config{Spec: cfg.Spec, Replay: dir, Replays: []string{dir}, Report: cfg.Report, Record: filepath.Join(cfg.Report, "raw"),
			Precondition: plan.Full, DryRun: true, Root: cfg.Root}
		b, berrs := (&builder{cfg: &bc, sys: device.System{}, fio: fiojob.Runner{}}).build(ctx, 0)
		for _, e := range berrs {
			errs = append(errs, fmt.Errorf("parsing -baseline: %s: %s", dir, strings.TrimPrefix(strings.TrimPrefix(e.Error(), "parsing -replay: "), "parsing -spec: ")))
		}
		if b != nil {
			runs = append(runs, BaselineRun{Dir: dir, Suite: b})
		}
	}
	if s == nil || len(errs) > 0 {
		return s, errs
	}
	s.Baselines = runs
	if err := s.baselineMatches(); err != nil {
		errs = append(errs, err)
	}
	return s, errs
}

// cellTests are the cells of the run (of every host of a fleet replay),
// by test name without the host.
func cellTests(suites ...*Suite) []string {
	var out []string
	for _, x := range suites {
		for _, c := range x.allCells() {
			if c.Skip == "" && !slices.Contains(out, c.Test) {
				out = append(out, c.Test)
			}
		}
	}
	return out
}

// baselineMatches refuses a baseline none of whose cells the run has:
// cells match by group and workload name, whatever spec judges each side.
func (s *Run) baselineMatches() error {
	var suites []*Suite
	for _, m := range s.Members {
		suites = append(suites, m.Suite)
	}
	mine := cellTests(suites...)
	var theirs []string
	for _, b := range s.Baselines {
		for _, t := range cellTests(b.Suite) {
			if slices.Contains(mine, t) {
				return nil
			}
			if !slices.Contains(theirs, t) {
				theirs = append(theirs, t)
			}
		}
	}
	var dirs, specsOf []string
	for _, b := range s.Baselines {
		dirs = append(dirs, b.Dir)
		specsOf = append(specsOf, specName(b.Suite.Spec))
	}
	return fmt.Errorf("parsing -baseline: no cell of this run (judged by %s: %s) matches a cell of %s (judged by %s: %s): cells match by group and workload name; give a baseline recorded with workloads of the same names at the same capacities or drive counts, or drop -baseline",
		specName(s.Spec), sampleTests(mine), strings.Join(dirs, ", "), strings.Join(specsOf, ", "), sampleTests(theirs))
}

func specName(spec *specs.Spec) string {
	if spec == nil {
		return "no spec"
	}
	return spec.Model + " (" + spec.File + ")"
}

// sampleTests is a few test names and how many there are.
func sampleTests(tests []string) string {
	if len(tests) == 0 {
		return "no cells"
	}
	if len(tests) <= 3 {
		return strings.Join(tests, ", ")
	}
	return fmt.Sprintf("%s, … (%d cells)", strings.Join(tests[:3], ", "), len(tests))
}

// JudgeBaseline compares every cell the run judged with the baseline's
// same cell: each baseline run's cells are judged first (as replaying it
// alone would), then baseline.Judge makes one TestBaseline result per
// compared cell, each compared result of the run gains its comparison,
// and the report its baseline runs and charts. Call it once every cell of
// the run has been judged; nil without -baseline.
func (s *Run) JudgeBaseline(ctx context.Context) []report.Result {
	if len(s.Baselines) == 0 {
		return nil
	}
	var base []report.Result
	var runs []report.BaselineRun
	for _, b := range s.Baselines {
		for _, c := range b.Suite.allCells() {
			if c.Skip == "" {
				b.Suite.Run(ctx, c, func(string, ...any) {})
			}
		}
		base = append(base, b.Suite.Report.Results...)
		runs = append(runs, baselineRunOf(b))
	}
	defer func() {
		if err := s.WriteReport(); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
	}()
	s.out.Lock()
	defer s.out.Unlock()
	cells := baseline.Judge(base, s.Report.Results, baseline.Of(s.Spec))
	byTest := map[string]*report.BaselineResult{}
	for _, c := range cells {
		byTest[c.Test] = c.Baseline
	}
	for i, r := range s.Report.Results {
		if k := baseline.Key(r); k != "" {
			if br, ok := byTest[baseline.TestName(k)]; ok {
				s.Report.Results[i].Baseline = br
			}
		}
	}
	for i := range runs {
		for _, t := range cellTests(s.Baselines[i].Suite) {
			if _, ok := byTest[baseline.TestName(t)]; ok {
				runs[i].Compared++
			}
		}
	}
	s.Report.Baseline = runs
	s.Report.Results = append(s.Report.Results, cells...)
	if !s.Cfg.DryRun {
		for group, rows := range report.BaselineGroups(cells) {
			path := filepath.Join(s.Cfg.Report, report.BaselineChartFile(group))
			if err := baseline.Chart(rows, group, path); err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("drawing the baseline chart of %s: %v", group, err))
			}
		}
	}
	s.Report.Finished = time.Now().UTC().Format(time.RFC3339)
	return cells
}

// baselineRunOf describes a baseline run for the report: its directory,
// the spec that judged it, its host and its drives' models and firmware.
func baselineRunOf(b BaselineRun) report.BaselineRun {
	r := b.Suite.Report
	dir := b.Dir
	if rel, err := filepath.Rel(b.Suite.Cfg.Root, dir); err == nil && !strings.HasPrefix(rel, "..") {
		dir = rel // as people give it, from the module root
	}
	out := report.BaselineRun{Dir: dir, JudgedBy: r.JudgedBy, Mode: r.Mode, Precondition: r.Precondition, Cells: len(r.Results)}
	if r.Host != nil {
		out.Host = r.Host.Name()
	}
	for _, d := range r.Drives {
		if d.Firmware != "" && !slices.Contains(out.Firmware, d.Firmware) {
			out.Firmware = append(out.Firmware, d.Firmware)
		}
		if d.Model != "" && !slices.Contains(out.Models, d.Model) {
			out.Models = append(out.Models, d.Model)
		}
	}
	return out
}
