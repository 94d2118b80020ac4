// Package dryrun writes a dry run's plan as text: the drives, every step
// with its estimate and the bytes each drive writes.
package dryrun

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/drivenames"
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

// Steps is each step of the plan as a line: its number, kind, drives,
// what it runs and its estimate, with the CPUs a measurement is pinned
// to.
func Steps(drives []plan.Drive, steps []plan.Step) []string {
	var out []string
	for _, st := range steps {
		what := st.Name
		if st.Kind == plan.StepMeasure {
			var names []string
			for _, c := range st.Cells {
				names = append(names, c.Test)
			}
			what = strings.Join(names, " + ")
		}
		line := fmt.Sprintf("  %3d %-12s %-28s %-60s %s%s", st.N, st.Kind, shortPaths(drives, st.Drives), what, estMark(st.Kind), st.Est.Round(time.Second))
		var cpus []string
		if st.Kind == plan.StepMeasure {
			for _, t := range st.Job.Targets {
				if t.CPUs != "" {
					cpus = append(cpus, t.CPUs)
				}
			}
		}
		if len(cpus) > 0 {
			line += "  cpus " + CPUSets(cpus)
		}
		out = append(out, line)
	}
	return out
}

// CPUSets names the CPUs a step's drives are pinned to, a drive's each
// in drive order ("0 | 1 | 0 | 1"), or past four drives each distinct set
// once with its count of drives ("0 (12 drives), 1 (12 drives)"), so
// that a 24-drive step stays one readable line; the job file the dry run
// prints gives each drive's own cpus_allowed.
func CPUSets(cpus []string) string {
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

// Drives writes the dry run's drives: each drive's path, identity, size
// and capacity, and its fabric or multipath paths.
func Drives(w io.Writer, drives []plan.Drive) {
	fmt.Fprintln(w, "drives:")
	for _, d := range drives {
		if d.Absent != "" {
			fmt.Fprintf(w, "  %s: not there: %s\n", d.Path, d.Absent)
			continue
		}
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
}

// Bytes writes the bytes each of drives writes (bytes, by drive index),
// three or more that write as much as one line.
func Bytes(w io.Writer, drives []plan.Drive, bytes []int64) {
	fmt.Fprintln(w, "bytes written per drive (estimate):")
	// The drives table above lists every drive; here three or more that
	// write as much are one line, named in short.
	for i := 0; i < len(drives); {
		j := i + 1
		for j < len(drives) && bytes[j] == bytes[i] {
			j++
		}
		if j-i < 3 {
			j = i + 1
			fmt.Fprintf(w, "  %s: %s bytes\n", drives[i].Path, report.Thousands(float64(bytes[i])))
		} else {
			var paths []string
			for _, d := range drives[i:j] {
				paths = append(paths, d.Path)
			}
			// Every drive named (no "… and N more"): this is the only
			// place the estimate says which drives write this much.
			fmt.Fprintf(w, "  %d drives: %s: %s bytes each\n", len(paths), drivenames.Compact(paths, 0), report.Thousands(float64(bytes[i])))
		}
		i = j
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
