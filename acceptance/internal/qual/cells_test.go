package qual

import (
	"context"
	"flag"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// builtinSuite is a live suite of the built-in spec on n 1.92 TB files,
// with every cell of the run.
func builtinSuite(t *testing.T, n int) (*Suite, []plan.Cell) {
	t.Helper()
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	p := &plan.Planner{Spec: spec, Precondition: plan.Full, Online: []int{0, 1, 2, 3}}
	for i := range n {
		p.Drives = append(p.Drives, plan.Drive{Info: device.Info{Path: "/dev/nvme" + string(rune('0'+i)) + "n1",
			Size: 1_920_383_410_176, NUMANode: -1}, Capacity: "1.92TB"})
	}
	var paths []string
	for _, d := range p.Drives {
		paths = append(paths, d.Path)
	}
	s := &Suite{Cfg: &cmdline.Config{Drives: paths}, Spec: p.Spec, Drives: p.Drives, Planner: p, Precondition: plan.Full}
	return s, s.allCells()
}

// setupOne is Setup of a run on its own: its one suite, nil when refused.
func setupOne(t *testing.T, cfg *cmdline.Config) (*Suite, []error) {
	t.Helper()
	r, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	if r == nil {
		return nil, errs
	}
	require.Len(t, r.Members, 1)
	return r.Members[0].Suite, errs
}

// replan plans s again, as Setup plans a live run, for its -run pattern.
func replan(s *Suite) { (&builder{cfg: s.Cfg, live: true, s: s}).plan() }

// The whole built-in run shares one purge and fill and one random
// preconditioning per block size across the single-drive cells and every
// scaling step, and measures a single-drive cell and the same job on one
// drive once.
func TestBuildSharesAcrossScaling(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	pl := s.Planner.Build(cells)
	count := map[plan.StepKind]int{}
	for _, st := range pl.Steps {
		count[st.Kind]++
		if st.Kind == plan.StepPurge || st.Kind == plan.StepFill || st.Kind == plan.StepRandom {
			require.Len(t, st.Drives, 24, "step %d (%s) prepares every drive at once", st.N, st.Name)
		}
	}
	require.Equal(t, 1, count[plan.StepPurge])
	require.Equal(t, 1, count[plan.StepFill])
	require.Equal(t, 2, count[plan.StepRandom], "one per random block size")
	// 8 workloads × (1 single + 8 scaling steps) = 72 cells, 7 of which
	// are the single-drive cell's own job (8KB Random Read has a scaling
	// override) and share its measurement.
	require.Equal(t, 72-7, count[plan.StepMeasure])
	for _, c := range cells {
		st := pl.Steps[pl.Measures[c.Test]]
		require.Contains(t, st.Cells, c)
	}
	shared := pl.Steps[pl.Measures["TestScaling/1_drives/4KB_Random_Read"]]
	require.Equal(t, "TestSingleDrive/1.92TB/4KB_Random_Read", shared.Cells[0].Test, "the single-drive cell owns the recording")
	require.LessOrEqual(t, pl.Total, 4*time.Hour)
}

// After each random preconditioning the scaling steps run from the most
// drives down to one: every drive is measured for the last time in its
// group before any drive falls idle, so the built-in plan on 24 drives
// needs no top-up, and its cells are the same.
func TestBuildLargestStepFirst(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	pl := s.Planner.Build(cells)
	var measured []string
	for _, st := range pl.Steps {
		require.NotEqual(t, plan.StepTopUp, st.Kind, "step %d: %s", st.N, st.Name)
		for _, c := range st.Cells {
			measured = append(measured, c.Test)
		}
	}
	var want []string
	for _, c := range cells {
		want = append(want, c.Test)
	}
	require.ElementsMatch(t, want, measured)
	// In each random group, no step measures more drives than the one before it.
	for i := 1; i < len(pl.Steps); i++ {
		prev, st := pl.Steps[i-1], pl.Steps[i]
		if prev.Kind == plan.StepMeasure && st.Kind == plan.StepMeasure && strings.HasPrefix(st.State, "rand:") {
			require.LessOrEqual(t, len(st.Drives), len(prev.Drives), "step %d after step %d", st.N, prev.N)
		}
	}
	require.Less(t, pl.Measures["TestScaling/24_drives/4KB_Random_Write"], pl.Measures["TestScaling/1_drives/4KB_Random_Write"])
	require.LessOrEqual(t, pl.Total, 2*time.Hour+35*time.Minute)
}

// Before a random write or mixed measurement, drives idle past the limit
// since they last wrote are topped up; reads never wait for one. With a
// 1-minute idle limit, the 70 s read between a step's write and mixed
// measurements leaves its drives idle.
func TestBuildTopsUpIdleDrives(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	spec := *s.Spec
	spec.Precondition.IdleLimit = time.Minute
	s.Planner.Spec = &spec
	pl := s.Planner.Build(cells)
	var clock time.Duration
	last := map[int]time.Duration{}
	topups := 0
	for i, st := range pl.Steps {
		if st.Kind == plan.StepTopUp {
			topups++
			next := pl.Steps[i+1]
			require.Equal(t, plan.StepMeasure, next.Kind)
			require.True(t, next.Cells[0].Workload.Writes(), "step %d tops up before %s", st.N, next.Name)
			require.Equal(t, 2*time.Minute, st.Est)
		}
		if st.Kind == plan.StepMeasure && st.Cells[0].Workload.Writes() && strings.HasPrefix(st.State, "rand:") {
			for _, d := range st.Drives {
				require.LessOrEqual(t, clock-last[d], time.Minute, "step %d: drive %d idle since %s", st.N, d, last[d])
			}
		}
		clock += st.Est
		if st.Writes() {
			for _, d := range st.Drives {
				last[d] = clock
			}
		}
	}
	require.Positive(t, topups)
}

// The estimate of the built-in plan on one 1.92TB drive: the two fill
// passes at the spec's 4,100 MB/s, the verify pass reading one pass back
// at its 14,500 MB/s, the two 30-minute random preconditioning bounds and
// nine 70 s measurements (the 1-drive scaling cells share the
// single-drive cells' but for 8KB Random Read's).
func TestEstimateOfTheBuiltInPlan(t *testing.T) {
	s, cells := builtinSuite(t, 1)
	pl := s.Planner.Build(cells)
	fill := 2 * 1_920_383_410_176 / 4100e6
	verify := 1_920_383_410_176 / 14500e6
	want := 1 + fill + verify + 2*30*60 + 9*70
	require.InDelta(t, want, pl.Total.Seconds(), 1)
	require.LessOrEqual(t, pl.Total, 90*time.Minute)
}

var update = flag.Bool("update", false, "rewrite testdata/golden")

// The dry run of the built-in spec on two 1.92 TB drives, as printed:
// every step with its estimate or bound, every fio job file, the bytes
// written per drive and the total (testdata/golden/dry-run-2-drives.txt;
// go test -update rewrites it).
func TestDryRunGolden(t *testing.T) {
	s, cells := builtinSuite(t, 2)
	s.Report = &report.Run{}
	s.Plan = s.Planner.Build(cells)
	for i := range s.Drives {
		s.Drives[i].Resolved = s.Drives[i].Path
	}
	var b strings.Builder
	s.PrintPlan(&b)
	golden := filepath.Join("testdata", "golden", "dry-run-2-drives.txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("dry run (-%s +got):\n%s", golden, diff)
	}
}

// A drive whose integrity is judged but that no selected cell measures
// (two namespaces of one subsystem, single-drive cells only) is purged,
// filled and read back with the first, in the same steps: one purge, which
// may reach both anyway, not a second one at the end of the plan.
func TestBuildVerifiesEveryDriveInTheFirstFill(t *testing.T) {
	s, cells := builtinSuite(t, 2)
	var single []plan.Cell
	for _, c := range cells {
		if c.Kind == report.KindSingle {
			single = append(single, c)
		}
	}
	s.Planner.Verify = []int{0, 1}
	pl := s.Planner.Build(single)
	count := map[plan.StepKind]int{}
	for _, st := range pl.Steps {
		count[st.Kind]++
		switch st.Kind {
		case plan.StepPurge, plan.StepFill, plan.StepVerify:
			require.Equal(t, []int{0, 1}, st.Drives, "step %d (%s)", st.N, st.Name)
		case plan.StepRandom, plan.StepMeasure:
			require.Equal(t, []int{0}, st.Drives, "step %d (%s): only the measured drive", st.N, st.Name)
		}
	}
	require.Equal(t, 1, count[plan.StepPurge])
	require.Equal(t, 1, count[plan.StepVerify])
	before := len(pl.Steps)
	s.Planner.AddVerify(&pl, []int{0, 1})
	require.Len(t, pl.Steps, before, "every drive is read back already")
}

// The plan, and so the -timeout check that adds it up, holds exactly the
// cells go test will run: with a top-level "|", those of both
// alternatives.
func TestPlanFollowsTopLevelAlternation(t *testing.T) {
	s, _ := builtinSuite(t, 2)
	s.Cfg.Run = "TestSingleDrive/1.92TB/4KB_Random_Read$|TestScaling/2_drives/4KB_Random_Read$"
	replan(s)
	var measured []string
	for test := range s.Plan.Measures {
		measured = append(measured, test)
	}
	slices.Sort(measured)
	want := []string{"TestScaling/2_drives/4KB_Random_Read", "TestSingleDrive/1.92TB/4KB_Random_Read"}
	if !slices.Equal(measured, want) {
		t.Errorf("plan of -run=%q measures %q, want %q", s.Cfg.Run, measured, want)
	}
	one, _ := builtinSuite(t, 2)
	one.Cfg.Run = "TestSingleDrive/1.92TB/4KB_Random_Read$"
	replan(one)
	if s.Estimate().Total <= one.Estimate().Total {
		t.Errorf("estimate with both alternatives %s, not more than with one (%s)", s.Estimate().Total, one.Estimate().Total)
	}
}

func TestSuggestTimeout(t *testing.T) {
	for _, tt := range []struct{ est, want time.Duration }{
		{5 * time.Minute, 10 * time.Minute},
		{50 * time.Minute, 70 * time.Minute},
		{3 * time.Hour, 4 * time.Hour},
	} {
		if got := suggestTimeout(tt.est); got != tt.want {
			t.Errorf("suggestTimeout(%s) = %s, want %s", tt.est, got, tt.want)
		}
	}
}

// The built-in plan on 24 × 1.92 TB drives takes 2 h 33 min 40 s, and
// -purge-after adds only its last step: a format (30 s) and the sample
// read before and after it at the capacity's sequential-read figure
// (14,500 MB/s), all drives at once.
func TestPurgeAfterEstimate(t *testing.T) {
	s, _ := builtinSuite(t, 24)
	replan(s)
	require.Equal(t, 2*time.Hour+33*time.Minute+40*time.Second, s.Plan.Total.Round(time.Second))
	without := s.Plan

	s.Cfg.PurgeAfter = true
	replan(s)
	last := s.Plan.Steps[len(s.Plan.Steps)-1]
	require.Equal(t, plan.StepPurgeProof, last.Kind, last.Name)
	require.Equal(t, len(without.Steps)+1, len(s.Plan.Steps))
	require.Len(t, last.Drives, 24)
	read := purgeproof.ReadTime(1_920_383_410_176, purgeproof.Sample, 14_500e6)
	require.Equal(t, 30*time.Second+read, last.Est)
	require.Equal(t, without.Total+last.Est, s.Plan.Total)
	t.Logf("-purge-after adds %s (read-back %s) to %s: %s", last.Est, read, without.Total, s.Plan.Total)

	s.Spec.Purge.Verify = purgeproof.Full
	replan(s)
	last = s.Plan.Steps[len(s.Plan.Steps)-1]
	require.Equal(t, purgeproof.Full, last.Proof)
	t.Logf("[purge] verify = \"full\" adds %s", last.Est)
}
