// Package hostcut is a power-loss cycle whose cut is the whole host's:
// fio writes the cycle's pattern on every drive at once and ends, each
// drive's ledger of acknowledged writes and its state are saved and
// fsynced, the host's power is cut once, and after the reboot each
// drive's cycle is judged from what was saved.
//
// fio keeps its per-I/O log in memory and writes it at its exit, so no
// log survives a cut that comes while fio writes: the writes judged are
// those of a fio run that ended normally before the cut, whose log was
// on disk (fsynced, in the recording, which is not on a drive under
// test) before the cut command ran. No write is issued to a drive
// between the end of that run and the cut, so every write a drive
// acknowledged before the cut is in its ledger.
package hostcut

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/dirglob"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
	"github.com/drivequal/drivequal/fiojob"
)

// Files a cycle keeps in its directory beside fio's job, output and
// per-I/O logs: the state saved before the cut, and what the first size
// bytes held before the cycle (an FNV-64 hash a block, little-endian).
const (
	StateFile = "host.json"
	// CutFile holds when the drive was last written and when the cut
	// command started, written and synced just before it starts.
	CutFile    = "cut.json"
	BeforeFile = "before.fnv"
)

// Pending is a cycle's NotRun from the moment its state is saved, before
// the cut, until it is judged after the reboot: a replay of a run never
// resumed judges it inconclusive.
const Pending = "the host's power was cut for this cycle and the run was not resumed: after the reboot, run the same command line with -resume to judge it"

// HostDown is how long the host may run on after the cut command
// returned before the cut is taken for one that did not happen.
var HostDown = time.Minute

// State is what a cycle saved before the cut, to be judged after it.
type State struct {
	// Cycle is the cycle as known before the cut: its drive, tag, rule,
	// and counts of power losses (Before; none and why in NoCounters).
	Cycle powerloss.Cycle `json:"cycle"`
	// Identity is what the drive identified as before the cut: the drive
	// that comes back must identify the same.
	Identity   string `json:"identity"`
	Size       int64  `json:"size"`
	BS         int64  `json:"bs"`
	FlushEvery int    `json:"flush_every"`
	// Completed counts the writes the ledger holds, each job's in order.
	Completed map[string]int `json:"completed"`
	Saved     string         `json:"saved"`
	// BootID is the kernel's boot id when the state was saved: a
	// resume in the same boot was not after a cut of the host's power.
	BootID string `json:"boot_id,omitempty"`
}

// MaxCutGap is the longest a cut may come after a drive's last write
// for its cycle to be judged. An idle drive may destage a few unflushed
// writes in milliseconds, which no host cut after fio's exit can beat:
// the bound rules out a cut that plainly came too late (a slow cut
// command, a stalled host), the gap itself is named in every verdict.
// The suite's save and sync of the ledgers took up to 1.7 s on loop
// devices of a loaded two-core host: 5 s leaves room for that.
const MaxCutGap = 5 * time.Second

// cutTimes is CutFile's content.
type cutTimes struct {
	LastWrite string `json:"last_write"`
	CutStart  string `json:"cut_start"`
}

// bootID is the kernel's boot id ("" where there is none).
func bootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// restarted says whether the host restarted since st was saved, for a
// drive that keeps no count of power losses ("" when not known).
func restarted(st State) string {
	if now := bootID(); st.BootID == "" || now == "" || now == st.BootID {
		return ""
	}
	return "the host restarted since the cut (another boot id)"
}

// notCutHost says the host's power was not cut since st was saved: the
// kernel's boot id is the one saved with it ("" when it is another, or
// not known).
func notCutHost(st State) string {
	if now := bootID(); st.BootID == "" || now != st.BootID {
		return ""
	}
	return SameBoot + " (the same boot id " + st.BootID + "); run -resume after the host's power comes back"
}

// SameBoot starts what a pending cycle says when it is finished in the
// boot it was cut in: not judged, and left pending for the resume after
// the host's power has really gone.
const SameBoot = "the host's power was not cut: the host did not restart since the cut"

// Jobs are fio's jobs, each one write in flight: the first half of size
// written sequentially, the second half at random.
var Jobs = []struct{ Name, RW string }{{"sequential", "write"}, {"random", "randwrite"}}

// Job is the fio job file of a cycle on path: the pattern of cycle.Job,
// written for cut_after and ended without a final flush (no end_fsync),
// so that each job's last writes, completed after its last flush, may
// still be in the drive's volatile cache when the host's power goes.
// Each job writes each block of its half at most once (no time_based;
// the runtime is a cap): a job that writes its whole half sooner ends
// early, and the cycle is not judged (see save). Its jobs are threads of
// one fio process, as cycle.Job's are.
func Job(c cycle.Config, path string) string {
	path = fiojob.EscapeFilename(path) // a ":" would split it into several files
	half := c.Test.Size / 2 / c.Test.BS * c.Test.BS
	var b strings.Builder
	fmt.Fprintf(&b, "[global]\nfilename=%s\nioengine=psync\ndirect=1\nthread=1\niodepth=1\nbs=%d\nfsync=%d\nend_fsync=0\n", path, c.Test.BS, c.Test.FlushEvery)
	fmt.Fprintf(&b, "verify=pattern\nverify_pattern=%s\ndo_verify=0\nverify_state_save=0\n", powerloss.Pattern(c.Tag))
	fmt.Fprintf(&b, "log_avg_msec=0\nlog_offset=1\nruntime=%dms\n", max(c.Test.CutAfter, time.Second).Milliseconds())
	for i, j := range Jobs {
		fmt.Fprintf(&b, "\n[%s]\nrw=%s\noffset=%d\nsize=%d\nwrite_lat_log=%s\n", j.Name, j.RW, int64(i)*half, half, filepath.Join(c.Dir, j.Name))
	}
	return b.String()
}

// Drive is one drive of a host cut: the drive and how its cycle runs
// (its Config's Dir, Tag and Test; the cut command is Cut's).
type Drive struct {
	cycle.Drive
	Config cycle.Config
}

// Cut runs cycle k on every drive at once and cuts the host's power
// once: each drive's fio writes its pattern for cut_after, all started
// together so that all end together, each drive's cache holding its
// last writes at the cut. Each drive's ledger and state are then saved
// in its Config.Dir and its cycle given to record (pending: NotRun is
// Pending; a drive whose writes failed: NotRun says why, and the others
// are cut all the same), everything under each Config.Dir's parent is
// fsynced, each pending drive's CutFile written, synced and given to
// list at once (nil: not listed), which a resume trusts only when its
// recording lists it (FinishGap), and cmd runs by sh with env (cycle.Command), once, its
// output in each pending drive's cut.log. Cut returns only when the cut did not happen (the
// command failed, the host ran on for HostDown after it, the cycle
// never reached it, no drive's writes were saved): each drive's cycle,
// NotRun saying why.
func Cut(ctx context.Context, drives []Drive, k int, cmd string, env []string, record func(i int, c powerloss.Cycle) error, list func(files []string) error, logf func(string, ...any)) []powerloss.Cycle {
	ws := make([]*writes, len(drives))
	for i, d := range drives {
		ws[i] = &writes{d: d}
	}
	// Each drive's state before the cycle (a read of its size) at once,
	// then its writes, started together.
	each(ws, func(w *writes) { w.prepare(ctx, cmd, k) })
	for _, w := range ws {
		if w.out.NotRun == "" {
			logf("%s: cycle %d: fio writes pattern %08x for %s, with every other drive's; then the ledgers are saved and the host's power cut", w.d.Name, k, w.d.Config.Tag, w.d.Config.Test.CutAfter)
		}
	}
	stop := make(chan struct{})
	for _, w := range ws {
		w.last = cycle.LastWrite(w.d.Path, stop)
	}
	each(ws, func(w *writes) {
		if w.out.NotRun == "" {
			if err := cycle.RunFio(ctx, w.d.Config, w.job); err != nil {
				w.out.NotRun = fmt.Sprintf("%s: fio did not end normally before the cut (%v): see %s", w.d.Path, err, filepath.Join(w.d.Config.Dir, "fio.stderr"))
			}
		}
	})
	var pending []*writes
	for i, w := range ws {
		if w.out.NotRun == "" {
			w.save()
		}
		c := w.out
		if c.NotRun == "" {
			c = w.st.Cycle
			c.NotRun = Pending
		}
		if err := record(i, c); err != nil && w.out.NotRun == "" {
			w.out.NotRun = fmt.Sprintf("recording the cycle before the cut: %v", err)
		}
		if w.out.NotRun == "" {
			pending = append(pending, w)
		}
	}
	notCut := func(why string) []powerloss.Cycle {
		out := make([]powerloss.Cycle, len(ws))
		for i, w := range ws {
			if w.out.NotRun == "" {
				w.out.NotRun = why
			}
			out[i] = w.out
		}
		return out
	}
	if len(pending) == 0 {
		return notCut("")
	}
	for _, w := range ws {
		if err := syncTree(filepath.Dir(w.d.Config.Dir)); err != nil {
			return notCut(fmt.Sprintf("syncing the cycle's record before the cut: %v", err))
		}
	}
	if err := ctx.Err(); err != nil {
		return notCut(fmt.Sprintf("the run was stopped before the cut (%v)", err))
	}
	total := 0
	for _, w := range pending {
		total += sum(w.st.Completed)
	}
	logf("cycle %d: %d writes completed on %d drive(s), ledgers saved; cutting the host's power (%s): after the reboot, run the same command line with -resume", k, total, len(pending), cmd)
	// When each drive was last written, and the cut's start, on disk
	// and listed at once before the cut: the gap each names is short of
	// the real one by their writes and one listing (some milliseconds
	// a drive).
	close(stop)
	start := time.Now()
	var files []string
	for _, w := range pending {
		t := cutTimes{CutStart: start.UTC().Format(time.RFC3339Nano)}
		if last := <-w.last; !last.IsZero() {
			t.LastWrite = last.UTC().Format(time.RFC3339Nano)
		}
		data, _ := json.Marshal(t)
		file := filepath.Join(w.d.Config.Dir, CutFile)
		if writeSync(file, data) == nil && syncPath(w.d.Config.Dir) == nil {
			files = append(files, file)
		}
	}
	if list != nil && len(files) > 0 {
		if err := list(files); err != nil {
			return notCut(fmt.Sprintf("listing the cut's times (%s) in the recording before the cut: %v", CutFile, err))
		}
	}
	cutLog := filepath.Join(pending[0].d.Config.Dir, "cut.log")
	err := cycle.Command(ctx, cmd, env, cutLog)
	if data, rerr := os.ReadFile(cutLog); rerr == nil {
		for _, w := range pending[1:] {
			_ = os.WriteFile(filepath.Join(w.d.Config.Dir, "cut.log"), data, 0o644)
		}
	}
	if err != nil {
		return notCut(fmt.Sprintf("the cut command failed (%v): see %s", err, cutLog))
	}
	select {
	case <-time.After(HostDown):
		return notCut(fmt.Sprintf("the host's power was not cut: the cut command returned and the host ran on for %s; check the cut command (see %s)", HostDown, cutLog))
	case <-ctx.Done():
		return notCut(fmt.Sprintf("the run was stopped while the host's power cut was awaited (%v)", ctx.Err()))
	}
}

// writes is one drive's part of a host cut's cycle.
type writes struct {
	d    Drive
	last <-chan time.Time
	out  powerloss.Cycle
	st   State
	snap []uint64
	job  string
}

// each runs f on every w at once and waits for all.
func each(ws []*writes, f func(*writes)) {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// prepare reads what the drive is and holds before cycle k's writes,
// and writes its fio job.
func (w *writes) prepare(ctx context.Context, cut string, k int) {
	d, c := w.d, w.d.Config
	rule, why := d.Promise.Rule()
	w.out = powerloss.Cycle{Drive: d.Path, Cycle: k, Method: "host: " + cut, Rule: rule.String(), RuleWhy: why, LBA: d.LBA, Tag: fmt.Sprintf("%08x", c.Tag)}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		w.out.NotRun = err.Error()
		return
	}
	before, noCounters := d.Counters(ctx)
	id, err := d.Identity(ctx)
	if err != nil {
		w.out.NotRun = fmt.Sprintf("%s: reading its identity before the cut: %v", d.Path, err)
		return
	}
	if w.snap, err = cycle.Snapshot(d.Path, c.Test.Size, c.Test.BS); err != nil {
		w.out.NotRun = fmt.Sprintf("%s: reading what it held before the cycle: %v", d.Path, err)
		return
	}
	w.job = filepath.Join(c.Dir, "job.fio")
	if err := os.WriteFile(w.job, []byte(Job(c, d.Path)), 0o644); err != nil {
		w.out.NotRun = err.Error()
		return
	}
	w.st = State{Identity: id, Size: c.Test.Size, BS: c.Test.BS, FlushEvery: c.Test.FlushEvery, Completed: map[string]int{}}
	w.st.Cycle = w.out
	w.st.Cycle.Counters, w.st.Cycle.NoCounters = before, noCounters
	w.st.Cycle.CountersLost = cycle.Unread(d.Drive, before, noCounters)
}

// save reads the drive's ledger once its fio ended and saves its state
// (synced).
func (w *writes) save() {
	c := w.d.Config
	jobs, err := Ledger(c.Dir, c.Test.FlushEvery)
	if err != nil {
		w.out.NotRun = fmt.Sprintf("%s: reading fio's log of completed writes: %v", w.d.Path, err)
		return
	}
	blocks := int(c.Test.Size / 2 / c.Test.BS)
	for i, j := range jobs {
		w.st.Completed[Jobs[i].Name] = len(j.Writes)
		if len(j.Writes) >= blocks {
			w.out.NotRun = fmt.Sprintf("%s: fio's job %s wrote its whole region (size %d bytes) before cut_after %s ended: its writes stopped before the cut; raise size in [power_loss]", w.d.Path, Jobs[i].Name, c.Test.Size, c.Test.CutAfter)
			return
		}
	}
	w.st.Saved, w.st.BootID = time.Now().UTC().Format(time.RFC3339Nano), bootID()
	if err := saveState(c.Dir, w.st, w.snap); err != nil {
		w.out.NotRun = fmt.Sprintf("saving the cycle's state before the cut: %v", err)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Finish judges the cycle whose state is in dir, after the reboot: d
// must open with the identity it had before the cut within within; its
// counts of power losses are read again; every write the ledger holds
// by the rule is read back.
func Finish(ctx context.Context, d cycle.Drive, dir string, within time.Duration) powerloss.Cycle {
	return FinishGap(ctx, d, dir, within, MaxCutGap, nil)
}

// FinishGap is Finish with maxGap the longest the cut may have come after
// the drive's last write for the cycle to be judged (the spec's
// max_cut_gap) and listed the names of the files in dir the recording
// lists (nil: every file is trusted). With listed, dir must hold those
// files and no other but the cut command's output (cut.log, never read)
// and an unlisted CutFile, which is not read: the cut's gap is then
// unknown, and the cycle not judged kept. A file planted in dir (a
// second ledger, a FIFO) or one listed and gone fails the cycle as an
// altered recording.
func FinishGap(ctx context.Context, d cycle.Drive, dir string, within, maxGap time.Duration, listed map[string]bool) powerloss.Cycle {
	if why := altered(dir, listed); why != "" {
		return powerloss.Cycle{Drive: d.Path, Error: why}
	}
	st, snap, err := LoadState(dir)
	if err != nil {
		return powerloss.Cycle{Drive: d.Path, Error: fmt.Sprintf("the state saved before the host's power cut does not read (a recorded cycle's file missing or altered, as a missing ledger is): %v", err)}
	}
	out := st.Cycle
	before := out.Counters
	out.Counters = nil
	if why := notCutHost(st); why != "" {
		out.NotRun = why
		return out
	}
	if !cycle.Returned(ctx, d, st.Identity, within, &out) {
		return out
	}
	if len(before) > 0 {
		after, why := d.Counters(ctx)
		out.Counters, out.CountersLost = cycle.Pair(before, after, why)
	} else if r := restarted(st); r != "" {
		out.NoCounters = strings.TrimPrefix(out.NoCounters+"; "+r, "; ")
	}
	jobs, err := Ledger(dir, st.FlushEvery)
	if err != nil {
		out.Error = fmt.Sprintf("%s: the ledger saved before the cut does not read: %v", d.Path, err)
		return out
	}
	for i, j := range jobs {
		if n := st.Completed[Jobs[i].Name]; n != len(j.Writes) {
			out.Error = fmt.Sprintf("%s: the ledger of job %s holds %d writes, the state saved before the cut says %d: the recording was altered", d.Path, Jobs[i].Name, len(j.Writes), n)
			return out
		}
	}
	rule := powerloss.Flushed
	if out.Rule == powerloss.Completed.String() {
		rule = powerloss.Completed
	}
	var acked, flushed []powerloss.Write
	for _, j := range jobs {
		out.Completed += len(j.Writes)
		acked = append(acked, j.Acknowledged(rule)...)
		flushed = append(flushed, j.Acknowledged(powerloss.Flushed)...)
	}
	out.Acknowledged = powerloss.Blocks(acked)
	out.AtRisk, out.Rewritten = powerloss.AtRisk(jobs)
	if listed == nil || listed[CutFile] {
		out.CutGap = cutGap(dir)
	}
	out.MaxCutGap = maxGap.String()
	tag, err := parseTag(out.Tag)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	cycle.Lose(&out, d.Path, acked, flushed, rule, tag, snap, st.BS)
	return out
}

// altered says how dir differs from the cycle's files the recording
// lists (listed, by name; "" when it does not, or listed is nil): a file
// it does not list, but the cut command's output and CutFile, or one it
// lists that is gone.
func altered(dir string, listed map[string]bool) string {
	if listed == nil {
		return ""
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Sprintf("the cycle's files saved before the host's power cut do not read: %v", err)
	}
	there := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		there[name] = true
		switch {
		case name == "cut.log" || name == CutFile && !listed[name]:
		case !e.Type().IsRegular():
			return fmt.Sprintf("%s is not a regular file (%s): the recording was altered after the cut", filepath.Join(dir, name), e.Type())
		case !listed[name]:
			return fmt.Sprintf("%s is not listed in run.json, which listed the cycle's files before the cut: the recording was altered after it", filepath.Join(dir, name))
		}
	}
	for name := range listed {
		if !there[name] {
			return fmt.Sprintf("%s, listed in run.json before the cut, is missing: the recording was altered after it", filepath.Join(dir, name))
		}
	}
	return ""
}

// cutGap is how long after the drive's last write the cut command
// started, from CutFile in dir ("" when not known: no file, or no count
// of writes).
func cutGap(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, CutFile))
	if err != nil {
		return ""
	}
	var t cutTimes
	if json.Unmarshal(data, &t) != nil {
		return ""
	}
	last, err1 := time.Parse(time.RFC3339Nano, t.LastWrite)
	start, err2 := time.Parse(time.RFC3339Nano, t.CutStart)
	if err1 != nil || err2 != nil {
		return ""
	}
	return start.Sub(last).Round(time.Millisecond).String()
}

func parseTag(s string) (uint32, error) {
	var tag uint32
	if _, err := fmt.Sscanf(s, "%08x", &tag); err != nil || len(s) != 8 {
		return 0, fmt.Errorf("the cycle's tag %q is not eight hex digits: the recording was altered", s)
	}
	return tag, nil
}

// Ledger is each job's completed writes, from fio's per-I/O logs in dir
// (which it removes the clat and slat logs beside, as they repeat it).
// fio ended normally without a final flush: a job's writes after its
// last completed flush are not known to be flushed (Finished false).
func Ledger(dir string, flushEvery int) ([]powerloss.Job, error) {
	var jobs []powerloss.Job
	for _, j := range Jobs {
		for _, kind := range []string{"clat", "slat"} {
			more := dirglob.Match(dir, j.Name+"_"+kind+".*.log")
			for _, m := range more {
				if err := os.Remove(m); err != nil {
					return nil, err
				}
			}
		}
		logs := dirglob.Match(dir, j.Name+"_lat.*.log")
		if len(logs) != 1 {
			return nil, fmt.Errorf("job %s: want one per-I/O log %s_lat.N.log in %s, found %d", j.Name, j.Name, dir, len(logs))
		}
		f, err := cycle.OpenRegular(logs[0])
		if err != nil {
			return nil, err
		}
		w, err := powerloss.ParseLatLog(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", logs[0], err)
		}
		jobs = append(jobs, powerloss.Job{Writes: w, FlushEvery: flushEvery})
	}
	return jobs, nil
}

// saveState writes st and snap in dir, each synced.
func saveState(dir string, st State, snap []uint64) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := writeSync(filepath.Join(dir, StateFile), data); err != nil {
		return err
	}
	raw := make([]byte, 8*len(snap))
	for i, h := range snap {
		binary.LittleEndian.PutUint64(raw[8*i:], h)
	}
	return writeSync(filepath.Join(dir, BeforeFile), raw)
}

// LoadState reads the state a cycle saved in dir before the cut.
func LoadState(dir string) (State, []uint64, error) {
	var st State
	data, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return st, nil, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	if st.BS <= 0 || st.Size < st.BS || st.FlushEvery <= 0 {
		return st, nil, fmt.Errorf("%s: size %d, bs %d, flush_every %d: the recording was altered", filepath.Join(dir, StateFile), st.Size, st.BS, st.FlushEvery)
	}
	raw, err := os.ReadFile(filepath.Join(dir, BeforeFile))
	if err != nil {
		return st, nil, err
	}
	if int64(len(raw)) != 8*(st.Size/st.BS) {
		return st, nil, fmt.Errorf("%s: %d bytes, want 8 a block of %d: the recording was altered", filepath.Join(dir, BeforeFile), len(raw), st.Size/st.BS)
	}
	snap := make([]uint64, len(raw)/8)
	for i := range snap {
		snap[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return st, snap, nil
}

func writeSync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncTree fsyncs every file and directory under root, and root's
// parent: what the run wrote there survives the host's power cut.
func syncTree(root string) error {
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && !e.Type().IsRegular() {
			return nil
		}
		return syncPath(p)
	})
	if err != nil {
		return err
	}
	return syncPath(filepath.Dir(root))
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
