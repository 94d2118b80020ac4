package qual

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/absent"
	"github.com/drivequal/drivequal/acceptance/internal/qual/datacheck"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/purgerun"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// A resumed run (-resume) continues the run recorded in -record: the same
// command again. It is refused, before anything is written, when the
// recording is not the same run (another spec, drive, -runtime,
// -precondition, fio major version or host). Cells recorded whole are
// kept: judged again from their recordings, never measured again, their
// files left as they are. The drives' state is rebuilt, not assumed: a
// drive whose fill was read back whole is still filled, anything else
// about it is unknown, so the remaining cells get a new plan from that
// state (a purge, fill and verify pass only when a sequential cell
// remains or the fill was not read back; the write twin's random
// preconditioning before the next random cells). An interrupted step or
// cell is run again from its start.

// resumeState is what a resumed run took over from its recording.
type resumeState struct {
	dir   string     // the recording
	prior record.Run // run.json as the interrupted run left it
	// kept says, by test, that its recording is whole and judged again.
	kept   map[string]bool
	redone []report.Redone
	// verified is each drive's fill read back whole by a recorded verify
	// pass (TestIntegrity passed).
	verified []bool
	// fresh is the estimate of the same cells run again from nothing.
	fresh time.Duration
	// broken is why each drive that failed in the interrupted run is
	// disqualified (run.json's failures, a read-back that returned other
	// data or failed with an I/O error): its cells fail unmeasured again,
	// with causes[d] as their cause.
	broken map[int]string
	// mapping says, for each recorded drive, which given path it is;
	// moved maps the recorded path of each drive given under another
	// path now to that path.
	mapping []string
	moved   map[string]string
	causes  map[int]string
	// found is the failures the resume read in the recorded read-backs
	// that run.json's failures do not hold (a pass killed after fio named
	// a mismatch or an I/O error on its streamed stderr): the resumed
	// run.json records them, so that no later resume or replay depends on
	// that stderr again.
	found []record.DriveFailure
}

// resumeFix is the end of every refusal of -resume: how to go on.
func resumeFix(dir string) string {
	return fmt.Sprintf("resume with what the interrupted run used, start a new run with a new -record directory (without -resume), or judge what was recorded with -replay=%s", dir)
}

// loadResume reads the recording to resume and refuses it when it is not
// the same run; called once the drives are inspected, before the plan.
func (b *builder) loadResume() []error {
	s := b.s
	dir := s.Cfg.Record
	prior, errs := recdir.Resumable(dir)
	if errs != nil {
		return errs
	}
	notOurs := func(why string) []error { return []error{recdir.NotOurs(dir, why)} }
	fix := resumeFix(dir)
	if sum := s.Spec.SHA256(); sum != prior.SpecSHA256 {
		errs = append(errs, fmt.Errorf("parsing -spec: %s (sha256 %s…) is not the spec the interrupted run in %s was made with (%s, sha256 %s…): the spec changed; %s",
			s.Spec.File, short(sum), dir, prior.SpecFile, short(prior.SpecSHA256), fix))
	}
	if s.Precondition != prior.Precondition {
		errs = append(errs, fmt.Errorf("parsing -precondition: %s, but the interrupted run in %s was preconditioned %s: %s", s.Precondition, dir, prior.Precondition, fix))
	}
	if rt := runtimeFlag(s.Cfg.Runtime); rt != prior.Runtime {
		errs = append(errs, fmt.Errorf("parsing -runtime: %s, but the interrupted run in %s ran with %s: %s", orSpec(rt), dir, orSpec(prior.Runtime), fix))
	}
	switch {
	case b.matchErrs != nil:
		errs = append(errs, b.matchErrs...)
	case b.matched == nil:
		// matchResume matched nothing: the recording names no identities.
		return notOurs(fmt.Sprintf("it records %d drive identities for %d drives", len(prior.Identities), len(prior.Drives)))
	}
	refused, warnings := recdir.Edited(dir, prior)
	errs = append(errs, refused...)
	s.Warnings = append(s.Warnings, warnings...)
	if b.matched != nil {
		// Before any recorded state of a drive is trusted: its data.
		errs = append(errs, datacheck.Refusals(prior, datacheck.Read(prior, s.Drives, b.matched.Unconfirmed), dir, fix)...)
	}
	if a, b := fioMajor(s.Report.FioVersion), fioMajor(prior.FioVersion); a != b {
		errs = append(errs, fmt.Errorf("parsing -resume: fio here is %s, the interrupted run in %s used %s: a different major version measures differently; %s", s.Report.FioVersion, dir, prior.FioVersion, fix))
	}
	if s.Report.Host != nil {
		if here, there := s.Report.Host.Name(), prior.Host.Name(); here != there && there != "" {
			errs = append(errs, fmt.Errorf("parsing -resume: this host is %s, the interrupted run in %s was recorded on %s: its drives were measured on another machine; on the same machine under another name (a CI job's container), run with %s=%s; otherwise %s", here, dir, there, host.HostnameEnv, there, fix))
		} else if a, b := s.Report.Host.MachineID, prior.Host.MachineID; a != "" && b != "" && a != b {
			errs = append(errs, fmt.Errorf("parsing -resume: this host's machine id is %s, the interrupted run in %s was recorded on machine %s: %s", a, dir, b, fix))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	s.resume = &resumeState{dir: dir, prior: match.Renamed(prior, s.Drives), moved: match.Moves(prior, s.Drives), kept: map[string]bool{}, broken: map[int]string{}, causes: map[int]string{}, mapping: b.matched.Lines}
	return nil
}

func runtimeFlag(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

func orSpec(rt string) string {
	if rt == "" {
		return "the spec's runtimes (no -runtime)"
	}
	return "-runtime=" + rt
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// fioMajor is the major version of "fio-3.33" ("3"); the text itself
// when it does not read.
func fioMajor(v string) string {
	m, _, _ := strings.Cut(strings.TrimPrefix(v, "fio-"), ".")
	return m
}

// resumePlan decides which cells the recording keeps and plans the rest
// from the drives' rebuilt state; called after planRun.
func (b *builder) resumePlan() {
	s := b.s
	z := s.resume
	z.verified = make([]bool, len(s.Drives))
	for _, f := range z.prior.Failures {
		// A drive's failure, recorded as it happened, is permanent: the
		// drive stays disqualified, its remaining cells fail unmeasured
		// naming it, and nothing more is written to it.
		if _, ok := z.broken[f.Drive]; !ok && f.Drive >= 0 && f.Drive < len(s.Drives) {
			z.broken[f.Drive], z.causes[f.Drive] = verdict.DisqualifiedText(f), f.Cause
		}
	}
	// A drive that did not come back after the host's power cut is
	// disqualified as one that disappeared mid-run is, and recorded so.
	z.found = append(z.found, absent.Disqualify(s.Drives, z.prior, len(z.prior.Resumptions)+1, z.broken, z.causes)...)
	last := verdict.LastReadBack(z.prior.Verify)
	for i, v := range z.prior.Verify {
		// A pass whose recording does not read, or that was interrupted
		// or killed, does not show the fill whole: the drive's fill state
		// is unknown, and it is filled and read back again. A mismatch,
		// or an I/O error reading the drive back, disqualifies it.
		judged := verdict.ReadBack(evidence.ReadBack{Dir: z.dir, Pass: v, Disappeared: verdict.Disappeared(z.prior.Failures)}, s.Drives)
		for _, r := range judged {
			d := r.Drive
			if d < 0 {
				continue
			}
			switch r.Verdict {
			case report.Pass:
				// Only the drive's last read-back says what it holds: a
				// later fill replaced the one an earlier pass read, and a
				// purge or fill started since (written_since_read_back)
				// erased it.
				z.verified[d] = last[i][r.Path] && !z.prior.Written(d)
			case report.Fail:
				if _, ok := z.broken[d]; verdict.Disqualifying(r.Cause) && !ok {
					// As in the interrupted run; its cells fail unmeasured.
					z.broken[d], z.causes[d] = fmt.Sprintf("%s failed the verify pass (%s) earlier in this run: %s", r.Path, verdict.IntegrityTest(r.Path), r.Message), r.Cause
					if _, recorded := z.prior.FailureOf(d); !recorded {
						z.found = append(z.found, record.DriveFailure{Drive: d, Path: r.Path, Cause: r.Cause,
							Step: "the verify pass (" + verdict.IntegrityTest(r.Path) + ")", Message: r.Message,
							At: recdir.PassTime(z.dir, v), Resume: v.Resume})
					}
				}
			}
		}
	}
	var remaining, all []plan.Cell
	for _, c := range s.allCells() {
		if !s.Cfg.Selected(c.Test) || c.Skip != "" {
			continue
		}
		all = append(all, c)
		if why := z.incomplete(c.Test); why != "" {
			switch {
			case z.disqualifies(c):
			case !slices.Contains(z.prior.Unmeasured, c.Test):
				remaining = append(remaining, c)
				z.redone = append(z.redone, report.Redone{Test: c.Test, Why: why})
			default:
				// Failed unmeasured because its drive's read-back did not
				// read (a bad recording): the fill and read-back run again.
				remaining = append(remaining, c)
				z.redone = append(z.redone, report.Redone{Test: c.Test, Why: "not measured before: its drive's verify pass did not read back, and is run again first"})
			}
			// Otherwise its drive failed (a mismatch, a read-back I/O
			// error, a warning, a fill error): the cell fails unmeasured
			// again, and nothing is planned for
			// it (no purge, fill or preconditioning of a disqualified
			// drive in the plan, its estimate or the -timeout check).
			continue
		}
		z.kept[c.Test] = true
	}
	start := make([]plan.State, len(s.Drives))
	var unverified []int
	for d := range s.Drives {
		start[d] = plan.Resumed(z.verified[d])
	}
	for _, d := range s.verifyDrives() {
		if _, ok := z.broken[d]; !z.verified[d] && !ok {
			unverified = append(unverified, d)
		}
	}
	fresh := *s.Planner
	fresh.Start = nil
	fp := fresh.Build(all)
	s.Planner.Start, s.Planner.Verify = start, unverified
	s.Plan = s.Planner.Build(remaining)
	if s.Precondition != plan.None && s.Spec.Precondition.FillPasses > 0 {
		fresh.AddVerify(&fp, s.verifyDrives())
		s.Planner.AddVerify(&s.Plan, unverified)
	}
	fwrun.Add(&fp, s.Cfg, s.Spec, s.Drives)
	fwrun.Add(&s.Plan, s.Cfg, s.Spec, s.Drives)
	fresh.AddPurgeProof(&fp, purgerun.Mode(s.Cfg, s.Spec, s.Drives), purgerun.Selected(s.Cfg, s.Drives))
	s.Planner.AddPurgeProof(&s.Plan, purgerun.Mode(s.Cfg, s.Spec, s.Drives), purgerun.Selected(s.Cfg, s.Drives))
	z.fresh = fp.Total
}

// disqualifies reports whether a drive of cell failed in the interrupted
// run (see broken).
func (z *resumeState) disqualifies(c plan.Cell) bool {
	for _, d := range c.Drives {
		if _, ok := z.broken[d]; ok {
			return true
		}
	}
	return false
}

// prepareDir is where this resumption keeps its preparation records,
// beside the earlier ones.
func (z *resumeState) prepareDir() string {
	return filepath.Join(z.dir, "prepare", fmt.Sprintf("resume-%d", len(z.prior.Resumptions)+1))
}

// evidence is what the live runner takes over from the recording.
func (z *resumeState) evidence() *live.Resume {
	return &live.Resume{Dir: z.dir, Prior: z.prior, Kept: z.kept, Disqualified: z.broken, Causes: z.causes}
}

// incomplete says why test's recording is not whole, so that it is
// measured again; "" when it is kept. A recording is whole when run.json
// lists it (its output was on disk), its output is there, and fio was
// neither interrupted by the run nor killed by a signal: a fio whose jobs
// failed is the cell's verdict, kept.
func (z *resumeState) incomplete(test string) string {
	if !slices.Contains(z.prior.Tests, test) {
		return "not recorded before the interruption"
	}
	owner := test
	if o, ok := z.prior.Shared[test]; ok {
		owner = o
		if why := z.incomplete(o); why != "" {
			return "it shares the recording of " + o + ", which is " + why
		}
	}
	data, err := record.ReadFile(z.dir, owner+record.OutputExt)
	if err != nil {
		return "its recording is missing (" + err.Error() + ")"
	}
	var f record.Failure
	found, err := record.ReadJSON(z.dir, owner, record.StatusExt, &f)
	switch {
	case err != nil:
		return "its status does not read (" + err.Error() + ")"
	case found && f.Interrupted:
		return "its measurement was interrupted (" + f.Message + ")"
	case found && verdict.Killed(f.Message):
		return "its fio was killed mid-measurement (" + f.Message + "): an interruption, not the drive's verdict"
	case found:
		return ""
	}
	if _, err := fiojob.Parse(data); err != nil {
		return "its recording does not parse (" + err.Error() + ")"
	}
	return ""
}

// info is run.json of the resumed run: what the interrupted run
// recorded (the kept cells, verify passes, steady-state records, health
// logs on receipt) and this resumption.
func (z *resumeState) info(s *Suite) record.Run {
	info := z.prior
	// Every whole recording stays listed, those of cells this resume does
	// not select (-run) too; one that is not whole is measured again or
	// no longer listed.
	info.Tests = nil
	for _, t := range z.prior.Tests {
		if z.incomplete(t) == "" {
			info.Tests = append(info.Tests, t)
		}
	}
	info.Shared = maps.Clone(z.prior.Shared)
	for t := range info.Shared {
		if !slices.Contains(info.Tests, t) {
			delete(info.Shared, t)
		}
	}
	// The files of a recording no longer listed are not vouched for.
	info.Files = maps.Clone(z.prior.Files)
	for _, t := range z.prior.Tests {
		if !slices.Contains(info.Tests, t) {
			for _, ext := range record.Exts {
				delete(info.Files, t+ext)
			}
		}
	}
	// The drives as they are now: their paths, device numbers and boot.
	info.Finished = ""
	info.Drives = slices.Clone(s.Report.Drives)
	for i := range info.Drives {
		// What the interrupted run kept of a failed drive for its
		// supplier stays the drive's (live.Runner.CaptureFailures).
		if i < len(z.prior.Drives) && z.prior.Drives[i].Failure != nil {
			c := *z.prior.Drives[i].Failure
			info.Drives[i].Failure = &c
		}
	}
	info.Firmware = fwrun.Asking(z.prior.Firmware, s.Plan, s.Cfg)
	info.Identities = match.Identities(s.Drives)
	info.BootID = match.BootID()
	info.Devices = make([]string, len(s.Drives))
	info.LBASizes = make([]int, len(s.Drives))
	for i, d := range s.Drives {
		info.Devices[i] = match.DevNumber(d)
		info.LBASizes[i] = d.LogicalBlockSize
	}
	absent.Keep(&info, z.prior, s.Drives)
	res := report.Resumption{At: time.Now().UTC().Format(time.RFC3339), Redone: z.redone,
		EstimatedSeconds: s.Plan.Total.Seconds(), FreshSeconds: z.fresh.Seconds(), Drives: z.mapping}
	for _, t := range info.Tests {
		if z.kept[t] {
			res.Kept = append(res.Kept, t)
		}
	}
	for _, st := range s.Plan.Steps {
		res.Steps = append(res.Steps, fmt.Sprintf("%d %s: %s", st.N, st.Kind, st.Name))
	}
	info.Resumptions = append(slices.Clone(info.Resumptions), res)
	info.Failures = append(slices.Clone(info.Failures), z.found...)
	return info
}

// printResume writes, for -dry-run -resume, what the recording keeps,
// what is measured again and why, and the time the resume saves.
func (z *resumeState) print(w io.Writer, s *Suite) {
	if z == nil {
		return
	}
	fmt.Fprintf(w, "\nresume of %s (%d earlier resumptions):\n", z.dir, len(z.prior.Resumptions))
	for _, l := range z.mapping {
		fmt.Fprintf(w, "  drive   %s\n", l)
	}
	kept := 0
	for _, c := range s.allCells() {
		if z.kept[c.Test] {
			kept++
			fmt.Fprintf(w, "  kept    %s: recorded whole, judged again from its recording\n", c.Test)
		}
	}
	for _, r := range z.redone {
		fmt.Fprintf(w, "  redone  %s: %s\n", r.Test, r.Why)
	}
	// A filled drive the plan purges again is one a sequential cell
	// remains on: the plan's first steps say so, and so does its line.
	purged := map[int]bool{}
	for _, st := range s.Plan.Steps {
		if st.Kind == plan.StepPurge {
			for _, d := range st.Drives {
				purged[d] = true
			}
		}
	}
	var filled, refilled, unknown []string
	for d, ok := range z.verified {
		if why, broken := z.broken[d]; broken {
			fmt.Fprintf(w, "  drive   %s: disqualified, nothing more is written to it: %s\n", s.Drives[d].Path, why)
			continue
		}
		switch {
		case ok && purged[d]:
			refilled = append(refilled, s.Drives[d].Path)
		case ok:
			filled = append(filled, s.Drives[d].Path)
		default:
			unknown = append(unknown, s.Drives[d].Path)
		}
	}
	if len(filled) > 0 {
		fmt.Fprintf(w, "  drives  %s: the fill was read back whole: filled; what they went through since is unknown, so each random group is preconditioned again\n", report.DrivesLine(filled))
	}
	if len(refilled) > 0 {
		fmt.Fprintf(w, "  drives  %s: the fill was read back whole, but sequential cells remain, measured on fresh drives: purged, filled and read back again first\n", report.DrivesLine(refilled))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "  drives  %s: the fill was not read back whole: state unknown, purged and filled again before a cell needs them\n", report.DrivesLine(unknown))
	}
	if len(s.Plan.Steps) == 0 {
		fmt.Fprintln(w, "  nothing left to run: the resume judges the recording and measures nothing")
	}
	fmt.Fprintf(w, "%d cells kept, %d to measure; estimated %s remaining, against %s for the same cells from the start (saves %s)\n",
		kept, len(z.redone), s.Plan.Total.Round(time.Second), z.fresh.Round(time.Second), (z.fresh - s.Plan.Total).Round(time.Second))
}

// ResumeLine says, for the terminal, what a resumed run keeps and what
// it has left; "" for a run that is not resumed.
func (z *resumeState) line(s *Suite) string {
	if z == nil {
		return ""
	}
	line := fmt.Sprintf("resuming the run recorded in %s: %d cells kept from the recording and judged again, %d to measure, %d steps (about %s, against %s from the start)",
		z.dir, len(z.kept), len(z.redone), len(s.Plan.Steps), s.Plan.Total.Round(time.Second), z.fresh.Round(time.Second))
	if len(z.mapping) > 0 {
		line += "\ndrivequal: drives matched by identity: " + strings.Join(z.mapping, "; ")
	}
	return line
}
