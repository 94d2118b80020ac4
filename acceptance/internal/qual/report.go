package qual

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
	"github.com/drivequal/drivequal/specs"
)

// reporter owns a run's report: what the verdicts, steps and checks add
// to it, and results.json, summary.md, the charts, index.html and junit.xml written
// from it in the -report directory, rewritten as results come so that an
// interrupted run keeps every finished one.
type reporter struct {
	run    *report.Run
	dir    string
	dryRun bool
	// fleet, when set, is where a fleet member's results and checks go
	// too, under its host's name; a member's own files are written once,
	// at the end (a replay loses nothing if stopped).
	fleet *reporter
	host  string

	mu sync.Mutex
	// written and wroteOnce say what the files on disk hold.
	written   [3]int
	wroteOnce bool
}

// add records a judged result and writes the report.
func (r *reporter) add(res report.Result) error {
	r.mu.Lock()
	r.run.Results = append(r.run.Results, res)
	r.run.Finished = time.Now().UTC().Format(time.RFC3339)
	var err error
	if r.fleet == nil {
		err = r.writeLocked()
	}
	r.mu.Unlock()
	if r.fleet != nil {
		r.fleet.member(r.host, res)
	}
	return err
}

// member adds a fleet member's judged result, its drives named
// <host>:<path>. A replay loses nothing if stopped (its recordings are on
// disk): the fleet's reports are written once its cells are judged, not
// after each of thousands of cells.
func (r *reporter) member(host string, res report.Result) {
	res.PerDrive, res.Steady = slices.Clone(res.PerDrive), slices.Clone(res.Steady)
	res.Host = host
	// The test as go test names it in a fleet replay:
	// TestSingleDrive/<host>/<capacity>/<workload>.
	if top, rest, ok := strings.Cut(res.Test, "/"); ok {
		res.Test = top + "/" + host + "/" + rest
	}
	for i := range res.PerDrive {
		res.PerDrive[i].Path = host + ":" + res.PerDrive[i].Path
	}
	for i := range res.Steady {
		res.Steady[i].Drive = host + ":" + res.Steady[i].Drive
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run.Results = append(r.run.Results, res)
	r.run.Finished = time.Now().UTC().Format(time.RFC3339)
}

// checks sets the checks field of the report to checks and, in a fleet
// member, adds them to the fleet's report under the host's name.
func (r *reporter) checks(field func(*report.Run) *[]report.HealthCheck, checks []report.HealthCheck) {
	r.mu.Lock()
	*field(r.run) = checks
	r.mu.Unlock()
	if f := r.fleet; f != nil {
		f.mu.Lock()
		for _, c := range checks {
			c.Drive = r.host + ":" + c.Drive
			*field(f.run) = append(*field(f.run), c)
		}
		f.mu.Unlock()
	}
}

// Step implements live.Sink.
func (r *reporter) Step(st report.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run.Steps = append(r.run.Steps, st)
}

// Steady implements live.Sink.
func (r *reporter) Steady(st report.Steady) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run.SteadyState = append(r.run.SteadyState, st)
}

// update changes the report with f and writes it.
func (r *reporter) update(f func(*report.Run)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.run)
	return r.writeLocked()
}

// write writes the report now.
func (r *reporter) write() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writeLocked()
}

func (r *reporter) writeLocked() error {
	if r.dryRun {
		return nil
	}
	// Nothing new since the last write: the files on disk are current.
	// (Results, health checks and fleet cells are only ever added.)
	state := [3]int{len(r.run.Results), len(r.run.Health), len(r.run.SteadyState)}
	if r.written == state && r.wroteOnce {
		return nil
	}
	r.written, r.wroteOnce = state, true
	if err := r.run.Write(r.dir); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := page.Write(r.dir, r.run); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := junit.Write(r.dir, r.run); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// outcome is a judged cell's subtest outcome: its verdict and the
// testcase's properties.
func (s *Suite) outcome(res report.Result, cell plan.Cell, fioVersion string) Outcome {
	o := Outcome{Result: res, Message: res.Error}
	unit := "IOPS"
	if res.Metric == string(specs.MBps) {
		unit = "MB/s"
	}
	// Identity of every drive of the cell, in the order of "drive".
	join := func(f func(plan.Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			v = append(v, f(s.Drives[i]))
		}
		return strings.Join(v, ",")
	}
	// Model and firmware once each when the drives agree.
	distinct := func(f func(plan.Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			if x := f(s.Drives[i]); !slices.Contains(v, x) {
				v = append(v, x)
			}
		}
		return strings.Join(v, ",")
	}
	o.Attrs = [][2]string{
		{"verdict", res.Verdict},
		{"spec", strconv.FormatFloat(res.Spec, 'f', -1, 64)},
		{"expected", strconv.FormatFloat(res.Expected, 'f', -1, 64)},
		{"actual", fmt.Sprintf("%.0f", res.Actual)},
		{"ratio", fmt.Sprintf("%.4f", res.Ratio)},
		{"unit", unit},
		{"drives", fmt.Sprint(len(cell.Drives))},
		{"drive", join(func(d plan.Drive) string { return d.Path })},
		{"serial", join(func(d plan.Drive) string { return d.Serial })},
		{"model", distinct(func(d plan.Drive) string { return d.Model })},
		{"firmware", distinct(func(d plan.Drive) string { return d.Firmware })},
		{"size", join(func(d plan.Drive) string { return strconv.FormatInt(d.Size, 10) })},
		{"fio_version", fioVersion},
		{"precondition", s.Precondition},
	}
	if res.Raw != "" {
		o.Attrs = append(o.Attrs, [2]string{"raw", res.Raw})
	}
	if len(res.Steady) > 0 {
		o.Attrs = append(o.Attrs, [2]string{"steady_state", report.SteadyLine(res.Steady)})
	}
	// go test fails a test whose attribute holds a newline: each value is
	// one line, whatever a recording named.
	for i := range o.Attrs {
		o.Attrs[i][1] = report.Escape(o.Attrs[i][1])
	}
	return o
}
