package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report/comparison"
)

// KindBaseline is a TestBaseline/<group>/<workload> result: a cell of this
// run compared with the same cell of earlier runs (-baseline=DIR,...).
const KindBaseline = "baseline"

// BaselineGate is the name of the gate over every TestBaseline cell.
const BaselineGate = "baseline"

// CauseRegressed is a TestBaseline cell's cause of failure: worse than the
// baseline by more than the tolerance, and significantly so (or by
// tolerance alone when the samples are too few for the test).
const CauseRegressed = "regressed"

// CauseNotComparable is the cause of a TestBaseline cell that was not
// compared: a side's figure was bound by something other than the drive.
const CauseNotComparable = "not comparable"

// Comparison verdicts (Comparison.Verdict), as benchstat reads them
// (package comparison).
const (
	Regressed = comparison.Regressed
	Worse     = comparison.Worse
	Same      = comparison.Same
	Improved  = comparison.Improved
)

// Comparison is one figure of a cell compared with the baseline's
// (package comparison).
type Comparison = comparison.Comparison

// Sample is one side's figures for a comparison (package comparison).
type Sample = comparison.Sample

// BaselineResult is a cell's comparison with the baseline: its metric and
// each latency percentile both sides have. A compared result of this run
// carries it as "baseline", and so does its TestBaseline cell.
type BaselineResult struct {
	Test string `json:"test"` // the TestBaseline cell
	// Group is the summary table the cell is in: its capacity for a
	// single-drive cell, ScalingGate for a scaling step's.
	Group   string       `json:"group"`
	Metric  Comparison   `json:"metric"`
	Latency []Comparison `json:"latency,omitempty"`
}

// BaselineRun is one recorded run of the baseline side.
type BaselineRun struct {
	Dir          string   `json:"dir"`
	JudgedBy     *SpecRef `json:"judged_by"`
	Host         string   `json:"host,omitempty"`
	Firmware     []string `json:"firmware,omitempty"` // the drives' firmware revisions, distinct
	Models       []string `json:"models,omitempty"`   // the drives' models, distinct
	Cells        int      `json:"cells"`              // cells judged in it
	Compared     int      `json:"compared"`           // of those, cells this run has too
	Mode         string   `json:"mode,omitempty"`
	Precondition string   `json:"precondition,omitempty"`
}

// BaselineGroups are the TestBaseline results by summary table (a
// capacity, or ScalingGate), in the order given.
func BaselineGroups(rs []Result) map[string][]Result {
	out := map[string][]Result{}
	for _, r := range rs {
		if r.Kind == KindBaseline && r.Baseline != nil {
			out[r.Baseline.Group] = append(out[r.Baseline.Group], r)
		}
	}
	return out
}

// BaselineChartFile is the chart of a summary table's comparisons,
// relative to the report directory: "charts/baseline-1.92TB.svg".
func BaselineChartFile(group string) string {
	return "charts/baseline-" + strings.NewReplacer("/", "-", " ", "_").Replace(group) + ".svg"
}

// writeBaseline writes the comparison with the baseline runs: which runs
// and which spec judged each side, then per capacity (and the scaling
// steps) a benchstat-like table, Baseline | This run | Delta | p |
// Verdict, the medians of one figure per drive per recorded run, and the
// chart of both sides.
func (s *summary) writeBaseline() {
	r, b := s.r, &s.b
	groups := BaselineGroups(r.Results)
	if len(r.Baseline) == 0 && len(groups) == 0 {
		return
	}
	b.WriteString("## Against the baseline\n\n")
	if j := r.JudgedBy; j != nil {
		fmt.Fprintf(b, "This run: judged by %s (%s).\n", cell(j.Model), cell(j.File))
	}
	for _, br := range r.Baseline {
		judged := "-"
		if br.JudgedBy != nil {
			judged = br.JudgedBy.Model + " (" + br.JudgedBy.File + ")"
		}
		fmt.Fprintf(b, "Baseline: %s: judged by %s", cell(br.Dir), cell(judged))
		if br.Host != "" {
			fmt.Fprintf(b, ", host %s", cell(br.Host))
		}
		if len(br.Models) > 0 {
			fmt.Fprintf(b, ", model %s", cell(strings.Join(br.Models, ", ")))
		}
		if len(br.Firmware) > 0 {
			fmt.Fprintf(b, ", firmware %s", cell(strings.Join(br.Firmware, ", ")))
		}
		fmt.Fprintf(b, "; %d of its %d cells compared.\n", br.Compared, br.Cells)
	}
	b.WriteString("\nEach side is one figure per drive per recorded run; the columns are their medians. " +
		"p is the two-sided Mann–Whitney U test; \"~\" is no difference the data can show; " +
		"too few figures for the test (one drive a side: \"1 sample\") are judged by the tolerance alone.\n\n")
	var names []string
	for _, c := range r.Capacities {
		if groups[c] != nil {
			names = append(names, c)
		}
	}
	for g := range groups {
		if !slices.Contains(names, g) && g != ScalingGate {
			names = append(names, g)
		}
	}
	if groups[ScalingGate] != nil {
		names = append(names, ScalingGate)
	}
	for _, g := range names {
		fmt.Fprintf(b, "### %s\n\n", g)
		b.WriteString("| Workload | Figure | Baseline | This run | Delta | p | Verdict |\n|---|---|---|---|---|---|---|\n")
		for _, res := range groups[g] {
			name := res.Workload
			if g == ScalingGate {
				name = fmt.Sprintf("%d drive%s: %s", res.Drives, map[bool]string{true: "s"}[res.Drives != 1], res.Workload)
			}
			if res.Verdict == Inconclusive {
				fmt.Fprintf(b, "| %s | %s | - | - | - | - | INCONCLUSIVE: %s |\n", cell(name), res.Metric, cell(res.Error))
				continue
			}
			for _, c := range append([]Comparison{res.Baseline.Metric}, res.Baseline.Latency...) {
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(name), cell(c.FigureName()),
					c.Value(c.Baseline.Median), c.Value(c.This.Median), c.DeltaText(), c.PText(), c.VerdictText())
			}
		}
		fmt.Fprintf(b, "\n![baseline %s](%s)\n\n", g, BaselineChartFile(g))
	}
}
