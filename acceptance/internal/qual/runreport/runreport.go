// Package runreport owns a run's report as it is judged: what the
// verdicts, steps and checks add to it, and the files written from it
// (results.json, summary.md, the charts, index.html, junit.xml), rewritten
// as results come so that an interrupted run keeps every finished one.
package runreport

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

// Reporter owns a run's report: what the verdicts, steps and checks add
// to it, and results.json, summary.md, the charts, index.html and junit.xml written
// from it in the -report directory, rewritten as results come so that an
// interrupted run keeps every finished one. Its lock guards Run.
type Reporter struct {
	Run    *report.Run
	Dir    string
	DryRun bool
	// Fleet, when set, is where a fleet member's results and checks go
	// too, under its Host's name; a member's own files are written once,
	// at the end (a replay loses nothing if stopped).
	Fleet *Reporter
	Host  string

	sync.Mutex
	// written and wroteOnce say what the files on disk hold.
	written   [3]int
	wroteOnce bool
}

// Add records a judged result and writes the report.
func (r *Reporter) Add(res report.Result) error {
	r.Lock()
	r.Run.Results = append(r.Run.Results, res)
	r.Run.Finished = time.Now().UTC().Format(time.RFC3339)
	var err error
	if r.Fleet == nil {
		err = r.writeLocked()
	}
	r.Unlock()
	if r.Fleet != nil {
		r.Fleet.member(r.Host, res)
	}
	return err
}

// member adds a fleet member's judged result, its drives named
// <host>:<path>. A replay loses nothing if stopped (its recordings are on
// disk): the fleet's reports are written once its cells are judged, not
// after each of thousands of cells.
func (r *Reporter) member(host string, res report.Result) {
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
	r.Lock()
	defer r.Unlock()
	r.Run.Results = append(r.Run.Results, res)
	r.Run.Finished = time.Now().UTC().Format(time.RFC3339)
}

// Checks sets the checks field of the report to checks and, in a fleet
// member, adds them to the fleet's report under the host's name.
func (r *Reporter) Checks(field func(*report.Run) *[]report.HealthCheck, checks []report.HealthCheck) {
	r.Lock()
	*field(r.Run) = checks
	r.Unlock()
	if f := r.Fleet; f != nil {
		f.Lock()
		for _, c := range checks {
			c.Drive = r.Host + ":" + c.Drive
			*field(f.Run) = append(*field(f.Run), c)
		}
		f.Unlock()
	}
}

// Step implements live.Sink.
func (r *Reporter) Step(st report.Step) {
	r.Lock()
	defer r.Unlock()
	r.Run.Steps = append(r.Run.Steps, st)
}

// Steady implements live.Sink.
func (r *Reporter) Steady(st report.Steady) {
	r.Lock()
	defer r.Unlock()
	r.Run.SteadyState = append(r.Run.SteadyState, st)
}

// Update changes the report with f and writes it.
func (r *Reporter) Update(f func(*report.Run)) error {
	r.Lock()
	defer r.Unlock()
	f(r.Run)
	return r.writeLocked()
}

// Write writes the report now.
func (r *Reporter) Write() error {
	r.Lock()
	defer r.Unlock()
	return r.writeLocked()
}

func (r *Reporter) writeLocked() error {
	if r.DryRun {
		return nil
	}
	// Nothing new since the last write: the files on disk are current.
	// (Results, health checks and fleet cells are only ever added.)
	state := [3]int{len(r.Run.Results), len(r.Run.Health), len(r.Run.SteadyState)}
	if r.written == state && r.wroteOnce {
		return nil
	}
	r.written, r.wroteOnce = state, true
	if err := r.Run.Write(r.Dir); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := page.Write(r.Dir, r.Run); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := junit.Write(r.Dir, r.Run); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// Stale says the files on disk no longer hold the report (a field was
// changed in place): the next write writes them whatever was added.
// Call it with the lock held.
func (r *Reporter) Stale() { r.wroteOnce = false }

// Attrs are a judged cell's testcase properties: its verdict, figures,
// drives and how it was run, each value one line.
func Attrs(res report.Result, cell plan.Cell, drives []plan.Drive, fioVersion, precondition string) [][2]string {
	unit := "IOPS"
	if res.Metric == string(specs.MBps) {
		unit = "MB/s"
	}
	// Identity of every drive of the cell, in the order of "drive".
	join := func(f func(plan.Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			v = append(v, f(drives[i]))
		}
		return strings.Join(v, ",")
	}
	// Model and firmware once each when the drives agree.
	distinct := func(f func(plan.Drive) string) string {
		var v []string
		for _, i := range cell.Drives {
			if x := f(drives[i]); !slices.Contains(v, x) {
				v = append(v, x)
			}
		}
		return strings.Join(v, ",")
	}
	attrs := [][2]string{
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
		{"precondition", precondition},
	}
	if res.Raw != "" {
		attrs = append(attrs, [2]string{"raw", res.Raw})
	}
	if len(res.Steady) > 0 {
		attrs = append(attrs, [2]string{"steady_state", report.SteadyLine(res.Steady)})
	}
	// go test fails a test whose attribute holds a newline: each value is
	// one line, whatever a recording named.
	for i := range attrs {
		attrs[i][1] = report.Escape(attrs[i][1])
	}
	return attrs
}
