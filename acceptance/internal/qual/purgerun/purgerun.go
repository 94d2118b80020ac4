// Package purgerun runs TestPurge for a run: in a live run it purges every
// drive once more at the end and reads it back (purgeproof), keeping each
// verdict in the recording before it is reported; a resumed run keeps the
// verdicts its recording holds, and a replay judges them as recorded.
package purgerun

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof/kept"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Mode is the read-back of TestPurge when the command line or the spec
// asks for one and go test's -run and -skip select TestPurge of a drive
// (see Selected); "" otherwise.
func Mode(cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive) string {
	if len(Selected(cfg, drives)) == 0 {
		return ""
	}
	return purgeproof.Mode(cfg.PurgeAfter, spec.Purge.Verify)
}

// Asked is what run.json records of the purge at the end: its read-back
// (Mode) and, when there is one, the drives it purges (Selected).
func Asked(cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive) (string, []int) {
	mode := Mode(cfg, spec, drives)
	if mode == "" {
		return "", nil
	}
	return mode, Selected(cfg, drives)
}

// Selected is the drives (indices) whose own TestPurge/<drive> go test's
// -run and -skip select: the drives the purge at the end purges, each
// selected on its own; never one not there (plan.Drive.Missing).
func Selected(cfg *cmdline.Config, drives []plan.Drive) []int {
	var out []int
	for d, dr := range drives {
		if !dr.Missing() && cfg.Selected("TestPurge/"+verdict.IntegrityName(dr.Path)) {
			out = append(out, d)
		}
	}
	return out
}

// In is what a run's TestPurge needs.
type In struct {
	Drives []plan.Drive
	Plan   plan.Plan
	// Record is a live run's -record directory; Reader a replay's
	// recording (nil in a live run).
	Record string
	Reader *recording.Reader
	// Resumed says the live run resumes the one recorded in Record.
	Resumed bool
	Ctrls   map[string]nvme.Controller
	// Discarder discards through the descriptors the run holds.
	Discarder purge.Discarder
	NVMe      nvme.CLI
	// Writing, when set, is told the purge step before it writes (a live
	// run's run.json marks the drives written: see live.PurgingAtTheEnd).
	Writing func(plan.Step)
	// Landed, when set, adds the sha256 of the verdicts kept (kept.File)
	// to run.json's files once they are saved.
	Landed func() error
}

// Judge is each drive's TestPurge verdict, in the order of the drives; why
// says why there is none to judge. A replay judges the verdicts its
// recording keeps, a resume keeps them whether or not it purges again:
// when the recording says a purge at the end was asked for or started,
// a drive without a verdict fails (see recorded).
func Judge(ctx context.Context, in In, logf func(string, ...any)) ([]purgeproof.Result, string) {
	i := slices.IndexFunc(in.Plan.Steps, func(st plan.Step) bool { return st.Kind == plan.StepPurgeProof })
	if in.Reader != nil {
		return recorded(in.Reader.Dir, in.Reader.Info, in.Drives, i >= 0)
	}
	if i < 0 {
		if in.Resumed {
			// The verdicts the run kept are its evidence whatever this
			// resume asks: a failed purge stays failed.
			info, _ := readRun(in.Record)
			if rs, why := recorded(in.Record, info, in.Drives, false); why == "" {
				return rs, ""
			}
		}
		return nil, "no purge at the end of the run: give -purge-after, or set [purge] verify = \"sample\" or \"full\" in the spec"
	}
	st := in.Plan.Steps[i]
	if !in.Resumed {
		// A verdict an earlier run left in the directory is not this run's.
		if err := os.Remove(filepath.Join(in.Record, kept.File)); err != nil && !errors.Is(err, os.ErrNotExist) {
			logf("%v", err)
		}
	}
	prior, err := kept.Load(in.Record)
	if err == nil {
		err = kept.Check(prior, paths(in.Drives), sizes(in.Drives))
	}
	if err != nil {
		// Verdicts that do not read are no evidence of a pass: every
		// drive fails, and none is purged again.
		return failAll(in.Drives, fmt.Sprintf("the kept purge verdicts are refused: %v", err)), ""
	}
	var todo []int
	for _, d := range st.Drives {
		if !slices.ContainsFunc(prior, func(r purgeproof.Result) bool { return r.Drive == in.Drives[d].Path }) {
			todo = append(todo, d)
		}
	}
	if ctx.Err() != nil {
		return prior, "not run: the run was stopped"
	}
	rs := Keepable(ctx, prove(ctx, in, st, todo, logf))
	if len(rs) > 0 {
		if err := kept.Save(in.Record, rs); err != nil {
			logf("%s: %v", in.Record, err)
		} else if in.Landed != nil {
			if err := in.Landed(); err != nil {
				logf("%s: %v", in.Record, err)
			}
		}
	}
	all := append(prior, rs...)
	slices.SortStableFunc(all, func(a, b purgeproof.Result) int { return index(in.Drives, a.Drive) - index(in.Drives, b.Drive) })
	if len(all) == 0 && ctx.Err() != nil {
		return nil, "not run: the run was stopped during the purge at the end (a resume purges again)"
	}
	return all, ""
}

// Keepable is the verdicts of rs that stand once the run was stopped:
// all of them while ctx runs; after, only those that found a bad sector
// (a block of the fill read back is a failure whatever stopped the read).
// A read cut short by the stop proves nothing: its drive gets no verdict,
// and a resume purges it again.
func Keepable(ctx context.Context, rs []purgeproof.Result) []purgeproof.Result {
	if ctx.Err() == nil {
		return rs
	}
	return slices.DeleteFunc(slices.Clone(rs), func(r purgeproof.Result) bool { return r.Bad == 0 })
}

// Moved renames, in a resumed recording dir's purge.json, each verdict of a
// drive the resume matched by its identity under another path (to: its
// recorded path to its path now), so that the verdict stays the drive's
// (kept, not purged again) in this resume and in a replay of it; files,
// run.json's, gets the new sha256 of purge.json when it lists it. A
// purge.json that does not read is left as it is: TestPurge fails every
// drive, naming it (see Judge).
func Moved(dir string, to map[string]string, files map[string]string) error {
	if _, err := kept.Load(dir); err != nil {
		return nil
	}
	changed, err := kept.Moved(dir, to)
	if err != nil || !changed {
		return err
	}
	if _, listed := files[kept.File]; listed {
		sum, err := record.HashIn(dir, kept.File)
		if err != nil {
			return err
		}
		files[kept.File] = sum
	}
	return nil
}

// recorded is the verdicts kept in the recording dir whose run.json is
// info, each drive's in the order of drives. When the recording says the
// purge at the end was asked for (asked: the recorded spec asks it; or
// run.json's purge_after), started (run.json marks a purge-proof step
// writing a drive) or kept (run.json lists purge.json's sha256), a drive
// without a verdict fails; verdicts kept.Check refuses fail every drive.
// why is set when there is no verdict and none was asked for.
func recorded(dir string, info record.Run, drives []plan.Drive, asked bool) ([]purgeproof.Result, string) {
	rs, err := kept.Load(dir)
	if err == nil {
		err = kept.Check(rs, paths(drives), sizes(drives))
	}
	if err != nil {
		return failAll(drives, fmt.Sprintf("the recorded purge verdicts are refused: %v", err)), ""
	}
	started := purgeStarted(info)
	_, listed := info.Files[kept.File]
	asked = asked || info.PurgeAfter != ""
	// needs says the recording holds that drive d was to have a verdict:
	// its purge started, or it was asked for (the drives run.json lists
	// when it lists them: -run selected TestPurge of those alone) or kept.
	needs := func(d int) bool {
		if _, ok := started[d]; ok {
			return true
		}
		if info.PurgeDrives != nil {
			return slices.Contains(info.PurgeDrives, d)
		}
		return asked || listed
	}
	if len(rs) == 0 && !slices.ContainsFunc(indices(drives), needs) {
		return nil, "the recording holds no purge at the end of the run (-purge-after, or the spec's [purge] verify)"
	}
	var out []purgeproof.Result
	for d, dr := range drives {
		if j := slices.IndexFunc(rs, func(r purgeproof.Result) bool { return r.Drive == dr.Path }); j >= 0 {
			out = append(out, rs[j])
			continue
		}
		if dr.Placeholder || !needs(d) {
			continue
		}
		why := "the run asked for a purge at the end (-purge-after, or the spec's [purge] verify)"
		if s, ok := started[d]; ok {
			why = fmt.Sprintf("run.json records the purge at the end of the run writing it (%s)", s)
		} else if listed {
			why = fmt.Sprintf("run.json lists the sha256 of %s (a purge verdict was kept)", kept.File)
		}
		out = append(out, purgeproof.Result{Drive: dr.Path, Verdict: purgeproof.Fail,
			Message: fmt.Sprintf("%s: %s, but %s holds no verdict for it: its purge is not proven (a resume with -purge-after purges it again)", dr.Path, why, filepath.Join(dir, kept.File))})
	}
	return out, ""
}

// purgeStarted is, by drive index, the purge-proof step run.json marks
// as writing or having written the drive.
func purgeStarted(info record.Run) map[int]string {
	out := map[int]string{}
	if info.Samples == nil {
		return out
	}
	tag := " " + plan.StepPurgeProof.String() + ": "
	for d, s := range info.Samples.Drives {
		for _, step := range []string{s.Writing, s.Wrote} {
			if strings.Contains(step, tag) {
				out[d] = step
			}
		}
	}
	return out
}

// readRun is the run.json of the recording dir (zero when it does not
// read: a resume has read it already).
func readRun(dir string) (record.Run, error) {
	var info record.Run
	b, err := record.ReadFile(dir, record.RunFile)
	if err == nil {
		err = json.Unmarshal(b, &info)
	}
	return info, err
}

func indices(drives []plan.Drive) []int {
	out := make([]int, len(drives))
	for d := range drives {
		out[d] = d
	}
	return out
}

func paths(drives []plan.Drive) []string {
	var out []string
	for _, d := range drives {
		out = append(out, d.Path)
	}
	return out
}

func sizes(drives []plan.Drive) []int64 {
	var out []int64
	for _, d := range drives {
		out = append(out, d.Size)
	}
	return out
}

// failAll fails every drive with msg.
func failAll(drives []plan.Drive, msg string) []purgeproof.Result {
	var out []purgeproof.Result
	for _, d := range drives {
		out = append(out, purgeproof.Result{Drive: d.Path, Verdict: purgeproof.Fail, Message: d.Path + ": " + msg})
	}
	return out
}

func index(drives []plan.Drive, path string) int {
	return slices.IndexFunc(drives, func(d plan.Drive) bool { return d.Path == path })
}

// prove purges drives (indices into in.Drives) as st says and reads them
// back.
func prove(ctx context.Context, in In, st plan.Step, drives []int, logf func(string, ...any)) []purgeproof.Result {
	if len(drives) == 0 {
		return nil
	}
	reach := live.PurgeReach(in.Drives, drives, st.Purge, in.Ctrls)
	var infos []device.Info
	for _, d := range reach {
		infos = append(infos, in.Drives[d].Info)
	}
	if in.Writing != nil {
		marked := st
		marked.Drives = reach
		in.Writing(marked)
	}
	steps, errs := purge.Plan(infos, st.Purge, in.Ctrls)
	pin := purgeproof.Input{Mode: st.Proof, Steps: steps, Runner: purge.Runner{NVMe: in.NVMe}, Discarder: in.Discarder, Fills: fills(in.Plan)}
	for _, d := range drives {
		info := in.Drives[d].Info
		t := purgeproof.Target{Path: info.Path, Device: info.Resolved, Size: info.Size, Sector: int64(info.LogicalBlockSize),
			Loop: info.BackingFile != "" || strings.HasPrefix(info.Name, "loop")}
		if info.Controller != "" {
			dev := t.Device
			if dev == "" {
				dev = t.Path
			}
			var err error
			if t.DLFEAT, err = purgeproof.DLFEAT(ctx, in.NVMe, dev); err != nil {
				logf("%v: the purge promises no read value, only that the old data is gone", err)
			}
		}
		pin.Targets = append(pin.Targets, t)
	}
	rs := purgeproof.Prove(ctx, pin, logf)
	for i := range rs {
		if rs[i].Command == "" && len(errs) > 0 {
			rs[i].Message += ": " + errors.Join(errs...).Error()
		}
	}
	return rs
}

// fills are the ids of the fills the plan writes, read from their
// patterns ("0x" magic, id, "%o").
func fills(pl plan.Plan) purgeproof.Fills {
	var out purgeproof.Fills
	for _, st := range pl.Steps {
		for _, p := range []string{st.Job.VerifyPattern, st.Job.EarlierPattern} {
			hexid := strings.TrimSuffix(strings.TrimPrefix(p, "0x"+fiojob.PatternMagic), "%o")
			if b, e := hex.DecodeString(hexid); e == nil && len(b) == fiojob.PatternIDBytes {
				id, _ := strconv.ParseUint(hexid, 16, 64)
				out = append(out, id)
			}
		}
	}
	return out
}

// Report is r as the report keeps it: TestPurge/<drive>, counted in the
// drive's capacity gate.
func Report(r purgeproof.Result, drives []plan.Drive) report.Result {
	res := report.Result{Test: "TestPurge/" + verdict.IntegrityName(r.Drive), Kind: report.KindPurge, Workload: "Purge proven",
		Drives: 1, Verdict: r.Verdict, Purge: &r}
	if i := index(drives, r.Drive); i >= 0 {
		res.Capacity = drives[i].Capacity
	}
	if r.Verdict != purgeproof.Pass {
		res.Error, res.Cause = r.Message, report.CausePurge
	}
	if r.Verdict == purgeproof.Inconclusive {
		res.Cause = purgeproof.CauseNotShown
	}
	return res
}
