package qual

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/lot"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// lotSources picks, for every capacity and workload, the cells whose
// per-drive figures judge the lot: on each host (the run itself, or each
// member of a fleet replay) the largest scaling step that measured the
// workload, where every drive is measured under the load it sees in
// service; a host with no scaling step of it gives its single-drive cell.
// The keys are "capacity\x00workload", in the order of the results.
func lotSources(results []report.Result) ([]string, map[string][]report.Result) {
	type hostKey struct{ host, key string }
	best := map[hostKey]report.Result{}
	var hosts []hostKey
	for _, r := range results {
		if r.Kind != report.KindSingle && r.Kind != report.KindScaling {
			continue
		}
		hk := hostKey{r.Host, r.Capacity + "\x00" + r.Workload}
		cur, ok := best[hk]
		switch {
		case !ok:
			hosts = append(hosts, hk)
			best[hk] = r
		case r.Kind == report.KindScaling && (cur.Kind == report.KindSingle || r.Drives > cur.Drives):
			best[hk] = r
		}
	}
	var keys []string
	out := map[string][]report.Result{}
	for _, hk := range hosts {
		if _, ok := out[hk.key]; !ok {
			keys = append(keys, hk.key)
		}
		out[hk.key] = append(out[hk.key], best[hk])
	}
	return keys, out
}

// hasFigure says a single-drive result measured its drive: a cell whose
// fio failed, or that was not measured, has no figure.
func hasFigure(r report.Result) bool {
	switch r.Cause {
	case report.CauseFioFailed, report.CauseBadRecording, report.CauseNotRecorded, report.CausePreparation,
		report.CauseDriveChanged, report.CauseInterrupted, report.CauseNoBaseline, report.CauseCriticalWarning:
		return false
	}
	return r.Actual > 0
}

// driveTolerance is the tolerance a drive meets r's cell with: the
// cell's own, but for a scaling step's share, whose cell carries
// [scaling] tolerance (how far N drives' total may fall short of N × the
// baseline), the single-drive cell's, [method] tolerance.
func (s *Run) driveTolerance(r report.Result) float64 {
	if r.Kind == report.KindScaling {
		return s.Spec.Method.Tolerance
	}
	return r.Tolerance
}

// passLine is the line a drive meets r's cell at: spec × (1 −
// tolerance), or × (1 + tolerance) for a figure where lower is better.
func (s *Run) passLine(r report.Result) float64 {
	if specs.Metric(r.Metric).LowerIsBetter() {
		return r.Spec * (1 + s.driveTolerance(r))
	}
	return r.Spec * (1 - s.driveTolerance(r))
}

// JudgeLot judges, by the spec's [lot] rule, the lot every capacity and
// workload's drives were drawn from: one TestLot/<capacity>/<workload>
// result per cell the run has figures of (lotSources), added to the
// report with the lot chart. Call it once every cell (and, in a fleet
// replay, every member's cell) has been judged; nil without [lot].
func (s *Run) JudgeLot() []LotCell {
	if s.Spec == nil || s.Spec.Lot == nil {
		return nil
	}
	rule := lot.Rule{Coverage: s.Spec.Lot.Coverage, Confidence: s.Spec.Lot.Confidence}
	defer func() {
		if err := s.WriteReport(); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
	}()
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	// Judged again, the cells replace their earlier judgment.
	s.Report.Results = slices.DeleteFunc(s.Report.Results, func(r report.Result) bool { return r.Kind == report.KindLot })
	keys, sources := lotSources(s.Report.Results)
	var cells []LotCell
	var results []report.Result
	for _, k := range keys {
		c := s.judgeLotCell(sources[k], rule)
		cells = append(cells, c)
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
type LotCell struct {
	Result  report.Result
	Message string
}

// judgeLotCell judges one capacity and workload's figures.
func (s *Run) judgeLotCell(src []report.Result, rule lot.Rule) LotCell {
	first := src[0]
	metric := first.Metric
	lower := specs.Metric(metric).LowerIsBetter()
	res := report.Result{Test: "TestLot/" + first.Capacity + "/" + specs.SubtestName(first.Workload), Kind: report.KindLot,
		Capacity: first.Capacity, Workload: first.Workload, Metric: metric, Spec: first.Spec, Expected: first.Spec, Tolerance: s.driveTolerance(first)}
	line := s.passLine(first)
	l := &report.LotResult{Coverage: rule.Coverage, Confidence: rule.Confidence, LowerIsBetter: lower}
	var figures []float64
	var tests, unmeasured []string // unmeasured: l.Missing in words
	hosts := map[string]bool{}
	for _, r := range src {
		hosts[r.Host] = true
		tests = append(tests, r.Test)
		// Every source gives the drive's own line; were they to differ,
		// the strictest would judge them all.
		if pl := s.passLine(r); (pl > line) != lower && pl != line {
			line = pl
		}
		if r.Verdict == report.Inconclusive {
			l.Unclear = append(l.Unclear, fmt.Sprintf("%s (%s)", r.Test, cmp.Or(r.Cause, "inconclusive")))
		}
		if r.Kind == report.KindScaling {
			for _, d := range r.PerDrive {
				if d.Error != "" || d.Actual <= 0 {
					l.Missing = append(l.Missing, d.Path+" in "+r.Test)
					unmeasured = append(unmeasured, d.Path+" in "+r.Test)
					continue
				}
				figures = append(figures, d.Actual)
				l.Figures = append(l.Figures, report.LotFigure{Drive: d.Path, Serial: d.Serial, Value: d.Actual, Test: r.Test})
			}
			// A step that measured nothing (fio failed, an unreadable
			// recording) has no per-drive share: its drives are missing,
			// not absent from the lot.
			if gone := r.Drives - len(r.PerDrive); gone > 0 {
				for i := len(r.PerDrive); i < r.Drives; i++ {
					l.Missing = append(l.Missing, fmt.Sprintf("drive %d of %s", i+1, r.Test))
				}
				unmeasured = append(unmeasured, fmt.Sprintf("%s of %s (%s)", plural(gone, "drive"), r.Test, cmp.Or(r.Cause, "no figure")))
			}
			continue
		}
		if !hasFigure(r) {
			l.Missing = append(l.Missing, r.Test)
			unmeasured = append(unmeasured, r.Test)
			continue
		}
		figures = append(figures, r.Actual)
		d := s.singleDriveOf(r)
		l.Figures = append(l.Figures, report.LotFigure{Drive: d.Path, Serial: d.Serial, Value: r.Actual, Test: r.Test})
	}
	format := func(v float64) string { return report.FormatValue(v, metric) }
	j := lot.Judge(figures, line, lower, rule, format)
	for i := range l.Figures {
		v := l.Figures[i].Value
		l.Figures[i].Pass = (lower && v <= line) || (!lower && v >= line)
	}
	l.Method, l.N, l.Passing, l.K, l.Mean, l.SD, l.Bound, l.PassLine = j.Method, j.N, j.Passing, j.K, j.Mean, j.SD, j.Bound, line
	l.PassingShareUpper, l.ZeroFailure, l.Need, l.NeedAccepts, l.Verdict = j.Upper, j.ZeroFailure, j.Need, j.NeedAccepts, j.Verdict
	if j.N >= 3 && j.SD > 0 && j.W == j.W {
		l.Normality = &report.Normality{Test: "shapiro-wilk", W: j.W, P: j.P, Alpha: lot.NormalityAlpha, Normal: j.NormalOK}
	}
	res.Lot, res.Drives = l, j.N
	res.Actual = j.Bound
	if res.Spec > 0 {
		res.Ratio = j.Bound / res.Spec
	}
	reason := j.Reason
	// Drives without a figure, or cells that proved nothing, leave the lot
	// undecided unless it is rejected even were every missing drive to pass.
	if len(l.Missing) > 0 || len(l.Unclear) > 0 {
		var why []string
		if len(l.Missing) > 0 {
			why = append(why, fmt.Sprintf("%s without a figure (%s)", plural(len(l.Missing), "drive"), strings.Join(unmeasured, ", ")))
		}
		if len(l.Unclear) > 0 {
			why = append(why, fmt.Sprintf("%s that proved nothing (%s)", plural(len(l.Unclear), "inconclusive cell"), strings.Join(l.Unclear, ", ")))
		}
		rejected := j.Verdict == lot.Rejected &&
			lot.ClopperPearsonUpper(j.Passing+len(l.Missing), j.N+len(l.Missing), rule.Confidence) < rule.Coverage
		if !rejected {
			l.Verdict = lot.Inconclusive
			reason = "undecided with " + strings.Join(why, " and ") + "; by the figures alone the lot is " + j.Verdict + ": " + reason
		}
	}
	where := plural(len(hosts), "host")
	if len(hosts) == 1 {
		where = strings.Join(tests, ", ")
	}
	stats := fmt.Sprintf("n = %d (%s), mean %s", j.N, where, format(j.Mean))
	if j.N >= 2 {
		stats += ", s " + format(j.SD)
	}
	if j.K > 0 {
		stats += fmt.Sprintf(", k = %.3f", j.K)
	}
	if j.N > 0 {
		stats += fmt.Sprintf(", %s bound %s", j.Method, format(j.Bound))
	}
	stats += fmt.Sprintf(", pass line %s (spec %s", format(line), format(res.Spec))
	if res.Tolerance > 0 {
		stats += fmt.Sprintf(", tolerance %s", pctOf(res.Tolerance))
	}
	stats += ")"
	head := fmt.Sprintf("%s: lot %s at coverage %s, confidence %s", res.Workload, l.Verdict, pctOf(rule.Coverage), pctOf(rule.Confidence))
	msg := head + ": " + reason + "; " + stats
	switch l.Verdict {
	case lot.Accepted:
		res.Verdict = report.Pass
		res.Lot.Verdict = report.LotAccepted
		// A passing cell carries no error; its message is the log line.
		res.Error = ""
	case lot.Rejected:
		res.Verdict, res.Cause, res.Error = report.Fail, report.CauseLotRejected, msg
	default:
		res.Verdict, res.Cause, res.Error = report.Inconclusive, report.CauseLotUndecided, msg
	}
	return LotCell{Result: res, Message: msg}
}

// singleDriveOf is the drive a single-drive result ran on: the first
// drive of its capacity (on its host, in a fleet replay).
func (s *Run) singleDriveOf(r report.Result) report.Drive {
	for _, d := range s.Report.Drives {
		if d.Capacity == r.Capacity && (r.Host == "" || strings.HasPrefix(d.Path, r.Host+":")) {
			return d
		}
	}
	return report.Drive{Path: cmp.Or(r.Host+":", "") + "recorded " + r.Capacity + " drive"}
}

// plural writes "1 host", "3 hosts".
func plural(n int, what string) string {
	return fmt.Sprintf("%d %s%s", n, what, pluralS(n))
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pctOf writes a fraction as a percentage: 0.95 → "95 %".
func pctOf(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e4)/1e2, 'f', -1, 64) + " %"
}

// lotDrives is how many drives of capacity the run gives the lot rule,
// and from which cells: its largest scaling step, else its single-drive
// cells (one drive), summed over a fleet's hosts.
func (s *Run) lotDrives(capacity string) (int, string) {
	if s.Fleet {
		total := 0
		for _, m := range s.Members {
			n, _ := m.Suite.lotDrives(capacity)
			total += n
		}
		return total, plural(len(s.Members), "host")
	}
	return s.Members[0].Suite.lotDrives(capacity)
}

// lotDrives is Run.lotDrives for one run.
func (s *Suite) lotDrives(capacity string) (int, string) {
	if capacity == s.Spec.Scaling.Capacity {
		steps := s.ScalingCells()
		if len(steps) > 0 {
			n := steps[len(steps)-1].N
			return n, fmt.Sprintf("its %d-drive scaling step", n)
		}
	}
	for _, cc := range s.SingleCells() {
		if cc.Capacity.Name == capacity && cc.Skip == "" && len(cc.Cells) > 0 {
			return 1, "its single-drive cells"
		}
	}
	return 0, "no cell"
}

// printLot says, in the plan, what the [lot] rule needs and what the run
// gives it, per capacity.
func (s *Run) printLot(w io.Writer) {
	if s.Spec == nil || s.Spec.Lot == nil {
		return
	}
	rule := lot.Rule{Coverage: s.Spec.Lot.Coverage, Confidence: s.Spec.Lot.Confidence}
	n0 := lot.ZeroFailure(rule)
	fmt.Fprintf(w, "\nlot rule ([lot] coverage %s, confidence %s): a zero-failure sample needs %d drives, all passing "+
		"(distribution-free: n ≥ ln(1 − %v) / ln(%v)); normal theory needs at least 3 drives (the Shapiro–Wilk check) "+
		"and accepts n drives whose mean is at least k(n) standard deviations past the pass line\n",
		pctOf(rule.Coverage), pctOf(rule.Confidence), n0, rule.Confidence, rule.Coverage)
	for _, c := range s.Spec.Capacities {
		n, from := s.lotDrives(c.Name)
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("  %s: the run has %d drive%s for the lot (%s)", c.Name, n, pluralS(n), from)
		if n >= 3 {
			k, _ := lot.K(n, rule.Coverage, rule.Confidence)
			line += fmt.Sprintf(": k(%d) = %.3f", n, k)
		} else {
			line += ": too few for the normal model"
		}
		if n < n0 {
			line += fmt.Sprintf("; %d short of the %d a zero-failure sample needs", n0-n, n0)
		} else {
			line += fmt.Sprintf("; enough for a zero-failure sample (%d)", n0)
		}
		fmt.Fprintln(w, line)
	}
}
