// Package verdict judges a qualification's evidence, the same way for a
// live run and a replay.
//
// It judges each cell (its figure against the spec or N × one drive, its
// latency limits, and whether the host, the heat, the PCIe link or
// steady state bound it), each drive's read-back (TestIntegrity) and each
// drive's health and receipt, from what package evidence holds. Nothing
// here runs a command or asks whether the run is live.
package verdict

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device/fabric"
	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
	"github.com/drivequal/drivequal/acceptance/internal/judge"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Run is what every cell of a run is judged against.
type Run struct {
	Spec *specs.Spec
	// Precondition is the preconditioning the measurements had.
	Precondition string
	Drives       []plan.Drive
}

// Baseline is one drive's expected figure for a scaling cell, or why
// there is none.
type Baseline struct {
	PerDrive float64
	Err      error
}

// Judged is a cell's result and its verdict in one line.
type Judged struct {
	Result  report.Result
	Message string
	// FioVersion is the version of fio that printed the output; "" when
	// nothing was parsed.
	FioVersion string
	// Figure says Result.Actual is the cell's measured figure (its output
	// parsed, one group a drive), a baseline for the cells after it.
	Figure bool
}

// Cell judges cell from m. base is one drive's expected figure for a
// scaling cell (ignored for a single-drive cell).
func (r Run) Cell(ctx context.Context, cell plan.Cell, m *evidence.Measured, base Baseline) Judged {
	w := cell.Workload
	spec := cell.Capacity.Spec[w.Name]
	res := report.Result{Test: cell.Test, Kind: cell.Kind, Capacity: cell.Capacity.Name, Workload: w.Name,
		Drives: len(cell.Drives), Metric: string(w.Metric), Spec: spec, Expected: spec, Tolerance: r.Spec.Method.Tolerance}
	res.Steady = m.Steady
	res.WAF = m.WAF
	done := func(version string) Judged { return Judged{Result: res, Message: res.Error, FioVersion: version} }
	// A 1-drive scaling cell with a measured baseline is its own baseline.
	selfBaseline := false
	if cell.Kind == report.KindScaling {
		res.Tolerance = r.Spec.Scaling.Tolerance
		switch {
		case base.Err != nil && len(cell.Drives) == 1:
			selfBaseline = true
		case base.Err != nil:
			res.Verdict, res.Cause, res.Error = report.Inconclusive, report.CauseNoBaseline, base.Err.Error()
			return done("")
		default:
			res.Expected = float64(len(cell.Drives)) * base.PerDrive
		}
	}
	if m.NotRun != "" {
		res.Verdict, res.Cause = report.Fail, m.Cause
		if m.Cause == report.CauseInterrupted {
			res.Verdict = report.Inconclusive
		}
		res.Error = fmt.Sprintf("%s: not measured: %s", w.Name, m.NotRun)
		return done("")
	}
	runErr, raw := m.RunErr, m.Raw
	res.Raw = raw
	if Interrupted(ctx, runErr) {
		// Stopped by the operator or the -timeout, not by the drive: what
		// fio measured until then is kept but judges nothing.
		res.Verdict, res.Cause = report.Inconclusive, report.CauseInterrupted
		res.Error = fmt.Sprintf("%s: not finished: %s while fio ran (%v); its partial output is kept in %s",
			w.Name, StoppedBy(ctx.Err()), runErr, raw)
		return done("")
	}
	if runErr != nil {
		out, _ := m.Parse()
		res.Verdict, res.Cause = report.Fail, report.CauseFioFailed
		res.Error = FioFailure(w.Name, runErr, out)
		return done("")
	}
	out, err := m.Parse()
	if err != nil {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: %v", w.Name, raw, err)
		return done("")
	}
	groups := m.Groups()
	if len(groups) != len(cell.Drives) {
		res.Verdict, res.Cause = report.Fail, report.CauseBadRecording
		res.Error = fmt.Sprintf("%s: %s: fio reported %d drive groups, the step ran on %d drives", w.Name, raw, len(groups), len(cell.Drives))
		return done(out.Version)
	}
	total := m.Total()
	if total.Read.P99Ns+total.Write.P99Ns > 0 {
		res.P99Us = max(total.Read.P99Ns, total.Write.P99Ns) / 1e3
		res.P999Us = max(total.Read.P999Ns, total.Write.P999Ns) / 1e3
	}
	res.Read, res.Write = judge.Latency(total.Read), judge.Latency(total.Write)
	var j judge.Judgement
	if cell.Kind == report.KindSingle {
		res.Actual = Value(groups[0], w.Metric)
		j = judge.Single(w.Name, w.Metric, res.Actual, spec, res.Tolerance, notAPass(r.Precondition))
		if len(total.Errors) > 0 {
			j.Verdict, j.Message = report.Fail, FioFailure(w.Name, nil, out)
		}
	} else {
		shares := make([]judge.DriveShare, len(groups))
		for i, g := range groups {
			d := r.Drives[cell.Drives[i]]
			shares[i] = judge.DriveShare{Path: d.Path, Serial: d.Serial, Actual: Value(g, w.Metric), Err: strings.Join(g.Errors, "; ")}
			if i < len(m.Job.Targets) {
				shares[i].CPUs = m.Job.Targets[i].CPUs
			}
			res.Actual += shares[i].Actual
		}
		if selfBaseline {
			res.Expected = res.Actual
		}
		sj := judge.Scaling(w.Name, w.Metric, shares, res.Expected, spec, res.Tolerance, notAPass(r.Precondition))
		if len(total.Errors) > 0 {
			sj.Verdict, sj.Message = report.Fail, FioFailure(fmt.Sprintf("%s on %d drives", w.Name, len(shares)), nil, out)
		}
		res.PerDrive, res.Spread, res.Min, res.Median, res.Max = sj.PerDrive, sj.Spread, sj.Min, sj.Median, sj.Max
		j = sj.Judgement
	}
	res.Ratio, res.Verdict = j.Ratio, j.Verdict
	res.Cause = causeOf(j, len(total.Errors) > 0)
	j = r.bounds(cell, m, out, &res, j)
	res.Error = errorText(j)
	return Judged{Result: res, Message: j.Message, FioVersion: out.Version, Figure: true}
}

// bounds turns a verdict the drive did not decide into INCONCLUSIVE, saying
// what bounded it: the latency limits (a failure), the host's CPUs, the
// heat, the PCIe link or topology, or a drive not shown in steady state.
func (r Run) bounds(cell plan.Cell, m *evidence.Measured, out *fiojob.Output, res *report.Result, j judge.Judgement) judge.Judgement {
	w := cell.Workload
	spec := cell.Capacity.Spec[w.Name]
	total := m.Total()
	if res.QoS = judge.QoS(cell.Capacity.QoS[w.Name], res.Read, res.Write); len(res.QoS) > 0 {
		var over []string
		for _, q := range res.QoS {
			if q.Verdict == report.Fail {
				over = append(over, fmt.Sprintf("%s: %s %s latency %s µs > limit %s µs", w.Name, strings.SplitN(q.Key, "_", 2)[0],
					judge.PercentileName(q.Key), report.Thousands(q.Actual), report.Thousands(q.LimitUs)))
			}
		}
		if len(over) > 0 && j.Verdict != report.Fail {
			j.Verdict, j.Message = report.Fail, strings.Join(over, "; ")+" ("+j.Message+")"
			res.Verdict, res.Cause = report.Fail, report.CauseLatency
		} else if len(over) > 0 {
			j.Message += "; " + strings.Join(over, "; ")
		}
	}
	if m.CPU.N > 0 {
		paths, cpus := make([]string, len(cell.Drives)), make([]string, len(cell.Drives))
		for i, d := range cell.Drives {
			paths[i] = r.Drives[d].Path
			if i < len(m.Job.Targets) {
				cpus[i] = m.Job.Targets[i].CPUs
			}
		}
		res.HostCPU = judge.HostCPU(m.CPU.CPUs, m.CPU.N, m.CPU.Busy, total.CPUSeconds, total.Runtime.Seconds(), m.Job.NumJobs*len(m.Job.Targets),
			judge.DrivesCPU(out, paths, cpus, m.Job.NumJobs))
	}
	var short []string // the drives of a multi-drive cell below spec
	for _, d := range res.PerDrive {
		if d.Verdict == report.Fail && d.Error == "" {
			short = append(short, d.Path)
		}
	}
	if why := judge.HostBoundFor(res.HostCPU, short); why != "" && res.Verdict == report.Fail && res.Cause == report.CauseBelowSpec {
		// Short of the figure while the CPUs were saturated: the host may
		// be what fell short. A pass stays a pass, and carries the figures.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, why)
		res.Verdict, res.Cause = report.Inconclusive, report.CauseHostBound
	}
	if m.Thermal != "" && r.Spec.Health.ThermalThrottle != specs.ThrottleIgnore && j.Verdict != report.Inconclusive {
		// A figure measured while the drive throttled on heat says more
		// about the airflow than the drive, whichever way it went.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, "thermally throttled during the cell: "+m.Thermal+"; check airflow and rerun")
		res.Verdict, res.Cause = report.Inconclusive, report.CauseThrottled
	}
	if m.Hot != "" {
		// A drive over its temperature threshold is first the chassis's
		// airflow, whichever way the figure went: the cell is not judged,
		// and the drive goes on once the bit clears. A cell already
		// inconclusive for another cause says so too.
		j.Message += "; " + m.Hot
		if j.Verdict != report.Inconclusive {
			j.Verdict = report.Inconclusive
			res.Verdict, res.Cause = report.Inconclusive, report.CauseThrottled
		}
	}
	if m.Link != "" && j.Verdict != report.Inconclusive {
		// A figure measured through a slower link than the spec's (or the
		// drive's) says more about the slot than the drive.
		j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, m.Link+
			": the link, not the drive, bounds this figure; reseat the drive or use a slot that trains to its full speed and width, or state the link the spec expects in [pcie]")
		res.Verdict, res.Cause = report.Inconclusive, report.CausePCIeLink
	}
	if m.LinkUnknown != "" {
		// A link sysfs does not know is not judged, and the cell says so:
		// a figure short of spec may be that link's, not the drive's.
		j.Message += "; " + m.LinkUnknown
	}
	if len(m.Fabric) > 0 {
		// A fabric drive's figure is the network's as well as the drive's:
		// the cell says how it was reached, and a figure short of spec
		// while the network was within 10 % of its speed is not the drive's.
		measured := map[string]float64{}
		for _, d := range res.PerDrive {
			measured[d.Path] = d.Actual
		}
		if len(cell.Drives) == 1 {
			measured[r.Drives[cell.Drives[0]].Path] = res.Actual
		}
		note, bound := fabric.Judge(m.Fabric, w, measured)
		switch {
		case bound != "" && res.Verdict == report.Fail && res.Cause == report.CauseBelowSpec:
			j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, bound+
				": the network, not the drive, bounds this figure; qualify the drive over a faster network, or attached directly")
			res.Verdict, res.Cause = report.Inconclusive, report.CauseTransportBound
		case bound != "":
			j.Message += "; " + bound
		}
		j.Message += "; " + note
	}
	if res.Verdict == report.Fail && res.Cause == report.CauseBelowSpec && cell.Kind == report.KindScaling {
		// Short of the figure through a switch uplink the drives share by
		// design, which was full: the host's topology bounds the cell.
		measured := make(map[string]float64, len(res.PerDrive))
		for _, d := range res.PerDrive {
			measured[d.Path] = d.Actual
		}
		if why := pcie.ScalingBound(m.Shared, w, spec, res.Expected, res.Drives, measured); why != "" {
			j.Verdict, j.Message = report.Inconclusive, j.Message+"; "+why+
				": the host's PCIe topology, not the drives, bounds this figure; scale drives that do not share that link to judge them"
			res.Verdict, res.Cause = report.Inconclusive, report.CausePCIeBound
		}
	}
	if j.Verdict == report.Pass {
		// A figure measured on a drive that was not shown to be in steady
		// state proves nothing, whichever way it went.
		if why := judge.NotSteady(m.Steady); why != "" {
			j.Verdict, j.Message = report.Inconclusive, withCause(j.Message, why)
			res.Verdict, res.Cause = report.Inconclusive, report.CauseNotSteady
		}
	}
	return j
}

// withCause is msg with why, the cause of its verdict, right after its
// verdict row (the part before the first "; ") and before the clauses
// that detail the row (drives below the median, below linear), so that
// a message cut short (a JUnit message is at most 300 characters) still
// says why.
func withCause(msg, why string) string {
	row, rest, ok := strings.Cut(msg, "; ")
	if !ok {
		return msg + "; " + why
	}
	return row + "; " + why + "; " + rest
}

// notAPass says why a value that meets its spec still does not pass.
func notAPass(precondition string) string {
	if precondition != plan.Full {
		return "measured with -precondition=" + precondition + "; preconditioning only lowers a drive's figures, so this is not a pass"
	}
	return ""
}

// StoppedBy says why a run's context ended.
func StoppedBy(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the -timeout is near"
	}
	return "the run was interrupted"
}

// Interrupted reports whether err says the run was stopped, live or
// recorded.
func Interrupted(ctx context.Context, err error) bool {
	var rf *record.Failure
	return err != nil && (ctx.Err() != nil || errors.As(err, &rf) && rf.Interrupted)
}

// causeOf is the cause of a judged cell's verdict.
func causeOf(j judge.Judgement, jobErrors bool) string {
	switch {
	case j.Verdict == report.Pass:
		return ""
	case jobErrors:
		return report.CauseFioFailed
	case j.Verdict == report.Inconclusive:
		return report.CausePrecondition
	}
	return report.CauseBelowSpec
}

// FioFailure is the message of a step whose fio failed: how fio ended,
// each job's error and what fio printed before its JSON, in fio's words.
func FioFailure(name string, runErr error, out *fiojob.Output) string {
	var parts []string
	if runErr != nil {
		parts = append(parts, runErr.Error())
	}
	if out != nil {
		if errs := out.Total().Errors; len(errs) > 0 {
			parts = append(parts, "fio reported job errors: "+strings.Join(errs, "; "))
		}
		var said []string
		for _, n := range out.Notes {
			if strings.HasPrefix(n, "fio:") || strings.HasPrefix(n, "note:") || strings.Contains(n, "err=") {
				said = append(said, fiojob.Clip(n))
			}
		}
		if len(said) > 3 {
			said = append(said[:3], fmt.Sprintf("(%d more lines in the recording)", len(said)-3))
		}
		if len(said) > 0 {
			parts = append(parts, "fio printed: "+strings.Join(said, " | "))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "fio failed without saying why")
	}
	return name + ": fio failed: " + strings.Join(parts, "; ")
}

// errorText is what results.json keeps as "error": empty for a pass.
func errorText(j judge.Judgement) string {
	if j.Verdict == report.Pass {
		return ""
	}
	return j.Message
}

// Value is a drive group's figure in metric m.
func Value(r fiojob.Result, m specs.Metric) float64 {
	switch m {
	case specs.MBps:
		return r.MBps()
	case specs.LatUS:
		// fio's mean total latency (lat_ns), reads and writes together.
		n := r.Read.LatN + r.Write.LatN
		if n == 0 {
			return 0
		}
		return (r.Read.LatMeanNs*float64(r.Read.LatN) + r.Write.LatMeanNs*float64(r.Write.LatN)) / float64(n) / 1e3
	}
	return r.IOPS
}
