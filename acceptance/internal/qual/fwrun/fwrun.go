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
// -firmware-back's, each on every drive in turn, when asked; each is
// estimated as the load before and after, the spec's max_stall and 10 s
// for the download and commit, a drive.
func Add(pl *plan.Plan, cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive) {
	if cfg.Firmware == "" || spec.Firmware == nil || len(drives) == 0 || !cfg.Selected("TestFirmware/"+verdict.IntegrityName(drives[0].Path)+"/"+firmware.StepActivate) {
		return
	}
	var ds []int
	for d, dr := range drives {
		if !dr.Placeholder {
			ds = append(ds, d)
		}
	}
	for i, img := range []string{cfg.Firmware, cfg.FirmwareBack} {
		if img == "" || len(ds) == 0 {
			continue
		}
		step := []string{firmware.StepActivate, firmware.StepBack}[i]
		var size int64
		if fi, err := os.Stat(img); err == nil {
			size = fi.Size()
		}
		f := spec.Firmware
		st := plan.Step{Kind: plan.StepFirmware, N: len(pl.Steps) + 1, Drives: ds, Purge: step,
			Est: time.Duration(len(ds)) * (2*Settle + f.MaxStall + 10*time.Second),
			Name: fmt.Sprintf("firmware %s: %s (%d bytes) to slot %d, %s (commit action %d), under a 4 KiB random read/write load, a drive at a time; I/O stall ≤ %s",
				step, img, size, f.Slot, f.Action, firmware.CommitAction(f.Action), f.MaxStall)}
		if step == firmware.StepActivate {
			var n int
			for _, d := range ds {
				for _, m := range remeasured(*pl, d) {
					st.Est += m.Est
					n++
				}
			}
			if n > 0 {
				st.Name += fmt.Sprintf("; then %d cell(s), the first of each drive state, measured again", n)
			}
		}
		pl.Steps = append(pl.Steps, st)
		pl.Total += st.Est
	}
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
		for _, d := range st.Drives {
			dr := in.Drives[d]
			if slices.ContainsFunc(all, func(r firmware.Result) bool { return r.Drive == dr.Path && r.Step == st.Purge }) {
				continue
			}
			if ctx.Err() != nil {
				return all, ""
			}
			fin := firmware.Input{Drive: dr.Path, Device: dr.Info.Resolved, Admin: dr.Info.Controller, Image: image(in, st), Step: st.Purge,
				Action: in.Spec.Firmware.Action, Slot: in.Spec.Firmware.Slot, MaxStall: in.Spec.Firmware.MaxStall, Allowed: in.Spec.Health.Firmware,
				NVMe: in.NVMe, Dir: filepath.Join(in.Record, "firmware", verdict.IntegrityName(dr.Path)), Settle: Settle}
			if fin.Device == "" {
				fin.Device = dr.Path
			}
			if fin.Admin == "" {
				fin.Admin = dr.Path
			} else {
				fin.Admin = "/dev/" + fin.Admin
			}
			if st.Purge == firmware.StepBack {
				if i := slices.IndexFunc(all, func(r firmware.Result) bool { return r.Drive == dr.Path && r.Step == firmware.StepActivate }); i >= 0 {
					fin.Want = all[i].Before
				}
			}
			logf("%s: firmware %s: %s", dr.Path, st.Purge, fin.Image)
			// Kept before the first command is sent: an activation
			// interrupted (a hung reset, the host lost) is a failure a
			// resume never runs again, not a step it forgets.
			if err := keep(in, started(fin, d)); err != nil {
				logf("%s: %v", in.Record, err)
			}
			r := firmware.Step(ctx, fin)
			if st.Purge == firmware.StepActivate {
				firmware.AddRemeasured(&r, remeasure(ctx, in, d, fin.Dir))
			}
			logf("%s", report.Escape(r.Message))
			if err := keep(in, Entry{Result: r, DriveIndex: &d}); err != nil {
				logf("%s: %v", in.Record, err)
			}
			all = append(all, r)
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

// remeasured are the measure steps of the cells remeasure runs again for
// drive d: the first single-drive cell of each state it was measured in.
func remeasured(pl plan.Plan, d int) []plan.Step {
	seen := map[string]bool{}
	var out []plan.Step
	for _, st := range pl.Steps {
		for _, c := range st.Cells {
			if st.Kind == plan.StepMeasure && c.Kind == report.KindSingle && len(c.Drives) == 1 && c.Drives[0] == d && !seen[c.Need] {
				seen[c.Need] = true
				out = append(out, plan.Step{Est: st.Est, Cells: []plan.Cell{c}})
			}
		}
	}
	return out
}

// remeasure measures again, after the activation, the first cell of each
// drive state that drive d was measured alone in, from its recorded job
// file, against its figure in in.Results.
func remeasure(ctx context.Context, in In, d int, dir string) []firmware.Remeasure {
	var out []firmware.Remeasure
	for _, st := range remeasured(in.Plan, d) {
		c := st.Cells[0]
		i := slices.IndexFunc(in.Results, func(r report.Result) bool { return r.Test == c.Test })
		if i < 0 || in.Results[i].Actual <= 0 {
			continue // not measured in this run (kept by a resume, or skipped)
		}
		m := firmware.Remeasure{Test: c.Test, Metric: in.Results[i].Metric, Before: in.Results[i].Actual, Tolerance: in.Spec.Baseline.Tolerance}
		var err error
		if m.After, err = firmware.Measure(ctx, record.Base(in.Record, c.Test)+record.JobExt, m.Metric, filepath.Join(dir, "remeasure")); err != nil {
			m.Error = err.Error()
		}
		m.Compare()
		out = append(out, m)
	}
	return out
}

// image is st's image: the plan's name carries it after the step's name.
func image(in In, st plan.Step) string {
	rest := strings.TrimPrefix(st.Name, "firmware "+st.Purge+": ")
	if i := strings.Index(rest, " ("); i > 0 {
		return rest[:i]
	}
	return rest
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
