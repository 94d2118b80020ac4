package qual

import (
	"context"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/fleet"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fleetcheck"
	"github.com/drivequal/drivequal/acceptance/internal/qual/runreport"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/hashes"
	"github.com/drivequal/drivequal/fiojob"
)

// setupFleet sets up -replay=DIR1,DIR2,...: each directory replays as its
// own suite (its cells keep the verdicts it has alone, its report goes to
// REPORT/hosts/<host>), and the top suite's report holds every member's
// results, each drive named <host>:<path>, and the TestFleet cells. Runs
// recorded with different specs or fio major versions are refused
// together, each named.
func setupFleet(ctx context.Context, cfg *cmdline.Config) (*Run, []error) {
	top := &Run{Cfg: cfg, Fleet: true, Report: &report.Run{Mode: "replay", Started: time.Now().UTC().Format(time.RFC3339)}}
	top.out = &runreport.Reporter{Run: top.Report, Dir: cfg.Report, DryRun: cfg.DryRun}
	// Every host's run.json, size and spec first: a refused fleet reads
	// no host's outputs.
	if errs := fleetcheck.Check(cfg.Replays, cfg.SpecGiven); len(errs) > 0 {
		return nil, errs
	}
	var errs []error
	names, dirs := map[string]bool{}, map[string]bool{}
	for _, dir := range cfg.Replays {
		mc := *cfg
		mc.Replay, mc.Replays = dir, nil
		m, merrs := (&builder{cfg: &mc, sys: device.System{}, fio: fiojob.Runner{}}).build(ctx, 0)
		for _, e := range merrs {
			errs = append(errs, fmt.Errorf("%s: %w", dir, e))
		}
		if m == nil {
			continue
		}
		name := report.Escape(m.recorded.Host.Name())
		if name == "" {
			name = filepath.Base(filepath.Dir(filepath.Clean(dir))) + "/" + filepath.Base(dir)
		}
		name = fleetcheck.Unique(name, "#", names)
		m.Cfg.Report = filepath.Join(cfg.Report, "hosts", fleetcheck.Unique(fleetcheck.HostSlug(name), "-", dirs))
		m.out.Dir, m.out.Fleet, m.out.Host = m.Cfg.Report, top.out, name
		top.Members = append(top.Members, Member{Name: name, Suite: m})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if err := fleet.Compatible(top.fleetRuns()); err != nil {
		return nil, []error{fmt.Errorf("parsing -replay: these runs cannot be judged as one fleet: %w", err)}
	}
	if !cfg.DryRun {
		// Only once everything checked out: a refused run writes nothing.
		for _, m := range top.Members {
			if err := os.MkdirAll(m.Suite.Cfg.Report, 0o755); err != nil {
				return nil, []error{fmt.Errorf("parsing -report: %w", err)}
			}
		}
	}
	first := top.Members[0].Suite
	top.Spec = first.Spec
	judgedBy(top.Report, first.Spec, cfg.SpecGiven)
	top.Report.Precondition, top.Report.FioVersion = first.Precondition, first.Report.FioVersion
	for _, m := range top.Members {
		for _, d := range m.Suite.Report.Drives {
			d.Path = m.Name + ":" + d.Path
			top.Report.Drives = append(top.Report.Drives, d)
		}
		if m.Suite.Report.Host != nil {
			h := *m.Suite.Report.Host
			top.Report.Hosts = append(top.Report.Hosts, report.Host{Name: m.Name, Info: h})
		} else {
			top.Report.Hosts = append(top.Report.Hosts, report.Host{Name: m.Name})
		}
		for _, st := range m.Suite.Report.SteadyState {
			st.Drive = m.Name + ":" + st.Drive
			top.Report.SteadyState = append(top.Report.SteadyState, st)
		}
	}
	top.Report.Recording = editedHosts(top.Members)
	return top, nil
}

// editedHosts is the fleet's hosts' edited and unvouched files, each
// named with its host (hashes.Join).
func editedHosts(members []Member) *hashes.Check {
	hosts, checks := make([]string, len(members)), make([]*hashes.Check, len(members))
	for i, m := range members {
		hosts[i], checks[i] = m.Name, m.Suite.Report.Recording
	}
	return hashes.Join(hosts, checks)
}

// fleetRuns is the members as the fleet package judges them.
func (s *Run) fleetRuns() []fleet.Run {
	var runs []fleet.Run
	for _, m := range s.Members {
		info := host.Info{}
		if m.Suite.Report.Host != nil {
			info = *m.Suite.Report.Host
		}
		info.Hostname = m.Name
		runs = append(runs, fleet.Run{Host: info, Dir: m.Suite.Cfg.Replay, Report: m.Suite.Report})
	}
	return runs
}

// JudgeFleet judges every member's single-drive cells as one population:
// a TestFleet/<capacity>/<workload> cell each, with the chart of the
// drives' figures against the spec. Call it once every member's cells
// have been judged.
func (s *Run) JudgeFleet() []fleet.Cell {
	if !s.Fleet {
		return nil
	}
	cells := fleet.Judge(s.fleetRuns(), fleet.Recorded, s.Spec.Fleet.Tolerance)
	defer func() {
		if err := s.WriteReport(); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
	}()
	s.out.Lock()
	defer s.out.Unlock()
	for i, m := range s.Members {
		s.Report.Hosts[i].Verdict = m.Suite.Report.Overall().Verdict
	}
	for _, c := range cells {
		res := report.Result{Test: c.Test, Kind: report.KindFleet, Capacity: c.Capacity, Workload: c.Workload,
			Drives: c.Drives, Metric: c.Metric, Spec: c.Spec, Expected: c.Spec, Actual: c.Median, Tolerance: c.FleetTolerance,
			Verdict: c.Verdict, Cause: c.Cause, Spread: c.Spread, Min: c.Min, Median: c.Median, Max: c.Max}
		if c.Spec > 0 {
			res.Ratio = c.Median / c.Spec
		}
		if c.Verdict != report.Pass {
			res.Error = c.Message
		}
		for _, m := range c.Members {
			v := report.Pass
			if m.Below || m.Outlier || !m.Counted {
				v = report.Fail
			}
			var why []string
			if m.Outlier {
				why = append(why, "outlier")
			}
			if m.Below {
				why = append(why, "below spec")
			}
			res.PerDrive = append(res.PerDrive, report.DriveResult{Path: m.Host + ":" + m.Path, Serial: m.Serial,
				Actual: m.Actual, Ratio: m.Ratio, Verdict: v, Error: strings.Join(why, ", ")})
		}
		s.Report.Results = append(s.Report.Results, res)
	}
	if len(cells) > 0 && !s.Cfg.DryRun {
		if err := fleet.Chart(cells, filepath.Join(s.Cfg.Report, "charts", "fleet.svg")); err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("drawing the fleet chart: %v", err))
		}
	}
	s.Report.Finished = time.Now().UTC().Format(time.RFC3339)
	return cells
}
