// Package progress writes a live run's progress lines: one as each
// step starts and, on long steps, as fio reports.
package progress

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// Lines writes the run's progress: a line as each step starts and, on
// long steps, as fio reports, on the operator's terminal and in the
// subtest's log.
type Lines struct {
	// Out is the operator's terminal; nil for none.
	Out io.Writer
	// steps is how many steps the plan has; drives names them.
	Plan   *plan.Plan
	Drives []plan.Drive
}

// Progress is shown for steps longer than Min, at most every Every.
var (
	Min   = time.Minute
	Every = 30 * time.Second
)

// ProgressLine is "step k of n (what): elapsed, ETA step and run, fio's rate".
func (s *Lines) ProgressLine(st plan.Step, elapsed time.Duration, p fiojob.Progress) string {
	var rest time.Duration
	for _, later := range s.Plan.Steps[min(st.N, len(s.Plan.Steps)):] {
		rest += later.Est
	}
	left := max(st.Est-elapsed, 0)
	var iops, mbps float64
	for _, r := range p.Interval {
		iops += r.IOPS()
		mbps += r.MBps()
	}
	// The step's name, else its last part (a measurement's workload), else
	// none: whichever fits a terminal line with fio's figures at their
	// widest ("12,345,678 IOPS, 14,500 MB/s").
	figures := fmt.Sprintf("%s elapsed, step ETA %s, run ETA %s; fio now %s IOPS, %s MB/s",
		elapsed.Round(time.Second), left.Round(time.Second), (left + rest).Round(time.Second), report.Thousands(iops), report.Thousands(mbps))
	widest := len("drivequal: 15:04:05 ") + utf8.RuneCountInString(figures) + max(0, 10-len(report.Thousands(iops))) + max(0, 6-len(report.Thousands(mbps)))
	name := shortStep(st.Name)
	line := ""
	for _, n := range []string{name, name[strings.LastIndexByte(name, '/')+1:]} {
		if line = fmt.Sprintf("step %d of %d (%s): %s", st.N, len(s.Plan.Steps), n, figures); widest+utf8.RuneCountInString(line)-utf8.RuneCountInString(figures) <= MaxProgressLine {
			return line
		}
	}
	return fmt.Sprintf("step %d of %d: %s", st.N, len(s.Plan.Steps), figures)
}

// Progress writes a progress line to the operator's terminal and, when
// logf is set, to the subtest's log.
func (s *Lines) Progress(logf func(string, ...any), format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if s.Out != nil {
		fmt.Fprintf(s.Out, "%s\n", fitLine(fmt.Sprintf("drivequal: %s %s", time.Now().Format("15:04:05"), line), MaxProgressLine))
	}
	if logf != nil {
		logf("%s", line)
	}
}

// MaxProgressLine is the most characters a progress line has on the
// terminal: one line of a wide terminal, drives named in short.
const MaxProgressLine = 160

// fitLine is line cut to max characters, ending "…" when cut.
func fitLine(line string, max int) string {
	if utf8.RuneCountInString(line) <= max {
		return line
	}
	return string([]rune(line)[:max-1]) + "…"
}

// shortStep is a step's name without its bounds, which its line says:
// "random preconditioning (4KB Random Write)" for "random
// preconditioning (4KB Random Write, until steady state, at most 30m0s)".
func shortStep(name string) string {
	if i := strings.Index(name, ", "); i > 0 && strings.HasSuffix(name, ")") && strings.Contains(name[:i], " (") {
		return name[:i] + ")"
	}
	return name
}

// DrivesLine names a step's drives for a person: the path of one drive,
// "24 drives: nvme0n1–nvme23n1" for several (report.DrivesLine).
func (s *Lines) DrivesLine(drives []int) string {
	p := make([]string, len(drives))
	for i, d := range drives {
		p[i] = s.Drives[d].Path
	}
	return report.DrivesLine(p)
}

// StepLine is the progress line that starts a preparation step.
func (s *Lines) StepLine(st plan.Step) string {
	name := st.Name
	if utf8.RuneCountInString(name) > 70 {
		// The bound is said after the drives.
		name = shortStep(name)
	}
	return fmt.Sprintf("step %d of %d: %s on %s (%s %s)", st.N, len(s.Plan.Steps), name, s.DrivesLine(st.Drives),
		boundWord(st.Kind), st.Est.Round(time.Second))
}

// MeasureLine is the progress line that starts a measurement step of the
// cells names.
// cells names, the job and the drives, the longest of those that fits a
// terminal line: every cell and the job, else the first cell and the job,
// else the first cell (the job is in the recording's .fio file).
func (s *Lines) MeasureLine(st plan.Step, names []string) string {
	head := fmt.Sprintf("step %d of %d: measuring ", st.N, len(s.Plan.Steps))
	on := " on " + s.DrivesLine(st.Drives)
	first := names[0]
	if len(names) > 1 {
		first += fmt.Sprintf(" and %d more", len(names)-1)
	}
	var line string
	for _, l := range []string{
		head + strings.Join(names, " and ") + on + fmt.Sprintf(" (%s, %s)", describeJob(st.Job), st.Job.Runtime),
		head + first + on + fmt.Sprintf(" (%s, %s)", describeJob(st.Job), st.Job.Runtime),
		head + first + on + fmt.Sprintf(" (%s)", st.Job.Runtime),
	} {
		if line = l; utf8.RuneCountInString(l)+len("drivequal: 15:04:05 ") <= MaxProgressLine {
			break
		}
	}
	return line
}

func describeJob(j fiojob.Job) string {
	s := fmt.Sprintf("rw=%s bs=%d iodepth=%d numjobs=%d", j.RW, j.BS, j.IODepth, j.NumJobs)
	if j.RWMixRead >= 0 && fiojob.IsMixed(j.RW) {
		s += fmt.Sprintf(" rwmixread=%d", j.RWMixRead)
	}
	return s
}

func boundWord(k plan.StepKind) string {
	if k == plan.StepRandom || k == plan.StepTopUp {
		return "at most"
	}
	return "about"
}
