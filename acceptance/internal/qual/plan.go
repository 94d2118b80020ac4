package qual

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Drive is one target as the suite sees it.
type Drive struct {
	device.Info
	// Capacity is the spec capacity the drive is judged as.
	Capacity string
}

// Kinds of cells.
const (
	KindSingle  = "single"
	KindScaling = "scaling"
)

// Cell is one subtest: a workload measured on one or more drives.
type Cell struct {
	Kind     string
	Test     string // full subtest name, e.g. "TestSingleDrive/1.92TB/4KB_Random_Read"
	Capacity specs.Capacity
	// Workload is the spec's workload, with scaling overrides applied for scaling cells.
	Workload specs.Workload
	Drives   []int // indices into the suite's drives
	// Need is the drive state the measurement requires: "seq" (purged and
	// filled sequentially) or "rand:<twin>" (randomly preconditioned by the
	// write twin).
	Need string
	Twin specs.Workload
	// Skip, when set, says why the cell is not measured (the spec has no
	// figure for the workload at this capacity).
	Skip string
}

// ActionKind says what a preparation step does.
type ActionKind int

// Preparation steps, in the order a drive goes through them.
const (
	ActPurge ActionKind = iota
	ActFill
	ActRandom
)

// Action is one preparation step on a set of drives.
type Action struct {
	Kind   ActionKind
	Name   string
	Drives []int
	Job    fiojob.Job    // for ActFill and ActRandom
	Purge  string        // for ActPurge: the spec's method
	Est    time.Duration // estimated duration
	Bytes  int64         // estimated bytes written per drive
	State  string        // the state the drives reach
}

// State is what has been done to a drive since the run started.
type State struct {
	Filled bool   // purged and sequentially filled
	Last   string // the state reached by the last step ("seq", "rand:<twin>")
}

// Planner orders cells so that preconditioning is shared, and says which
// preparation steps a cell needs given the drives' states.
type Planner struct {
	Spec         *specs.Spec
	Precondition string        // full, quick or none
	Runtime      time.Duration // overrides each workload's runtime when > 0
	Drives       []Drive
	Online       []int // online CPUs, for placement
}

// quickFillCap bounds the bytes one quick fill pass writes per drive.
const quickFillCap = 64 << 30

// quickRandomCap bounds a quick random preconditioning step.
const quickRandomCap = time.Minute

// Need returns the state workload w needs and its write twin.
func (p *Planner) Need(w specs.Workload) (string, specs.Workload) {
	twin := p.Spec.WriteTwin(w)
	if twin.IsRandom() {
		return "rand:" + twin.Name, twin
	}
	return "seq", twin
}

// Order returns the workloads in plan order: sequential ones first (write,
// then read, then mixed), then each random group by block size, its write
// twin first, so that one preconditioning serves the whole group.
func (p *Planner) Order(ws []specs.Workload) []specs.Workload {
	type keyed struct {
		w     specs.Workload
		group string
		bs    int64
		rank  int
		idx   int
	}
	ks := make([]keyed, len(ws))
	for i, w := range ws {
		need, twin := p.Need(w)
		rank := 2
		switch {
		case w.IsWriteOnly():
			rank = 0
		case w.RW == "read" || w.RW == "randread":
			rank = 1
		}
		ks[i] = keyed{w: w, group: need, bs: twin.BS, rank: rank, idx: i}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if (a.group == "seq") != (b.group == "seq") {
			return a.group == "seq"
		}
		if a.group != b.group {
			if a.bs != b.bs {
				return a.bs < b.bs
			}
			return a.group < b.group
		}
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		return a.idx < b.idx
	})
	out := make([]specs.Workload, len(ks))
	for i, k := range ks {
		out[i] = k.w
	}
	return out
}

// Prepare returns the preparation steps that bring drives (given their
// states) to the state cell needs. It does not change states; Apply does.
func (p *Planner) Prepare(states []State, cell Cell) []Action {
	if p.Precondition == PrecondNone {
		return nil
	}
	var full, randOnly []int
	for _, d := range cell.Drives {
		st := states[d]
		switch {
		case st.Last == cell.Need:
		case cell.Need == "seq" || !st.Filled:
			full = append(full, d)
		default:
			randOnly = append(randOnly, d)
		}
	}
	var acts []Action
	if len(full) > 0 {
		fills := p.Spec.Precondition.FillPasses > 0
		if purge := p.Spec.Precondition.Purge; purge != "none" {
			a := Action{Kind: ActPurge, Name: "purge (" + purge + ")", Drives: full, Purge: purge,
				Est: p.purgeEstimate(full, purge)}
			if p.allFiles(full) {
				a.Name, a.Est = "purge (deallocate the file)", time.Second
			}
			if !fills {
				// With no fill passes, a purged drive is as sequential as it gets.
				a.State = "seq"
			}
			acts = append(acts, a)
		}
		if fills {
			acts = append(acts, p.fill(full, cell.Capacity))
		}
	}
	if strings.HasPrefix(cell.Need, "rand:") {
		all := append(append([]int(nil), full...), randOnly...)
		sort.Ints(all)
		if len(all) > 0 {
			acts = append(acts, p.random(all, cell))
		}
	}
	return acts
}

// Apply records that a has run.
func Apply(states []State, a Action) {
	for _, d := range a.Drives {
		switch a.Kind {
		case ActPurge:
			states[d] = State{Filled: a.State == "seq", Last: a.State}
		case ActFill:
			states[d] = State{Filled: true, Last: "seq"}
		case ActRandom:
			states[d].Last = a.State
		}
	}
}

func (p *Planner) fill(drives []int, capy specs.Capacity) Action {
	passes := p.Spec.Precondition.FillPasses
	var cap64 int64
	if p.Precondition == PrecondQuick {
		passes = min(passes, 1)
		cap64 = quickFillCap
	}
	targets := p.targets(drives)
	var bytes int64
	for i, d := range drives {
		size := p.Drives[d].Size
		if cap64 > 0 && size > cap64 {
			targets[i].Size = cap64
			size = cap64
		}
		bytes = max(bytes, size*int64(passes))
	}
	job := fiojob.Fill(targets, passes)
	job.IOEngine = p.Spec.Method.IOEngine
	job.Direct = p.Spec.Method.Direct
	rate := p.seqWriteRate(capy)
	return Action{Kind: ActFill, Name: fmt.Sprintf("sequential fill (%d × 128 KiB write pass)", passes), Drives: drives,
		Job: job, Bytes: bytes, State: "seq", Est: time.Duration(float64(bytes) / rate * float64(time.Second))}
}

func (p *Planner) random(drives []int, cell Cell) Action {
	pc := p.Spec.Precondition
	rt := pc.RandomRuntime
	if p.Precondition == PrecondQuick {
		rt = min(rt, quickRandomCap)
	}
	job := fiojob.RandomPrecondition(p.targets(drives), cell.Twin.BS, rt, pc.SteadyState, pc.SteadyStateDuration)
	job.IOEngine = p.Spec.Method.IOEngine
	job.Direct = p.Spec.Method.Direct
	var bytes int64
	if v, ok := cell.Capacity.Spec[cell.Twin.Name]; ok {
		bytes = int64(v * float64(cell.Twin.BS) * rt.Seconds())
	}
	return Action{Kind: ActRandom, Name: fmt.Sprintf("random preconditioning (%s, %s)", cell.Twin.Name, rt), Drives: drives,
		Job: job, Bytes: bytes, State: cell.Need, Est: rt}
}

// seqWriteRate is the fill's expected rate in bytes per second: the
// capacity's sequential-write spec, or 1 GB/s when the spec has none.
func (p *Planner) seqWriteRate(capy specs.Capacity) float64 {
	for _, w := range p.Spec.Workloads {
		if w.RW == "write" && w.Metric == specs.MBps {
			if v, ok := capy.Spec[w.Name]; ok && v > 0 {
				return v * 1e6
			}
		}
	}
	return 1e9
}

// allFiles reports whether drives are all regular files, which are purged
// by deallocating them whatever the spec's method.
func (p *Planner) allFiles(drives []int) bool {
	for _, d := range drives {
		if p.Drives[d].Block {
			return false
		}
	}
	return true
}

func (p *Planner) purgeEstimate(drives []int, method string) time.Duration {
	switch method {
	case "sanitize":
		var size int64
		for _, d := range drives {
			size = max(size, p.Drives[d].Size)
		}
		return time.Duration(float64(size) / 2e9 * float64(time.Second))
	case "format":
		return 30 * time.Second
	}
	return 10 * time.Second
}

// targets gives drives as fio targets, each pinned to its share of CPUs.
func (p *Planner) targets(drives []int) []fiojob.Target {
	infos := make([]device.Info, len(drives))
	for i, d := range drives {
		infos[i] = p.Drives[d].Info
	}
	var cpus []string
	if len(p.Online) > 0 {
		cpus = device.Place(infos, p.Online)
	}
	ts := make([]fiojob.Target, len(drives))
	for i, d := range drives {
		ts[i] = fiojob.Target{Path: p.Drives[d].Resolved}
		if ts[i].Path == "" {
			ts[i].Path = p.Drives[d].Path
		}
		if i < len(cpus) {
			ts[i].CPUs = cpus[i]
		}
	}
	return ts
}

// MeasureRuntime is the measured time of w in this run.
func (p *Planner) MeasureRuntime(w specs.Workload) time.Duration {
	if p.Runtime > 0 {
		return p.Runtime
	}
	return w.RuntimeOr(p.Spec.Method.Runtime)
}

// Measure is the fio job that measures cell.
func (p *Planner) Measure(cell Cell) fiojob.Job {
	w := cell.Workload
	return fiojob.Job{
		Name:      w.Name,
		RW:        w.RW,
		BS:        w.BS,
		IODepth:   w.IODepth,
		NumJobs:   w.NumJobs,
		RWMixRead: w.RWMixRead,
		IOEngine:  p.Spec.Method.IOEngine,
		Direct:    p.Spec.Method.Direct,
		Runtime:   p.MeasureRuntime(w),
		RampTime:  p.rampTime(),
		Targets:   p.targets(cell.Drives),
	}
}

// rampTime is the spec's ramp, capped at -runtime when that is given: a
// smoke run stays short.
func (p *Planner) rampTime() time.Duration {
	if p.Runtime > 0 {
		return min(p.Spec.Method.RampTime, p.Runtime)
	}
	return p.Spec.Method.RampTime
}

// MeasureEstimate is the wall time cell's measurement takes.
func (p *Planner) MeasureEstimate(cell Cell) time.Duration {
	return p.MeasureRuntime(cell.Workload) + p.rampTime()
}
