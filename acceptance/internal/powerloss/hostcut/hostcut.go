// Package hostcut is a power-loss cycle whose cut is the whole host's:
// fio writes the cycle's pattern and ends, the cycle's ledger of
// acknowledged writes and its state are saved and fsynced, the host's
// power is cut, and after the reboot the cycle is judged from what was
// saved.
//
// fio keeps its per-I/O log in memory and writes it at its exit, so no
// log survives a cut that comes while fio writes: the writes judged are
// those of a fio run that ended normally before the cut, whose log was
// on disk (fsynced, in the recording, which is not on a drive under
// test) before the cut command ran. No write is issued to the drive
// between the end of that run and the cut, so every write the drive
// acknowledged before the cut is in the ledger.
package hostcut

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
)

// Files a cycle keeps in its directory beside fio's job, output and
// per-I/O logs: the state saved before the cut, and what the first size
// bytes held before the cycle (an FNV-64 hash a block, little-endian).
const (
	StateFile  = "host.json"
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
	now := bootID()
	switch {
	case st.BootID == "" || now == "":
		return ""
	case now == st.BootID:
		return "the host did not restart since the cut (the same boot id): the cut did not cut its power"
	}
	return "the host restarted since the cut (another boot id)"
}

// Jobs are fio's jobs, each one write in flight: the first half of size
// written sequentially, the second half at random.
var Jobs = []struct{ Name, RW string }{{"sequential", "write"}, {"random", "randwrite"}}

// Job is the fio job file of a cycle on path: the pattern of cycle.Job,
// written for cut_after and ended without a final flush (no end_fsync),
// so that each job's last writes, completed after its last flush, may
// still be in the drive's volatile cache when the host's power goes.
func Job(c cycle.Config, path string) string {
	half := c.Test.Size / 2 / c.Test.BS * c.Test.BS
	var b strings.Builder
	fmt.Fprintf(&b, "[global]\nfilename=%s\nioengine=psync\ndirect=1\niodepth=1\nbs=%d\nfsync=%d\nend_fsync=0\n", path, c.Test.BS, c.Test.FlushEvery)
	fmt.Fprintf(&b, "verify=pattern\nverify_pattern=%s\ndo_verify=0\nverify_state_save=0\n", powerloss.Pattern(c.Tag))
	fmt.Fprintf(&b, "log_avg_msec=0\nlog_offset=1\ntime_based=1\nruntime=%dms\n", max(c.Test.CutAfter, time.Second).Milliseconds())
	for i, j := range Jobs {
		fmt.Fprintf(&b, "\n[%s]\nrw=%s\noffset=%d\nsize=%d\nwrite_lat_log=%s\n", j.Name, j.RW, int64(i)*half, half, filepath.Join(c.Dir, j.Name))
	}
	return b.String()
}

// Cut runs cycle k's writes on d, saves the cycle's state in c.Dir and
// with save (which records the cycle as Pending in the run's record),
// fsyncs everything under c.Dir's parent, and runs the cut command. It
// returns only when the cut did not happen: the command failed, the
// host ran on for HostDown after it, or the cycle never reached it.
func Cut(ctx context.Context, d cycle.Drive, c cycle.Config, k int, save func() error, logf func(string, ...any)) powerloss.Cycle {
	rule, why := d.Promise.Rule()
	out := powerloss.Cycle{Drive: d.Path, Cycle: k, Method: "host: " + c.Cut, Rule: rule.String(), RuleWhy: why, LBA: d.LBA, Tag: fmt.Sprintf("%08x", c.Tag)}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		out.NotRun = err.Error()
		return out
	}
	before, noCounters := d.Counters(ctx)
	id, err := d.Identity(ctx)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading its identity before the cut: %v", d.Path, err)
		return out
	}
	snap, err := cycle.Snapshot(d.Path, c.Test.Size, c.Test.BS)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading what it held before the cycle: %v", d.Path, err)
		return out
	}
	job := filepath.Join(c.Dir, "job.fio")
	if err := os.WriteFile(job, []byte(Job(c, d.Path)), 0o644); err != nil {
		out.NotRun = err.Error()
		return out
	}
	logf("%s: cycle %d: fio writes pattern %08x for %s; then the cycle's ledger is saved and the host's power cut", d.Name, k, c.Tag, c.Test.CutAfter)
	if err := cycle.RunFio(ctx, c, job); err != nil {
		out.NotRun = fmt.Sprintf("%s: fio did not end normally before the cut (%v): see %s", d.Path, err, filepath.Join(c.Dir, "fio.stderr"))
		return out
	}
	jobs, err := Ledger(c.Dir, c.Test.FlushEvery)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading fio's log of completed writes: %v", d.Path, err)
		return out
	}
	st := State{Identity: id, Size: c.Test.Size, BS: c.Test.BS, FlushEvery: c.Test.FlushEvery, Completed: map[string]int{}, Saved: time.Now().UTC().Format(time.RFC3339Nano), BootID: bootID()}
	for i, j := range jobs {
		st.Completed[Jobs[i].Name] = len(j.Writes)
	}
	st.Cycle = out
	st.Cycle.Counters, st.Cycle.NoCounters = before, noCounters
	if err := saveState(c.Dir, st, snap); err != nil {
		out.NotRun = fmt.Sprintf("saving the cycle's state before the cut: %v", err)
		return out
	}
	if err := save(); err != nil {
		out.NotRun = fmt.Sprintf("recording the cycle before the cut: %v", err)
		return out
	}
	if err := syncTree(filepath.Dir(c.Dir)); err != nil {
		out.NotRun = fmt.Sprintf("syncing the cycle's record before the cut: %v", err)
		return out
	}
	if err := ctx.Err(); err != nil {
		out.NotRun = fmt.Sprintf("the run was stopped before the cut (%v)", err)
		return out
	}
	logf("%s: cycle %d: %d writes completed, ledger saved; cutting the host's power (%s): after the reboot, run the same command line with -resume", d.Name, k, sum(st.Completed), c.Cut)
	if err := cycle.Command(ctx, c.Cut, c.Env, filepath.Join(c.Dir, "cut.log")); err != nil {
		out.NotRun = fmt.Sprintf("the cut command failed (%v): see %s", err, filepath.Join(c.Dir, "cut.log"))
		return out
	}
	select {
	case <-time.After(HostDown):
		out.NotRun = fmt.Sprintf("the host's power was not cut: the cut command returned and the host ran on for %s; check the cut command (see %s)", HostDown, filepath.Join(c.Dir, "cut.log"))
	case <-ctx.Done():
		out.NotRun = fmt.Sprintf("the run was stopped while the host's power cut was awaited (%v)", ctx.Err())
	}
	return out
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
	st, snap, err := LoadState(dir)
	if err != nil {
		return powerloss.Cycle{Drive: d.Path, NotRun: fmt.Sprintf("the state saved before the host's power cut does not read: %v", err)}
	}
	out := st.Cycle
	before := out.Counters
	out.Counters = nil
	if why := cycle.Await(ctx, d, st.Identity, within); why != "" {
		out.NotReturned = why
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
	var acked []powerloss.Write
	for _, j := range jobs {
		out.Completed += len(j.Writes)
		acked = append(acked, j.Acknowledged(rule)...)
	}
	out.Acknowledged = len(acked)
	tag, err := parseTag(out.Tag)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	lost, n, err := cycle.ReadBack(d.Path, acked, tag, snap, st.BS)
	if err != nil {
		out.Error = fmt.Sprintf("%s: reading back: %v", d.Path, err)
		return out
	}
	out.LostWrites, out.Lost = n, powerloss.Ranges(lost)
	return out
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
			more, _ := filepath.Glob(filepath.Join(dir, j.Name+"_"+kind+".*.log"))
			for _, m := range more {
				if err := os.Remove(m); err != nil {
					return nil, err
				}
			}
		}
		logs, _ := filepath.Glob(filepath.Join(dir, j.Name+"_lat.*.log"))
		if len(logs) != 1 {
			return nil, fmt.Errorf("job %s: want one per-I/O log %s_lat.N.log in %s, found %d", j.Name, j.Name, dir, len(logs))
		}
		f, err := os.Open(logs[0])
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
