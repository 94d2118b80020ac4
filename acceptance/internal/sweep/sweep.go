// Package sweep is latency at load: a workload's sweep points as cells
// of the plan, each point's figures from its measurement, and the
// TestLatency target judged from the points.
package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// HoldShare is the share of its asked rate an open-loop point must
// achieve to be a latency figure: below it the point is saturated.
const HoldShare = 0.99

// Target is one TestLatency test: a workload's sweep at one capacity, and
// the capacity's [capacity.at_latency] target for it, if any.
type Target struct {
	Test     string // "TestLatency/1.92TB/4KB_Random_Read"
	Capacity specs.Capacity
	Workload specs.Workload
	// At is the target; nil: the points are reported, nothing judged.
	At *specs.AtLatency
	// Points are the sweep's cells (report.KindSweep), closed-loop points
	// first, each recorded under its own test name, Test + "/iodepth_8"
	// or Test + "/rate_iops_2000".
	Points []plan.Cell
	// Missing are the points planned that a replay's recording does not
	// hold: each is reported as not recorded, and the target is not
	// judged whole.
	Missing []plan.Cell
}

// Capacity is one capacity's targets, in plan order.
type Capacity struct {
	Name    string
	Targets []Target
}

// Targets lists the run's sweeps: at each capacity with drives
// (drivesOf), each workload (in plan order) that sweeps and that the
// capacity lists in [capacity.spec] or [capacity.at_latency], measured
// on the capacity's first drive. has, when not nil, keeps only the points
// it holds (a replay's recorded ones).
func Targets(s *specs.Spec, p *plan.Planner, drivesOf func(string) []int, has func(string) bool) []Capacity {
	var out []Capacity
	for _, c := range s.Capacities {
		drives := drivesOf(c.Name)
		if len(drives) == 0 {
			continue
		}
		cc := Capacity{Name: c.Name}
		for _, w := range p.Order(s.Workloads) {
			_, listed := c.Spec[w.Name]
			at, targeted := c.AtLatency[w.Name]
			if !w.Sweeps() || !listed && !targeted {
				continue
			}
			tg := Target{Test: "TestLatency/" + c.Name + "/" + specs.SubtestName(w.Name), Capacity: c, Workload: w}
			if targeted {
				tg.At = &at
			}
			for _, pt := range Points(tg.Test, c, w, p, drives[0]) {
				if has == nil || has(pt.Test) {
					tg.Points = append(tg.Points, pt)
				} else {
					tg.Missing = append(tg.Missing, pt)
				}
			}
			if len(tg.Points) > 0 {
				cc.Targets = append(cc.Targets, tg)
			}
		}
		if len(cc.Targets) > 0 {
			out = append(out, cc)
		}
	}
	return out
}

// Points are w's sweep points at capacity c on drive, as cells: the
// workload at each iodepth per job (closed loop), then at each total
// rate, rate ÷ numjobs a job with Poisson arrivals (open loop). Each needs
// the workload's own state, so that the planner measures the points with
// the workload's other cells, after the same preconditioning.
func Points(test string, c specs.Capacity, w specs.Workload, p *plan.Planner, drive int) []plan.Cell {
	need, twin := p.Need(w)
	var out []plan.Cell
	add := func(name string, pw specs.Workload, open bool) {
		out = append(out, plan.Cell{Kind: report.KindSweep, Test: test + "/" + name, Capacity: c, Workload: pw,
			Drives: []int{drive}, Need: need, Twin: twin, OpenLoop: open})
	}
	for _, qd := range w.SweepIODepth {
		pw := w
		pw.IODepth = qd
		add("iodepth_"+strconv.Itoa(qd), pw, false)
	}
	for _, rate := range w.SweepRateIOPS {
		pw := w
		pw.RateIOPS = int(rate / int64(max(w.NumJobs, 1)))
		add("rate_iops_"+strconv.FormatInt(rate, 10), pw, true)
	}
	return out
}

// Point judges one sweep point from its measurement m, as a cell is
// judged (verdict.Run.Cell: fio's failures, the heat, the PCIe link,
// steady state), with no figure to meet: a measured point passes, and is
// INCONCLUSIVE where a cell would be; a point measured while the host's
// CPUs were saturated passes with cause host-bound (its IOPS may be the
// host's). Its figures are IOPS, MB/s and
// per direction the clat percentiles and the mean latency; an open-loop
// point short of HoldShare of its rate is Saturated.
func Point(ctx context.Context, r verdict.Run, cell plan.Cell, m *evidence.Measured) report.Result {
	res, _ := judgePoint(ctx, r, cell, m)
	return res
}

// judgePoint is Point, and whether the point has figures of its own (fio's
// output parsed).
func judgePoint(ctx context.Context, r verdict.Run, cell plan.Cell, m *evidence.Measured) (report.Result, bool) {
	w := cell.Workload
	c := cell
	c.Kind = report.KindSingle
	c.Workload.Metric = specs.IOPS
	c.Capacity.Spec = map[string]float64{w.Name: 1} // any I/O at all meets it
	c.Capacity.QoS = nil
	res := r.Cell(ctx, c, m, verdict.Baseline{}).Result
	res.Kind, res.Test, res.Metric = report.KindSweep, cell.Test, string(specs.IOPS)
	res.Spec, res.Expected, res.Ratio = 0, 0, 0
	res.IODepth = w.IODepth
	if cell.OpenLoop {
		res.IODepth, res.RateIOPS = 0, float64(w.RateIOPS*max(w.NumJobs, 1))
	}
	if res.Cause == report.CauseBelowSpec {
		res.Error = fmt.Sprintf("%s: no I/O completed at %s", w.Name, Load(res))
	}
	if _, err := m.Parse(); m.NotRun != "" || m.RunErr != nil || err != nil || len(m.Groups()) != 1 {
		return res, false
	}
	total := m.Total()
	res.MBps = total.MBps()
	if res.Read != nil {
		res.Read.Mean = total.Read.LatMeanNs / 1e3
	}
	if res.Write != nil {
		res.Write.Mean = total.Write.LatMeanNs / 1e3
	}
	res.Saturated = cell.OpenLoop && Saturated(res.Actual, res.RateIOPS, total.Runtime.Seconds())
	if why := judge.HostBoundFor(res.HostCPU, nil); why != "" && res.Verdict == report.Pass {
		// As a cell's pass stays a pass: the point keeps its figures, and
		// a target they miss is not judged (Judge).
		res.Cause, res.Error = report.CauseHostBound, fmt.Sprintf("%s at %s: %s", w.Name, Load(res), why)
	}
	return res, true
}

// Saturated reports whether an open-loop point asked rate IOPS and
// achieved achieved over secs seconds did not hold its rate: it fell
// short of HoldShare of it, by more than a Poisson arrival process's own
// noise (3 standard deviations, √(rate × secs) I/Os: a 2-s point asked
// 1,000 IOPS gets 2,000 ± 45 arrivals, so 99 % alone would call a third
// of the points that held their rate saturated).
func Saturated(achieved, rate, secs float64) bool {
	if achieved >= HoldShare*rate {
		return false
	}
	n := rate * secs
	return secs <= 0 || (rate-achieved)*secs > 3*math.Sqrt(n)
}

// Load names a point's load: "iodepth 8" or "2,000 IOPS asked".
func Load(p report.Result) string {
	if p.RateIOPS > 0 {
		return report.Thousands(p.RateIOPS) + " IOPS asked"
	}
	return "iodepth " + strconv.Itoa(p.IODepth)
}

// Judged is a TestLatency target judged: its result and verdict row, the
// points as testcase properties, or why there is nothing to judge.
type Judged struct {
	Result  report.Result
	Message string
	Attrs   [][2]string
	Skip    string
}

// Run judges tg: each point from its evidence (measure) by Point, and
// then by the failures of its drive (failures, when not nil: the run's so
// far, verdict.PrecedeDrives, as a cell is), each point's result and then
// the target's given to add as it is judged. A planned point the
// recording does not hold is reported INCONCLUSIVE, not recorded. A sweep
// without a target is judged by its points alone (NoTarget).
func Run(ctx context.Context, tg Target, r verdict.Run, failures func() []record.DriveFailure, measure func(plan.Cell) *evidence.Measured, add func(report.Result) error) (Judged, error) {
	var pts []report.Result
	var errs []error
	missing := tg.Missing
	for _, c := range tg.Points {
		m := measure(c)
		if m.Skip != "" {
			missing = append(missing, c)
			continue
		}
		p, figure := judgePoint(ctx, r, c, m)
		if failures != nil {
			p = verdict.PrecedeDrives(verdict.Judged{Result: p, Message: p.Error, Figure: figure}, c, r.Drives, failures()).Result
		}
		pts = append(pts, p)
		errs = append(errs, add(p))
	}
	if len(pts) == 0 {
		return Judged{Skip: tg.Workload.Name + ": no sweep point recorded"}, errors.Join(errs...)
	}
	for _, c := range missing {
		m := evidence.NotMeasured("planned, but the recording holds no output for it: the sweep is judged without it", report.CauseNotRecorded)
		p, _ := judgePoint(ctx, r, c, m)
		p.Verdict = report.Inconclusive
		pts = append(pts, p)
		errs = append(errs, add(p))
	}
	var res report.Result
	var msg string
	if tg.At == nil {
		res, msg = NoTarget(tg.Test, tg.Capacity, tg.Workload, pts)
	} else {
		res, msg = Judge(tg.Test, tg.Capacity, tg.Workload, *tg.At, pts, r.Spec.Method.Tolerance)
	}
	errs = append(errs, add(res))
	return Judged{Result: res, Message: msg, Attrs: Attrs(pts)}, errors.Join(errs...)
}

// NoTarget judges a sweep whose capacity sets no [capacity.at_latency]
// target for it by its points alone: a failed point FAILs it with that
// point's cause, a point not measured or INCONCLUSIVE leaves it
// INCONCLUSIVE, and points all measured pass it (there is no figure to
// judge them by).
func NoTarget(test string, c specs.Capacity, w specs.Workload, points []report.Result) (report.Result, string) {
	res := report.Result{Test: test, Kind: report.KindLatency, Capacity: c.Name, Workload: w.Name, Drives: 1,
		Metric: string(specs.IOPS), Verdict: report.Pass}
	msg := fmt.Sprintf("%s at %s: %d sweep points measured; %s sets no [capacity.at_latency.%q] target to judge them by",
		w.Name, c.Name, len(points), c.Name, w.Name)
	var unmeasured []string
	for _, p := range points {
		switch {
		case p.Verdict == report.Fail:
			res.Verdict, res.Cause, res.Error = report.Fail, cmp.Or(p.Cause, report.CauseFioFailed), p.Error
			return res, res.Error
		case Unmeasured(p):
			unmeasured = append(unmeasured, fmt.Sprintf("%s (%s)", Load(p), p.Cause))
			if res.Cause != report.CauseInterrupted {
				res.Verdict, res.Cause = report.Inconclusive, p.Cause
			}
		case p.Verdict != report.Pass && res.Verdict == report.Pass:
			res.Verdict, res.Cause, res.Error = report.Inconclusive, p.Cause, p.Error
		}
	}
	if len(unmeasured) > 0 {
		res.Error = fmt.Sprintf("%s at %s: planned points not measured: %s", w.Name, c.Name, strings.Join(unmeasured, ", "))
	}
	if res.Verdict != report.Pass {
		return res, res.Error
	}
	return res, msg
}

// Attrs are the points as testcase properties: "point_iodepth_8" →
// "iops=1995 mbps=8.2 read_p50_us=... read_mean_us=..." (µs), with
// "saturated" or the point's verdict when it is not a pass.
func Attrs(pts []report.Result) [][2]string {
	var out [][2]string
	for _, p := range pts {
		v := fmt.Sprintf("iops=%.0f mbps=%.1f", p.Actual, p.MBps)
		for _, d := range []struct {
			name string
			l    *report.Latency
		}{{"read", p.Read}, {"write", p.Write}} {
			if d.l != nil {
				v += fmt.Sprintf(" %[1]s_p50_us=%.0[2]f %[1]s_p99_us=%.0[3]f %[1]s_p99_9_us=%.0[4]f %[1]s_p99_99_us=%.0[5]f %[1]s_p99_999_us=%.0[6]f %[1]s_max_us=%.0[7]f %[1]s_mean_us=%.0[8]f",
					d.name, d.l.P50, d.l.P99, d.l.P999, d.l.P9999, d.l.P99999, d.l.Max, d.l.Mean)
			}
		}
		if p.Saturated {
			v += " saturated"
		}
		if p.Verdict != report.Pass {
			v += " " + p.Verdict + ": " + p.Error
		}
		out = append(out, [2]string{"point_" + p.Test[strings.LastIndexByte(p.Test, '/')+1:], v})
	}
	return out
}
