package qual

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
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
	return Cell{Kind: KindSingle, Capacity: c, Workload: w, Drives: drives, Need: need, Twin: twin}
}

func kinds(acts []Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, strings.SplitN(a.Name, " (", 2)[0])
	}
	return out
}

type prepareTest struct {
	name   string
	noFill bool // the spec has fill_passes = 0
	mode   string
	cells  []string   // run in this order on drive 0
	want   [][]string // preparation before each cell
}

var prepareTests = []prepareTest{
	{
		name:  "whole plan shares preconditioning",
		mode:  PrecondFull,
		cells: []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30", "8KB Random Write", "8KB Random Read"},
		want:  [][]string{{"purge", "sequential fill"}, nil, {"random preconditioning"}, nil, nil, {"random preconditioning"}, nil},
	},
	{
		name:  "a random read run alone gets purge, fill and its write twin",
		mode:  PrecondFull,
		cells: []string{"8KB Random Read"},
		want:  [][]string{{"purge", "sequential fill", "random preconditioning"}},
	},
	{
		name:  "a sequential cell after random ones starts over",
		mode:  PrecondFull,
		cells: []string{"4KB Random Read", "128KB Sequential Read"},
		want:  [][]string{{"purge", "sequential fill", "random preconditioning"}, {"purge", "sequential fill"}},
	},
	{
		name:   "no fill passes: purge alone makes a drive sequential",
		noFill: true,
		mode:   PrecondFull,
		cells:  []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Read", "8KB Random Read"},
		want:   [][]string{{"purge"}, nil, {"random preconditioning"}, {"random preconditioning"}},
	},
	{
		name:  "none prepares nothing",
		mode:  PrecondNone,
		cells: []string{"4KB Random Read", "128KB Sequential Read"},
		want:  [][]string{nil, nil},
	},
}

func TestPrepare(t *testing.T) {
	for _, tt := range prepareTests {
		t.Run(tt.name, func(t *testing.T) {
			p := builtinPlanner(t, tt.mode, 1)
			if tt.noFill {
				p.Spec.Precondition.FillPasses = 0
			}
			states := make([]State, 1)
			var got [][]string
			for _, name := range tt.cells {
				acts := p.Prepare(states, cellFor(t, p, name, 0))
				for _, a := range acts {
					Apply(states, a)
				}
				got = append(got, kinds(acts))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Prepare (-want +got):\n%s", diff)
			}
		})
	}
}

// On several drives, drives already filled only get the random step, and
// it runs on all of them at once.
func TestPrepareSharesOneRandomStep(t *testing.T) {
	p := builtinPlanner(t, PrecondFull, 3)
	states := []State{{Filled: true, Last: "seq"}, {}, {Filled: true, Last: "rand:4KB Random Write"}}
	acts := p.Prepare(states, cellFor(t, p, "4KB Random Read", 0, 1, 2))
	require.Len(t, acts, 3)
	if diff := cmp.Diff([]int{1}, acts[0].Drives); diff != "" {
		t.Errorf("purge drives (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, acts[2].Drives); diff != "" {
		t.Errorf("random preconditioning drives (-want +got):\n%s", diff)
	}
	require.Len(t, acts[2].Job.Targets, 2)
	require.Equal(t, int64(4096), acts[2].Job.BS)
}

// Quick preconditioning fills once, over at most quickFillCap bytes, and
// bounds the random step.
func TestQuickPreconditionIsCapped(t *testing.T) {
	p := builtinPlanner(t, PrecondQuick, 1)
	acts := p.Prepare(make([]State, 1), cellFor(t, p, "4KB Random Read", 0))
	require.Len(t, acts, 3)
	fill := acts[1]
	require.Equal(t, 1, fill.Job.Loops)
	require.Equal(t, int64(quickFillCap), fill.Job.Targets[0].Size)
	require.Equal(t, quickRandomCap, acts[2].Est)
}

// The estimate of the built-in plan on one 1.92TB drive is dominated by
// the two fill passes at the spec's 4,100 MB/s and the 30-minute random
// preconditioning steps.
func TestEstimateOfTheBuiltInPlan(t *testing.T) {
	p := builtinPlanner(t, PrecondFull, 1)
	states := make([]State, 1)
	var total float64
	for _, w := range p.Order(p.Spec.Workloads) {
		c := cellFor(t, p, w.Name, 0)
		for _, a := range p.Prepare(states, c) {
			Apply(states, a)
			total += a.Est.Seconds()
		}
		total += p.MeasureEstimate(c).Seconds()
	}
	fill := 2 * 1_920_383_410_176 / 4100e6
	want := 30 + fill + 2*30*60 + 8*70
	require.InDelta(t, want, total, 1)
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
