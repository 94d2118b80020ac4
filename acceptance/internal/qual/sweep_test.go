package qual

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/sweep"
)

// The built-in plan of 24 × 1.92 TB is estimated at 2 h 33 min 40 s, and
// one 8-point sweep of 4KB Random Read adds its measurements (the cell's
// 60 s and 10 s ramp each; the point at the cell's own iodepth shares
// the cell's measurement) to it, planned in the workload's random group
// (its steady state shared, no preconditioning of its own), each a
// measurement step of its own that the dry run prints.
func TestDryRunEstimateWithSweep(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	base := s.Planner.Build(cells)
	require.Equal(t, 2*time.Hour+33*time.Minute+40*time.Second, base.Total.Round(time.Second), "the built-in plan without sweeps")

	for i, w := range s.Spec.Workloads {
		if w.Name == "4KB Random Read" {
			s.Spec.Workloads[i].SweepIODepth = []int{1, 2, 4, 8, 16, 32, 64, 128}
		}
	}
	cells = s.allCells()
	pl := s.Planner.Build(cells)
	// 7 points of 60 s + the spec's 10 s ramp each: the point at
	// iodepth 64 is the cell's own job, and shares its measurement.
	require.Equal(t, base.Total+7*70*time.Second, pl.Total, "7 measurements of 70 s each")
	var prep, points int
	cell := pl.Measures["TestSingleDrive/1.92TB/4KB_Random_Read"]
	require.Equal(t, cell, pl.Measures["TestLatency/1.92TB/4KB_Random_Read/iodepth_64"], "the point at the cell's iodepth shares its measurement")
	for i, st := range pl.Steps {
		if st.Kind != plan.StepMeasure {
			prep++
			continue
		}
		if st.Cells[0].Kind == report.KindSweep {
			points++
			require.Equal(t, pl.Steps[cell].State, st.State, "%s: measured in the state of the workload's cell", st.Name)
			for _, between := range pl.Steps[min(cell, i):max(cell, i)] {
				require.NotEqual(t, plan.StepRandom, between.Kind, "%s: a random preconditioning between the point and its workload's cell", st.Name)
			}
		}
	}
	require.Equal(t, 7, points)
	baseSteps := 0
	for _, st := range base.Steps {
		if st.Kind != plan.StepMeasure {
			baseSteps++
		}
	}
	require.Equal(t, baseSteps, prep, "the sweep adds no preparation step")
	var b strings.Builder
	s.Plan = pl
	s.Report = &report.Run{}
	s.PrintPlan(&b)
	require.Contains(t, b.String(), "TestLatency/1.92TB/4KB_Random_Read/iodepth_128")
	require.Contains(t, b.String(), "iodepth=128")
	t.Logf("built-in plan %s; with one 8-point sweep %s", base.Total, pl.Total)
}

// The open-loop points pace each job at rate ÷ numjobs with Poisson
// arrivals; the closed-loop points run at their iodepth per job.
func TestSweepPointJobs(t *testing.T) {
	s, _ := builtinSuite(t, 1)
	w, _ := s.Spec.Workload("4KB Random Read")
	w.SweepIODepth, w.SweepRateIOPS = []int{1, 4}, []int64{80_000, 800_000}
	c, _ := s.Spec.Capacity("1.92TB")
	pts := sweep.Points("TestLatency/1.92TB/4KB_Random_Read", c, w, s.Planner, 0)
	require.Len(t, pts, 4)
	for i, want := range []struct {
		test    string
		iodepth int
		rate    int64
		process string
	}{
		{"iodepth_1", 1, 0, ""}, {"iodepth_4", 4, 0, ""},
		{"rate_iops_80000", 64, 10_000, "poisson"}, {"rate_iops_800000", 64, 100_000, "poisson"},
	} {
		job := s.Planner.Measure(pts[i])
		require.Equal(t, "TestLatency/1.92TB/4KB_Random_Read/"+want.test, pts[i].Test)
		require.Equal(t, []any{want.iodepth, want.rate, want.process, 8}, []any{job.IODepth, job.RateIOPS, job.RateProcess, job.NumJobs}, want.test)
	}
}
