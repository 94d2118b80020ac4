package progress

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// progressPrefix is what the terminal adds before each line:
// "drivequal: 15:04:05 ".
const progressPrefix = len("drivequal: 15:04:05 ")

// Every progress line of the built-in plan on 24 drives names its drives
// as a count and a range and fits in MaxProgressLine characters whole,
// before progress would cut it: the start of each step, of each
// measurement, and the status line during a step (with room for fio's
// largest figures).
func TestProgressLinesAt24Drives(t *testing.T) {
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	p := &plan.Planner{Spec: spec, Precondition: plan.Full, Online: []int{0, 1, 2, 3}}
	for i := range 24 {
		p.Drives = append(p.Drives, plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/nvme%dn1", i),
			Size: 1_920_383_410_176, NUMANode: -1}, Capacity: "1.92TB"})
	}
	pl := p.Build(builtinCells(spec, p))
	s := &Lines{Plan: &pl, Drives: p.Drives}
	require.Greater(t, len(pl.Steps), 60, "the built-in plan scales 1 to 24 drives")
	check := func(line string) {
		t.Helper()
		if n := progressPrefix + utf8.RuneCountInString(line); n > MaxProgressLine {
			t.Errorf("progress line of %d characters, want at most %d: %s", n, MaxProgressLine, line)
		}
		if strings.Contains(line, "/dev/nvme1n1,") || strings.Contains(line, "nvme5n1, nvme6n1") {
			t.Errorf("progress line lists the drives one by one: %s", line)
		}
	}
	var at24 int
	for _, st := range pl.Steps {
		if st.Kind == plan.StepMeasure {
			var names []string
			for _, c := range st.Cells {
				names = append(names, c.Test)
			}
			check(s.MeasureLine(st, names))
		} else {
			check(s.StepLine(st))
		}
		// fio's figures at their widest: "12,345,678 IOPS, 14,500 MB/s".
		check(s.ProgressLine(st, 29*time.Minute+59*time.Second, fiojob.Progress{}) + strings.Repeat("0", 14))
		if len(st.Drives) == 24 {
			at24++
			if line := s.StepLine(st); !strings.Contains(line, "24 drives: nvme0n1–nvme23n1") {
				t.Errorf("a 24-drive step does not name its drives as 24 drives: nvme0n1–nvme23n1: %s", line)
			}
		}
	}
	require.Greater(t, at24, 8)
	for _, st := range pl.Steps {
		if st.Kind == plan.StepRandom {
			require.Equal(t, fmt.Sprintf("step %d of %d: random preconditioning (4KB Random Write) on 24 drives: nvme0n1–nvme23n1 (at most 30m0s)",
				st.N, len(pl.Steps)), s.StepLine(st))
			break
		}
	}
}

// A line too long for the terminal is cut, never wrapped.
func TestFitLine(t *testing.T) {
	long := strings.Repeat("é", 200)
	require.Equal(t, MaxProgressLine, utf8.RuneCountInString(fitLine(long, MaxProgressLine)))
	require.True(t, strings.HasSuffix(fitLine(long, MaxProgressLine), "…"))
	require.Equal(t, "short", fitLine("short", MaxProgressLine))
	require.Equal(t, "random preconditioning (4KB Random Write)", shortStep("random preconditioning (4KB Random Write, until steady state, at most 30m0s)"))
	require.Equal(t, "sequential fill (2 × 128 KiB write passes)", shortStep("sequential fill (2 × 128 KiB write passes)"))
}

// builtinCells are the built-in plan's single-drive cells on the first
// drive and its scaling cells on 1 to 24 drives, as the suite lists them.
func builtinCells(spec *specs.Spec, p *plan.Planner) []plan.Cell {
	var cells []plan.Cell
	c := spec.Capacities[0]
	for _, w := range p.Order(spec.Workloads) {
		need, twin := p.Need(w)
		cells = append(cells, plan.Cell{Kind: report.KindSingle, Test: "TestSingleDrive/" + c.Name + "/" + specs.SubtestName(w.Name),
			Capacity: c, Workload: w, Drives: []int{0}, Need: need, Twin: twin})
	}
	for _, n := range spec.Scaling.Drives {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		for _, w := range p.Order(spec.Workloads) {
			if w.Metric.LowerIsBetter() {
				continue
			}
			need, twin := p.Need(w)
			cells = append(cells, plan.Cell{Kind: report.KindScaling, Test: fmt.Sprintf("TestScaling/%d_drives/%s", n, specs.SubtestName(w.Name)),
				Capacity: c, Workload: spec.ForScaling(w), Drives: all, Need: need, Twin: twin})
		}
	}
	return cells
}
