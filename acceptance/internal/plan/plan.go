// Package plan makes a qualification's plan, the one list of steps that a
// dry run prints, the estimate adds up and a live run executes.
//
// It orders the cells to judge so that they share preconditioning, and
// lists the steps that prepare and measure them: purge, fill, random
// preconditioning until steady state, top-ups of idle drives, and
// measurements.
package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
	"github.com/drivequal/drivequal/specs/bssplit"
)

// Drive is one target as the suite sees it.
type Drive struct {
	device.Info
	// Capacity is the spec capacity the drive is judged as.
	Capacity string
	// Placeholder says the drive stands in for one a recording measured
	// without naming it: its cells replay, and it has no health or
	// identity to judge or report.
	Placeholder bool
	// Absent, on a resume, says why a drive the run recorded is not
	// there: it did not come back after the host's power was cut. Its
	// pending power-loss cycle fails "did not return", the resume
	// disqualifies it, and nothing inspects, holds, reads or writes it.
	Absent string
}

// Missing says the drive stands for one that is not there: a replay's
// placeholder, or a drive absent from a resume. Nothing is planned on it
// (a purge, its proof, a firmware activation).
func (d Drive) Missing() bool { return d.Placeholder || d.Absent != "" }

// Cell is one subtest: a workload measured on one or more drives.
type Cell struct {
	Kind     string // report.KindSingle or report.KindScaling
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
	// OpenLoop (a latency-at-load sweep point) paces the workload's
	// RateIOPS per job with Poisson arrivals (fio rate_process=poisson).
	OpenLoop bool
}

// Preconditioning modes (-precondition).
const (
	Full  = "full"  // as the spec says
	Quick = "quick" // one fill pass over at most QuickFillCap, random steps of at most QuickRandomCap
	None  = "none"  // none
)

// StepKind says what a step of the plan does.
type StepKind int

// Steps, in the order a drive goes through them.
const (
	StepPurge StepKind = iota
	StepFill
	StepRandom // random preconditioning, until steady state or its bound
	StepTopUp  // random writes on drives left idle too long, before a write measurement
	StepMeasure
	// StepVerify reads back every block the fill before it wrote and
	// compares it with the fill's pattern (fiojob.VerifyPass), before
	// anything overwrites them.
	StepVerify
	// StepPurgeProof purges every drive once more at the end of the run
	// and reads it back (TestPurge, purgeproof): last in the plan, run by
	// TestPurge rather than by the cells.
	StepPurgeProof
	// StepFirmware is a firmware activation under load (TestFirmware,
	// package fwrun): its Purge field names the step, activate or back.
	StepFirmware
)

func (k StepKind) String() string {
	return [...]string{"purge", "fill", "precondition", "top-up", "measure", "verify", "purge-proof", "firmware"}[k]
}

// Step is one step of the plan: a preparation of some drives or one fio
// measurement, which judges one or more cells.
type Step struct {
	// N numbers the steps from 1, in the order they run.
	N      int
	Kind   StepKind
	Name   string
	Drives []int
	Job    fiojob.Job // every kind but StepPurge
	Purge  string     // StepPurge, StepPurgeProof: the purge method
	// Proof is a StepPurgeProof's read-back: purgeproof.Sample or Full.
	Proof string
	// Image is a StepFirmware's firmware image, the file flashed.
	Image string
	Est   time.Duration // estimated duration; for StepRandom and StepTopUp its bound
	Bytes int64         // estimated bytes written per drive
	State string        // the state the drives reach
	// Twin is the write twin of a StepRandom or StepTopUp.
	Twin specs.Workload
	// Rule and Round are the steady-state rule a StepRandom or StepTopUp
	// ends on (see steady).
	Rule  steady.Rule
	Round time.Duration
	// Idle (StepTopUp) is the idle limit: the step tops up those of Drives
	// that have written nothing for longer.
	Idle time.Duration
	// Cells (StepMeasure) are the cells judged from the step's one fio
	// output: a single-drive cell and the 1-drive scaling cell that is the
	// same job on the same drive share one measurement. The first owns the
	// recording.
	Cells []Cell
}

// Writes reports whether the step writes to its drives.
func (st Step) Writes() bool {
	switch st.Kind {
	case StepVerify:
		return false
	case StepMeasure:
		return st.Cells[0].Workload.Writes()
	}
	return true
}

// Plan is the run, step by step: what -dry-run prints, what the estimate
// and the -timeout check add up, and what a live run executes.
type Plan struct {
	Steps []Step
	// Total is the estimated duration of all steps.
	Total time.Duration
	// Bytes is the estimated bytes written per drive, by drive index.
	Bytes []int64
	// Measures maps a cell's test name to the index of its StepMeasure.
	Measures map[string]int
}

// State is what has been done to a drive since the run started.
type State struct {
	Filled bool   // purged and sequentially filled
	Last   string // the state reached by the last step ("seq", "rand:<twin>")
}

// Planner orders cells so that preconditioning is shared, and builds the
// plan of a run.
type Planner struct {
	Spec         *specs.Spec
	Precondition string        // full, quick or none
	Runtime      time.Duration // overrides each workload's runtime when > 0
	Drives       []Drive
	Online       []int // online CPUs, for placement
	// Verify lists the drives whose integrity is judged (TestIntegrity):
	// the run's first purge, fill and verify pass covers them too, so that
	// every drive is filled and read back once, in one fio process, even
	// one that no selected cell measures.
	Verify []int
	// Seed makes each fill's pattern unique to the run (FillID): a live
	// run draws it at random and records it in run.json.
	Seed uint64
	// Start is each drive's state when the plan begins (a resumed run's
	// drives, as its recording shows them); nil: nothing done yet.
	Start []State
	// fills counts the fills planned, each its own FillID.
	fills uint64
}

// FillID is the id of the run's n-th fill (from 1): what its blocks hold
// besides their offset, so that a drive returning another run's fill, or
// an earlier fill of this run, fails the read-back. splitmix64 of Seed+n.
func FillID(seed, n uint64) uint64 {
	z := seed + n*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// QuickFillCap bounds the bytes one quick fill pass writes per drive.
const QuickFillCap = 64 << 30

// QuickRandomCap bounds a quick random preconditioning step.
const QuickRandomCap = time.Minute

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

// Build makes the plan of cells (in the order the tests judge them).
//
// Cells are grouped by the state they need, sequential first, then each
// random group by block size: a group's drives are brought to its state
// together (one purge and fill, one random preconditioning, each one fio
// process for all the drives), then every measurement of the group runs
// back to back, single-drive cells and every scaling step alike; in a
// random group the scaling steps run from the most drives down to one, so
// that a drive is never left idle before it is needed again. A cell
// that is the same fio job on the same drives as an earlier one shares
// its measurement. Before a random write or mixed measurement, drives the
// estimate sees idle for longer than the spec's idle_limit get a top-up
// step; a live run tops up whatever is idle by then (see Suite.Run).
func (p *Planner) Build(cells []Cell) Plan {
	pl := Plan{Bytes: make([]int64, len(p.Drives)), Measures: map[string]int{}}
	var needs []string
	groups := map[string][]Cell{}
	twins := map[string]specs.Workload{}
	for _, c := range cells {
		if c.Skip != "" {
			continue
		}
		if _, ok := groups[c.Need]; !ok {
			needs = append(needs, c.Need)
			twins[c.Need] = c.Twin
		}
		groups[c.Need] = append(groups[c.Need], c)
	}
	sort.SliceStable(needs, func(i, j int) bool {
		a, b := needs[i], needs[j]
		if (a == "seq") != (b == "seq") {
			return a == "seq"
		}
		if ta, tb := twins[a].BS, twins[b].BS; ta != tb {
			return ta < tb
		}
		return a < b
	})
	states := p.startStates()
	var clock time.Duration
	lastWrite := make([]time.Duration, len(p.Drives))
	written := make([]bool, len(p.Drives))
	add := func(st Step) {
		st.N = len(pl.Steps) + 1
		pl.Steps = append(pl.Steps, st)
		pl.Total += st.Est
		clock += st.Est
		for _, d := range st.Drives {
			pl.Bytes[d] += st.Bytes
			if st.Writes() {
				lastWrite[d], written[d] = clock, true
			}
		}
		if st.Kind != StepMeasure {
			Apply(states, st)
		}
	}
	for gi, need := range needs {
		group := groups[need]
		if strings.HasPrefix(need, "rand:") {
			// Largest scaling step first, one drive last: each drive is
			// measured last in the step that needs it and never falls idle
			// before it is needed again, so no top-up is needed.
			slices.SortStableFunc(group, func(a, b Cell) int { return len(b.Drives) - len(a.Drives) })
		}
		var drives []int
		for _, c := range group {
			for _, d := range c.Drives {
				if !slices.Contains(drives, d) {
					drives = append(drives, d)
				}
			}
		}
		sort.Ints(drives)
		var fillOnly []int
		if gi == 0 {
			for _, d := range p.Verify {
				if !slices.Contains(drives, d) {
					fillOnly = append(fillOnly, d)
				}
			}
		}
		for _, st := range p.prepare(states, need, twins[need], drives, fillOnly...) {
			add(st)
		}
		shared := map[string]int{} // job file → step index
		for _, c := range group {
			job := p.Measure(c)
			key := job.File()
			if i, ok := shared[key]; ok {
				pl.Steps[i].Cells = append(pl.Steps[i].Cells, c)
				pl.Measures[c.Test] = i
				continue
			}
			if p.Precondition != None && strings.HasPrefix(need, "rand:") && c.Workload.Writes() {
				var idle []int
				for _, d := range c.Drives {
					if written[d] && clock-lastWrite[d] > p.Spec.Precondition.IdleLimit {
						idle = append(idle, d)
					}
				}
				if len(idle) > 0 {
					add(p.TopUp(idle, c.Twin))
				}
			}
			st := Step{Kind: StepMeasure, Name: c.Test, Drives: c.Drives, Job: job, Est: p.MeasureEstimate(c),
				Cells: []Cell{c}, State: need}
			if c.Workload.Writes() {
				st.Bytes = writtenBytes(c.Workload, c.Capacity.Spec[c.Workload.Name], p.MeasureRuntime(c.Workload))
			}
			shared[key] = len(pl.Steps)
			pl.Measures[c.Test] = len(pl.Steps)
			add(st)
		}
	}
	return pl
}

// AddVerify appends to pl a purge, fill and verify pass of those of
// drives that no verify pass of pl reads back: TestIntegrity, selected
// without the cells that would fill them (-run=TestIntegrity), still
// checks that every drive given returns what it was given.
func (p *Planner) AddVerify(pl *Plan, drives []int) {
	verified := map[int]bool{}
	for _, st := range pl.Steps {
		if st.Kind == StepVerify {
			for _, d := range st.Drives {
				verified[d] = true
			}
		}
	}
	var rest []int
	for _, d := range drives {
		if !verified[d] {
			rest = append(rest, d)
		}
	}
	if len(rest) == 0 {
		return
	}
	if pl.Bytes == nil {
		pl.Bytes = make([]int64, len(p.Drives))
	}
	if pl.Measures == nil {
		pl.Measures = map[string]int{}
	}
	for _, st := range p.prepare(make([]State, len(p.Drives)), "seq", specs.Workload{}, rest) {
		st.N = len(pl.Steps) + 1
		pl.Steps = append(pl.Steps, st)
		pl.Total += st.Est
		for _, d := range st.Drives {
			pl.Bytes[d] += st.Bytes
		}
	}
}

// AddPurgeProof appends to pl the purge at the end of the run of the
// drives selected (indices; placeholders aside), read back as mode says (purgeproof.Sample or Full; "" adds
// nothing): the spec's purge method (format when it is none), estimated as
// the purge before the fill plus reading the sample before it and mode's
// extents after it at the capacity's sequential-read rate, the drives at
// once. Drives that are all files are shown deallocated, as purge.Plan
// purges them.
func (p *Planner) AddPurgeProof(pl *Plan, mode string, selected []int) {
	if mode == "" || len(p.Drives) == 0 {
		return
	}
	method := p.Spec.Precondition.Purge
	if method == "none" || method == "" {
		method = "format"
	}
	var drives []int
	var read time.Duration
	var bytes int64
	for _, d := range selected {
		if d < 0 || d >= len(p.Drives) || p.Drives[d].Missing() {
			continue
		}
		dr := p.Drives[d]
		drives = append(drives, d)
		read = max(read, purgeproof.ReadTime(dr.Size, mode, p.seqRate(dr.Capacity, "read")))
		bytes = max(bytes, purgeproof.Bytes(purgeproof.Extents(dr.Size, purgeproof.Sample))+purgeproof.Bytes(purgeproof.Extents(dr.Size, mode)))
	}
	if len(drives) == 0 {
		return
	}
	// Files are deallocated (a punched hole), whatever the method.
	shown := method
	if p.allFiles(drives) {
		shown = "deallocate the file"
	}
	st := Step{Kind: StepPurgeProof, N: len(pl.Steps) + 1, Drives: drives, Purge: method, Proof: mode,
		Est:  p.purgeEstimate(drives, method) + read,
		Name: fmt.Sprintf("purge (%s) again, read back (%s, %.1f GB a drive before and after): none of the fill may remain", shown, mode, float64(bytes)/1e9)}
	pl.Steps = append(pl.Steps, st)
	pl.Total += st.Est
}

// prepare returns the preparation steps that bring drives (given their
// states) to need, and purge, fill and verify fillOnly, drives no cell of
// need measures. It does not change states; applyStep does.
func (p *Planner) prepare(states []State, need string, twin specs.Workload, drives []int, fillOnly ...int) []Step {
	if p.Precondition == None {
		return nil
	}
	var full, randOnly []int
	for _, d := range fillOnly {
		if !states[d].Filled {
			full = append(full, d)
		}
	}
	for _, d := range drives {
		st := states[d]
		switch {
		case st.Last == need:
		case need == "seq" || !st.Filled:
			full = append(full, d)
		default:
			randOnly = append(randOnly, d)
		}
	}
	sort.Ints(full)
	var steps []Step
	if len(full) > 0 {
		fills := p.Spec.Precondition.FillPasses > 0
		if purge := p.Spec.Precondition.Purge; purge != "none" {
			st := Step{Kind: StepPurge, Name: "purge (" + purge + ")", Drives: full, Purge: purge,
				Est: p.purgeEstimate(full, purge)}
			if p.allFiles(full) {
				st.Name, st.Est = "purge (deallocate the file)", time.Second
			}
			if !fills {
				// With no fill passes, a purged drive is as sequential as it gets.
				st.State = "seq"
			}
			steps = append(steps, st)
		}
		if fills {
			fill := p.fill(full)
			steps = append(steps, fill, p.verify(fill))
		}
	}
	if strings.HasPrefix(need, "rand:") {
		var all []int
		for _, d := range append(append([]int(nil), full...), randOnly...) {
			if !slices.Contains(fillOnly, d) {
				all = append(all, d)
			}
		}
		sort.Ints(all)
		if len(all) > 0 {
			steps = append(steps, p.random(all, twin, need))
		}
	}
	return steps
}

// Apply records that st has run.
func Apply(states []State, st Step) {
	for _, d := range st.Drives {
		switch st.Kind {
		case StepPurge:
			states[d] = State{Filled: st.State == "seq", Last: st.State}
		case StepFill:
			states[d] = State{Filled: true, Last: "seq"}
		case StepRandom:
			states[d].Last = st.State
		}
	}
}

func (p *Planner) fill(drives []int) Step {
	passes := p.Spec.Precondition.FillPasses
	var cap64 int64
	if p.Precondition == Quick {
		passes = min(passes, 1)
		cap64 = QuickFillCap
	}
	targets := p.Targets(drives)
	var bytes int64
	var est time.Duration
	for i, d := range drives {
		size := p.Drives[d].Size
		if cap64 > 0 && size > cap64 {
			size = cap64
		}
		// Every logical block, the bytes past the last 128 KiB block
		// included (a regular file's last partial 512 bytes are not one).
		lba := int64(p.Drives[d].LogicalBlockSize)
		if lba <= 0 {
			lba = 512
		}
		size -= size % lba
		targets[i].Size = size
		bytes = max(bytes, size*int64(passes))
		rate := p.seqWriteRate(p.Drives[d].Capacity)
		est = max(est, time.Duration(float64(size*int64(passes))/rate*float64(time.Second)))
	}
	p.fills++
	job := fiojob.Fill(targets, passes, FillID(p.Seed, p.fills))
	job.IOEngine = p.Spec.Method.IOEngine
	job.Direct = p.Spec.Method.Direct
	return Step{Kind: StepFill, Name: fmt.Sprintf("sequential fill (%d × 128 KiB write pass)", passes), Drives: drives,
		Job: job, Bytes: bytes, State: "seq", Est: est}
}

// ReadBackJobs is how many jobs read back each drive, on disjoint ranges
// and the drive's CPUs: the most jobs a workload of the spec runs on a
// drive (8 on the built-in spec), as many as its cells use; at least 1.
func (p *Planner) ReadBackJobs() int {
	n := 1
	for _, w := range p.Spec.Workloads {
		n = max(n, w.NumJobs)
	}
	return n
}

// verify is the read pass right after fill that checks every block it
// wrote (as many bytes as one pass), estimated at the capacity's
// sequential-read rate: the read-back runs ReadBackJobs jobs a drive,
// enough for the drive's rate, not one stream's.
func (p *Planner) verify(fill Step) Step {
	var est time.Duration
	for i, d := range fill.Drives {
		size := fill.Job.Targets[i].Size
		if size == 0 {
			size = p.Drives[d].Size
		}
		rate := p.seqRate(p.Drives[d].Capacity, "read")
		est = max(est, time.Duration(float64(size)/rate*float64(time.Second)))
	}
	return Step{Kind: StepVerify, Name: "verify pass (read back every block the fill wrote, each byte compared)",
		Drives: fill.Drives, Job: fiojob.VerifyPass(fill.Job, p.ReadBackJobs()), State: "seq", Est: est}
}

// Rule is the spec's steady-state rule.
func (p *Planner) Rule() steady.Rule {
	pc := p.Spec.Precondition
	return steady.Rule{Window: pc.SteadyWindow, MaxRange: pc.SteadyRange, MaxExcursion: pc.SteadySlope}
}

func (p *Planner) random(drives []int, twin specs.Workload, need string) Step {
	pc := p.Spec.Precondition
	rt := pc.RandomRuntime
	if p.Precondition == Quick {
		rt = min(rt, QuickRandomCap)
	}
	st := p.randomWrites(drives, twin, rt, pc.SteadyRound)
	st.Kind, st.State = StepRandom, need
	st.Name = fmt.Sprintf("random preconditioning (%s, until steady state, at most %s)", twin.Name, rt)
	st.Job.SteadyState, st.Job.SteadyStateDuration = pc.SteadyState, pc.SteadyStateDuration
	return st
}

// TopUp is the top-up of idle drives with twin's random writes: at most
// the spec's topup_runtime, on rounds short enough that the steady-state
// window fits in it twice.
func (p *Planner) TopUp(drives []int, twin specs.Workload) Step {
	pc := p.Spec.Precondition
	rt := pc.TopUpRuntime
	if p.Precondition == Quick {
		rt = min(rt, QuickRandomCap)
	}
	round := min(pc.SteadyRound, rt/time.Duration(2*max(pc.SteadyWindow, 1)))
	round = max(round, 100*time.Millisecond)
	st := p.randomWrites(drives, twin, rt, round)
	st.Kind, st.Idle, st.State = StepTopUp, pc.IdleLimit, "rand:"+twin.Name
	st.Name = fmt.Sprintf("top-up of drives idle > %s (%s, until steady state, at most %s)", pc.IdleLimit, twin.Name, rt)
	return st
}

// randomWrites is twin's random writes on drives for at most rt, logging
// IOPS and bandwidth a second.
func (p *Planner) randomWrites(drives []int, twin specs.Workload, rt, round time.Duration) Step {
	job := fiojob.RandomPrecondition(p.Targets(drives), twin.BS, rt, "", 0)
	job.IOEngine = p.Spec.Method.IOEngine
	job.Direct = p.Spec.Method.Direct
	// One sample a second (a shorter round's own length): the rounds are
	// summed from them (steady.LogRounds), and the recording keeps them
	// for the step's charts of IOPS against time and bytes written.
	job.LogInterval = min(round, time.Second)
	var bytes int64
	for _, d := range drives {
		if c, ok := p.Spec.Capacity(p.Drives[d].Capacity); ok {
			bytes = max(bytes, writtenBytes(twin, c.Spec[twin.Name], rt))
		}
	}
	return Step{Drives: drives, Job: job, Bytes: bytes, Est: rt, Twin: twin, Rule: p.Rule(), Round: round}
}

// seqWriteRate is the fill's expected rate in bytes per second: the
// capacity's sequential-write spec, or 1 GB/s when the spec has none.
func (p *Planner) seqWriteRate(capacity string) float64 { return p.seqRate(capacity, "write") }

// seqRate is the capacity's sequential spec for rw ("read" or "write") in
// bytes per second, or 1 GB/s when the spec has none.
func (p *Planner) seqRate(capacity, rw string) float64 {
	capy, _ := p.Spec.Capacity(capacity)
	for _, w := range p.Spec.Workloads {
		if w.RW == rw && w.Metric == specs.MBps {
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

// Targets gives drives as fio targets, each pinned to its share of CPUs.
func (p *Planner) Targets(drives []int) []fiojob.Target {
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
	job := fiojob.Job{
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
		Targets:   p.Targets(cell.Drives),
		BSSplit:   bssplit.Fio(w.BSSplit), RateIOPS: int64(w.RateIOPS), ThinkTime: w.ThinkTime,
		BufferCompressPercentage: w.BufferCompressPercentage,
	}
	if cell.OpenLoop {
		job.RateProcess = "poisson"
	}
	return job
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

// writtenBytes estimates what w writes per drive in rt at its spec value
// v: IOPS × block size, or MB/s, times the written fraction of a mixed
// workload (fio's default rwmixread is 50).
func writtenBytes(w specs.Workload, v float64, rt time.Duration) int64 {
	if !w.Writes() {
		return 0
	}
	frac := 1.0
	if !w.IsWriteOnly() {
		read := w.RWMixRead
		if read < 0 {
			read = 50
		}
		frac = float64(100-read) / 100
	}
	if w.Metric == specs.MBps {
		return int64(v * 1e6 * rt.Seconds() * frac)
	}
	return int64(v * float64(w.BS) * rt.Seconds() * frac)
}

// Narrow is st on fewer drives (the others failed earlier, or are not
// idle): the same step, its job rebuilt for drives.
func (p *Planner) Narrow(st Step, drives []int) Step {
	var out Step
	switch st.Kind {
	case StepFill:
		out = p.fill(drives)
		out.Job.VerifyPattern, out.Job.EarlierPattern = st.Job.VerifyPattern, st.Job.EarlierPattern
	case StepRandom:
		out = p.random(drives, st.Twin, st.State)
	case StepTopUp:
		out = p.TopUp(drives, st.Twin)
	case StepVerify:
		fill := p.fill(drives)
		fill.Job.VerifyPattern = st.Job.VerifyPattern
		out = p.verify(fill)
	default:
		st.Drives = drives
		return st
	}
	out.N, out.Name = st.N, st.Name
	return out
}
