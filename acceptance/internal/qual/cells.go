package qual

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/sweep"
	"github.com/drivequal/drivequal/specs"
)

// CapacityCells is one capacity's single-drive cells in plan order.
type CapacityCells struct {
	Capacity specs.Capacity
	// Skip, when set, says why the capacity is not measured.
	Skip  string
	Cells []plan.Cell
}

// SingleCells lists TestSingleDrive's cells, capacity by capacity in the
// spec's order, each capacity's workloads in plan order.
func (s *Suite) SingleCells() []CapacityCells {
	var out []CapacityCells
	for _, c := range s.Spec.Capacities {
		cc := CapacityCells{Capacity: c}
		drives := s.drivesOf(c.Name)
		if len(drives) == 0 {
			cc.Skip = fmt.Sprintf("no drive given is a %s drive (drives: %s); use -capacity=%s to judge a drive as this capacity", c.Name, driveSummary(s.Drives), c.Name)
			out = append(out, cc)
			continue
		}
		for _, w := range s.Planner.Order(s.Spec.Workloads) {
			need, twin := s.Planner.Need(w)
			test := "TestSingleDrive/" + c.Name + "/" + specs.SubtestName(w.Name)
			if s.has != nil && !s.has(test) {
				continue
			}
			cc.Cells = append(cc.Cells, plan.Cell{Kind: report.KindSingle, Test: test,
				Capacity: c, Workload: w, Drives: drives[:1], Need: need, Twin: twin, Skip: noFigure(s.Spec, c, w)})
		}
		if len(cc.Cells) == 0 && s.recordedOnly {
			continue // a replay lists only what was recorded
		}
		out = append(out, cc)
	}
	return out
}

// ScalingStep is one drive count's cells.
type ScalingStep struct {
	N     int
	Cells []plan.Cell
}

// ScalingCells lists TestScaling's cells: for each drive count, each workload
// in plan order with the spec's scaling overrides.
func (s *Suite) ScalingCells() []ScalingStep {
	sc, ok := s.Spec.Capacity(s.Spec.Scaling.Capacity)
	if !ok {
		return nil
	}
	drives := s.drivesOf(sc.Name)
	counts := s.Cfg.Scaling
	if counts == nil {
		for _, n := range s.Spec.Scaling.Drives {
			if n <= len(drives) {
				counts = append(counts, n)
			}
		}
	}
	var out []ScalingStep
	for _, n := range counts {
		if n > len(drives) {
			continue
		}
		st := ScalingStep{N: n}
		for _, w := range s.Planner.Order(s.Spec.Workloads) {
			need, twin := s.Planner.Need(w)
			test := fmt.Sprintf("TestScaling/%d_drives/%s", n, specs.SubtestName(w.Name))
			if s.has != nil && !s.has(test) {
				continue
			}
			skip := noFigure(s.Spec, sc, w)
			if w.Metric.LowerIsBetter() {
				skip = fmt.Sprintf("%s: a latency is judged drive by drive, not summed over N drives: its cells are in TestSingleDrive", w.Name)
			}
			st.Cells = append(st.Cells, plan.Cell{Kind: report.KindScaling, Test: test,
				Capacity: sc, Workload: s.Spec.ForScaling(w), Drives: drives[:n], Need: need, Twin: twin, Skip: skip})
		}
		if len(st.Cells) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// noFigure says why workload w is not measured at capacity c, or "".
func noFigure(spec *specs.Spec, c specs.Capacity, w specs.Workload) string {
	if _, ok := c.Spec[w.Name]; ok {
		return ""
	}
	return fmt.Sprintf("%s: %s gives no figure for %s at %s, so the cell is not measured", w.Name, spec.File, w.Name, c.Name)
}

// driveSummary is each drive given and the capacity it is judged as.
func driveSummary(drives []plan.Drive) string {
	var parts []string
	for _, d := range drives {
		parts = append(parts, d.Path+" as "+d.Capacity)
	}
	return strings.Join(parts, ", ")
}

// allCells lists every cell of the run in the order the tests run them:
// single-drive cells, scaling, then the sweeps' points.
func (s *Suite) allCells() []plan.Cell {
	var out []plan.Cell
	for _, cc := range s.SingleCells() {
		out = append(out, cc.Cells...)
	}
	for _, st := range s.ScalingCells() {
		out = append(out, st.Cells...)
	}
	for _, cc := range LatencyTargets(s) {
		for _, tg := range cc.Targets {
			out = append(out, tg.Points...)
		}
	}
	return out
}

// LatencyTargets lists TestLatency's sweeps in s (sweep.Targets).
func LatencyTargets(s *Suite) []sweep.Capacity {
	return sweep.Targets(s.Spec, s.Planner, s.drivesOf, s.has)
}

// drivesOf lists the indices of the drives judged as capacity name.
func (s *Suite) drivesOf(name string) []int {
	var out []int
	for i, d := range s.Drives {
		if d.Capacity == name {
			out = append(out, i)
		}
	}
	return out
}
