package sweep

import (
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
// tolerance). A point that failed (not measured, fio failed) fails the
// target; a point that is INCONCLUSIVE (host-bound, throttled, ...) with
// more IOPS than the best leaves a target that misses its line
// INCONCLUSIVE, and so does a host-bound point within the bound (its
// figures count, but its IOPS may be the host's); a target met passes. The result's
// Actual is the IOPS at the bound, its Spec and Expected MinIOPS; its
// message (Error but for a pass) names the bound, the IOPS at it and
// min_iops.
func Judge(test string, c specs.Capacity, w specs.Workload, at specs.AtLatency, points []report.Result, tolerance float64) (report.Result, string) {
	l := at.Limit
	bound := float64(l.Limit) / 1e3
	res := report.Result{Test: test, Kind: report.KindLatency, Capacity: c.Name, Workload: w.Name, Drives: 1,
		Metric: string(specs.IOPS), Spec: at.MinIOPS, Expected: at.MinIOPS, Tolerance: tolerance}
	var best *report.Result
	var failed, unsure []string
	cause := ""
	for i, p := range points {
		v := latOf(p, l)
		within := v > 0 && v <= bound && !p.Saturated
		switch {
		case p.Verdict == report.Fail:
			failed = append(failed, p.Error)
		case p.Cause == report.CauseHostBound && within:
			// Its IOPS may be the host's: a latency within the bound
			// stands, the IOPS at it may be more on a faster host. (A
			// latency over the bound fails, as a cell's latency limit
			// does, host-bound or not.)
			unsure = append(unsure, fmt.Sprintf("%s (%s IOPS): %s", Load(p), report.Thousands(p.Actual), p.Error))
			cause = p.Cause
			if within && (best == nil || p.Actual > best.Actual) {
				best = &points[i]
			}
		case !within:
		case p.Verdict != report.Pass:
			unsure = append(unsure, fmt.Sprintf("%s (%s IOPS): %s", Load(p), report.Thousands(p.Actual), p.Error))
			cause = p.Cause
		case best == nil || p.Actual > best.Actual:
			best = &points[i]
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
		res.Verdict, res.Cause = report.Fail, report.CauseFioFailed
		row += "; " + strings.Join(failed, "; ")
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
