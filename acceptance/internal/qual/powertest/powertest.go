// Package powertest is a run's power-loss test (TestPowerLoss): its
// refusals and dry-run lines, its cycles run on the drives (package
// powerloss/cycle) or read back from a recording, each judged by package
// powerloss into the report.
package powertest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/device/slot"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Dir is where a recording keeps the cycles, relative to it:
// powerloss/<drive>/cycle_<k>.json with fio's job, output and per-I/O
// logs and the commands' output in powerloss/<drive>/cycle_<k>/.
const Dir = "powerloss"

// Drive is a drive of the run: its path as given, its name in test
// names, and its logical block size.
type Drive struct {
	Path, Name string
	LBA        int64
	// Ctrl is its NVMe controller's kernel name ("nvme0"; "" for none).
	Ctrl string
	// Dir is the folder under Dir its cycles are filed in: the one the
	// recording gave the drive (matched by identity on a resume, whatever
	// its path now), else its name. Paths are the paths the recording
	// lists for it, one of which each of its recorded cycles names.
	Dir   string
	Paths []string
	// Absent says why it is not there (plan.Drive.Absent): it is
	// neither read nor written, and its pending cycle did not return.
	Absent string
	// Ctrls are the controllers it is reached through: Ctrl, and under
	// native multipath its other paths' (nil: Ctrl alone).
	Ctrls []string
	// Shares are the block devices ("nvme0n2") of the other namespaces
	// its power cut cuts too: those of its NVM subsystem
	// (device.Info.Siblings) but itself through another controller.
	Shares []string
}

// Test is a run's power-loss test.
type Test struct {
	// Spec is the spec's [power_loss] (nil: none) and SpecFile the spec.
	Spec     *specs.PowerLoss
	SpecFile string
	// Health is the spec's [health], whose allowance of new OCP
	// incomplete shutdowns the cuts raise (see Run).
	Health *specs.Health
	Cfg    *cmdline.Config
	Drives []Drive
	// Live says the run cuts the drives' power; else a replay reads the
	// recording in Dir, trusting only the files Files lists.
	Live  bool
	Dir   string
	Files map[string]string
	// Rec is a live run's run.json: the files written under Dir are
	// listed in it, and each drive marked as written by the test, so that
	// a resume trusts it by its identity, not its data.
	Rec *runjson.Recorder
	// Add gives the report each drive's cycles, judged.
	Add  func([]report.HealthCheck)
	NVMe nvme.CLI
	// Sysfs is where sysfs is mounted ("/sys"), for the drives' slots.
	Sysfs string
	// vals are each drive's placeholders' values (by path), read once,
	// before its first cut: a cut drive may come back under another
	// controller name, which may then be another drive's slot's (see
	// values).
	vals map[string]map[string]string
	// quiet is why a drive's counts are no evidence of a cut (see
	// uncounted), by drive name, decided at its first cycle: a cut drive
	// comes back under another controller name (nvme0 is nvme3 after
	// QEMU's device_add), whose sysfs entry the name recorded at the
	// start no longer finds.
	quiet map[string]string
}

// New is the power-loss test of a run judging with spec: live or a
// replay of the recording files lists; add gives the report its checks.
func New(cfg *cmdline.Config, spec *specs.Spec, drives []plan.Drive, live bool, files map[string]string, add func([]report.HealthCheck)) *Test {
	t := &Test{Spec: spec.PowerLoss, SpecFile: spec.File, Health: &spec.Health, Cfg: cfg, Live: live, Dir: cfg.Record, Files: files, Add: add, Sysfs: "/sys"}
	if !live {
		t.Dir = cfg.Replay
	}
	for _, d := range drives {
		name := d.Name
		if name == "" {
			name = filepath.Base(d.Path)
		}
		var shares []string
		for _, n := range d.Siblings {
			if id, ok := d.Reach[n]; !ok || id != d.NSID || d.NSID == 0 {
				shares = append(shares, n)
			}
		}
		var ctrls []string
		for _, c := range append([]string{d.Controller}, pathControllers(d.Paths)...) {
			if c != "" && !slices.Contains(ctrls, c) {
				ctrls = append(ctrls, c)
			}
		}
		t.Drives = append(t.Drives, Drive{Path: d.Path, Name: name, LBA: int64(d.LogicalBlockSize), Ctrl: d.Controller, Ctrls: ctrls, Absent: d.Absent, Shares: shares})
	}
	t.File(nil)
	return t
}

func pathControllers(paths []device.Path) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p.Controller)
	}
	return out
}

// File files each drive's cycles where the recording's samples (run.json,
// by drive in the recorded order, nil for none) put them: a drive the
// recording gave a folder keeps it, whatever its path and name now, so
// that a resume that finds the drives renumbered judges each physical
// drive by its own cycles; any other drive is filed under its name, or
// its name and its number when another drive's folder has that name.
func (t *Test) File(samples *record.Samples) {
	taken := map[string]bool{}
	for i := range t.Drives {
		d := &t.Drives[i]
		d.Dir, d.Paths = "", nil
		if samples == nil || i >= len(samples.Drives) {
			continue
		}
		s := samples.Drives[i]
		if s.PowerLoss != "" && path.Base(s.PowerLoss) == s.PowerLoss && s.PowerLoss != "." && s.PowerLoss != ".." && !taken[s.PowerLoss] {
			d.Dir, d.Paths = s.PowerLoss, slices.Clone(s.PowerLossPaths)
			taken[d.Dir] = true
		}
	}
	for i := range t.Drives {
		d := &t.Drives[i]
		if d.Dir == "" {
			d.Dir = d.Name
			for n := i + 1; taken[d.Dir]; n++ {
				d.Dir = fmt.Sprintf("%s_%d", d.Name, n)
			}
			taken[d.Dir] = true
		}
	}
}

// AbsentPrefix starts what a resume says of a drive at path that did
// not come back after the host's power cut (plan.Drive.Absent).
func AbsentPrefix(path string) string {
	return path + " did not come back after the host's power cut: "
}

// folder is the folder under Dir d's cycles are filed in.
func (d Drive) folder() string {
	if d.Dir != "" {
		return d.Dir
	}
	return d.Name
}

// controllers are the controllers d is reached through.
func (d Drive) controllers() []string {
	if len(d.Ctrls) > 0 {
		return d.Ctrls
	}
	if d.Ctrl != "" {
		return []string{d.Ctrl}
	}
	return nil
}

// recordedAt are the paths a cycle of d's in the recording may name:
// those run.json records for it (each path it had when the test marked
// it, before any of its cycles was written), else (a recording that
// records none) its path.
func (d Drive) recordedAt() []string {
	if len(d.Paths) > 0 {
		return d.Paths
	}
	return []string{d.Path}
}

// mark marks drive i in run.json as written by the power-loss test, with
// the folder its cycles are filed in and the path it has now.
func (t *Test) mark(i int) error {
	d, n := t.Drives[i], len(t.Drives)
	if d.Absent != "" {
		return nil // never written by this run
	}
	return t.Rec.Update(func(r *record.Run) {
		s := r.Sample(i, n)
		s.Writing, s.PowerLoss = "the power-loss test", d.folder()
		if !slices.Contains(s.PowerLossPaths, d.Path) {
			s.PowerLossPaths = append(s.PowerLossPaths, d.Path)
		}
	})
}

// Problems are the reasons a run with a cut is refused (a dry run's
// too): a cut without a [power_loss] table to say what to do, a command
// that uses a drive's serial or slot for a drive that has none (an empty
// outlet is "every outlet" to some PDUs), a drive's cut that cuts what
// is not given (see cutsToo), and two drives one cut cuts both of (the
// same serial, one NVM subsystem, with {slot} one slot).
func (t *Test) Problems() []error {
	switch {
	case t.Cfg.PowerCut == "":
		return nil
	case t.Spec == nil:
		return []error{fmt.Errorf("parsing -power-cut: spec %s has no [power_loss] table: add one (cycles, plp, ready_within) to test power loss, or drop -power-cut", t.SpecFile)}
	}
	errs := t.hostCommand()
	serials := map[string]string{}
	names := map[string]string{} // path: kernel name
	for _, d := range t.Drives {
		names[d.Path] = d.Name
	}
	errs = append(errs, cutsToo(t.Cfg, t.Sysfs, t.Drives)...)
	for _, d := range t.Drives {
		v := t.values(d)
		for _, key := range []string{"serial", "slot"} {
			for _, fl := range []struct{ name, cmd string }{{"power-cut", t.Cfg.PowerCut}, {"power-restore", t.Cfg.PowerRestore}} {
				if cmdline.PowerUses(fl.cmd, key) && v[key] == "" {
					errs = append(errs, fmt.Errorf("parsing -%s: %s has no %s (%s): the command would run with it empty, which some PDUs take for every outlet; name its outlet another way ({path} or {name}) or give drives that have one", fl.name, d.Path, key, noValue[key]))
				}
			}
		}
		if err := t.writeThrough(d); err != nil {
			errs = append(errs, err)
		}
		if sn := v["serial"]; sn != "" {
			if other, dup := serials[sn]; dup && !slices.Contains(d.Shares, names[other]) {
				errs = append(errs, fmt.Errorf("parsing -drives: %s and %s have the same serial %s (one controller, or a vendor's repeated serial): a power cut of one is a cut of the other; give one of them", other, d.Path, sn))
			}
			serials[sn] = d.Path
		}
	}
	return errs
}

// cutsToo refuses each drive whose own cut (not the whole host's) cuts
// the power of what is not given, or of another drive given: the other
// namespaces of its NVM subsystem (its controller loses power), and with
// a command that uses {slot}, everything else in that PCIe slot (a
// switch's other ports and what is behind them). Whatever it is (a
// mounted namespace, the boot drive), it would lose its power unwritten
// and unjudged, and another drive given would see a cut outside its own
// cycles.
func cutsToo(cfg *cmdline.Config, sysfs string, drives []Drive) []error {
	if cfg.PowerCutHost {
		return nil
	}
	byName := map[string]Drive{} // by kernel name
	var ctrls []string           // every given drive's controllers
	for _, d := range drives {
		byName[d.Name] = d
		ctrls = append(ctrls, d.controllers()...)
	}
	names := slices.Collect(maps.Keys(byName))
	usesSlot := cmdline.PowerUses(cfg.PowerCut, "slot") || cmdline.PowerUses(cfg.PowerRestore, "slot")
	// cutSlot is the slot a command that uses {slot} cuts for d.
	cutSlot := func(d Drive) (slot.Slot, bool) {
		if !usesSlot || d.Ctrl == "" {
			return slot.Slot{}, false
		}
		s, ok, err := slot.Of(sysfs, d.Ctrl)
		return s, ok && err == nil
	}
	pairs := map[[2]string]bool{}
	var errs []error
	pair := func(a, b Drive, why string) {
		k := [2]string{min(a.Path, b.Path), max(a.Path, b.Path)}
		if !pairs[k] {
			pairs[k] = true
			errs = append(errs, fmt.Errorf("parsing -drives: %s and %s %s: a power cut of one is a cut of the other; give one of them", a.Path, b.Path, why))
		}
	}
	for _, d := range drives {
		if d.Absent != "" {
			continue
		}
		var also []string
		fix := "give a drive whose controller has no other namespace (a cut takes the whole controller)"
		for _, n := range d.Shares {
			if e, ok := byName[n]; ok {
				pair(d, e, "are namespaces of one NVM subsystem")
				continue
			}
			also = append(also, "/dev/"+n+" (another namespace of its NVM subsystem)")
		}
		if s, ok := cutSlot(d); ok {
			for _, e := range drives {
				if e.Path != d.Path && e.Absent == "" && inSlot(sysfs, s, e) {
					pair(d, e, "are both in PCIe slot "+s.Name+" (in it or behind a switch in it), which {slot} cuts")
				}
			}
			for _, o := range s.Others(sysfs, names, ctrls...) {
				if n, ok := strings.CutPrefix(o, "namespace "); ok {
					if slices.Contains(d.Shares, n) {
						continue // named above
					}
					o = "/dev/" + n
				}
				also = append(also, o+" (in its PCIe slot "+s.Name+")")
			}
			fix = "name the drive's own outlet ({serial} or {path} at a PDU or fixture that powers it alone), or give a drive alone in its slot"
		}
		if len(also) > 0 {
			errs = append(errs, fmt.Errorf("parsing -power-cut: a cut of %s also cuts what -drives does not give: %s; each would lose its power unwritten and unjudged (a mounted namespace, the boot drive): %s", d.Path, strings.Join(also, ", "), fix))
		}
	}
	return errs
}

// inSlot says whether s holds e: one of its namespaces, or the PCI
// function of one of its controllers (a native multipath head's block
// device is in no slot).
func inSlot(sysfs string, s slot.Slot, e Drive) bool {
	if slices.Contains(s.Namespaces, e.Name) {
		return true
	}
	for _, c := range e.controllers() {
		if dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "class", "nvme", c, "device")); err == nil && slices.Contains(s.Functions, filepath.Base(dev)) {
			return true
		}
	}
	return false
}

// writeThrough refuses a drive whose controller reports a volatile write
// cache that the kernel treats as write through: the kernel then sends
// it no flush, so fio's flushes would not reach it and the ledger's rule
// (writes before the last completed flush) would hold it to flushes it
// never received.
func (t *Test) writeThrough(d Drive) error {
	name := filepath.Base(d.Path)
	if real, err := filepath.EvalSymlinks(d.Path); err == nil {
		name = filepath.Base(real)
	}
	file := filepath.Join(t.Sysfs, "class", "block", name, "queue", "write_cache")
	data, err := os.ReadFile(file)
	if err != nil || strings.TrimSpace(string(data)) != "write through" {
		return nil
	}
	c, err := t.NVMe.IDCtrl(context.Background(), d.Path)
	if err != nil || !c.VolatileWriteCache() {
		return nil
	}
	return fmt.Errorf("parsing -power-cut: %s: its controller reports a volatile write cache but %s says \"write through\", so the kernel sends it no flush and fio's flushes would not reach it: echo 'write back' > %s, then run again", d.Path, file, file)
}

var noValue = map[string]string{
	"serial": "nvme-cli reads no NVMe serial of it",
	"slot":   "no /sys/bus/pci/slots/NAME holds its controller",
}

// Skip says why TestPowerLoss judges nothing ("" when it does).
func (t *Test) Skip() string {
	switch {
	case t.Spec == nil:
		return "no [power_loss] table in the spec: add one (cycles, plp, ready_within) and give -power-cut and -power-restore to test power-loss protection"
	case t.Live && t.Cfg.PowerCut == "":
		return "no cut method: give -power-cut=CMD and -power-restore=CMD (with -destructive) to cut each drive's power while fio writes"
	}
	return ""
}

// Estimate is the test's expected duration, which the plan and its
// -timeout check count: each cycle writes until the cut (expected
// twice cut_after and 5 s: the first writes, cut_after, the command),
// waits up to ready_within, and reads its data twice (at 200 MiB/s).
// Bound is its upper bound.
func (t *Test) Estimate() time.Duration {
	if t.Skip() != "" || !t.Live {
		return 0
	}
	p := t.Spec
	reads := 2 * time.Duration(p.Size/(200<<20)+1) * time.Second
	if t.Cfg.PowerCutHost {
		return time.Duration(p.Cycles) * (max(p.CutAfter, time.Second) + p.ReadyWithin + reads)
	}
	return time.Duration(len(t.Drives)*p.Cycles) * (2*p.CutAfter + 5*time.Second + p.ReadyWithin + reads)
}

// Bound is an upper bound of the test's duration, which the dry run
// prints: each cycle waits and runs its commands for at most
// cycle.Waits, and reads its data twice (at 200 MiB/s, the one figure
// assumed).
func (t *Test) Bound() time.Duration {
	if t.Skip() != "" || !t.Live {
		return 0
	}
	if t.Cfg.PowerCutHost {
		return t.hostBound()
	}
	p := t.Spec
	per := cycle.Waits(*p) + 2*time.Duration(p.Size/(200<<20)+1)*time.Second
	return time.Duration(len(t.Drives)*p.Cycles) * per
}

// Print writes the dry run's lines: each drive's cut method and the data
// at risk.
func (t *Test) Print(w io.Writer) {
	if t.Spec == nil {
		return
	}
	p := t.Spec
	fmt.Fprintf(w, "\npower loss (TestPowerLoss, %d cycle(s) a drive, plp %v, ready within %s, cut %s after fio's first flushed writes; ≤ %s):\n",
		p.Cycles, p.PLP, p.ReadyWithin, p.CutAfter, t.Bound().Round(time.Second))
	if t.Cfg.PowerCut == "" {
		fmt.Fprintln(w, "  not run: "+t.Skip())
		return
	}
	if t.Cfg.PowerCutHost {
		t.printHost(w)
		return
	}
	for _, d := range t.Drives {
		v := t.values(d)
		fmt.Fprintf(w, "  %s: cut: %s\n  %s  restore: %s\n", d.Path, cmdline.PowerCommand(t.Cfg.PowerCut), spaces(len(d.Path)), cmdline.PowerCommand(t.Cfg.PowerRestore))
		fmt.Fprintf(w, "  %s  run by sh with %s\n", spaces(len(d.Path)), strings.Join(cmdline.PowerEnv(v, t.Cfg.PowerCut, t.Cfg.PowerRestore), " "))
		fmt.Fprintf(w, "  %s  data at risk: the first %s (bytes 0 to %d), written with a flush every %d writes of %d bytes; whatever the drive's cache holds at the cut\n",
			spaces(len(d.Path)), mib(p.Size), p.Size, p.FlushEvery, p.BS)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

func spaces(n int) string { return fmt.Sprintf("%*s", n, "") }

// values are the placeholders' values for d, read at the first call:
// its slot is found from the controller name it had when the run began
// (d.Ctrl), which after a cut may be no controller or another drive's.
func (t *Test) values(d Drive) map[string]string {
	if v, ok := t.vals[d.Path]; ok {
		return v
	}
	if t.vals == nil {
		t.vals = map[string]map[string]string{}
	}
	v := map[string]string{"path": d.Path, "name": d.Name}
	t.vals[d.Path] = v
	if s, ok, err := slot.Of(t.Sysfs, d.Ctrl); d.Ctrl != "" && ok && err == nil {
		v["slot"] = s.Name
	}
	if c, err := t.NVMe.IDCtrl(context.Background(), d.Path); err == nil {
		v["serial"] = c.Serial
	}
	return v
}

// Drive is one drive's cycles, judged, or why it has none.
type DriveCycles struct {
	Name   string
	Skip   string
	Cycles []Judged
}

// Judged is a cycle and its verdict.
type Judged struct {
	powerloss.Cycle
	powerloss.Verdict
}

// Run runs each drive's cycles (a live run; a resumed run keeps each
// cycle recorded whole) or reads them from the recording, judges them
// and gives them to the report.
//
// A replay judges every cycle the recording lists, whatever the spec's
// cycles: a listed cycle whose file is missing or unreadable fails, and
// a cycle up to the spec's cycles never run is inconclusive, as is a
// drive of a spec with [power_loss] run without a cut method.
func (t *Test) Run(ctx context.Context, logf func(string, ...any)) ([]DriveCycles, string) {
	if t.Spec == nil && !t.Live && anyListed(t.Files) {
		// A replay judges the recorded cycles with a spec without
		// [power_loss] too: no recorded failure is dropped by the spec
		// it is judged with. Only the listed cycles are judged.
		t.Spec = &specs.PowerLoss{}
		defer func() { t.Spec = nil }()
	}
	if t.Spec == nil {
		return nil, t.Skip()
	}
	if why := t.Skip(); why != "" {
		var checks []report.HealthCheck
		for _, d := range t.Drives {
			checks = append(checks, report.HealthCheck{Drive: d.Path, Check: "power_loss", Verdict: report.Inconclusive, Message: "not tested: " + why})
		}
		t.Add(checks)
		return nil, why
	}
	if t.Live {
		// Each drive's values before any drive is cut (see values).
		for _, d := range t.Drives {
			if d.Absent == "" {
				t.values(d)
			}
		}
	}
	var out []DriveCycles
	var checks []report.HealthCheck
	var hosted [][]hosted
	if t.Live && t.Cfg.PowerCutHost {
		var why string
		if hosted, why = t.hostCycles(ctx, logf); why != "" {
			return nil, why
		}
	}
	most := 0
	for i, d := range t.Drives {
		dc := DriveCycles{Name: d.Name}
		cuts := 0
		if t.Live && t.Rec != nil {
			if err := t.mark(i); err != nil {
				return nil, fmt.Sprintf("not run: marking %s as written in run.json: %v", d.Path, err)
			}
		}
		n := t.Spec.Cycles
		if !t.Live {
			most, beyond := t.listed(d)
			n = max(n, most)
			if beyond > 0 {
				// Never allocated cycle by cycle: one failure says it.
				msg := fmt.Sprintf("run.json lists power-loss cycle %d of %s, more than any spec may ask for (%d): an edited recording", beyond, d.Path, specs.MaxPowerLossCycles)
				dc.Cycles = append(dc.Cycles, Judged{powerloss.Cycle{Drive: d.Path, Cycle: beyond}, powerloss.Verdict{Verdict: powerloss.Fail, Message: msg}})
				checks = append(checks, report.HealthCheck{Drive: d.Path, Check: fmt.Sprintf("cycle_%d", beyond), Verdict: report.Fail, Message: msg})
			}
		}
		for k := 1; k <= n; k++ {
			rel := rel(d, k)
			_, listed := t.Files[rel]
			c, found, err := took(hosted, i, k)
			if hosted == nil {
				c, found, err = t.cycle(ctx, d, k, logf)
			}
			var j Judged
			switch {
			case err != nil && listed && (!t.Live || t.Cfg.Resume):
				j = Judged{powerloss.Cycle{Drive: d.Path, Cycle: k}, powerloss.Verdict{Verdict: powerloss.Fail,
					Message: fmt.Sprintf("recorded cycle %d missing: run.json lists %s, which does not read (%v)", k, rel, err)}}
			case err != nil:
				dc.Skip = err.Error()
				j = Judged{powerloss.Cycle{Drive: d.Path, Cycle: k, NotRun: err.Error()}, powerloss.Verdict{Verdict: powerloss.Inconclusive, Message: "not judged: " + err.Error()}}
			case !found:
				j = Judged{powerloss.Cycle{Drive: d.Path, Cycle: k}, powerloss.Verdict{Verdict: powerloss.Inconclusive,
					Message: fmt.Sprintf("cycle %d of %d was never run: the recording holds no power-loss cycle %d of %s", k, n, k, d.Path)}}
			default:
				if d.Absent != "" && c.NotRun == hostcut.Pending {
					// Not back after that cut (a replay, or a resume that
					// recorded so and was stopped before judging it).
					c.NotRun, c.NotReturned = "", strings.TrimPrefix(d.Absent, AbsentPrefix(d.Path))
				}
				j = Judged{c, powerloss.Judge(c)}
				cuts++
				switch {
				case c.NotReturned != "" && k < n:
					// Nothing more is written to a drive that did not
					// come back as itself: whatever is at its path now
					// is not the drive held and checked at setup.
					dc.Skip = fmt.Sprintf("cycles %d to %d not run: %s did not return after cycle %d", k+1, n, d.Path, k)
				case c.Renamed != "" && k < n:
					// Nor to its path when it came back at another.
					dc.Skip = fmt.Sprintf("cycles %d to %d not run: %s came back under another name after cycle %d", k+1, n, d.Path, k)
				}
			}
			dc.Cycles = append(dc.Cycles, j)
			checks = append(checks, report.HealthCheck{Drive: d.Path, Check: fmt.Sprintf("cycle_%d", k), Verdict: j.Verdict.Verdict, Message: j.Message})
			if dc.Skip != "" {
				break
			}
		}
		out = append(out, dc)
		most = max(most, cuts)
	}
	t.Add(checks)
	// The OCP C0 log's incomplete shutdowns count the power losses a
	// drive could not complete its shutdown through (PLP start count
	// counts those its power-loss protection took): a drive that
	// promises power-loss protection must complete every one, so only a
	// drive without that promise is allowed one a cut it saw, on top of
	// the spec's own allowance, by TestHealth, judged after. A drive saw
	// at most the most cycles any drive was cut: its own cuts, or with
	// the whole host's power cut once a cycle for every drive, the
	// host's.
	t.allow(most)
	return out, ""
}

// allowed marks each [health] whose allowance the cuts raised already:
// once a run, by Run or by AllowRecorded, whichever comes first.
var allowed sync.Map

// allow raises t.Health's allowance of new OCP incomplete shutdowns by
// cuts, for a drive without the plp promise, once.
func (t *Test) allow(cuts int) {
	if t.Health == nil || t.Spec == nil || t.Spec.PLP {
		return
	}
	if _, done := allowed.LoadOrStore(t.Health, true); !done {
		t.Health.OCP.IncompleteShutdownsMaxIncrease += uint64(cuts)
	}
}

// AllowRecorded raises TestHealth's allowance by the cycles run.json
// lists, the most of any drive, when Run did not (TestPowerLoss not run
// in this process: -replay -run TestHealth): the drive's counts moved
// with those cuts all the same.
func (t *Test) AllowRecorded() {
	most := 0
	for _, d := range t.Drives {
		n, _ := t.listed(d)
		most = max(most, n)
	}
	t.allow(most)
}

// Interrupted is what a cycle recorded as started says until it is
// recorded whole: a run that ended during the cycle (killed, the host
// down) leaves it so, and a resume or replay judges it inconclusive.
const Interrupted = "interrupted: the run ended during this cycle, after it started (the drive's power may have been cut); run the test again for a verdict"

// anyListed says whether files (run.json's) lists any power-loss cycle.
func anyListed(files map[string]string) bool {
	for rel := range files {
		if strings.HasPrefix(rel, Dir+"/") && strings.HasSuffix(rel, ".json") && strings.Contains(path.Base(rel), "cycle_") {
			return true
		}
	}
	return false
}

// listed is the highest k of d's cycle_k.json run.json lists, up to
// the most cycles a spec may ask for, and beyond the highest k listed
// past that (0 for none): a recording edited to list one.
func (t *Test) listed(d Drive) (most, beyond int) {
	prefix := path.Join(Dir, d.folder()) + "/cycle_"
	for rel := range t.Files {
		var k int
		if rest, ok := strings.CutPrefix(rel, prefix); ok && strings.HasSuffix(rest, ".json") {
			if _, err := fmt.Sscanf(rest, "%d.json", &k); err != nil {
				continue
			}
			if k > specs.MaxPowerLossCycles {
				beyond = max(beyond, k)
			} else {
				most = max(most, k)
			}
		}
	}
	return most, beyond
}

// cycle is d's cycle k: recorded already (a resume, or a replay: only a
// file run.json lists is trusted), or run now and recorded, listed in
// run.json as started before the cut and again once judged.
func (t *Test) cycle(ctx context.Context, d Drive, k int, logf func(string, ...any)) (powerloss.Cycle, bool, error) {
	if !t.Live || t.Cfg.Resume {
		if c, listed, err := t.recorded(d, k); listed || !t.Live {
			return c, listed, err
		}
	}
	if err := t.begin(ctx, d, k); err != nil {
		return powerloss.Cycle{}, false, err
	}
	c := cycle.Run(ctx, t.target(ctx, d), t.config(d, k), k, logf)
	return c, true, t.land(d, rel(d, k), c, true)
}

func rel(d Drive, k int) string { return path.Join(Dir, d.folder(), fmt.Sprintf("cycle_%d.json", k)) }

// recorded is d's cycle k as the recording holds it, if run.json lists
// it (only a listed file is trusted).
func (t *Test) recorded(d Drive, k int) (c powerloss.Cycle, listed bool, err error) {
	if _, listed = t.Files[rel(d, k)]; !listed {
		return c, false, nil
	}
	data, err := record.ReadFile(t.Dir, rel(d, k))
	if err != nil {
		return c, true, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, true, fmt.Errorf("%s: %w", rel(d, k), err)
	}
	if known := d.recordedAt(); !slices.Contains(known, c.Drive) {
		return c, true, fmt.Errorf("it is a cycle of drive %q, filed under %s, whose cycles name %s: a cycle filed under another drive, an edited recording", c.Drive, d.Path, strings.Join(known, " or "))
	}
	return c, true, nil
}

// begin records d's cycle k as started (Interrupted), before it runs.
func (t *Test) begin(ctx context.Context, d Drive, k int) error {
	if k == 1 && !t.Cfg.Resume {
		// An earlier run's cycles in this recording are not this run's.
		if err := os.RemoveAll(filepath.Join(t.Dir, Dir, d.folder())); err != nil {
			return err
		}
	}
	// Whatever the cycle's directory holds is not this cycle's: on a
	// resume it is untrusted (run.json does not list the cycle), and fio,
	// the cycle's logs and the commands' output are written there as
	// root, so a planted link or FIFO would redirect or hang them.
	for _, name := range []string{fmt.Sprintf("cycle_%d", k), fmt.Sprintf("cycle_%d.json", k)} {
		if err := fresh(t.Dir, Dir, d.folder(), name); err != nil {
			return fmt.Errorf("clearing cycle %d's files: %w", k, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not run: the run was stopped (%v)", err)
	}
	return t.land(d, rel(d, k), powerloss.Cycle{Drive: d.Path, Cycle: k, NotRun: Interrupted}, true)
}

// fresh removes base/parts..., and any part of the path below base that
// is not a directory (a link, a file) on the way, so that the whole path
// below base is directories of this run's, the last one gone.
func fresh(base string, parts ...string) error {
	p := base
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		switch {
		case os.IsNotExist(err):
			return nil
		case err != nil:
			return err
		case i == len(parts)-1:
			return os.RemoveAll(p)
		case !st.IsDir():
			return os.Remove(p)
		}
	}
	return nil
}

// land writes c as rel and lists d's cycle files in run.json at once, so
// that a resume trusts what this run wrote and nothing else: rel, and
// with dir the cycle's directory, hashed again. A host cycle judged
// after the reboot lists rel alone: the files it was judged from were
// listed before the cut, and hashing them again would vouch for any
// changed since.
func (t *Test) land(d Drive, rel string, c powerloss.Cycle, dir bool) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(t.Dir, Dir, d.folder()), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(t.Dir, filepath.FromSlash(rel)), data, 0o644); err != nil {
		return err
	}
	if t.Rec == nil {
		return nil
	}
	// Only what this cycle wrote: its file and its directory. Another
	// file in the drive's folder is not this run's (on a resume, one the
	// recording does not list is untrusted), and listing it would vouch
	// for it.
	subs := []string{rel}
	if dir {
		subs = append(subs, strings.TrimSuffix(rel, ".json"))
	}
	for _, sub := range subs {
		if err := t.Rec.Landed(sub, true); err != nil {
			return fmt.Errorf("listing %s in run.json: %w", sub, err)
		}
	}
	return nil
}

func (t *Test) config(d Drive, k int) cycle.Config {
	v := t.values(d)
	var tag [4]byte
	_, _ = rand.Read(tag[:])
	return cycle.Config{
		Cut: cmdline.PowerCommand(t.Cfg.PowerCut), Restore: cmdline.PowerCommand(t.Cfg.PowerRestore), Env: cmdline.PowerEnv(v, t.Cfg.PowerCut, t.Cfg.PowerRestore),
		Test: *t.Spec, Dir: filepath.Join(t.Dir, Dir, d.folder(), fmt.Sprintf("cycle_%d", k)), Tag: binary.BigEndian.Uint32(tag[:]),
	}
}

// target is d as a cycle sees it: known by what its path resolves to
// and that device's identity (an NVMe namespace's NGUID, EUI-64 or
// serial and namespace ID, a loop device's backing file by device and
// inode, with its size: Identify); an NVMe drive nvme-cli identifies is
// held to its promise by its vwc and counts its unsafe shutdowns (but
// for a controller known to keep none: uncounted); any other target
// keeps no count.
func (t *Test) target(ctx context.Context, d Drive) cycle.Drive {
	// A drive not there did not return: what its cycle says follows
	// "did not return after the power cut: ".
	cd := cycle.Drive{Path: d.Path, Name: d.Name, LBA: d.LBA, Absent: strings.TrimPrefix(d.Absent, AbsentPrefix(d.Path))}
	cd.Promise.PLP = t.Spec.PLP
	cd.Identity = func(context.Context) (string, error) { return Identify(d.Path) }
	if d.Absent != "" {
		cd.Counters = func(context.Context) ([]powerloss.Counter, string) { return nil, d.Absent }
		return cd
	}
	ctrl, err := t.NVMe.IDCtrl(ctx, d.Path)
	if err != nil {
		cd.Counters = func(context.Context) ([]powerloss.Counter, string) {
			return nil, d.Path + " is not an NVMe drive nvme-cli reads (a loop device or a file): it keeps no count of power losses"
		}
		return cd
	}
	cd.Promise.VWC, cd.Promise.VWCKnown = ctrl.VolatileWriteCache(), true
	cd.Find = func(_ context.Context, id string) string {
		self := filepath.Base(d.Path)
		if real, err := filepath.EvalSymlinks(d.Path); err == nil {
			self = filepath.Base(real)
		}
		return renamed(t.Sysfs, identityOf, self, id)
	}
	unsafe := int64(-1)
	if l, err := t.NVMe.SmartLog(ctx, d.Path); err == nil {
		n, _ := l.UnsafeShutdowns.Uint64()
		unsafe = int64(min(n, 1<<62))
	}
	why, decided := t.quiet[d.Name]
	if !decided {
		vendor, _ := os.ReadFile(filepath.Join(t.Sysfs, "class", "nvme", d.Ctrl, "device", "vendor"))
		if why = uncounted(ctrl, string(vendor), unsafe); d.Ctrl == "" {
			why = ""
		}
		if t.quiet == nil {
			t.quiet = map[string]string{}
		}
		t.quiet[d.Name] = why
	}
	if why != "" {
		cd.Counters = func(context.Context) ([]powerloss.Counter, string) { return nil, why }
		return cd
	}
	cd.Counted = true
	cd.Counters = func(ctx context.Context) ([]powerloss.Counter, string) {
		l, err := t.NVMe.SmartLog(ctx, d.Path)
		if err != nil {
			return nil, "its SMART log does not read: " + err.Error()
		}
		n, _ := l.UnsafeShutdowns.Uint64()
		out := []powerloss.Counter{{Name: "unsafe shutdowns", Before: n}}
		// The OCP C0 log's count of power losses its power-loss
		// protection took, where the drive keeps the log and reports a
		// PLP capacitor (a drive without one takes none); not its
		// incomplete shutdowns: those a drive that kept its data does
		// not count (see Run).
		v, _ := t.NVMe.Version(ctx)
		if c0, _, err := t.NVMe.OCPSmartLog(ctx, d.Path, v); err == nil && plpCounted(c0) {
			out = append(out, powerloss.Counter{Name: "OCP PLP start count", Before: c0.PLPStartCount.Lo})
		}
		return out, ""
	}
	return cd
}

// nvmeNamespace is an NVMe namespace's block device name.
var nvmeNamespace = regexp.MustCompile(`^nvme[0-9]+n[0-9]+$`)

// renamed is the path of the NVMe namespace under sysfs but self (the
// kernel name the drive's path leads to now) that identify says is id by
// an identifier unique to it (an NGUID, EUI-64 or UUID), "" for none:
// the drive came back from its cut under another name. Several block
// devices of one namespace (its subsystem NQN and ID: a dual-port drive,
// native multipath off) are one drive, the first named; a serial and
// namespace ID alone, which some vendors repeat, or namespaces of two
// subsystems that match, are no drive found: it did not return.
func renamed(sysfs string, identify func(string) (identity.Identity, error), self, id string) string {
	entries, err := os.ReadDir(filepath.Join(sysfs, "class", "block"))
	if err != nil {
		return ""
	}
	var found []string
	namespaces := map[string]bool{}
	for _, e := range entries {
		if !nvmeNamespace.MatchString(e.Name()) || e.Name() == self {
			continue
		}
		p := "/dev/" + e.Name()
		got, err := identify(p)
		if err != nil || got.String() != id || !slices.ContainsFunc(got.Identifiers(), func(i identity.Identifier) bool { return i.Unique }) {
			continue
		}
		found = append(found, p)
		key := p // not known to be one namespace with another
		if got.Subsystem != "" {
			key = fmt.Sprintf("%q %d", got.Subsystem, got.NSID)
		}
		namespaces[key] = true
	}
	if len(found) == 0 || len(namespaces) != 1 {
		return ""
	}
	return found[0]
}

// identityOf is the identity of the device at p now.
func identityOf(p string) (identity.Identity, error) {
	info, err := device.System{}.Inspect(p)
	if err != nil {
		return identity.Identity{}, err
	}
	return info.Identity(), nil
}

// Identify is what the device at p is, for a person and to compare: the
// device its path resolves to now is inspected, and its identity
// (package device/identity) named with its size; a drive another takes
// the place of, or that comes back as another, identifies otherwise.
func Identify(p string) (string, error) {
	id, err := identityOf(p)
	if err != nil {
		return "", err
	}
	if id.Anonymous() {
		return "", fmt.Errorf("%s reports nothing that tells it from another drive (%s): a swapped drive could not be told", p, id)
	}
	return id.String(), nil
}
