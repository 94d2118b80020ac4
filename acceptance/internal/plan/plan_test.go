package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
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
	p := builtinPlanner(t, Full, 1)
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
	return Cell{Kind: "single", Capacity: c, Workload: w, Drives: drives, Need: need, Twin: twin}
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
		mode:  Full,
		cells: []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30", "8KB Random Write", "8KB Random Read"},
		want: []string{"purge", "fill", "verify", "128KB Sequential Write", "128KB Sequential Read",
			"precondition", "4KB Random Write", "4KB Random Read", "4KB Random Mixed Read Write 70/30",
			"precondition", "8KB Random Write", "8KB Random Read"},
	},
	{
		name:  "a random read alone gets purge, fill and its write twin",
		mode:  Full,
		cells: []string{"8KB Random Read"},
		want:  []string{"purge", "fill", "verify", "precondition", "8KB Random Read"},
	},
	{
		name:  "sequential cells run first whatever the order asked",
		mode:  Full,
		cells: []string{"4KB Random Read", "128KB Sequential Read"},
		want:  []string{"purge", "fill", "verify", "128KB Sequential Read", "precondition", "4KB Random Read"},
	},
	{
		name:   "no fill passes: purge alone makes a drive sequential",
		noFill: true,
		mode:   Full,
		cells:  []string{"128KB Sequential Write", "128KB Sequential Read", "4KB Random Read", "8KB Random Read"},
		want:   []string{"purge", "128KB Sequential Write", "128KB Sequential Read", "precondition", "4KB Random Read", "precondition", "8KB Random Read"},
	},
	{
		name:  "none prepares nothing",
		mode:  None,
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

// Quick preconditioning fills once, over at most QuickFillCap bytes, and
// bounds the random step.
func TestQuickPreconditionIsCapped(t *testing.T) {
	p := builtinPlanner(t, Quick, 1)
	pl := p.Build([]Cell{cellFor(t, p, "4KB Random Read", 0)})
	require.Len(t, pl.Steps, 5)
	fill := pl.Steps[1]
	require.Equal(t, 1, fill.Job.Loops)
	require.Equal(t, int64(QuickFillCap), fill.Job.Targets[0].Size)
	require.Equal(t, QuickRandomCap, pl.Steps[3].Est)
	// The verify pass reads back what the quick fill wrote, no more.
	verify := pl.Steps[2]
	require.Equal(t, StepVerify, verify.Kind)
	require.Equal(t, "read", verify.Job.RW)
	require.Equal(t, int64(QuickFillCap), verify.Job.Targets[0].Size)
}

// The verify pass follows every fill, reads one pass's bytes at the
// capacity's sequential-read rate, writes nothing, and is one fio process
// for all the drives the fill wrote.
func TestVerifyFollowsTheFill(t *testing.T) {
	p := builtinPlanner(t, Full, 3)
	pl := p.Build([]Cell{cellFor(t, p, "128KB Sequential Read", 0, 1, 2)})
	require.Equal(t, []string{"purge", "fill", "verify", "128KB Sequential Read"}, kinds(pl))
	fill, verify := pl.Steps[1], pl.Steps[2]
	require.Equal(t, fill.Drives, verify.Drives)
	require.Len(t, verify.Job.Targets, 3)
	require.Equal(t, "pattern", fill.Job.Verify)
	require.Equal(t, "pattern", verify.Job.Verify)
	require.Equal(t, fill.Job.VerifyPattern, verify.Job.VerifyPattern, "the read-back compares what the fill wrote")
	require.Equal(t, "read", verify.Job.RW)
	require.Equal(t, 1, verify.Job.Loops)
	// Every byte of the IDEMA capacity, the 90,112 past the last 128 KiB
	// block included, written by the fill and read back by 8 jobs (the
	// spec's most jobs a drive) and the tail's.
	for _, st := range []Step{fill, verify} {
		require.True(t, st.Job.Tail)
		require.Equal(t, int64(1_920_383_410_176), st.Job.Targets[0].Size)
	}
	require.Equal(t, 8, verify.Job.Split)
	require.Equal(t, 8+1, strings.Count(verify.Job.File(), "filename=/dev/nvme0n1\n"))
	require.False(t, verify.Writes())
	require.Zero(t, verify.Bytes)
	// 1.92 TB at the brief's 14,500 MB/s sequential read.
	require.InDelta(t, 1_920_383_410_176/14_500e6, verify.Est.Seconds(), 1e-6)
	// Narrowed to the drives left, it is still the fill's read-back.
	n := p.Narrow(verify, []int{1})
	require.Equal(t, StepVerify, n.Kind)
	require.Equal(t, verify.N, n.N)
	require.Len(t, n.Job.Targets, 1)
	require.Equal(t, "/dev/nvme1n1", n.Job.Targets[0].Path)
	require.Equal(t, verify.Job.VerifyPattern, n.Job.VerifyPattern, "narrowed, it still compares the same fill's pattern")
}

// The built-in spec's two fill passes write different patterns, and the
// read-back expects the last one's: a drive that kept the first pass and
// dropped the second fails. A fill narrowed to the drives left writes the
// same two patterns as the fill planned.
func TestTheLastPassIsReadBack(t *testing.T) {
	p := builtinPlanner(t, Full, 3)
	pl := p.Build([]Cell{cellFor(t, p, "128KB Sequential Read", 0, 1, 2)})
	fill, verify := pl.Steps[1], pl.Steps[2]
	require.Equal(t, 2, fill.Job.Loops)
	require.NotEmpty(t, fill.Job.EarlierPattern)
	require.NotEqual(t, fill.Job.EarlierPattern, fill.Job.VerifyPattern)
	require.Equal(t, fill.Job.VerifyPattern, verify.Job.VerifyPattern)
	require.Contains(t, fill.Job.File(), "verify_pattern="+fill.Job.EarlierPattern+"\n")
	n := p.Narrow(fill, []int{2})
	require.Equal(t, fill.Job.VerifyPattern, n.Job.VerifyPattern)
	require.Equal(t, fill.Job.EarlierPattern, n.Job.EarlierPattern, "narrowed, the first pass still writes the fill's pattern")
}

// Each fill of a run writes its own pattern, and another run's (another
// seed) differs: a drive that returns an earlier fill's blocks fails.
func TestFillsAreUnique(t *testing.T) {
	p := builtinPlanner(t, Full, 3)
	p.Seed = 42
	pl := p.Build([]Cell{cellFor(t, p, "128KB Sequential Read", 0)})
	p.AddVerify(&pl, []int{0, 1, 2})
	var patterns []string
	for _, st := range pl.Steps {
		if st.Kind == StepFill {
			patterns = append(patterns, st.Job.VerifyPattern)
		}
	}
	require.Len(t, patterns, 2)
	require.NotEqual(t, patterns[0], patterns[1])
	q := builtinPlanner(t, Full, 3)
	q.Seed = 43
	other := q.Build([]Cell{cellFor(t, q, "128KB Sequential Read", 0)})
	require.NotEqual(t, patterns[0], other.Steps[1].Job.VerifyPattern)
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

// TestIntegrity alone (-run=TestIntegrity) gets a purge, fill and verify
// pass of every drive; drives a plan already verifies get nothing more.
func TestAddVerify(t *testing.T) {
	p := builtinPlanner(t, Full, 3)
	var pl Plan
	p.AddVerify(&pl, []int{0, 1, 2})
	require.Equal(t, []string{"purge", "fill", "verify"}, kinds(pl))
	require.Equal(t, []int{0, 1, 2}, pl.Steps[2].Drives)
	require.Equal(t, 3, pl.Steps[2].N)
	require.Positive(t, pl.Total)

	pl = p.Build([]Cell{cellFor(t, p, "128KB Sequential Read", 0)})
	p.AddVerify(&pl, []int{0, 1, 2})
	require.Equal(t, []string{"purge", "fill", "verify", "128KB Sequential Read", "purge", "fill", "verify"}, kinds(pl))
	require.Equal(t, []int{1, 2}, pl.Steps[6].Drives)
}

// The purge at the end purges the drives selected, each on its own, and
// names what files get: a deallocation (a punched hole), not the spec's
// format.
func TestAddPurgeProofSelected(t *testing.T) {
	p := builtinPlanner(t, Full, 3)
	var pl Plan
	p.AddPurgeProof(&pl, "sample", []int{2})
	require.Len(t, pl.Steps, 1)
	if got := pl.Steps[0]; !cmp.Equal(got.Drives, []int{2}) || !strings.Contains(got.Name, "purge (format) again") {
		t.Errorf("the purge at the end of drive 2 alone: drives %v, %q", got.Drives, got.Name)
	}
	var none Plan
	if p.AddPurgeProof(&none, "sample", nil); len(none.Steps) != 0 {
		t.Errorf("no drive selected: %+v", none.Steps)
	}
	for i := range p.Drives {
		p.Drives[i].Block = false
	}
	var files Plan
	p.AddPurgeProof(&files, "sample", []int{0, 1, 2})
	if got := files.Steps[0]; !cmp.Equal(got.Drives, []int{0, 1, 2}) || !strings.Contains(got.Name, "purge (deallocate the file) again") || got.Purge != "format" {
		t.Errorf("the purge at the end of files: drives %v, %q, method %q", got.Drives, got.Name, got.Purge)
	}
}
