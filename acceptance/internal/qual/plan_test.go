package qual

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

func builtinPlanner(t *testing.T, precondition string, drives int) *Planner {
	t.Helper()
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	p := &Planner{Spec: spec, Precondition: precondition, Online: []int{0, 1, 2, 3}}
	for i := range drives {
		p.Drives = append(p.Drives, Drive{Info: device.Info{Path: "/dev/nvme" + string(rune('0'+i)) + "n1",
			Block: true, Size: 1_920_383_410_176, NUMANode: -1}, Capacity: "1.92TB"})
	}
	return p
}

// The plan follows the brief: sequential first, then each random block
// size behind its write twin.
func TestOrderFollowsTheBrief(t *testing.T) {
	p := builtinPlanner(t, PrecondFull, 1)
	var got []string
	for _, w := range p.Order(p.Spec.Workloads) {
		got = append(got, w.Name)
	}
	want := []string{
		"128KB Sequential Write", "128KB Sequential Read",
		"4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30",
		"8KB Random Write", "8KB Random Read", "8KB Random Mixed Read Write 70/30",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
}

func cellFor(t *testing.T, p *Planner, name string, drives ...int) Cell {
	t.Helper()
	w, ok := p.Spec.Workload(name)
	require.True(t, ok, name)
	c, _ := p.Spec.Capacity("1.92TB")
	need, twin := p.Need(w)
	return Cell{Kind: report.KindSingle, Capacity: c, Workload: w, Drives: drives, Need: need, Twin: twin}
}

// kinds lists each step as its kind, with a measurement's workloads.
func kinds(pl Plan) []string {
	var out []string
	for _, st := range pl.Steps {
		k := st.Kind.String()
		if st.Kind == StepMeasure {
			k = st.Cells[0].Workload.Name
		}
		out = append(out, k)
	}
	return out
}

type buildTest struct {
	name   string
	noFill bool // the spec has fill_passes = 0
	mode   string
	cells  []string // single-drive cells on drive 0
	want   []string
}

var buildTests = []buildTest{
	{
		name:  "one purge and fill, one random preconditioning per block size",
		mode:  PrecondFull,
		cells: []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30", "8KB Random Write", "8KB Random Read"},
		want: []string{"purge", "fill", "128KB Sequential Write", "128KB Sequential Read",
			"precondition", "4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30",
			"precondition", "8KB Random Write", "8KB Random Read"},
	},
	{
		name:  "a random read alone gets purge, fill and its write twin",
		mode:  PrecondFull,
		cells: []string{"8KB Random Read"},
		want:  []string{"purge", "fill", "precondition", "8KB Random Read"},
	},
	{
		name:  "sequential cells run first whatever the order asked",
		mode:  PrecondFull,
		cells: []string{"4KB Random Read", "128KB Sequential Read"},
		want:  []string{"purge", "fill", "128KB Sequential Read", "precondition", "4KB Random Read"},
	},
	{
		name:   "no fill passes: purge alone makes a drive sequential",
		noFill: true,
		mode:   PrecondFull,
		cells:  []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Read", "8KB Random Read"},
		want:   []string{"purge", "128KB Sequential Write", "128KB Sequential Read", "precondition", "4KB Random Read", "precondition", "8KB Random Read"},
	},
	{
		name:  "none prepares nothing",
		mode:  PrecondNone,
		cells: []string{"4KB Random Read", "128KB Sequential Read"},
		want:  []string{"128KB Sequential Read", "4KB Random Read"},
	},
}

func TestBuild(t *testing.T) {
	for _, tt := range buildTests {
		t.Run(tt.name, func(t *testing.T) {
			p := builtinPlanner(t, tt.mode, 1)
			if tt.noFill {
				p.Spec.Precondition.FillPasses = 0
			}
			var cells []Cell
			for _, name := range tt.cells {
				cells = append(cells, cellFor(t, p, name, 0))
			}
			if diff := cmp.Diff(tt.want, kinds(p.Build(cells))); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

// builtinSuite is a live suite of the built-in spec on n 1.92 TB files,
// with every cell of the run.
func builtinSuite(t *testing.T, n int) (*Suite, []Cell) {
	t.Helper()
	p := builtinPlanner(t, PrecondFull, n)
	for i := range p.Drives {
		p.Drives[i].Block = false
	}
	var paths []string
	for _, d := range p.Drives {
		paths = append(paths, d.Path)
	}
	s := &Suite{Cfg: &Config{Drives: paths}, Spec: p.Spec, Drives: p.Drives, Planner: p, Exec: &Live{}, Precondition: PrecondFull}
	return s, s.allCells()
}

// The whole built-in run shares one purge and fill and one random
// preconditioning per block size across the single-drive cells and every
// scaling step, and measures a single-drive cell and the same job on one
// drive once.
func TestBuildSharesAcrossScaling(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	pl := s.Planner.Build(cells)
	count := map[StepKind]int{}
	for _, st := range pl.Steps {
		count[st.Kind]++
		if st.Kind == StepPurge || st.Kind == StepFill || st.Kind == StepRandom {
			require.Len(t, st.Drives, 24, "step %d (%s) prepares every drive at once", st.N, st.Name)
		}
	}
	require.Equal(t, 1, count[StepPurge])
	require.Equal(t, 1, count[StepFill])
	require.Equal(t, 2, count[StepRandom], "one per random block size")
	// 8 workloads × (1 single + 8 scaling steps) = 72 cells, 7 of which
	// are the single-drive cell's own job (8KB Random Read has a scaling
	// override) and share its measurement.
	require.Equal(t, 72-7, count[StepMeasure])
	for _, c := range cells {
		st := pl.Steps[pl.Measures[c.Test]]
		require.Contains(t, st.Cells, c)
	}
	shared := pl.Steps[pl.Measures["TestScaling/1_drives/4KB_Random_Read"]]
	require.Equal(t, "TestSingleDrive/1.92TB/4KB_Random_Read", shared.Cells[0].Test, "the single-drive cell owns the recording")
	require.LessOrEqual(t, pl.Total, 4*time.Hour)
}

// Before a random write or mixed measurement, drives idle past the limit
// since their preconditioning are topped up; reads never wait for one.
func TestBuildTopsUpIdleDrives(t *testing.T) {
	s, cells := builtinSuite(t, 24)
	pl := s.Planner.Build(cells)
	var clock time.Duration
	last := map[int]time.Duration{}
	for i, st := range pl.Steps {
		if st.Kind == StepTopUp {
			next := pl.Steps[i+1]
			require.Equal(t, StepMeasure, next.Kind)
			require.True(t, next.Cells[0].Workload.Writes(), "step %d tops up before %s", st.N, next.Name)
			require.Equal(t, 2*time.Minute, st.Est)
		}
		if st.Kind == StepMeasure && st.Cells[0].Workload.Writes() && strings.HasPrefix(st.State, "rand:") {
			for _, d := range st.Drives {
				require.LessOrEqual(t, clock-last[d], 5*time.Minute, "step %d: drive %d idle since %s", st.N, d, last[d])
			}
		}
		clock += st.Est
		if st.Writes() {
			for _, d := range st.Drives {
				last[d] = clock
			}
		}
	}
}

// Quick preconditioning fills once, over at most quickFillCap bytes, and
// bounds the random step.
func TestQuickPreconditionIsCapped(t *testing.T) {
	p := builtinPlanner(t, PrecondQuick, 1)
	pl := p.Build([]Cell{cellFor(t, p, "4KB Random Read", 0)})
	require.Len(t, pl.Steps, 4)
	fill := pl.Steps[1]
	require.Equal(t, 1, fill.Job.Loops)
	require.Equal(t, int64(quickFillCap), fill.Job.Targets[0].Size)
	require.Equal(t, quickRandomCap, pl.Steps[2].Est)
}

// The estimate of the built-in plan on one 1.92TB drive: the two fill
// passes at the spec's 4,100 MB/s, the two 30-minute random
// preconditioning bounds and nine 70 s measurements (the 1-drive scaling
// cells share the single-drive cells' but for 8KB Random Read's).
func TestEstimateOfTheBuiltInPlan(t *testing.T) {
	s, cells := builtinSuite(t, 1)
	pl := s.Planner.Build(cells)
	fill := 2 * 1_920_383_410_176 / 4100e6
	want := 1 + fill + 2*30*60 + 9*70
	require.InDelta(t, want, pl.Total.Seconds(), 1)
	require.LessOrEqual(t, pl.Total, 90*time.Minute)
}

// Bytes written count MB/s write measurements and readwrite's writes.
func TestWrittenBytes(t *testing.T) {
	seq := specs.Workload{RW: "write", BS: 128 << 10, Metric: specs.MBps, RWMixRead: -1}
	require.Equal(t, int64(4100e6*60), writtenBytes(seq, 4100, time.Minute))
	rw := specs.Workload{RW: "readwrite", BS: 4096, Metric: specs.IOPS, RWMixRead: 70}
	require.Equal(t, int64(1000*4096*60*0.3), writtenBytes(rw, 1000, time.Minute))
	half := specs.Workload{RW: "randrw", BS: 4096, Metric: specs.IOPS, RWMixRead: -1}
	require.Equal(t, int64(1000*4096*60/2), writtenBytes(half, 1000, time.Minute))
	read := specs.Workload{RW: "randread", BS: 4096, Metric: specs.IOPS, RWMixRead: -1}
	require.Zero(t, writtenBytes(read, 1000, time.Minute))
}

// A purge that erases a whole controller resets every drive of the run on
// it, so that none is measured as if it were still filled.
func TestPurgeReachesTheController(t *testing.T) {
	d := func(name string, siblings ...string) Drive {
		return Drive{Info: device.Info{Path: "/dev/" + name, Name: name, Block: true, Controller: "nvme0", Siblings: siblings}}
	}
	s := &Suite{Drives: []Drive{d("nvme0n1", "nvme0n2"), d("nvme0n2", "nvme0n1")}}
	s.ctrls = map[string]nvme.Controller{"nvme0": {OACS: 1 << 1, SANICAP: 1 << 1}}
	require.Equal(t, []int{0, 1}, s.purgeReach([]int{0}, "sanitize"), "sanitize erases the controller")
	require.Equal(t, []int{0}, s.purgeReach([]int{0}, "format"), "format without FNA bits erases one namespace")
	s.ctrls["nvme0"] = nvme.Controller{OACS: 1 << 1, FNA: 1}
	require.Equal(t, []int{0, 1}, s.purgeReach([]int{0}, "format"), "FNA bit 0: format applies to all namespaces")
	require.Equal(t, []int{0}, s.purgeReach([]int{0}, "discard"))
}
