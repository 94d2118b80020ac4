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
func (s *Suite) JudgeLot() []LotCell {
	if s.Spec == nil || s.Spec.Lot == nil {
		return nil
	}
	defer func() {
		if err := s.WriteReport(); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Report.Results = slices.DeleteFunc(s.Report.Results, func(r report.Result) bool { return r.Kind == report.KindLot })
	cells := lot.Cells(s.Report.Results, s.Report.Drives, lotRule(s), s.Spec.Method.Tolerance)
	var results []report.Result
	for _, c := range cells {
		results = append(results, c.Result)
	}
	s.Report.Results = append(s.Report.Results, results...)
	if len(cells) > 0 && !s.Cfg.DryRun {
		svg, err := report.LotChartSVG(results)
		if err == nil {
			err = report.WriteFileAtomic(filepath.Join(s.Cfg.Report, report.LotChartFile), svg)
		}
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("drawing the lot chart: %v", err))
		}
	}
	s.Report.Finished = time.Now().UTC().Format(time.RFC3339)
	return cells
}

// LotCell is a TestLot cell: its result, and its verdict in one line.
type LotCell = lot.Cell

// lotRule is the spec's [lot] table as the rule lot judges by.
func lotRule(s *Suite) lot.Rule {
	return lot.Rule{Coverage: s.Spec.Lot.Coverage, Confidence: s.Spec.Lot.Confidence}
}

// lotDrives is how many drives of capacity the run gives the lot rule,
// and from which cells (lot.Drives), summed over a fleet's hosts.
func (s *Suite) lotDrives(capacity string) (int, string) {
	if len(s.Members) > 0 {
		plans := make([]lot.RunPlan, len(s.Members))
		for i, m := range s.Members {
			plans[i] = lotPlan(m.Suite)
		}
		return lot.FleetDrives(capacity, plans)
	}
	return lot.Drives(capacity, lotPlan(s))
}

// lotPlan is what s's plan measures for the lot rule: its largest scaling
// step and the capacities whose single-drive cells it runs.
func lotPlan(s *Suite) lot.RunPlan {
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

// printLot says, in the plan, what the [lot] rule needs and what the run
// gives it, per capacity (lot.WritePlan).
func (s *Suite) printLot(w io.Writer) {
	if s.Spec == nil || s.Spec.Lot == nil {
		return
	}
	var supply []lot.Supply
	for _, c := range s.Spec.Capacities {
		n, from := s.lotDrives(c.Name)
		supply = append(supply, lot.Supply{Capacity: c.Name, Drives: n, From: from})
	}
	lot.WritePlan(w, lotRule(s), supply)
}

// plural writes "1 host", "3 hosts".
func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
