// Package cycle runs one power-loss cycle on a drive: fio writes the
// cycle's pattern (one sequential and one random job, each with one write
// in flight and a flush every few writes), the user's command cuts the
// drive's power while it writes, the restore command brings it back, the
// drive is awaited with the same identity, and every write the drive
// acknowledged is read back; package powerloss judges what is found.
package cycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/drivequal/drivequal/acceptance/internal/dirglob"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// Drive is the drive a cycle cuts.
type Drive struct {
	Path, Name string
	// LBA is its logical block size in bytes.
	LBA     int64
	Promise powerloss.Promise
	// Counters reads its counts of power losses; none (and why) when it
	// keeps none nvme-cli can read.
	Counters func(ctx context.Context) ([]powerloss.Counter, string)
	// Counted says the drive keeps counts of power losses (an NVMe
	// drive nvme-cli identifies, not known to keep none): when they do
	// not read, the cut has no evidence and the cycle is not a pass.
	Counted bool
	// Identity is what its path resolves to now, identified (NVMe NGUID,
	// EUI-64 or serial and namespace, a loop device's backing file, and
	// its size): the drive that comes back must identify the same.
	Identity func(ctx context.Context) (string, error)
	// Absent, when set, says why the drive is known not to have come
	// back (a resume that waited ready_within for it at setup): it is
	// not awaited again, nor opened.
	Absent string
	// Find is the path of another device of the host that identifies as
	// id, for a drive that did not come back at Path ("" when none): the
	// kernel may name a controller cut and restored anew. Nil where a
	// drive is not renamed (a loop device).
	Find func(ctx context.Context, id string) string
}

// Config is how a cycle runs.
type Config struct {
	// Cut and Restore are the commands run by sh, with Env, the drive's
	// values (DQ_PATH, DQ_SERIAL, ...), in the suite's environment less
	// its own DQ_ variables (see command).
	Cut, Restore string
	Env          []string
	Test         specs.PowerLoss
	// Dir is where fio's job file, output and per-I/O logs go.
	Dir string
	// Tag is the cycle's pattern tag, unique to the run and cycle.
	Tag uint32
	// Fio is fio's binary ("" for fio on PATH).
	Fio string
}

// Job is fio's job file for d: the first half of the test's size
// written sequentially and the second half at random, each job with one
// write in flight, a flush after every FlushEvery writes and its
// completed writes logged one a line. Each job writes each block of its
// half once (fio's random map keeps a random job to one write a block a
// pass; no time_based, so no job starts over): a block written twice
// would hold the same bytes twice, and the loss of the second write
// could not be seen. Its runtime (Runtime) is only a cap: a job that
// writes its whole half before the cut ends early, and the cycle is not
// judged (raise size). Its jobs are threads of one fio process
// (thread=1): a forked job process outlives its killed parent, and a
// suite killed mid-cycle would leave it writing the drive.
func Job(c Config, path string) string {
	path = fiojob.EscapeFilename(path) // a ":" would split it into several files
	half := c.Test.Size / 2 / c.Test.BS * c.Test.BS
	limit := Runtime(c.Test)
	var b strings.Builder
	fmt.Fprintf(&b, "[global]\nfilename=%s\nioengine=psync\ndirect=1\nthread=1\niodepth=1\nbs=%d\nfsync=%d\nend_fsync=1\n", path, c.Test.BS, c.Test.FlushEvery)
	fmt.Fprintf(&b, "verify=pattern\nverify_pattern=%s\ndo_verify=0\nverify_state_save=0\n", powerloss.Pattern(c.Tag))
	fmt.Fprintf(&b, "log_avg_msec=0\nlog_offset=1\nruntime=%dms\n", limit.Milliseconds())
	for i, j := range []struct{ name, rw string }{{"sequential", "write"}, {"random", "randwrite"}} {
		fmt.Fprintf(&b, "\n[%s]\nrw=%s\noffset=%d\nsize=%d\nwrite_lat_log=%s\n", j.name, j.rw, int64(i)*half, half, filepath.Join(c.Dir, j.name))
	}
	return b.String()
}

// CommandTimeout bounds each cut and restore command; FirstWritesWait
// is how long past cut_after fio's first writes are awaited; StopWait
// how long fio is given to stop.
const (
	CommandTimeout  = time.Minute
	FirstWritesWait = 30 * time.Second
	StopWait        = 10 * time.Second
)

// Runtime is fio's runtime in a cycle of p, a cap that counts from fio's
// start: the longest the cycle waits for fio's first writes (cut_after
// and FirstWritesWait), cut_after, and 5 s for the cut command to start.
// A cap that did not allow for the first writes' wait ended fio before
// the cut on a slow or loaded host: in a guest under TCG beside other
// work, the writes of two flush intervals took up to 3.4 s and the cut
// command 2.5 s more to reach the host, and fio's 6-second cap (twice
// cut_after and 5 s) came first: the cut found fio ended.
func Runtime(p specs.PowerLoss) time.Duration {
	return p.CutAfter + FirstWritesWait + p.CutAfter + 5*time.Second
}

// Waits is the longest a cycle of p waits, its commands included, not
// counting its reads of the drive: fio's first writes (cut_after and
// FirstWritesWait), cut_after, the cut command (CommandTimeout, then
// CommandDrain for its output), fio's end after it (afterCut, then
// StopWait for SIGINT and StopWait for SIGKILL), the restore command,
// ready_within for the drive to come back and StopWait for a killed
// fio to exit once it has.
func Waits(p specs.PowerLoss) time.Duration {
	command := CommandTimeout + CommandDrain
	return p.CutAfter + FirstWritesWait + p.CutAfter + command + afterCut(p) + 2*StopWait + command + p.ReadyWithin + StopWait
}

// afterCut is how long fio's end is awaited after the cut command: twice
// cut_after, ready_within and 30 s, and at least what is left of fio's
// runtime after a cut at cut_after (its first writes awaited no time)
// and 30 s more, so that fio ends on its own, its writes complete, when
// the command cut nothing. The first is the longer unless cut_after and
// ready_within add to under 5 s.
func afterCut(p specs.PowerLoss) time.Duration {
	return max(2*p.CutAfter+p.ReadyWithin+30*time.Second, Runtime(p)-p.CutAfter+30*time.Second)
}

// Run runs cycle k on d and returns what it observed.
func Run(ctx context.Context, d Drive, c Config, k int, logf func(string, ...any)) powerloss.Cycle {
	rule, why := d.Promise.Rule()
	out := powerloss.Cycle{Drive: d.Path, Cycle: k, Method: "command: " + c.Cut, Rule: rule.String(), RuleWhy: why, LBA: d.LBA, Tag: fmt.Sprintf("%08x", c.Tag)}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		out.NotRun = err.Error()
		return out
	}
	before, noCounters := d.Counters(ctx)
	unread := Unread(d, before, noCounters)
	id, err := d.Identity(ctx)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading its identity before the cut: %v", d.Path, err)
		return out
	}
	snap, err := snapshot(d.Path, c.Test.Size, c.Test.BS)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading what it held before the cycle: %v", d.Path, err)
		return out
	}
	job := filepath.Join(c.Dir, "job.fio")
	if err := os.WriteFile(job, []byte(Job(c, d.Path)), 0o644); err != nil {
		out.NotRun = err.Error()
		return out
	}
	fio := startFio(ctx, c, job)
	if fio.err != nil {
		out.NotRun = fmt.Sprintf("%s: fio did not start: %v", d.Path, fio.err)
		return out
	}
	logf("%s: cycle %d: fio writes pattern %08x; power is cut %s after its first flushed writes", d.Name, k, c.Tag, c.Test.CutAfter)
	// On a loaded host fio's first writes and flushes may take seconds:
	// the cut's time counts from when the kernel has seen the writes of a
	// flush interval or two, where it counts them.
	firstWrites(d.Path, int64(2*c.Test.FlushEvery+4), fio.done, c.Test.CutAfter+FirstWritesWait)
	select {
	case <-fio.done:
		if fio.wait == nil {
			out.NotRun = endedEarly(c, d.Path)
			return out
		}
		out.NotRun = fmt.Sprintf("%s: fio ended before the cut (%v): see %s", d.Path, fio.wait, filepath.Join(c.Dir, "fio.stderr"))
		return out
	case <-time.After(c.Test.CutAfter):
	case <-ctx.Done():
		fio.stop()
		out.NotRun = "the run was stopped before the cut"
		return out
	}
	cutErr := command(ctx, c.Cut, c.Env, filepath.Join(c.Dir, "cut.log"))
	logf("%s: cycle %d: power cut (%s)", d.Name, k, c.Cut)
	// fio's writes fail once the power is gone; a drive whose power the
	// command did not cut is written until fio's runtime ends.
	killed, exited := false, true
	select {
	case <-fio.done:
	case <-time.After(afterCut(c.Test)):
		killed, exited = fio.stop()
	case <-ctx.Done():
		// A stopped run restores the power as soon as fio has stopped.
		killed, exited = fio.stop()
	}
	// The restore runs even while fio has not exited (a write held while
	// the power is off may end only once it is back), and even when the
	// run was stopped; the terminal's Ctrl-C (SIGINT to its whole process
	// group) does not cut it short.
	restoreErr := command(ctx, "trap '' INT; "+c.Restore, c.Env, filepath.Join(c.Dir, "restore.log"))
	if ctx.Err() != nil {
		// Stopped: a drive still coming back is not one that did not.
		out.NotRun = fmt.Sprintf("the run was stopped during the cycle; the restore command ran (see %s)", filepath.Join(c.Dir, "restore.log"))
		return out
	}
	switch {
	case cutErr != nil:
		out.NotRun = fmt.Sprintf("the cut command failed (%v): see %s", cutErr, filepath.Join(c.Dir, "cut.log"))
		return out
	case restoreErr != nil:
		// The command, not the drive, failed: whether the drive would
		// have returned is not known.
		out.NotRun = fmt.Sprintf("the restore command failed (%v): see %s", restoreErr, filepath.Join(c.Dir, "restore.log"))
		return out
	}
	if !returned(ctx, d, id, c.Test.ReadyWithin, &out) {
		return out
	}
	if !exited {
		select {
		case <-fio.done:
		case <-time.After(StopWait):
			out.NotRun = fmt.Sprintf("%s: fio did not exit after it was killed, even with the drive back: a write of it is stuck in the kernel, and which writes completed cannot be known", d.Path)
			return out
		}
	}
	if killed {
		// SIGKILL ends fio before it writes its logs, or while it does.
		out.NotRun = fmt.Sprintf("%s: fio did not stop within %s of SIGINT after the cut and was killed: its log of completed writes may be cut short (see %s)", d.Path, StopWait, filepath.Join(c.Dir, "fio.stderr"))
		return out
	}
	logf("%s: cycle %d: back with the same identity; reading back its acknowledged writes", d.Name, k)
	out.Counters, out.NoCounters, out.CountersLost = nil, noCounters, unread
	if len(before) > 0 {
		after, why := d.Counters(ctx)
		out.Counters, out.CountersLost = pair(before, after, why)
	}
	jobs, err := ledger(c)
	if err != nil {
		out.NotRun = fmt.Sprintf("%s: reading fio's log of completed writes: %v", d.Path, err)
		return out
	}
	var acked, flushed []powerloss.Write
	for i, j := range jobs {
		out.Completed += len(j.Writes)
		acked = append(acked, j.Acknowledged(rule)...)
		flushed = append(flushed, j.Acknowledged(powerloss.Flushed)...)
		if j.Finished {
			// Its final flush completed after the cut started: the cut
			// did not stop its writes.
			out.Unstopped = append(out.Unstopped, jobNames[i])
		}
	}
	out.Acknowledged = powerloss.Blocks(acked)
	out.AtRisk, out.Rewritten = powerloss.AtRisk(jobs)
	Lose(&out, d.Path, acked, flushed, rule, c.Tag, snap, c.Test.BS)
	return out
}

// endedEarly says why fio, ended without error before the cut, was not
// cut: it wrote its whole region, or (a slower drive than its runtime
// allows for) its runtime ended first. It counts the lines of fio's
// per-I/O logs, a completed write each, and keeps the logs as they are.
func endedEarly(c Config, path string) string {
	region := 2 * (c.Test.Size / 2 / c.Test.BS)
	n, err := countWrites(c.Dir, region+1)
	switch {
	case err != nil:
		return fmt.Sprintf("%s: fio ended before the cut, without error; its logs of completed writes do not read (%v), so whether it wrote its whole region (size %d bytes) or its runtime (%s) ended first is not known", path, err, c.Test.Size, Runtime(c.Test))
	case n < region:
		return fmt.Sprintf("%s: fio ended before the cut, after %d of its region's %d writes: its runtime (%s) ended first; the drive completed too few writes to reach the cut", path, n, region, Runtime(c.Test))
	}
	return fmt.Sprintf("%s: fio ended before the cut: it wrote its whole region (size %d bytes) in less than cut_after %s; raise size in [power_loss] so that it still writes at the cut", path, c.Test.Size, c.Test.CutAfter)
}

// countWrites counts the lines of each job's per-I/O log in dir (a
// regular file each), up to limit.
func countWrites(dir string, limit int64) (int64, error) {
	var n int64
	for _, name := range jobNames {
		logs := dirglob.Match(dir, name+"_lat.*.log")
		if len(logs) != 1 {
			return 0, fmt.Errorf("job %s: want one per-I/O log %s_lat.N.log in %s, found %d", name, name, dir, len(logs))
		}
		f, err := OpenRegular(logs[0])
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		for n < limit && sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				n++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", logs[0], err)
		}
	}
	return n, nil
}

// OpenRegular opens path for reading when it is a regular file: a FIFO
// or a device in a cycle's directory would hang or mislead the reader.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return os.Open(path)
}

// Lose reads back the acknowledged writes of the drive at path into
// out: how many were lost and their ranges, or why they did not read;
// held to every completed write, also how many of the lost a flush had
// followed.
func Lose(out *powerloss.Cycle, path string, acked, flushed []powerloss.Write, rule powerloss.Rule, tag uint32, snap []uint64, bs int64) {
	lost, n, err := readBack(path, acked, tag, snap, bs)
	if err != nil {
		out.Error = fmt.Sprintf("%s: reading back: %v", path, err)
		return
	}
	out.LostWrites, out.Lost = n, powerloss.Ranges(lost)
	if rule == powerloss.Completed {
		// Held to every completed write: say which of those lost a flush
		// had followed.
		k := powerloss.FlushedAmong(lost, flushed)
		out.LostFlushed = &k
	}
}

// Unread says why the counts of power losses of a drive that keeps
// them did not read before the cut ("" when they read, or it keeps
// none): the cut will have no evidence.
func Unread(d Drive, before []powerloss.Counter, why string) string {
	if !d.Counted || len(before) > 0 {
		return ""
	}
	return "its counts of power losses did not read before the cut (" + why + ")"
}

// pair is each counter read before with its reading after, and what
// read before but not after (why: why none read after).
func pair(before, after []powerloss.Counter, why string) (out []powerloss.Counter, lost string) {
	var gone []string
	for _, b := range before {
		found := false
		for _, a := range after {
			if a.Name == b.Name {
				out = append(out, powerloss.Counter{Name: b.Name, Before: b.Before, After: a.Before})
				found = true
			}
		}
		if !found {
			gone = append(gone, b.Name)
		}
	}
	if len(gone) > 0 {
		lost = strings.Join(gone, ", ") + " read before the cut but not after"
		if why != "" {
			lost += " (" + why + ")"
		}
	}
	return out, lost
}

type fioProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	wait error
	err  error
}

// stop interrupts fio (SIGINT: it stops its jobs and writes its logs),
// kills it if it has not exited within StopWait, and waits StopWait more.
// It says whether fio had to be killed and whether it has exited: its
// jobs are threads of the one process, which ends only when each has,
// and a thread whose write is stuck in the kernel (a drive without power
// whose path holds its I/O) ends only when that write completes or fails.
func (f *fioProc) stop() (killed, exited bool) {
	_ = f.cmd.Process.Signal(os.Interrupt)
	select {
	case <-f.done:
		return false, true
	case <-time.After(StopWait):
	}
	_ = f.cmd.Process.Kill()
	select {
	case <-f.done:
		return true, true
	case <-time.After(StopWait):
		return true, false
	}
}

func startFio(ctx context.Context, c Config, job string) *fioProc {
	bin := c.Fio
	if bin == "" {
		bin = "fio"
	}
	cmd := exec.CommandContext(ctx, bin, "--output-format=json", "--output="+filepath.Join(c.Dir, "fio.json"), job)
	cmd.Dir = c.Dir
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	setpgid(cmd)
	stderr, err := os.Create(filepath.Join(c.Dir, "fio.stderr"))
	if err != nil {
		return &fioProc{err: err}
	}
	cmd.Stderr = stderr
	f := &fioProc{cmd: cmd, done: make(chan struct{})}
	// The kernel sends fio its death signal (Pdeathsig, see setpgid) when the thread
	// that forked it ends: the goroutine that starts fio holds its thread
	// until fio has been waited for.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		f.wait = cmd.Wait()
		stderr.Close()
		close(f.done)
	}()
	if err := <-started; err != nil {
		stderr.Close()
		return &fioProc{err: err}
	}
	return f
}

// command runs cmd by sh with the drive's values env (DQ_PATH=..., the
// log's first line) in the suite's environment less every DQ_ variable
// of its own (the shell's DQ_SLOT would stand for a drive's slot never
// checked), its output in logPath, within a minute (commandWithin).
func command(ctx context.Context, cmd string, env []string, logPath string) error {
	return commandWithin(ctx, cmd, env, logPath, CommandTimeout)
}

// CommandDrain is how long a cut or restore command's output is read
// after sh has exited: a child it left in the background (a daemon a
// PDU's script starts, say) may hold the output open for good.
const CommandDrain = 5 * time.Second

// commandWithin is command bounded by within alone: a run stopped
// meanwhile (Ctrl-C, the -timeout's margin) lets a command that cuts or
// restores power finish, so that a restore is never cut short. At the
// bound sh is killed, and its output is read at most CommandDrain more:
// a child still running, or left in the background by a command that
// exited 0 (which succeeded: the log says so), does not hold the cycle.
// Such a child runs on; sh keeps the suite's process group and terminal,
// so that a command may still ask for a password.
func commandWithin(ctx context.Context, cmd string, env []string, logPath string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), within)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", cmd)
	sh.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DQ_") }), env...)
	sh.WaitDelay = CommandDrain
	out, err := sh.CombinedOutput()
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		out = append(out, fmt.Sprintf("(a child of the command still held its output %s after it exited: not read further)\n", CommandDrain)...)
		err = nil
	case err != nil && ctx.Err() != nil:
		err = fmt.Errorf("did not finish within %s (%w)", within, err)
	}
	_ = os.WriteFile(logPath, append([]byte("$ "+strings.Join(env, " ")+" sh -c '"+cmd+"'\n"), out...), 0o644)
	if err != nil {
		if t := strings.TrimSpace(string(out)); t != "" {
			return fmt.Errorf("%w: %s", err, lastLine(t))
		}
	}
	return err
}

func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }

// await waits up to within for d to open and identify as id; it says
// how it did not.
// returned waits up to within for d to come back as id and says whether
// it did; when not, out says how: not judged when the run was stopped
// meanwhile, renamed when it came back as itself elsewhere (d.Find),
// else did not return.
func returned(ctx context.Context, d Drive, id string, within time.Duration, out *powerloss.Cycle) bool {
	why := await(ctx, d, id, within)
	switch {
	case why == "":
		return true
	case ctx.Err() != nil:
		// Stopped: a drive still coming back is not one that did not.
		out.NotRun = why
	case d.Find != nil && d.Absent == "":
		if at := d.Find(ctx, id); at != "" {
			out.Renamed = fmt.Sprintf("%s came back as %s, the same drive under another name (%s)", d.Path, at, why)
			break
		}
		fallthrough
	default:
		out.NotReturned = why
	}
	return false
}

func await(ctx context.Context, d Drive, id string, within time.Duration) string {
	if d.Absent != "" {
		return d.Absent
	}
	deadline := time.Now().Add(within)
	last := "it did not open"
	for {
		if f, err := os.Open(d.Path); err == nil {
			f.Close()
			now, err := d.Identity(ctx)
			switch {
			case err != nil:
				last = "it did not identify: " + err.Error()
			case now != id:
				real, _ := filepath.EvalSymlinks(d.Path)
				return fmt.Sprintf("%s came back as another drive: %s is %s, was %s", d.Path, real, now, id)
			default:
				return ""
			}
		} else {
			last = err.Error()
		}
		if ctx.Err() != nil {
			return fmt.Sprintf("the run was stopped while %s was awaited (%s)", d.Path, last)
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%s was not back within ready_within %s (%s)", d.Path, within, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// fioOut is what is read of fio's JSON output: each job's error.
type fioOut struct {
	Jobs []struct {
		Name  string `json:"jobname"`
		Error int    `json:"error"`
	} `json:"jobs"`
}

// jobNames are fio's jobs of a cycle, in the job file's order.
var jobNames = []string{"sequential", "random"}

// ledger reads each job's completed writes from its per-I/O log, and
// whether it finished (fio's JSON output says no error: its end_fsync
// completed).
func ledger(c Config) ([]powerloss.Job, error) {
	var fo fioOut
	if f, err := OpenRegular(filepath.Join(c.Dir, "fio.json")); err == nil {
		data, err := io.ReadAll(f)
		f.Close()
		// fio prints its errors before the JSON on the same stream.
		if i := strings.IndexByte(string(data), '{'); err == nil && i >= 0 {
			_ = json.Unmarshal(data[i:], &fo)
		}
	}
	var jobs []powerloss.Job
	for _, name := range jobNames {
		logs := dirglob.Match(c.Dir, name+"_lat.*.log")
		if len(logs) != 1 {
			return nil, fmt.Errorf("job %s: want one per-I/O log %s_lat.N.log in %s, found %d", name, name, c.Dir, len(logs))
		}
		f, err := OpenRegular(logs[0])
		if err != nil {
			return nil, err
		}
		w, err := powerloss.ParseLatLog(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", logs[0], err)
		}
		j := powerloss.Job{Writes: w, FlushEvery: c.Test.FlushEvery}
		for _, r := range fo.Jobs {
			if r.Name == name && r.Error == 0 {
				j.Finished = true
			}
		}
		jobs = append(jobs, j)
		// The clat and slat logs repeat it.
		for _, kind := range []string{"clat", "slat"} {
			more := dirglob.Match(c.Dir, name+"_"+kind+".*.log")
			for _, m := range more {
				_ = os.Remove(m)
			}
		}
	}
	return jobs, nil
}

// snapshot is the FNV-64 hash of each bs block of the first size bytes
// of path, read directly.
func snapshot(path string, size, bs int64) ([]uint64, error) {
	return snapshotBy(path, size, bs, SnapshotRead)
}

// snapshotBy is snapshot reading read bytes (whole blocks, at least one)
// at a time.
func snapshotBy(path string, size, bs, read int64) ([]uint64, error) {
	f, err := openDirect(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]uint64, size/bs)
	// Read SnapshotRead at a time, hashing each block of it: one 4 KiB
	// read at a time, a NAND drive reads some 50 MiB/s (16 GiB in five
	// minutes), and a guest under TCG beside other work read 24 MiB of
	// three drives in 4.7 minutes.
	per := max(read/bs, 1)
	buf := aligned(per * bs)
	for i := int64(0); i < int64(len(out)); i += per {
		n := min(per, int64(len(out))-i)
		chunk := buf[:n*bs]
		if _, err := f.ReadAt(chunk, i*bs); err != nil {
			return nil, err
		}
		for j := int64(0); j < n; j++ {
			h := fnv.New64a()
			h.Write(chunk[j*bs : (j+1)*bs])
			out[i+j] = h.Sum64()
		}
	}
	return out, nil
}

// SnapshotRead is how much a snapshot reads at a time.
const SnapshotRead = 1 << 20

// readBack reads each acknowledged write once and says what came back
// where it did not read back intact, with how many writes were lost.
func readBack(path string, acked []powerloss.Write, tag uint32, snap []uint64, bs int64) ([]powerloss.Lost, int, error) {
	f, err := openDirect(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	seen := map[int64]bool{}
	var lost []powerloss.Lost
	per := max(SnapshotRead/bs, 1)
	buf := aligned(per * bs)
	for i := 0; i < len(acked); {
		w := acked[i]
		if seen[w.Offset] {
			i++
			continue
		}
		// A run of writes to consecutive blocks (the sequential job's) is
		// read at once, up to SnapshotRead: a 4 KiB read at a time is
		// what makes a read-back slow.
		n := 1
		if w.Len == bs {
			for i+n < len(acked) && int64(n) < per {
				x := acked[i+n]
				if x.Len != bs || x.Offset != w.Offset+int64(n)*bs || seen[x.Offset] {
					break
				}
				n++
			}
		}
		got := buf[:int64(n)*bs]
		if w.Len != bs {
			got = aligned(w.Len)
		}
		if _, err := f.ReadAt(got, w.Offset); err != nil {
			if n > 1 {
				// Read the run a block at a time, so that the error
				// names the block that does not read.
				for k := 0; k < n; k++ {
					if _, err := f.ReadAt(buf[:bs], acked[i+k].Offset); err != nil {
						return nil, 0, fmt.Errorf("offset %d: %w", acked[i+k].Offset, err)
					}
				}
			}
			return nil, 0, fmt.Errorf("offset %d: %w", w.Offset, err)
		}
		for k := 0; k < n; k++ {
			w := acked[i+k]
			seen[w.Offset] = true
			b := got
			if n > 1 {
				b = got[int64(k)*bs : int64(k+1)*bs]
			}
			same := func(b []byte) bool {
				j := w.Offset / bs
				if w.Len != bs || j >= int64(len(snap)) {
					return false
				}
				h := fnv.New64a()
				h.Write(b)
				return h.Sum64() == snap[j]
			}
			if found, from := powerloss.Check(b, w, tag, same); found != powerloss.Intact {
				lost = append(lost, powerloss.Lost{Offset: w.Offset, Len: w.Len, Found: found, From: from})
			}
		}
		i += n
	}
	return lost, len(lost), nil
}

// aligned is an n-byte buffer aligned for direct I/O.
func aligned(n int64) []byte {
	const align = 4096
	b := make([]byte, n+align)
	off := int(uintptr(align) - uintptr(unsafe.Pointer(&b[0]))%align)
	if off == align {
		off = 0
	}
	return b[off : off+int(n)]
}

// firstWrites waits until the kernel has completed n writes to the block
// device at path (/sys/block/NAME/stat), done is closed or timeout
// passes; it returns at once for a target the kernel keeps no count of.
func firstWrites(path string, n int64, done <-chan struct{}, timeout time.Duration) {
	start, ok := writesDone(path)
	if !ok {
		return
	}
	deadline := time.After(timeout)
	for {
		if now, ok := writesDone(path); !ok || now-start >= n {
			return
		}
		select {
		case <-done:
			return
		case <-deadline:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// writesDone is the count of writes the kernel completed to the block
// device at path (the fifth field of /sys/block/NAME/stat).
func writesDone(path string) (int64, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return 0, false
	}
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(real), "stat"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 5 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[4], 10, 64)
	return n, err == nil
}
