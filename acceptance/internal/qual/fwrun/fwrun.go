// Package fwrun runs TestFirmware for a run: in a live run it activates
// -firmware's image on every drive under load (and -firmware-back's after
// it), keeping each step's verdict in the recording before it is
// reported; a resumed run keeps the verdicts its recording holds, and a
// replay judges them as recorded.
package fwrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// File is where a recording keeps each drive's steps, written as each is
// judged: a resume keeps them (a failure stays failed), a replay judges
// them.
const File = "firmware.json"

// Check is the problem of -firmware with a spec that has no [firmware]
// table, naming the spec and the fix; nil otherwise.
func Check(cfg *cmdline.Config, spec *specs.Spec) error {
	if cfg.Firmware != "" && spec.Firmware == nil {
		return fmt.Errorf("parsing -firmware: %s has no [firmware] table: add one with action, slot and max_stall (the longest I/O stall the activation may cause, e.g. max_stall = \"1s\")", spec.File)
	}
	return nil
}

// Settle is the load run before the download and after the commit.
const Settle = time.Second

// Add appends the firmware steps to pl, -firmware's activation and
// -firmware-back's, when asked: each step's drives are those whose own
// TestFirmware/<name>/<step> -run selects, run a controller at a time
// (one commit reaches every namespace of a controller: its given
// namespaces share one step, the load on them all). Each controller is
// estimated as the wait for the load's first I/O, the load before and
// after, the spec's max_stall and 10 s for the download and commit; an
// activation adds its drives' re-measured cell, twice.
func Add(pl *plan.Plan, cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive) {
	if spec.Firmware == nil {
		return
	}
	for _, si := range images(cfg) {
		step, img := si[0], si[1]
		var ds []int
		for d, dr := range drives {
			if !dr.Missing() && selected(cfg, dr.Path, step) {
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			continue
		}
		var size int64
		if fi, err := os.Stat(img); err == nil {
			size = fi.Size()
		}
		f := spec.Firmware
		st := plan.Step{Kind: plan.StepFirmware, N: len(pl.Steps) + 1, Drives: ds, Purge: step, Image: img,
			Est: time.Duration(len(groups(drives, ds)))*(firmware.LoadStart+2*Settle+f.MaxStall+10*time.Second) + knownTime(spec, drives, ds),
			Name: fmt.Sprintf("firmware %s: %s (%d bytes) to slot %d, %s (commit action %d), under a 4 KiB random read/write load, a controller at a time; I/O stall ≤ %s",
				step, img, size, f.Slot, f.Action, firmware.CommitAction(f.Action), f.MaxStall)}
		if step == firmware.StepActivate {
			var n int
			for _, d := range ds {
				if m, ok := remeasured(*pl, d); ok {
					st.Est += 2 * m.Est
					n++
				}
			}
			if n > 0 {
				st.Name += fmt.Sprintf("; %d cell(s), the last each drive was measured in alone, measured just before the download and just after the commit", n)
			}
		}
		pl.Steps = append(pl.Steps, st)
		pl.Total += st.Est
	}
}

// knownTime is the time to write and read back the known region of the
// drives ds, at the spec's sequential write and read figures (1 GB/s
// where it gives none).
func knownTime(spec *specs.Spec, drives []plan.Drive, ds []int) time.Duration {
	var t time.Duration
	for _, d := range ds {
		n := float64(firmware.KnownBytes(drives[d].Info.Size))
		t += time.Duration(n/seqRate(spec, drives[d].Capacity, "write")*1e9) + time.Duration(n/seqRate(spec, drives[d].Capacity, "read")*1e9)
	}
	return t
}

// seqRate is the spec's sequential rw figure of capacity in bytes a
// second (as the plan's purge read-back estimate reads it), 1 GB/s when
// it gives none.
func seqRate(spec *specs.Spec, capacity, rw string) float64 {
	c, _ := spec.Capacity(capacity)
	for _, w := range spec.Workloads {
		if w.RW == rw && w.Metric == specs.MBps {
			if v, ok := c.Spec[w.Name]; ok && v > 0 {
				return v * 1e6
			}
		}
	}
	return 1e9
}

// In is what a run's TestFirmware needs.
type In struct {
	Drives []plan.Drive
	Plan   plan.Plan
	Spec   *specs.Spec
	// Record is a live run's -record directory; Replay a replay's
	// recording ("" in a live run).
	Record, Replay string
	Resumed        bool
	NVMe           nvme.CLI
	// Writing, when set, is told each step before it writes its drives.
	Writing func(plan.Step)
	// Results are the run's results so far: each drive's cells before the
	// activation, one a state measured again after it.
	Results []report.Result
	// RunJSON, when set, lists firmware.json's sha256 in run.json each
	// time it is written, so that a replay tells an edited one.
	RunJSON *runjson.Recorder
	// Asked is run.json's firmware in a replay and a resume: the steps
	// the recorded run asked for, each drive's verdict of which the
	// recording must hold.
	Asked []record.FirmwareAsked
}

// Judge is each drive's steps' verdicts; why says why there are none. A
// replay judges the verdicts its recording keeps, a resume keeps them
// whether or not it activates again (see Kept): a step kept as started
// fails and is never run again, a step run.json asked for without a
// verdict fails unless this resume runs it.
func Judge(ctx context.Context, in In, logf func(string, ...any)) ([]firmware.Result, string) {
	if in.Replay != "" {
		rs, why, _ := kept(in.Replay, in.Asked, in.Drives, nil)
		return rs, why
	}
	var steps []plan.Step
	for _, st := range in.Plan.Steps {
		if st.Kind == plan.StepFirmware {
			steps = append(steps, st)
		}
	}
	if len(steps) == 0 {
		if in.Resumed {
			// The verdicts the run kept are its evidence whatever this
			// resume asks: a failed activation stays failed.
			if rs, why, _ := kept(in.Record, in.Asked, in.Drives, nil); why == "" {
				return rs, ""
			}
		}
		return nil, "no firmware activation: give -firmware=FILE and a [firmware] table in the spec"
	}
	var all []firmware.Result
	if in.Resumed {
		todo := func(d int, step string) bool {
			return slices.ContainsFunc(steps, func(st plan.Step) bool { return st.Purge == step && slices.Contains(st.Drives, d) })
		}
		var refused bool
		all, _, refused = kept(in.Record, in.Asked, in.Drives, todo)
		if refused {
			// Verdicts that do not read are no evidence of a pass: every
			// drive fails, and none is flashed again.
			return all, ""
		}
	} else if err := os.Remove(filepath.Join(in.Record, File)); err != nil && !errors.Is(err, os.ErrNotExist) {
		logf("%v", err)
	}
	for _, st := range steps {
		if in.Writing != nil {
			in.Writing(st)
		}
		for _, g := range groups(in.Drives, st.Drives) {
			// One commit reaches the whole group: once one of its drives
			// keeps the step, it was sent.
			if slices.ContainsFunc(g, func(d int) bool {
				return slices.ContainsFunc(all, func(r firmware.Result) bool { return r.Drive == in.Drives[d].Path && r.Step == st.Purge })
			}) {
				continue
			}
			if ctx.Err() != nil {
				return all, ""
			}
			for i, r := range runGroup(ctx, in, st, g, all, logf) {
				d := g[i]
				logf("%s", report.Escape(r.Message))
				if err := keep(in, Entry{Result: r, DriveIndex: &d}); err != nil {
					logf("%s: %v", in.Record, err)
				}
				all = append(all, r)
			}
		}
	}
	return all, ""
}

// keep saves e in the recording and lists its sha256 in run.json.
func keep(in In, e Entry) error {
	if err := saveEntries(in.Record, []Entry{e}); err != nil {
		return err
	}
	return hash(in.RunJSON, in.Record)
}

// input is the step st on the drives g of one controller: the first
// drive's, the load on them all.
func input(in In, st plan.Step, g []int) firmware.Input {
	dr := in.Drives[g[0]]
	fin := firmware.Input{Drive: dr.Path, Device: dev(dr), Admin: dr.Info.Controller, Image: st.Image, Step: st.Purge,
		Action: in.Spec.Firmware.Action, Slot: in.Spec.Firmware.Slot, MaxStall: in.Spec.Firmware.MaxStall, Allowed: in.Spec.Health.Firmware,
		NVMe: in.NVMe, Dir: filepath.Join(in.Record, "firmware", verdict.IntegrityName(dr.Path)), Settle: Settle,
		Known: firmware.KnownBytes(dr.Info.Size), Pattern: rand.Uint64()}
	for _, d := range g[1:] {
		fin.Others = append(fin.Others, dev(in.Drives[d]))
		fin.Known = min(fin.Known, firmware.KnownBytes(in.Drives[d].Info.Size))
	}
	if fin.Admin == "" {
		fin.Admin = dr.Path
	} else {
		fin.Admin = "/dev/" + fin.Admin
	}
	return fin
}

func dev(dr plan.Drive) string {
	if dr.Info.Resolved != "" {
		return dr.Info.Resolved
	}
	return dr.Path
}

// runGroup runs st on the drives g of one controller: an activation
// measures each drive's re-measured cell just before and just after it.
// Each drive has its result, the step's.
func runGroup(ctx context.Context, in In, st plan.Step, g []int, all []firmware.Result, logf func(string, ...any)) []firmware.Result {
	fin := input(in, st, g)
	if st.Purge == firmware.StepBack {
		if i := slices.IndexFunc(all, func(r firmware.Result) bool { return r.Drive == fin.Drive && r.Step == firmware.StepActivate }); i >= 0 {
			fin.Want = all[i].Before
		}
	}
	before := map[int]*firmware.Remeasure{}
	if st.Purge == firmware.StepActivate {
		for _, d := range g {
			before[d] = measure(ctx, in, d, "before", nil)
		}
	}
	logf("%s: firmware %s: %s", fin.Drive, st.Purge, fin.Image)
	// Kept before the first command is sent: an activation interrupted
	// (a hung reset, the host lost) is a failure a resume never runs
	// again, not a step it forgets.
	for _, d := range g {
		each := fin
		each.Drive = in.Drives[d].Path
		if err := keep(in, started(each, d)); err != nil {
			logf("%s: %v", in.Record, err)
		}
	}
	r := firmware.Step(ctx, fin)
	var out []firmware.Result
	for _, d := range g {
		rd := r
		if p := in.Drives[d].Path; p != rd.Drive {
			rd.Message = strings.Replace(rd.Message, rd.Drive+": ", p+": ", 1)
			rd.Drive = p
		}
		if m := before[d]; m != nil {
			firmware.AddRemeasured(&rd, []firmware.Remeasure{*measure(ctx, in, d, "after", m)})
		}
		out = append(out, rd)
	}
	return out
}

// remeasured is the measure step of the cell measured just before and
// just after the activation on drive d: the last single-drive cell the
// plan measures on d alone, so the drive is in that cell's state at the
// activation.
func remeasured(pl plan.Plan, d int) (plan.Step, bool) {
	var out plan.Step
	var ok bool
	for _, st := range pl.Steps {
		if st.Kind != plan.StepMeasure {
			continue
		}
		for _, c := range st.Cells {
			if c.Kind == report.KindSingle && len(c.Drives) == 1 && c.Drives[0] == d {
				out, ok = plan.Step{Est: st.Est, Cells: []plan.Cell{c}}, true
			}
		}
	}
	return out, ok
}

// measure measures drive d's re-measured cell from its recorded job
// file, when ("before" or "after") the activation; after compares it
// with the figure measured before. Nil when there is none (no cell
// measured on d alone in this recording).
func measure(ctx context.Context, in In, d int, when string, before *firmware.Remeasure) *firmware.Remeasure {
	st, ok := remeasured(in.Plan, d)
	if !ok {
		return nil
	}
	c := st.Cells[0]
	job := record.Base(in.Record, c.Test) + record.JobExt
	if _, err := os.Stat(job); err != nil && before == nil {
		return nil // not run in this recording (kept by a resume, or skipped)
	}
	m := firmware.Remeasure{Test: c.Test, Metric: string(specs.IOPS), Tolerance: in.Spec.Baseline.Tolerance}
	if c.Workload.Metric != "" {
		m.Metric = string(c.Workload.Metric)
	}
	if before != nil {
		m = *before
	}
	dir := filepath.Join(in.Record, "firmware", verdict.IntegrityName(in.Drives[d].Path), "remeasure-"+when)
	v, err := firmware.Measure(ctx, job, m.Metric, dir)
	if err != nil {
		m.Error = fmt.Sprintf("%s the activation: %v", when, err)
	}
	if before == nil {
		m.Before = v
		return &m
	}
	if m.Error == "" {
		m.After = v
	}
	m.Compare()
	return &m
}

// Recorded says the recording dir holds firmware steps its run.json
// vouches for (it records the steps asked, or lists firmware.json's
// sha256): a replay of it has something to judge. A firmware.json alone
// is no recording.
func Recorded(dir string) bool {
	var info record.Run
	b, err := record.ReadFile(dir, record.RunFile)
	if err != nil || json.Unmarshal(b, &info) != nil {
		return false
	}
	_, listed := info.Files[File]
	return len(info.Firmware) > 0 || listed
}

// hash lists firmware.json's sha256 in run.json's files.
func hash(rec *runjson.Recorder, dir string) error {
	if rec == nil {
		return nil
	}
	sums, err := record.HashFiles(dir, []string{File})
	if err != nil {
		return err
	}
	return rec.Update(func(i *record.Run) {
		if i.Files == nil {
			i.Files = map[string]string{}
		}
		i.Files[File] = sums[File]
	})
}

// Load reads the steps kept in the recording dir, as kept (a step
// started and not finished has verdict Started); none when it holds none.
func Load(dir string) ([]firmware.Result, error) {
	es, err := loadEntries(dir)
	var out []firmware.Result
	for _, e := range es {
		out = append(out, e.Result)
	}
	return out, err
}

// Save adds rs to the steps kept in dir, replacing a drive's earlier step
// unless that failed (a failure is never forgotten), atomically.
func Save(dir string, rs []firmware.Result) error {
	var es []Entry
	for _, r := range rs {
		es = append(es, Entry{Result: r})
	}
	return saveEntries(dir, es)
}

// Report is r as the report keeps it: TestFirmware/<drive>/<step>,
// counted in the drive's capacity gate.
func Report(r firmware.Result, drives []plan.Drive) report.Result {
	res := report.Result{Test: "TestFirmware/" + verdict.IntegrityName(r.Drive) + "/" + r.Step, Kind: report.KindFirmware, Workload: "Firmware activation",
		Drives: 1, Verdict: r.Verdict, Firmware: &r}
	if i := slices.IndexFunc(drives, func(d plan.Drive) bool { return d.Path == r.Drive }); i >= 0 {
		res.Capacity = drives[i].Capacity
	}
	if r.Verdict != firmware.Pass {
		res.Error, res.Cause = r.Message, report.CauseFirmware
	}
	return res
}
