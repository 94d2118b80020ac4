package report

import (
	"fmt"
	"maps"

	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/specs"
)

// Sections render more of summary.md and charts (file name → SVG) from a
// run's results, for the packages report cannot import (sweep).
var Sections []func(*Run) (md string, charts map[string][]byte)

// Charts returns one SVG chart per scaling workload that has a measured
// result (chart.Scaling), keyed by file name: the workload's subtest name
// plus ".svg", e.g. "4KB_Random_Read.svg".
func (r *Run) Charts() (map[string][]byte, error) {
	charts := make(map[string][]byte)
	for _, g := range r.scalingGroups(r.workloadRank()) {
		steps := chartSteps(g.rows)
		if !chart.AnyMeasured(steps) {
			continue
		}
		title := g.workload
		if r.ChartHeading != nil {
			title = r.ChartHeading.Title(title)
		}
		svg, err := chart.Scaling(title, g.rows[0].Metric, steps)
		if err != nil {
			return nil, fmt.Errorf("chart for %q: %w", g.workload, err)
		}
		charts[chartFile(g.workload)] = svg
	}
	for _, f := range Sections {
		_, more := f(r)
		maps.Copy(charts, more)
	}
	return charts, nil
}

// chartSteps are a workload's scaling results as its chart's steps.
func chartSteps(rows []Result) []chart.Step {
	steps := make([]chart.Step, len(rows))
	for i, res := range rows {
		steps[i] = chart.Step{Drives: res.Drives, Expected: res.Expected, Actual: res.Actual}
	}
	return steps
}

// chartFile is the chart's file name for a workload: its subtest name
// (spaces to "_", "/" to "-") plus ".svg".
func chartFile(workload string) string {
	return specs.SubtestName(workload) + ".svg"
}
