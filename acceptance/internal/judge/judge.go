// Package judge decides each cell's verdict from the figures it measured.
//
// It judges one drive's figure against its spec, N drives against N × a
// baseline (with the spread and outliers of the step), a cell's latency
// against its limits, and whether the drives were shown to be in steady
// state. It computes; the report renders what it returns.
package judge

import (
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/drivenames"
	"github.com/drivequal/drivequal/acceptance/internal/stats"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Judgement is the verdict on one measured value.
type Judgement struct {
	Verdict string  // report.Pass, report.Fail or report.Inconclusive
	Ratio   float64 // actual / expected
	Message string  // one line, like a row of the brief
}

// PassLine is the figure a drive meets its cell at: spec × (1 −
// tolerance), or × (1 + tolerance) for a figure where lower is better (a
// latency). It is the one line of a drive and cell: a single-drive cell
// judges its drive by it with its own tolerance ([method] tolerance), a
// scaling step each drive's share with the step's ([scaling] tolerance),
// and TestLot every figure with the tolerance of the cell it came from.
func PassLine(metric specs.Metric, spec, tolerance float64) float64 {
	if metric.LowerIsBetter() {
		return spec * (1 + tolerance)
	}
	return spec * (1 - tolerance)
}

// Meets reports whether a figure meets line (PassLine): at or above it,
// at or below it where lower is better.
func Meets(metric specs.Metric, actual, line float64) bool {
	if metric.LowerIsBetter() {
		return actual <= line
	}
	return actual >= line
}

// Single judges one drive's actual against its spec value. provisional,
// when set, says why a figure that meets its spec still proves nothing
// (measured without the spec's full preconditioning: preconditioning only
// lowers a drive's figures): such a cell can fail but never pass.
func Single(name string, metric specs.Metric, actual, spec, tolerance float64, provisional string) Judgement {
	j := Judgement{Ratio: ratio(actual, spec)}
	tol := ""
	if tolerance > 0 {
		tol = fmt.Sprintf(", tolerance %s %%", trimFloat(tolerance*100))
	}
	// A throughput passes at or above its figure; a latency at or below.
	met, pass, fail := Meets(metric, actual, PassLine(metric, spec, tolerance)), ">=", "<"
	if metric.LowerIsBetter() {
		pass, fail = "<=", ">"
	}
	op := pass
	if !met {
		op = fail
	}
	j.Message = fmt.Sprintf("%s: actual %s %s spec %s (%.2f %% of spec%s)",
		name, FormatValue(actual, metric), op, FormatValue(spec, metric), j.Ratio*100, tol)
	switch {
	case !met:
		j.Verdict = report.Fail
	case provisional != "":
		j.Verdict = report.Inconclusive
		j.Message += "; " + provisional
	default:
		j.Verdict = report.Pass
	}
	return j
}

// DriveShare is one drive's part of a multi-drive measurement.
type DriveShare struct {
	Path, Serial string
	Actual       float64
	Err          string // a per-drive error, e.g. a job error on that drive
	CPUs         string // the cpus_allowed the drive's jobs ran on
}

// ScalingJudgement is the verdict on an N-drive measurement.
type ScalingJudgement struct {
	Judgement
	PerDrive []report.DriveResult
	// Spread is (max − min) / median of the per-drive actuals of the
	// drives without an error (stats.Summary.Spread); Min, Median and Max
	// are theirs too.
	Spread           float64
	Min, Median, Max float64
}

// Scaling judges the total of N drives against expected = N ×
// baseline, and each drive's share against the single-drive spec, both with
// tolerance. A drive more than tolerance below the median is named. The
// spread, median and outliers are over the drives without an error: a
// drive whose jobs failed has no figure to compare (it fails on its own).
func Scaling(name string, metric specs.Metric, shares []DriveShare, expected, spec, tolerance float64, provisional string) ScalingJudgement {
	var total float64
	var vals []float64
	for _, s := range shares {
		total += s.Actual
		if s.Err == "" {
			vals = append(vals, s.Actual)
		}
	}
	n := len(shares)
	sj := ScalingJudgement{Judgement: Judgement{Ratio: ratio(total, expected)}}
	st := stats.Of(vals)
	sj.Spread, sj.Min, sj.Median, sj.Max = st.Spread(), st.Min, st.Median, st.Max
	med := st.Median
	var problems, outliers []string
	var below, low []report.DriveResult // drives below spec, below the median
	var errs []DriveShare               // drives with a job error
	if total < expected*(1-tolerance) {
		problems = append(problems, fmt.Sprintf("total %s < expected %s (%.2f %% of expected, tolerance %s %%)",
			FormatValue(total, metric), FormatValue(expected, metric), sj.Ratio*100, trimFloat(tolerance*100)))
	}
	line := PassLine(metric, spec, tolerance) // each drive's share, as TestLot judges it
	for _, s := range shares {
		dr := report.DriveResult{Path: s.Path, Serial: s.Serial, Actual: s.Actual, Ratio: ratio(s.Actual, spec), Verdict: report.Pass, Error: s.Err, CPUs: s.CPUs}
		if !Meets(metric, s.Actual, line) {
			dr.Verdict = report.Fail
			below = append(below, dr)
		}
		if s.Err == "" && med > 0 && s.Actual < med*(1-tolerance) {
			dr.Outlier = true
			low = append(low, dr)
		}
		if s.Err != "" {
			dr.Verdict = report.Fail
			errs = append(errs, s)
		}
		sj.PerDrive = append(sj.PerDrive, dr)
	}
	// One drive is named with its figure; several are counted, with the
	// lowest (every drive's figure is in PerDrive).
	switch {
	case len(below) == 1:
		d := below[0]
		problems = append(problems, fmt.Sprintf("drive %s%s at %s < spec %s (%.2f %% of spec)",
			d.Path, serialNote(d.Serial), FormatValue(d.Actual, metric), FormatValue(spec, metric), d.Ratio*100))
	case len(below) > 1:
		d := lowest(below)
		problems = append(problems, fmt.Sprintf("%s below spec %s, lowest %s%s at %s (%.2f %% of spec)",
			report.CountOf(len(below), n), FormatValue(spec, metric), d.Path, serialNote(d.Serial), FormatValue(d.Actual, metric), d.Ratio*100))
	}
	problems = append(problems, driveErrors(errs, n)...)
	switch {
	case len(low) == 1:
		d := low[0]
		outliers = append(outliers, fmt.Sprintf("drive %s%s is %.1f %% below the median %s",
			d.Path, serialNote(d.Serial), (1-d.Actual/med)*100, FormatValue(med, metric)))
	case len(low) > 1:
		d := lowest(low)
		outliers = append(outliers, fmt.Sprintf("%s more than %s %% below the median %s, lowest %s%s at −%.1f %%",
			report.CountOf(len(low), n), trimFloat(tolerance*100), FormatValue(med, metric), d.Path, serialNote(d.Serial), (1-d.Actual/med)*100))
	}
	head := fmt.Sprintf("%s on %d drives: ", name, n)
	switch {
	case len(problems) > 0:
		sj.Verdict = report.Fail
		sj.Message = head + strings.Join(append(problems, outliers...), "; ")
	default:
		sj.Verdict = report.Pass
		sj.Message = fmt.Sprintf("%stotal %s >= expected %s (%.2f %% of expected, tolerance %s %%, spread %.1f %%)",
			head, FormatValue(total, metric), FormatValue(expected, metric), sj.Ratio*100, trimFloat(tolerance*100), sj.Spread*100)
		if why := provisional; why != "" {
			// Why it is not a pass, before the detail, so that a message
			// cut short still says it.
			sj.Verdict = report.Inconclusive
			sj.Message += "; " + why
		}
		if total < expected {
			sj.Message += "; below linear"
		}
		if len(outliers) > 0 {
			sj.Message += "; " + strings.Join(outliers, "; ")
		}
	}
	return sj
}

// driveErrors says each drive's job error, one several of the n drives
// share once: "drive /dev/x (serial S): error", "3 of 24 drives: error:
// loop1–loop3".
func driveErrors(errs []DriveShare, n int) []string {
	var out []string
	done := map[string]bool{}
	for _, e := range errs {
		if done[e.Err] {
			continue
		}
		done[e.Err] = true
		var paths []string
		for _, f := range errs {
			if f.Err == e.Err {
				paths = append(paths, f.Path)
			}
		}
		if len(paths) == 1 {
			out = append(out, fmt.Sprintf("drive %s%s: %s", e.Path, serialNote(e.Serial), e.Err))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", report.CountOf(len(paths), n), e.Err, drivenames.Compact(paths, report.MaxListed)))
	}
	return out
}

// lowest is the drive with the lowest figure of ds, the first of equals.
func lowest(ds []report.DriveResult) report.DriveResult {
	low := ds[0]
	for _, d := range ds[1:] {
		if d.Actual < low.Actual {
			low = d
		}
	}
	return low
}

func serialNote(serial string) string {
	if serial == "" {
		return ""
	}
	return " (serial " + serial + ")"
}

func ratio(actual, expected float64) float64 {
	if expected == 0 {
		return 0
	}
	return actual / expected
}

// FormatValue writes v in metric's unit with thousands separators:
// "2,350,000 IOPS", "14,500 MB/s" (MB/s is 10^6 bytes per second).
func FormatValue(v float64, metric specs.Metric) string {
	return report.FormatValue(v, string(metric))
}

func trimFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// NotSteady says which drives did not reach steady state, with the
// window's figures, a reason several drives share said once
// (report.Reasons): drives of one step whose windows missed the rule are
// one reason with the range of their figures; "" when every record
// attained it. Each drive's own window is in its record.
func NotSteady(recs []report.Steady) string {
	drives := map[string]bool{}
	type key struct {
		step  int
		what  string
		bound float64
	}
	windows := map[key][]report.Steady{} // records without a note, by step
	for _, r := range recs {
		drives[r.Drive] = true
		if !r.Attained && r.Note == "" {
			k := key{r.Step, r.Kind + r.Twin, r.BoundSeconds}
			windows[k] = append(windows[k], r)
		}
	}
	var why []report.DriveReason
	for _, r := range recs {
		if r.Attained {
			continue
		}
		what := r.Twin
		if r.Kind == "top-up" {
			what += ", top-up after idling"
		}
		detail := r.Note
		if detail == "" {
			detail = windowFigures(windows[key{r.Step, r.Kind + r.Twin, r.BoundSeconds}])
		}
		why = append(why, report.DriveReason{Drive: r.Drive, Reason: fmt.Sprintf("did not reach steady state in step %d (%s) within %s: %s",
			r.Step, what, time.Duration(r.BoundSeconds*float64(time.Second)), detail)})
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(report.Reasons(why, len(drives)), "; ") + "; the figure proves nothing: raise random_runtime (or topup_runtime) and rerun"
}

// windowFigures is the steady-state window of one record against the
// rule, or of several the lowest and highest of each figure.
func windowFigures(recs []report.Steady) string {
	r := recs[0]
	if len(recs) == 1 {
		return fmt.Sprintf("window mean %s IOPS, range %.1f %% (limit %s %%), excursion %.1f %% (limit %s %%)",
			report.Thousands(r.Mean), r.RangePct, trimFloat(r.RangeLimitPct), r.ExcursionPct, trimFloat(r.ExcursionLimitPct))
	}
	lo, hi := r, r
	for _, x := range recs[1:] {
		lo.Mean, hi.Mean = min(lo.Mean, x.Mean), max(hi.Mean, x.Mean)
		lo.RangePct, hi.RangePct = min(lo.RangePct, x.RangePct), max(hi.RangePct, x.RangePct)
		lo.ExcursionPct, hi.ExcursionPct = min(lo.ExcursionPct, x.ExcursionPct), max(hi.ExcursionPct, x.ExcursionPct)
	}
	return fmt.Sprintf("window means %s–%s IOPS, ranges %.1f–%.1f %% (limit %s %%), excursions %.1f–%.1f %% (limit %s %%)",
		report.Thousands(lo.Mean), report.Thousands(hi.Mean), lo.RangePct, hi.RangePct, trimFloat(r.RangeLimitPct),
		lo.ExcursionPct, hi.ExcursionPct, trimFloat(r.ExcursionLimitPct))
}

// Latency is d's latency percentiles in µs; nil when d has no bins.
func Latency(d fiojob.Direction) *report.Latency {
	q := d.QoS()
	if q.MaxNs == 0 {
		return nil
	}
	return &report.Latency{P50: q.P50Ns / 1e3, P99: q.P99Ns / 1e3, P999: q.P999Ns / 1e3, P9999: q.P9999Ns / 1e3,
		P99999: q.P99999Ns / 1e3, Max: q.MaxNs / 1e3}
}

// QoS judges each latency limit the spec sets for a cell (limits). A limit on a direction fio gave no bins for fails: the
// cell did not show it is met.
func QoS(limits []specs.LatencyLimit, read, write *report.Latency) []report.QoSCheck {
	var out []report.QoSCheck
	for _, l := range limits {
		lat := read
		if l.Dir == "write" {
			lat = write
		}
		q := report.QoSCheck{Key: l.Key, LimitUs: float64(l.Limit) / 1e3, Verdict: report.Pass}
		if lat == nil {
			q.Verdict = report.Fail
		} else if q.Actual = lat.Percentile(l.Percentile); q.Actual > q.LimitUs {
			q.Verdict = report.Fail
		}
		out = append(out, q)
	}
	return out
}

// PercentileName is "p99.99" for the key "read_p99_99_us", "max" for
// "write_max_us".
func PercentileName(key string) string {
	_, p, _ := strings.Cut(strings.TrimSuffix(key, "_us"), "_")
	if p == "max" {
		return "max"
	}
	return strings.Replace(strings.Replace(p, "_", ".", 1), "_", "", -1)
}

// HostBoundPct is the CPU use at which a cell below spec is taken to be
// bound by the host, not the drive: of the CPUs fio was allowed (busy, or
// fio's own share of them), or of one CPU for any one fio job.
const HostBoundPct = 95

// HostCPU is what the CPUs fio ran on did during a measurement: cpus and
// n the CPUs fio's jobs were allowed, busy how busy they were (from
// /proc/stat, 0-1; < 0 when not read), cpuSeconds fio's jobs' own user +
// system time, seconds the measurement's length, jobs the jobs' count,
// drives each drive's jobs' own figures (DrivesCPU).
func HostCPU(cpus string, n int, busy, cpuSeconds, seconds float64, jobs int, drives []report.DriveCPU) *report.HostCPU {
	if n <= 0 || seconds <= 0 {
		return nil
	}
	h := &report.HostCPU{CPUs: cpus, N: n, BusyPct: -1, Jobs: jobs, FioPct: 100 * cpuSeconds / (seconds * float64(n)), PerDrive: drives}
	if busy >= 0 {
		h.BusyPct = 100 * busy
	}
	for _, d := range drives {
		h.JobMaxPct = max(h.JobMaxPct, d.MaxPct)
		h.JobsAtLimit += d.AtLimit
	}
	return h
}

// DrivesCPU is each drive's fio jobs' own CPU use in out, from each job
// entry's usr_cpu + sys_cpu (% of its runtime: of one CPU, since a fio
// job is one thread): the entries of reporting group i are drive
// paths[i]'s, pinned to cpus[i] ("" unpinned). numJobs is the jobs a drive
// ran (numjobs): a drive with a single entry for more than one job was
// reported with group_reporting, whose usr_cpu fio computes over the
// jobs' summed runtime, so it is their mean and stands for all of them.
func DrivesCPU(out *fiojob.Output, paths, cpus []string, numJobs int) []report.DriveCPU {
	if out == nil {
		return nil
	}
	byGroup := map[int][]fiojob.JobResult{}
	for _, j := range out.Jobs {
		byGroup[j.GroupID] = append(byGroup[j.GroupID], j)
	}
	var res []report.DriveCPU
	for i, path := range paths {
		entries := byGroup[i]
		if len(entries) == 0 {
			continue
		}
		d := report.DriveCPU{Drive: path, Grouped: len(entries) == 1 && numJobs > 1}
		if i < len(cpus) {
			d.CPUs = cpus[i]
		}
		var cpuSec, runSec float64
		for _, e := range entries {
			n := 1
			if d.Grouped {
				n = numJobs
			}
			d.Jobs += n
			d.MaxPct = max(d.MaxPct, e.CPUPct)
			if e.CPUPct >= HostBoundPct {
				d.AtLimit += n
			}
			cpuSec += e.CPUSeconds
			runSec += float64(e.RuntimeMs) / 1000
		}
		if runSec > 0 {
			d.MeanPct = 100 * cpuSec / runSec
		}
		// More jobs than CPUs: split hands each job one of them in turn,
		// so two jobs that share a pegged CPU read about 50 % each, and
		// only their sum says the CPUs had nothing left.
		if list, err := cpulist.Parse(d.CPUs); err == nil && len(list) > 0 && d.Jobs > len(list) {
			d.SharePct = d.MeanPct * float64(d.Jobs) / float64(len(list))
		}
		res = append(res, d)
	}
	return res
}

// HostBound says why a cell measured with h's CPU use is bound by the host
// rather than the drive, naming each figure that says so, with the fix;
// "" when none does. Two figures can: a fio job that ran at HostBoundPct
// of one CPU or more (it could go no faster on this CPU, however idle the
// others were), or a drive's jobs, more than its CPUs, that used
// HostBoundPct of those CPUs together; and the CPUs fio was allowed, busy at HostBoundPct or more
// (by /proc/stat, which counts the kernel threads that do a loop device's
// or a driver's work, or by fio's own jobs).
func HostBound(h *report.HostCPU) string { return HostBoundFor(h, nil) }

// HostBoundFor is HostBound for a multi-drive cell whose drives short
// (paths, as in h.PerDrive) each fell below spec: a pegged fio job
// excuses only its own drive, so the jobs' figure says host-bound only
// when every one of those drives had a job at HostBoundPct. A drive below
// spec whose jobs all had headroom was not held back by its CPU, however
// pegged another drive's jobs were (a fast drive's jobs can peg while a
// faulty one's idle): the cell fails on it. With short empty (a single
// drive, or only the step's total short) any job's figure counts. The
// CPUs' figure is the step's, so it counts for every drive.
func HostBoundFor(h *report.HostCPU, short []string) string {
	if h == nil {
		return ""
	}
	var why []string
	if h.BusyPct >= HostBoundPct || h.FioPct >= HostBoundPct {
		busy := h.FioPct
		what := "their own user and system time"
		if h.BusyPct > busy {
			busy, what = h.BusyPct, "the CPUs' time, fio's jobs "+fmt.Sprintf("%.0f %%", h.FioPct)+" of it"
		}
		why = append(why, fmt.Sprintf("fio's %s on CPUs %s (%d) were %.0f %% busy (%s)", plural(h.Jobs, "job"), h.CPUs, h.N, busy, what))
	}
	if job := jobBound(h, short); job != "" {
		if len(why) == 0 && h.BusyPct >= 0 {
			job += fmt.Sprintf("; the CPUs fio was allowed, %s (%d), were %.0f %% busy", h.CPUs, h.N, h.BusyPct)
		}
		why = append(why, job)
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + ": the host, not the drive, bounds this figure; give the drive more CPUs or a faster host"
}

// jobBound names the fio jobs that ran at HostBoundPct of one CPU or more,
// with the busiest's figure and drive; "" when none did, or when a drive
// of short (see HostBoundFor) had none.
func jobBound(h *report.HostCPU, short []string) string {
	held := func(d report.DriveCPU) bool { return d.AtLimit > 0 || d.SharePct >= HostBoundPct }
	if !slices.ContainsFunc(h.PerDrive, held) {
		return ""
	}
	for _, path := range short {
		i := slices.IndexFunc(h.PerDrive, func(d report.DriveCPU) bool { return d.Drive == path })
		if i < 0 || !held(h.PerDrive[i]) {
			return ""
		}
	}
	var top, shared report.DriveCPU
	for _, d := range h.PerDrive {
		if len(short) > 0 && !slices.Contains(short, d.Drive) {
			continue
		}
		if d.AtLimit > 0 && d.MaxPct > top.MaxPct {
			top = d
		}
		if d.SharePct >= HostBoundPct && d.SharePct > shared.SharePct {
			shared = d
		}
	}
	if top.AtLimit == 0 {
		// No job at the limit on its own: jobs that share pegged CPUs.
		return fmt.Sprintf("fio's %d jobs on %s shared its CPUs %s, more than one a CPU, and used %.1f %% of them (user + system time over their runtime), at least %d %%",
			shared.Jobs, shared.Drive, shared.CPUs, shared.SharePct, HostBoundPct)
	}
	where := top.Drive
	if top.CPUs != "" {
		where += ", CPUs " + top.CPUs
	}
	if top.Grouped {
		return fmt.Sprintf("fio's %d jobs on %s ran at %.1f %% of one CPU each on average (group_reporting gives their mean: user + system time over their runtime), at least %d %%",
			top.Jobs, where, top.MaxPct, HostBoundPct)
	}
	if h.Jobs == 1 {
		return fmt.Sprintf("fio's 1 job ran at %.1f %% of one CPU, at least %d %% (its user + system time over its runtime), on %s",
			top.MaxPct, HostBoundPct, where)
	}
	return fmt.Sprintf("%d of fio's %d jobs ran at %d %% of one CPU or more, the busiest at %.1f %% (user + system time over its runtime) on %s",
		h.JobsAtLimit, h.Jobs, HostBoundPct, top.MaxPct, where)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
