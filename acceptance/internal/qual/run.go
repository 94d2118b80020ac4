package qual

import (
	"errors"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"io"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/qual/runreport"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Run is what Setup found the run will do: the runs it judges (one, or
// each host's recorded run of a fleet replay), the runs it is compared
// with (-baseline) and the report over all of them.
type Run struct {
	Cfg  *cmdline.Config
	Spec *specs.Spec
	// Members are the runs judged: one for a run on its own, each host's
	// for a fleet replay (-replay=DIR1,DIR2,...), named after the host.
	Members []Member
	// Fleet says the members are a fleet's hosts, judged as one
	// population (TestFleet) and named in each test.
	Fleet bool
	// Baselines are the runs of -baseline, each set up as a replay; nil
	// without it.
	Baselines []BaselineRun
	// Report is the report over every member: a run's own, or the fleet's.
	Report *report.Run
	// Warnings are things the operator should know that do not stop the run.
	Warnings []string
	// Progress, when set before Start, receives progress lines on long
	// steps (the operator's terminal).
	Progress io.Writer

	out *runreport.Reporter
	mu  sync.Mutex
}

// Member is one run of a qualification: a host's recorded run in a fleet
// replay, or the run itself.
type Member struct {
	Name  string // the host's name, unique in the fleet; "" for a run on its own
	Suite *Suite
}

// only is the run of one suite.
func only(s *Suite) *Run {
	return &Run{Cfg: s.Cfg, Spec: s.Spec, Members: []Member{{Suite: s}}, Report: s.Report, Warnings: s.Warnings, out: s.out}
}

// AllWarnings are the run's warnings and, in a fleet replay, each host's
// (a host's recording with files edited since it was recorded among
// them), named after the host.
func (r *Run) AllWarnings() []string {
	out := append([]string(nil), r.Warnings...)
	if !r.Fleet {
		return out
	}
	for _, m := range r.Members {
		for _, w := range m.Suite.Warnings {
			out = append(out, m.Name+": "+w)
		}
	}
	return out
}

// Start is called once every check has passed, before the first cell: a
// live run writes run.json into the record directory, so that a replay of
// it knows the drives, the fio version and the preconditioning.
func (r *Run) Start() error {
	for _, m := range r.Members {
		if m.Suite.runner != nil {
			m.Suite.runner.Progress = r.Progress
		}
		if err := m.Suite.start(); err != nil {
			return err
		}
	}
	return nil
}

// WriteReport writes results.json, summary.md and the charts now; for a
// fleet replay, each host's report too.
func (r *Run) WriteReport() error {
	var errs []error
	if r.Fleet {
		for _, m := range r.Members {
			errs = append(errs, m.Suite.out.Write())
		}
	}
	return errors.Join(append(errs, r.out.Write())...)
}

// Close lets the drives go, once the report is written.
func (r *Run) Close() error {
	var errs []error
	for _, m := range r.Members {
		errs = append(errs, m.Suite.close())
	}
	return errors.Join(errs...)
}

// PrintPlan writes the dry run: each drive's identity, every step with its
// estimate, every fio job file, the bytes written per drive and the total;
// for a replay, the recordings it would judge.
func (r *Run) PrintPlan(w io.Writer) {
	for _, m := range r.Members {
		m.Suite.PrintPlan(w)
	}
	r.printLot(w)
}

// Estimate is the plan of a run on its own (a fleet replay runs nothing).
func (r *Run) Estimate() Estimate { return r.Members[0].Suite.Estimate() }

// ResumeLine says, for the terminal, what a resumed run keeps and what
// it has left, or that a new run replaces the recording in its -record
// directory; "" otherwise.
func (r *Run) ResumeLine() string {
	s := r.Members[0].Suite
	if s.resume == nil {
		return s.replacing
	}
	return s.resume.line(s)
}
