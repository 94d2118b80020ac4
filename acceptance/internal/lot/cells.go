package lot

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Sources picks, for every capacity and workload, the cells whose
// per-drive figures judge the lot: on each host (the run itself, or each
// member of a fleet replay) the largest scaling step that measured the
// workload, where every drive is measured under the load it sees in
// service; a host with no scaling step of it gives its single-drive cell.
// The keys are "capacity\x00workload", in the order of the results.
func Sources(results []report.Result) ([]string, map[string][]report.Result) {
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

// drivesFailure reports whether r failed for a failure of its drive
// itself (verdict.Disqualifying's causes that only the drive raises: a
// mismatch, a read-back I/O error, an I/O error in a measurement, a
// critical warning), which the lot
// counts as a failing drive.
func drivesFailure(r report.Result) bool {
	if r.Verdict != report.Fail {
		return false
	}
	switch r.Cause {
	case report.CauseIntegrity, report.CauseReadBack, report.CauseCriticalWarning, report.CauseIOError:
		return true
	}
	return false
}

// drivesOwnCause reports whether a scaling step's per-drive cause is a
// failure of the drive itself (drivesFailure's causes): the drive is one
// of the lot's failures.
func drivesOwnCause(cause string) bool {
	return drivesFailure(report.Result{Verdict: report.Fail, Cause: cause})
}

// notSteadyDrives is, for a scaling step inconclusive because drives of
// it did not reach steady state (why is report.CauseNotSteady), which of
// its per-drive entries its steady-state evidence names not steady: only
// their figures are not their own, and every other drive's figure of the
// step counts. A record names a drive by its serial when both give one
// (a cell kept by a resume after a reboot has its steady-state records
// from before it, under the paths the drives had then, which may be a
// neighbour's now), else by its path. It is nil, every drive's figure
// set aside, for any other why and for a step whose evidence names none
// of its drives (a recording without per-drive steady-state records).
func notSteadyDrives(r report.Result, why string) func(report.DriveResult) bool {
	if why != report.CauseNotSteady {
		return nil
	}
	paths, serials, all := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, st := range r.Steady {
		if !st.Attained {
			all[st.Drive] = true
			if st.Serial != "" {
				serials[st.Serial] = true
			} else {
				paths[st.Drive] = true
			}
		}
	}
	unsettled := func(d report.DriveResult) bool {
		if d.Serial == "" {
			return all[d.Path]
		}
		return serials[d.Serial] || paths[d.Path]
	}
	for _, d := range r.PerDrive {
		if unsettled(d) {
			return unsettled
		}
	}
	return nil
}

// passLine is the line a drive meets r's cell at (judge.PassLine), with
// the cell's own tolerance: [method] tolerance for a single-drive cell,
// [scaling] tolerance for a scaling step's shares, the very line the
// step's per-drive verdicts were judged by.
func passLine(r report.Result) float64 {
	return judge.PassLine(specs.Metric(r.Metric), r.Spec, r.Tolerance)
}

// Cells judges, by rule, the lot every capacity and workload's drives
// were drawn from: one TestLot/<capacity>/<workload> cell per capacity
// and workload results have figures of (Sources). results are every
// judged cell of the run (in a fleet replay, of every member's run);
// drives are its drives, which name a single-drive cell's drive;
// precondition is the preconditioning each host's figures had
// (Preconditions): figures measured without the spec's full
// preconditioning are not the drives' own and count as missing.
func Cells(results []report.Result, drives []report.Drive, rule Rule, precondition Preconditions) []Cell {
	keys, sources := Sources(results)
	var cells []Cell
	for _, k := range keys {
		cells = append(cells, JudgeCell(sources[k], drives, rule, precondition))
	}
	return cells
}

// Preconditions is the preconditioning (report.Run's Precondition: full,
// quick or none) the figures of each host had, by a result's Host: "" for
// a run's own cells; in a fleet replay each member's own, since members
// recorded with different -precondition are judged together. A host not
// in it is taken as fully preconditioned.
type Preconditions map[string]string

// Cell is a TestLot cell: its result, and its verdict in one line.
type Cell struct {
	Result  report.Result
	Message string
}

// notTheDrives is why r's figures are not its drives' own, "" when they
// are: r inconclusive for a cause outside the drive
// (report.NotTheDrives), or measured in a run not fully preconditioned.
func notTheDrives(r report.Result, precondition string) string {
	switch {
	case report.NotTheDrives(r):
		return r.Cause
	case precondition != "" && precondition != "full":
		return report.CausePrecondition + " (-precondition=" + precondition + ")"
	}
	return ""
}

// JudgeCell judges one capacity and workload's sources (Sources).
func JudgeCell(src []report.Result, drives []report.Drive, rule Rule, precondition Preconditions) Cell {
	first := src[0]
	metric := first.Metric
	lower := specs.Metric(metric).LowerIsBetter()
	res := report.Result{Test: "TestLot/" + first.Capacity + "/" + specs.SubtestName(first.Workload), Kind: report.KindLot,
		Capacity: first.Capacity, Workload: first.Workload, Metric: metric, Spec: first.Spec, Expected: first.Spec, Tolerance: first.Tolerance}
	line := passLine(first)
	l := &report.LotResult{Coverage: rule.Coverage, Confidence: rule.Confidence, LowerIsBetter: lower}
	var figures []float64
	var tests, unmeasured, others []string // unmeasured: drives without a figure; others: figures not the drives'
	missing, notOwn := 0, 0
	var failed []string // cells of a drive that failed, each a failing drive
	var own []float64   // each figure's own cell's pass line
	rescaled := false   // some figure judged at another line, scaled to this one
	hosts := map[string]bool{}
	// A drive is one drive of the lot however many hosts' recordings hold
	// it (copies of one run, a drive moved between hosts): by serial and
	// model, counted once, at its first figure.
	seen := map[string]bool{}
	again := 0
	once := func(path, serial string) bool {
		if serial == "" {
			return true
		}
		k := modelOf(drives, path) + "\x00" + serial
		if seen[k] {
			again++
			return false
		}
		seen[k] = true
		return true
	}
	for _, r := range src {
		hosts[r.Host] = true
		tests = append(tests, r.Test)
		// Each figure passes at its own cell's line (a fleet host without
		// a scaling step gives a single-drive cell, at [method]
		// tolerance, beside other hosts' shares at [scaling] tolerance):
		// a figure of another line is judged in the units of this one,
		// scaled by line / its own, so that it passes here exactly when
		// it passed there.
		pl := passLine(r)
		scale := 1.0
		if pl != line && pl > 0 {
			scale, rescaled = line/pl, true
		}
		why := notTheDrives(r, precondition[r.Host])
		if why == "" && r.Verdict == report.Inconclusive {
			l.Unclear = append(l.Unclear, fmt.Sprintf("%s (%s)", r.Test, cmp.Or(r.Cause, "inconclusive")))
		}
		if r.Kind == report.KindScaling {
			n := 0
			unsettled := notSteadyDrives(r, why)
			for _, d := range r.PerDrive {
				if !once(d.Path, d.Serial) {
					continue
				}
				if drivesOwnCause(d.Cause) {
					// The drive failed in the step (an I/O error, say), or
					// before it: one of the lot's failures.
					failed = append(failed, d.Path+" in "+r.Test+" ("+d.Cause+")")
					continue
				}
				if d.Error != "" || d.Actual <= 0 {
					l.Missing = append(l.Missing, d.Path+" in "+r.Test)
					unmeasured = append(unmeasured, d.Path+" in "+r.Test)
					continue
				}
				if why != "" && (unsettled == nil || unsettled(d)) {
					l.Missing = append(l.Missing, d.Path+" in "+r.Test+" ("+why+")")
					n++
					continue
				}
				figures = append(figures, d.Actual*scale)
				own = append(own, pl)
				l.Figures = append(l.Figures, report.LotFigure{Drive: d.Path, Serial: d.Serial, Value: d.Actual, Test: r.Test})
			}
			if n > 0 {
				notOwn += n
				others = append(others, fmt.Sprintf("%s of %s (%s)", counted(n, "drive"), r.Test, why))
			}
			// A step that measured nothing (fio failed, an unreadable
			// recording) has no per-drive share: its drives are missing,
			// not absent from the lot.
			if gone := r.Drives - len(r.PerDrive); gone > 0 {
				for i := len(r.PerDrive); i < r.Drives; i++ {
					l.Missing = append(l.Missing, fmt.Sprintf("drive %d of %s", i+1, r.Test))
				}
				unmeasured = append(unmeasured, fmt.Sprintf("%s of %s (%s)", counted(gone, "drive"), r.Test, cmp.Or(r.Cause, "no figure")))
			}
			continue
		}
		if d := singleDriveOf(drives, r); !once(d.Path, d.Serial) {
			continue
		}
		switch {
		case drivesFailure(r):
			// Its drive failed (a mismatch, a read-back error, a critical
			// warning): the drive is one of the lot's failures, whatever
			// it measured before, not a drive without a figure.
			failed = append(failed, r.Test+" ("+r.Cause+")")
			continue
		case !hasFigure(r):
			l.Missing = append(l.Missing, r.Test)
			unmeasured = append(unmeasured, r.Test)
			continue
		case why != "":
			l.Missing = append(l.Missing, r.Test+" ("+why+")")
			notOwn++
			others = append(others, fmt.Sprintf("%s (%s)", r.Test, why))
			continue
		}
		figures = append(figures, r.Actual*scale)
		own = append(own, pl)
		d := singleDriveOf(drives, r)
		l.Figures = append(l.Figures, report.LotFigure{Drive: d.Path, Serial: d.Serial, Value: r.Actual, Test: r.Test})
	}
	missing = len(l.Missing)
	format := func(v float64) string { return report.FormatValue(v, metric) }
	j := Judge(figures, line, lower, rule, format)
	j = WithFailed(j, len(failed), rule, strings.Join(failed, ", "))
	// Drives without a figure, or whose figure is not theirs, decide the
	// lot only as far as it is decided whatever they would measure.
	var why []string
	if n := missing - notOwn; n > 0 {
		why = append(why, fmt.Sprintf("%s without a figure (%s)", counted(n, "drive"), strings.Join(unmeasured, ", ")))
	}
	if notOwn > 0 {
		why = append(why, fmt.Sprintf("%s whose figure is not the drive's own (%s)", counted(notOwn, "drive"), strings.Join(others, ", ")))
	}
	j = WithMissing(j, missing, rule, strings.Join(why, " and "))
	if len(l.Unclear) > 0 && j.Verdict == Accepted {
		// A cell inconclusive for a cause of the drive's proves nothing
		// either way: its figures may reject the lot, never accept it.
		reason := fmt.Sprintf("undecided with %s that proved nothing (%s); by the figures alone the lot is accepted: %s",
			counted(len(l.Unclear), "inconclusive cell"), strings.Join(l.Unclear, ", "), j.Reason)
		j.Verdict, j.Undecided, j.Reason = Inconclusive, MissingDrive, reason
	}
	for i := range l.Figures {
		l.Figures[i].Pass = judge.Meets(specs.Metric(metric), l.Figures[i].Value, own[i])
	}
	l.Method, l.N, l.Passing, l.K, l.Mean, l.SD, l.Bound, l.PassLine = j.Method, j.N, j.Passing, j.K, j.Mean, j.SD, j.Bound, line
	l.PassingShareLower, l.PassingShareUpper, l.ZeroFailure, l.Need, l.NeedAccepts, l.Verdict = j.Lower, j.Upper, j.ZeroFailure, j.Need, j.NeedAccepts, j.Verdict
	if !j.HasBound {
		l.Bound = 0
	}
	if !math.IsNaN(j.P) {
		l.Normality = &report.Normality{Test: "shapiro-wilk", W: j.W, P: j.P, Alpha: NormalityAlpha, Normal: j.NormalOK}
	}
	res.Lot, res.Drives = l, j.N
	res.Actual = l.Bound
	if res.Spec > 0 {
		res.Ratio = l.Bound / res.Spec
	}
	where := counted(len(hosts), "host")
	if len(hosts) == 1 {
		where = strings.Join(tests, ", ")
	}
	stats := fmt.Sprintf("n = %d (%s)", j.N, where)
	if j.N > 0 {
		// No figure has no mean: "mean 0 IOPS" would read as measured.
		stats += ", mean " + format(j.Mean)
	}
	if j.N >= 2 {
		stats += ", s " + format(j.SD)
	}
	if j.K > 0 {
		stats += fmt.Sprintf(", k = %.3f", j.K)
	}
	switch {
	case j.N > 0 && j.HasBound:
		stats += fmt.Sprintf(", %s bound %s", j.Method, format(j.Bound))
	case j.N > 0 && j.Method == DistributionFree:
		stats += fmt.Sprintf(", no distribution-free bound below %d drives", j.ZeroFailure)
	}
	stats += fmt.Sprintf(", pass line %s (spec %s", format(line), format(res.Spec))
	if res.Tolerance > 0 {
		stats += fmt.Sprintf(", tolerance %s", pctOf(res.Tolerance))
	}
	stats += ")"
	if again > 0 {
		stats += fmt.Sprintf("; %s recorded again on another host or step counted once", counted(again, "figure"))
	}
	if rescaled {
		stats += "; figures of cells judged at another line (another tolerance) are scaled to this one, each passing here as it did in its own cell"
	}
	head := fmt.Sprintf("%s: lot %s at coverage %s, confidence %s (%s)", res.Workload, j.Verdict, pctOf(rule.Coverage), pctOf(rule.Confidence), j.Method)
	msg := head + ": " + j.Reason + "; " + stats
	switch j.Verdict {
	case Accepted:
		res.Verdict = report.Pass
		res.Lot.Verdict = report.LotAccepted
		// A passing cell carries no error; its message is the log line.
		res.Error = ""
	case Rejected:
		res.Verdict, res.Cause, res.Error = report.Fail, report.CauseLotRejected, msg
	default:
		res.Verdict, res.Cause, res.Error = report.Inconclusive, report.CauseLotUndecided, msg
	}
	return Cell{Result: res, Message: msg}
}

// modelOf is the model of the drive at path, "" when drives do not name it.
func modelOf(drives []report.Drive, path string) string {
	for _, d := range drives {
		if d.Path == path {
			return d.Model
		}
	}
	return ""
}

// singleDriveOf is the drive a single-drive result ran on: the first
// drive of its capacity (on its host, in a fleet replay).
func singleDriveOf(drives []report.Drive, r report.Result) report.Drive {
	for _, d := range drives {
		if d.Capacity == r.Capacity && (r.Host == "" || strings.HasPrefix(d.Path, r.Host+":")) {
			return d
		}
	}
	return report.Drive{Path: cmp.Or(r.Host+":", "") + "recorded " + r.Capacity + " drive"}
}

// RunPlan is what one run's plan (the run itself, or a member of a fleet
// replay) measures that the lot rule can judge.
type RunPlan struct {
	// ScalingCapacity is the capacity its scaling steps run on, and
	// LargestStep the drives of its largest step; 0 without one.
	ScalingCapacity string
	LargestStep     int
	// Single are the capacities whose single-drive cells it runs.
	Single []string
}

// Drives is how many drives of capacity the run gives the lot rule, and
// from which cells: its largest scaling step, else its single-drive cells
// (one drive).
func Drives(capacity string, p RunPlan) (int, string) {
	if capacity == p.ScalingCapacity && p.LargestStep > 0 {
		return p.LargestStep, fmt.Sprintf("its %d-drive scaling step", p.LargestStep)
	}
	if slices.Contains(p.Single, capacity) {
		return 1, "its single-drive cells"
	}
	return 0, "no cell"
}

// FleetDrives is Drives summed over a fleet's member runs.
func FleetDrives(capacity string, members []RunPlan) (int, string) {
	total := 0
	for _, m := range members {
		n, _ := Drives(capacity, m)
		total += n
	}
	return total, counted(len(members), "host")
}

// Supply is what a run gives the lot rule for one capacity (Drives).
type Supply struct {
	Capacity string
	Drives   int
	From     string
}

// WritePlan says, in the plan, what rule needs and what the run gives
// it, per capacity (one the run gives no drive is left out), in the terms
// of the rule's method alone: k(n) under normal, which has no use for a
// zero-failure sample; under distribution-free, which has no k, how many
// drives the zero-failure sample needs and how many failing drives each
// capacity's sample could accept.
func WritePlan(w io.Writer, rule Rule, supply []Supply) {
	n0 := ZeroFailure(rule)
	fmt.Fprintf(w, "\nlot rule ([lot] coverage %s, confidence %s): ", pctOf(rule.Coverage), pctOf(rule.Confidence))
	df := rule.method() == DistributionFree
	if df {
		fmt.Fprintf(w, "method distribution-free, assuming no distribution: accepted when the Clopper–Pearson lower bound of the passing share reaches %s "+
			"(%d of %d, %d of %d drives passing); a zero-failure sample needs %d drives, all passing (n ≥ ln(1 − %v) / ln(%v))\n",
			pctOf(rule.Coverage), n0, n0, allowing(rule, 1), allowing(rule, 1)+1, n0, rule.Confidence, rule.Coverage)
	} else {
		fmt.Fprintf(w, "method normal, assuming normal figures: needs at least 3 drives (the Shapiro–Wilk check), every one passing, "+
			"and accepts n drives whose mean is at least k(n) standard deviations past the pass line\n")
	}
	for _, c := range supply {
		n := c.Drives
		if n == 0 {
			continue
		}
		line := fmt.Sprintf("  %s: the run has %d drive%s for the lot (%s)", c.Capacity, n, plural(n), c.From)
		switch {
		case df && n < n0:
			line += fmt.Sprintf(": %d short of the %d a zero-failure sample needs, so no lot of it is accepted", n0-n, n0)
		case df:
			line += fmt.Sprintf(": accepted with up to %s failing", counted(failuresAllowed(n, rule), "drive"))
		case n >= 3:
			k, _ := K(n, rule.Coverage, rule.Confidence)
			line += fmt.Sprintf(": k(%d) = %.3f", n, k)
		default:
			line += ": too few for the normal model (Shapiro–Wilk needs 3)"
		}
		fmt.Fprintln(w, line)
	}
}

// failuresAllowed is the most failing drives of n the distribution-free
// rule accepts (−1 when it accepts none, below ZeroFailure).
func failuresAllowed(n int, rule Rule) int {
	f := -1
	for f+1 < n && ClopperPearsonLower(n-(f+1), n, rule.Confidence) >= rule.Coverage {
		f++
	}
	return f
}

// pctOf writes a fraction as a percentage: 0.95 → "95 %".
func pctOf(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e4)/1e2, 'f', -1, 64) + " %"
}

// allowing is how many drives must pass for the distribution-free rule to
// accept with f failing (101, of 102, with one at 95 %/95 %).
func allowing(rule Rule, f int) int {
	for n := ZeroFailure(rule); n <= MaxDrives; n++ {
		if ClopperPearsonLower(n-f, n, rule.Confidence) >= rule.Coverage {
			return n - f
		}
	}
	return 0
}
