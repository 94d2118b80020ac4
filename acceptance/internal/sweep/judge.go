package sweep

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Judge judges target at from its sweep's points (Point's results, in
// any order) within tolerance: the drive's IOPS at the bound is the
// highest IOPS among the points that passed, are not saturated and whose
// percentile is within at's bound; it must reach MinIOPS × (1 −
// tolerance). A point that failed (not measured, fio failed, the drive's
// I/O error) fails the target with the first failing point's cause; a
// planned point never measured (interrupted, not recorded) leaves it
// INCONCLUSIVE, met or not; a point that is INCONCLUSIVE (throttled, not
// steady, ...) within the bound with more IOPS than the best leaves a
// target that misses its line INCONCLUSIVE, and so does a best point that
// is host-bound (its figures count, but its IOPS may be the host's); a
// target met passes. The result's Actual is the IOPS at the bound, its
// Spec and Expected MinIOPS; its message (Error but for a pass) names the
// bound, the IOPS at it and min_iops.
func Judge(test string, c specs.Capacity, w specs.Workload, at specs.AtLatency, points []report.Result, tolerance float64) (report.Result, string) {
	l := at.Limit
	bound := float64(l.Limit) / 1e3
	res := report.Result{Test: test, Kind: report.KindLatency, Capacity: c.Name, Workload: w.Name, Drives: 1,
		Metric: string(specs.IOPS), Spec: at.MinIOPS, Expected: at.MinIOPS, Tolerance: tolerance}
	var best *report.Result
	for i, p := range points {
		v := latOf(p, l)
		if p.Verdict == report.Pass && v > 0 && v <= bound && !p.Saturated && (best == nil || p.Actual > best.Actual) {
			best = &points[i]
		}
	}
	var failed, unmeasured, unsure []string
	cause, failCause, gone := "", "", ""
	for _, p := range points {
		v := latOf(p, l)
		within := v > 0 && v <= bound && !p.Saturated
		switch {
		case p.Verdict == report.Fail:
			// The first failing point's cause decides: a drive's I/O
			// error is the drive's, not fio's.
			if failCause == "" {
				failCause = cmp.Or(p.Cause, report.CauseFioFailed)
			}
			failed = append(failed, p.Error)
		case Unmeasured(p):
			// A planned point never measured: the sweep is not whole,
			// whatever the points measured say.
			unmeasured = append(unmeasured, fmt.Sprintf("%s (%s)", Load(p), p.Cause))
			if gone != report.CauseInterrupted {
				gone = p.Cause
			}
		case !within:
		case p.Cause == report.CauseHostBound && (best == nil || p.Actual >= best.Actual):
			// The best is host-bound: its IOPS may be the host's, the
			// IOPS at the bound may be more on a faster host. (A latency
			// over the bound fails, as a cell's latency limit does,
			// host-bound or not.)
			unsure = append(unsure, fmt.Sprintf("%s (%s IOPS): %s", Load(p), report.Thousands(p.Actual), p.Error))
			cause = p.Cause
		case p.Verdict != report.Pass && (best == nil || p.Actual > best.Actual):
			// Only a point that would have raised the IOPS at the bound
			// leaves a miss undecided.
			unsure = append(unsure, fmt.Sprintf("%s (%s IOPS): %s", Load(p), report.Thousands(p.Actual), p.Error))
			cause = p.Cause
		}
	}
	q := report.QoSCheck{Key: l.Key, LimitUs: bound, Verdict: report.Fail}
	if best != nil {
		q.Actual, q.Verdict = latOf(*best, l), report.Pass
	}
	res.QoS = []report.QoSCheck{q}
	line := at.MinIOPS * (1 - tolerance)
	at0 := "no point within it"
	if best != nil {
		res.Actual, res.Ratio = best.Actual, best.Actual/at.MinIOPS
		at0 = fmt.Sprintf("%s IOPS (%s)", report.Thousands(best.Actual), Load(*best))
	}
	row := fmt.Sprintf("%s at %s: IOPS at %s %s ≤ %s µs: %s; min_iops %s", w.Name, c.Name, l.Dir,
		judge.PercentileName(l.Key), report.Thousands(bound), at0, report.Thousands(at.MinIOPS))
	if tolerance > 0 {
		row += fmt.Sprintf(" (pass line %s, tolerance %g %%)", report.Thousands(line), tolerance*100)
	}
	switch {
	case len(failed) > 0:
		res.Verdict, res.Cause = report.Fail, failCause
		row += "; " + strings.Join(failed, "; ")
	case len(unmeasured) > 0:
		res.Verdict, res.Cause = report.Inconclusive, gone
		row += "; not judged: planned points not measured: " + strings.Join(unmeasured, ", ")
	case best != nil && best.Actual >= line:
		res.Verdict = report.Pass
	case len(unsure) > 0:
		res.Verdict, res.Cause = report.Inconclusive, cause
		row += "; not judged by: " + strings.Join(unsure, "; ")
	default:
		res.Verdict, res.Cause = report.Fail, report.CauseLatency
	}
	if res.Verdict != report.Pass {
		res.Error = row
	}
	return res, row
}

// Unmeasured reports whether sweep point p is planned but was never
// measured: the run was stopped before it (interrupted), or a replay's
// recording holds no output for it (not recorded, INCONCLUSIVE).
func Unmeasured(p report.Result) bool {
	return p.Verdict == report.Inconclusive && (p.Cause == report.CauseInterrupted || p.Cause == report.CauseNotRecorded)
}

// latOf is point p's latency at l's percentile and direction in µs; 0
// when fio gave none.
func latOf(p report.Result, l specs.LatencyLimit) float64 {
	lat := p.Read
	if l.Dir == "write" {
		lat = p.Write
	}
	if lat == nil {
		return 0
	}
	return lat.Percentile(l.Percentile)
}
