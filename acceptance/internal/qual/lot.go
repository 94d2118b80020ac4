package qual

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/lot"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// JudgeLot judges, by the spec's [lot] rule, the lot every capacity and
// workload's drives were drawn from (lot.Cells), adds the TestLot results
// to the report, replacing any judged before, and draws the lot chart.
// Call it once every cell (and, in a fleet replay, every member's cell)
// has been judged; nil without [lot].
func (r *Run) JudgeLot() []LotCell {
	if r.Spec == nil || r.Spec.Lot == nil {
		return nil
	}
	var cells []LotCell
	err := r.out.Update(func(rep *report.Run) {
		rep.Results = slices.DeleteFunc(rep.Results, func(r report.Result) bool { return r.Kind == report.KindLot })
		cells = lot.Cells(rep.Results, rep.Drives, r.lotRule(), r.preconditions(rep))
		var results []report.Result
		for _, c := range cells {
			results = append(results, c.Result)
		}
		rep.Results = append(rep.Results, results...)
		if len(cells) > 0 && !r.Cfg.DryRun {
			svg, err := report.LotChartSVG(results)
			if err == nil {
				err = report.WriteFileAtomic(filepath.Join(r.Cfg.Report, report.LotChartFile), svg)
			}
			if err != nil {
				r.Warnings = append(r.Warnings, fmt.Sprintf("drawing the lot chart: %v", err))
			}
		}
		rep.Finished = time.Now().UTC().Format(time.RFC3339)
	})
	if err != nil {
		r.Warnings = append(r.Warnings, err.Error())
	}
	return cells
}

// preconditions is the preconditioning each host's figures had: the run's
// own, or in a fleet replay each member's (members may be recorded with
// different -precondition; the fleet's report names only the first's).
func (r *Run) preconditions(rep *report.Run) lot.Preconditions {
	if !r.Fleet {
		return lot.Preconditions{"": rep.Precondition}
	}
	p := lot.Preconditions{}
	for _, m := range r.Members {
		p[m.Name] = m.Suite.Precondition
	}
	return p
}

// LotCell is a TestLot cell: its result, and its verdict in one line.
type LotCell = lot.Cell

// lotRule is the spec's [lot] table as the rule lot judges by.
func (r *Run) lotRule() lot.Rule {
	return lot.Rule{Coverage: r.Spec.Lot.Coverage, Confidence: r.Spec.Lot.Confidence, Method: r.Spec.Lot.Method}
}

// printLot says, in the plan, what the [lot] rule needs and what the run
// gives it, per capacity (lot.WritePlan): each member's largest scaling
// step and single-drive cells, summed over a fleet's hosts.
func (r *Run) printLot(w io.Writer) {
	if r.Spec == nil || r.Spec.Lot == nil {
		return
	}
	plans := make([]lot.RunPlan, len(r.Members))
	for i, m := range r.Members {
		plans[i] = m.Suite.lotPlan()
	}
	var supply []lot.Supply
	for _, c := range r.Spec.Capacities {
		n, from := lot.Drives(c.Name, plans[0])
		if r.Fleet {
			n, from = lot.FleetDrives(c.Name, plans)
		}
		supply = append(supply, lot.Supply{Capacity: c.Name, Drives: n, From: from})
	}
	lot.WritePlan(w, r.lotRule(), supply)
}

// lotPlan is what the suite's plan measures for the lot rule: its largest
// scaling step and the capacities whose single-drive cells it runs.
func (s *Suite) lotPlan() lot.RunPlan {
	p := lot.RunPlan{ScalingCapacity: s.Spec.Scaling.Capacity}
	if steps := s.ScalingCells(); len(steps) > 0 {
		p.LargestStep = steps[len(steps)-1].N
	}
	for _, cc := range s.SingleCells() {
		if cc.Skip == "" && len(cc.Cells) > 0 {
			p.Single = append(p.Single, cc.Capacity.Name)
		}
	}
	return p
}

// plural writes "1 host", "3 hosts".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
