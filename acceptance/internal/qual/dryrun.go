package qual

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// shortPaths is paths for a few drives, else the first and last and how
// many: "/dev/nvme0n1 … /dev/nvme23n1 (24 drives)".
func shortPaths(all []plan.Drive, drives []int) string {
	if len(drives) > 2 {
		return fmt.Sprintf("%s … %s (%d drives)", all[drives[0]].Path, all[drives[len(drives)-1]].Path, len(drives))
	}
	var p []string
	for _, d := range drives {
		p = append(p, all[d].Path)
	}
	return strings.Join(p, ",")
}

// Estimate is the plan's duration and bytes written, step by step.
type Estimate struct {
	Total time.Duration
	// Bytes is the estimated bytes written per drive, by drive index.
	Bytes []int64
	Lines []string
}

// Estimate is the plan seen as lines of text, with its total duration
// and bytes written per drive.
func (s *Suite) Estimate() Estimate {
	e := Estimate{Total: s.Plan.Total, Bytes: s.Plan.Bytes}
	for _, st := range s.Plan.Steps {
		what := st.Name
		if st.Kind == plan.StepMeasure {
			var names []string
			for _, c := range st.Cells {
				names = append(names, c.Test)
			}
			what = strings.Join(names, " + ")
		}
		line := fmt.Sprintf("  %3d %-12s %-28s %-60s %s%s", st.N, st.Kind, shortPaths(s.Drives, st.Drives), what, estMark(st.Kind), st.Est.Round(time.Second))
		var cpus []string
		if st.Kind == plan.StepMeasure {
			for _, t := range st.Job.Targets {
				if t.CPUs != "" {
					cpus = append(cpus, t.CPUs)
				}
			}
		}
		if len(cpus) > 0 {
			line += "  cpus " + cpuSets(cpus)
		}
		e.Lines = append(e.Lines, line)
	}
	return e
}

// cpuSets names the CPUs a step's drives are pinned to, a drive's each
// in drive order ("0 | 1 | 0 | 1"), or past four drives each distinct set
// once with its count of drives ("0 (12 drives), 1 (12 drives)"), so
// that a 24-drive step stays one readable line; the job file the dry run
// prints gives each drive's own cpus_allowed.
func cpuSets(cpus []string) string {
	if len(cpus) <= 4 {
		return strings.Join(cpus, " | ")
	}
	var order []string
	count := map[string]int{}
	for _, c := range cpus {
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s (%s)", c, plural(count[c], "drive"))
	}
	return strings.Join(parts, ", ")
}

// estMark is "≤" for a step whose estimate is its bound, "~" otherwise.
func estMark(k plan.StepKind) string {
	if k == plan.StepRandom || k == plan.StepTopUp {
		return "≤"
	}
	return "~"
}

// PrintPlan writes the dry run: each drive's identity, every step with its
// estimate, every fio job file, the bytes written per drive and the total.
func (s *Suite) PrintPlan(w io.Writer) {
	fmt.Fprintf(w, "drivequal dry run: spec %s (%s), precondition %s\n\n", s.Spec.Model, s.Spec.File, s.Precondition)
	if s.reader != nil {
		// A replay runs no fio and writes to no drive: its plan is the
		// recordings it would judge.
		fmt.Fprintf(w, "replay of %s: no fio runs and nothing is written; the recordings of %d cells would be judged\n",
			s.Cfg.Replay, len(s.allCells()))
		return
	}
	fmt.Fprintln(w, "drives:")
	for _, d := range s.Drives {
		fmt.Fprintf(w, "  %s -> %s  model %q serial %q firmware %q  %s bytes  as %s  NUMA node %d\n",
			d.Path, d.Resolved, d.Model, d.Serial, d.Firmware, report.Thousands(float64(d.Size)), d.Capacity, d.NUMANode)
		if d.Fabric() {
			fmt.Fprintf(w, "    NVMe over %s, target %s, subsystem %s: not PCIe-attached (%s)\n", d.Transport, d.Address, d.Subsystem, d.Transport)
		}
		if len(d.Paths) > 0 {
			var ps []string
			for _, p := range d.Paths {
				ps = append(ps, p.String())
			}
			fmt.Fprintf(w, "    native multipath, subsystem %s, paths: %s (only %s is written)\n", d.Subsystem, strings.Join(ps, "; "), d.Resolved)
		}
	}
	for _, warn := range s.Warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	s.resume.print(w, s)
	e := s.Estimate()
	fmt.Fprintln(w, "\nplan (~ estimate, ≤ bound: preconditioning ends at steady state):")
	for _, l := range e.Lines {
		fmt.Fprintln(w, l)
	}
	for _, st := range s.Plan.Steps {
		if st.Kind != plan.StepPurge {
			continue
		}
		// What the purge sends to each block device, and every namespace
		// it erases (a regular file is deallocated, as the step says).
		cmds, errs := s.purgeCommands(st)
		var lines []string
		for _, c := range cmds {
			if c.Kind != purge.PunchHole {
				lines = append(lines, "  "+c.String())
			}
		}
		for _, err := range errs {
			lines = append(lines, "  refused: "+err.Error())
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\nstep %d, purge (%s), sends:\n%s\n", st.N, st.Purge, strings.Join(lines, "\n"))
		}
	}
	fmt.Fprintln(w, "\nfio job files:")
	for _, st := range s.Plan.Steps {
		if st.Kind == plan.StepPurge {
			continue
		}
		fmt.Fprintf(w, "# step %d, %s: %s\n%s\n", st.N, st.Kind, st.Name, st.Job.File())
	}
	fmt.Fprintln(w, "bytes written per drive (estimate):")
	// The drives table above lists every drive; here three or more that
	// write as much are one line, named in short.
	for i := 0; i < len(s.Drives); {
		j := i + 1
		for j < len(s.Drives) && e.Bytes[j] == e.Bytes[i] {
			j++
		}
		if j-i < 3 {
			j = i + 1
			fmt.Fprintf(w, "  %s: %s bytes\n", s.Drives[i].Path, report.Thousands(float64(e.Bytes[i])))
		} else {
			var paths []string
			for _, d := range s.Drives[i:j] {
				paths = append(paths, d.Path)
			}
			// Every drive named (no "… and N more"): this is the only
			// place the estimate says which drives write this much.
			fmt.Fprintf(w, "  %d drives: %s: %s bytes each\n", len(paths), report.CompactDrives(paths, 0), report.Thousands(float64(e.Bytes[i])))
		}
		i = j
	}
	fmt.Fprintf(w, "estimated duration: %s\n", e.Total.Round(time.Second))
}
