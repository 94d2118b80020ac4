// Package purgerun runs TestPurge for a run: in a live run it purges every
// drive once more at the end and reads it back (purgeproof), keeping each
// verdict in the recording before it is reported; a resumed run keeps the
// verdicts its recording holds, and a replay judges them as recorded.
package purgerun

import (
	"context"
	"encoding/hex"
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
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Mode is the read-back of TestPurge when the command line or the spec
// asks for one and go test's -run selects TestPurge; "" otherwise.
func Mode(cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive) string {
	if len(drives) == 0 || !cfg.Selected("TestPurge/"+verdict.IntegrityName(drives[0].Path)) {
		return ""
	}
	return purgeproof.Mode(cfg.PurgeAfter, spec.Purge.Verify)
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
}

// Judge is each drive's TestPurge verdict, in the order of the drives; why
// says why there is none to judge.
func Judge(ctx context.Context, in In, logf func(string, ...any)) ([]purgeproof.Result, string) {
	if in.Reader != nil {
		rs, err := kept.Load(in.Reader.Dir)
		if err != nil {
			return []purgeproof.Result{{Drive: in.Reader.Dir, Verdict: purgeproof.Fail, Message: fmt.Sprintf("the recorded purge verdicts do not read: %v", err)}}, ""
		}
		if len(rs) == 0 {
			return nil, "the recording holds no purge at the end of the run (-purge-after, or the spec's [purge] verify)"
		}
		return rs, ""
	}
	i := slices.IndexFunc(in.Plan.Steps, func(st plan.Step) bool { return st.Kind == plan.StepPurgeProof })
	if i < 0 {
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
	if err != nil {
		logf("%v", err)
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
	rs := prove(ctx, in, st, todo, logf)
	if err := kept.Save(in.Record, rs); err != nil {
		logf("%s: %v", in.Record, err)
	}
	all := append(prior, rs...)
	slices.SortStableFunc(all, func(a, b purgeproof.Result) int { return index(in.Drives, a.Drive) - index(in.Drives, b.Drive) })
	return all, ""
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
