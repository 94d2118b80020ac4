package report

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/acceptance/internal/report/plain"
)

// KindLot is a TestLot/<capacity>/<workload> result: what the drives
// measured of a cell say about the lot they were drawn from (the spec's
// [lot] rule).
const KindLot = "lot"

// LotGate is the name of the gate over every TestLot cell.
const LotGate = "lot"

// LotChartFile is the lot chart, relative to the report directory.
const LotChartFile = "charts/lot.svg"

// Causes of a TestLot cell's verdict other than pass.
const (
	// CauseLotRejected: the upper confidence bound of the lot's passing
	// share is below the coverage required.
	CauseLotRejected = "lot rejected"
	// CauseLotUndecided: the figures neither show the coverage nor rule
	// it out; more drives would decide.
	CauseLotUndecided = "lot undecided"
)

// Lot verdicts (LotResult.Verdict).
const (
	LotAccepted     = "accepted"
	LotRejected     = "rejected"
	LotInconclusive = "inconclusive"
)

// LotResult is a TestLot cell's judgment, as results.json's "lot".
type LotResult struct {
	Coverage   float64 `json:"coverage"`
	Confidence float64 `json:"confidence"`
	// Method is the spec's [lot] method: "normal" (mean − k·s, assuming
	// normal figures) or "distribution-free" (the Clopper–Pearson bounds
	// of the passing share, assuming no distribution).
	Method string `json:"method"`
	// N figures, Passing of them at or above the pass line (at or below,
	// for a latency).
	N       int `json:"n"`
	Passing int `json:"passing"`
	// K is the one-sided normal tolerance factor for N (0 below 2).
	K    float64 `json:"k"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"s"`
	// Bound is the tolerance bound of Method (0 when there is none: a
	// distribution-free bound needs ZeroFailure drives), PassLine the line
	// a drive meets the cell at, the one its own cell judged it by: spec ×
	// (1 − tolerance) (× (1 + tolerance) for a latency), with [method]
	// tolerance for a single-drive cell's figure and [scaling] tolerance
	// for a scaling step's share.
	Bound         float64 `json:"bound"`
	PassLine      float64 `json:"pass_line"`
	LowerIsBetter bool    `json:"lower_is_better,omitempty"`
	// Normality is the Shapiro–Wilk check of the normal model; nil when
	// it could not be made (fewer than 3 figures, or all equal).
	Normality *Normality `json:"normality,omitempty"`
	// PassingShareLower and PassingShareUpper are the one-sided
	// Clopper–Pearson bounds, each at Confidence, of the share of the lot
	// that passes.
	PassingShareLower float64 `json:"passing_share_lower"`
	PassingShareUpper float64 `json:"passing_share_upper"`
	// ZeroFailure is how many drives, all passing, the distribution-free
	// rule needs.
	ZeroFailure int `json:"zero_failure_n"`
	// Need, for an undecided lot, is how many drives would decide it at
	// the same mean and spread (0: none up to 10,000), NeedAccepts
	// whether they would accept it.
	Need        int  `json:"need,omitempty"`
	NeedAccepts bool `json:"need_accepts,omitempty"`
	// Verdict is LotAccepted, LotRejected or LotInconclusive.
	Verdict string `json:"verdict"`
	// Figures are the drives judged, each from the cell it was measured in.
	Figures []LotFigure `json:"figures"`
	// Missing names drives of those cells with no figure (fio failed on
	// them) or whose figure is not the drive's own (its cell inconclusive
	// for a cause outside the drive, or not preconditioned, the cause in
	// brackets), and Unclear the cells inconclusive for another cause.
	Missing []string `json:"missing,omitempty"`
	Unclear []string `json:"unclear,omitempty"`
}

// HasBound says l has a tolerance bound: under the normal method at
// least 2 figures (mean − k·s needs a standard deviation), under the
// distribution-free method enough of them (ZeroFailure), whose bound is
// a figure, never 0.
func (l *LotResult) HasBound() bool {
	if l.Method == "distribution-free" {
		return l.N > 0 && l.Bound != 0
	}
	return l.N >= 2
}

// Normality is a Shapiro–Wilk test of the figures.
type Normality struct {
	Test   string  `json:"test"` // "shapiro-wilk"
	W      float64 `json:"w"`
	P      float64 `json:"p"`
	Alpha  float64 `json:"alpha"`
	Normal bool    `json:"normal"` // p ≥ alpha: the normal model is used
}

// LotFigure is one drive's figure in a lot judgment.
type LotFigure struct {
	Drive  string  `json:"drive"` // its path; <host>:<path> in a fleet replay
	Serial string  `json:"serial,omitempty"`
	Value  float64 `json:"value"` // in the result's Metric unit
	Test   string  `json:"test"`  // the cell it was measured in
	Pass   bool    `json:"pass"`  // at or above the pass line
}

// lotResults are the TestLot results, in order.
func lotResults(rs []Result) []Result {
	var out []Result
	for _, res := range rs {
		if res.Kind == KindLot && res.Lot != nil {
			out = append(out, res)
		}
	}
	return out
}

// writeLot writes the lot section: the rule, then one row per TestLot
// cell (drives, how many pass, mean, s, the method, k, the bound against
// the pass line and the verdict), and the chart.
func (s *summary) writeLot() {
	b := &s.b
	cells := lotResults(s.r.Results)
	if len(cells) == 0 {
		return
	}
	first := cells[0].Lot
	b.WriteString("## Lot acceptance\n\n")
	fmt.Fprintf(b, "Rule ([lot]): at least %s of the lot meets each cell's pass line, with %s confidence, by the method the spec names (%s). ",
		pctText(first.Coverage), pctText(first.Confidence), first.Method)
	if first.Method == "distribution-free" {
		fmt.Fprintf(b, "Distribution-free, assuming no distribution: accepted when the Clopper–Pearson lower bound of the passing share "+
			"is at or above the coverage (every drive passing needs %d of them; more drives allow failing ones). ", first.ZeroFailure)
	} else {
		b.WriteString("Normal theory, assuming normal figures: accepted when every drive passes, Shapiro–Wilk does not reject normality " +
			"at p < 0.05 and mean − k·s (k from the noncentral t) is at or above the pass line; figures found not normal leave the lot inconclusive, " +
			"never judged by another test. ")
	}
	b.WriteString("Rejected when the Clopper–Pearson upper bound of the passing share is below the coverage.\n\n")
	b.WriteString("| Capacity | Workload | Drives | Passing | Mean | s | Method | k | Bound | Pass line | Verdict |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|\n")
	for _, res := range cells {
		l := res.Lot
		k := "-"
		if l.K > 0 {
			k = fmt.Sprintf("%.3f", l.K)
		}
		method := l.Method
		if n := l.Normality; n != nil {
			method += fmt.Sprintf(" (W %.3f, p %.3f)", n.W, n.P)
		}
		bound := "-"
		if l.HasBound() {
			bound = FormatValue(l.Bound, res.Metric)
		}
		verdict := strings.ToUpper(l.Verdict)
		if res.Verdict != Pass && res.Error != "" {
			verdict += ": " + lotWhy(res.Error)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |\n", cell(res.Capacity), cell(res.Workload),
			l.N, l.Passing, plain.Missing(l.N == 0, FormatValue(l.Mean, res.Metric)), plain.Missing(l.N < 2, FormatValue(l.SD, res.Metric)), cell(method), k,
			bound, FormatValue(l.PassLine, res.Metric), cell(verdict))
	}
	fmt.Fprintf(b, "\n![lot](%s)\n\n", LotChartFile)
}

// lotWhy is a lot cell's message without its "<workload>: lot …: " head
// and its figures ("; n = …"), which the row's columns give.
func lotWhy(msg string) string {
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		if _, why, ok := strings.Cut(rest, ": "); ok {
			msg = why
		}
	}
	why, _, _ := strings.Cut(msg, "; n = ")
	return why
}

func pctText(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f*100), "0"), ".") + " %"
}

// LotChartSVG draws every TestLot cell on one chart (chart.Lot), one row
// per cell in the order given.
func LotChartSVG(cells []Result) ([]byte, error) {
	rows := make([]chart.LotRow, len(cells))
	for i, c := range cells {
		rows[i] = chart.LotRow{Capacity: c.Capacity, Workload: c.Workload}
		if l := c.Lot; l != nil {
			rows[i].Verdict = l.Verdict
			rows[i].PassLine, rows[i].Bound, rows[i].Judged, rows[i].Accepted = l.PassLine, l.Bound, l.HasBound(), l.Verdict == LotAccepted
			for _, f := range l.Figures {
				rows[i].Figures = append(rows[i].Figures, chart.LotDot{Value: f.Value, Pass: f.Pass})
			}
		}
	}
	return chart.Lot(rows)
}
