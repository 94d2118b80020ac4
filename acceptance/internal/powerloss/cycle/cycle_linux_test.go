package cycle

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/specs"
)

// loopDrive is a loop device over a fresh image, as a cycle's drive with
// the counters given (none: nil).
func loopDrive(t *testing.T, counters func() []powerloss.Counter) (Drive, string) {
	testenv.MustHaveFio(t)
	testenv.MustHaveLoop(t)
	dev := testenv.Loop(t, 16<<20)
	out, err := exec.Command("losetup", "-n", "-O", "BACK-FILE", dev).Output()
	if err != nil {
		t.Fatal(err)
	}
	img := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("blockdev", "--setrw", dev).Run() })
	d := Drive{Path: dev, Name: strings.TrimPrefix(dev, "/dev/"), LBA: 512,
		Counters: func(context.Context) ([]powerloss.Counter, string) {
			if counters == nil {
				return nil, "a loop device keeps no count of power losses"
			}
			return counters(), ""
		},
		Identity: func(context.Context) (string, error) {
			f, err := os.Open(dev)
			if err != nil {
				return "", err
			}
			defer f.Close()
			n, err := f.Seek(0, 2)
			return fmt.Sprintf("%d bytes", n), err
		}}
	return d, img
}

// config is a cycle of d's with cut and restore: 8 MiB written, a flush
// every 4 writes, the cut 1 s after the first flushed writes, fio's
// writes to d held to 300 a second (blk-throttle) so that neither job
// writes its 1024 blocks before the cut.
func config(t *testing.T, d Drive, cut, restore string) Config {
	return Config{Cut: cut, Restore: restore, Dir: t.TempDir(), Tag: 0x5eed0001, Fio: throttledFio(t, d.Path, 300),
		Test: specs.PowerLoss{Cycles: 1, ReadyWithin: 5 * time.Second, CutAfter: time.Second, Size: 8 << 20, BS: 4096, FlushEvery: 4}}
}

// throttledFio is a script that runs fio in a cgroup whose writes to
// dev are held to iops a second.
func throttledFio(t *testing.T, dev string, iops int) string {
	return testenv.WriteThrottle(t, dev, iops).Script(t, "fio")
}

// A cut that makes the device refuse writes (fio's writes fail at once,
// as when a drive loses power) and zeroes the first 64 KiB of its image
// (flushed writes the drive lost) fails, naming LBA 0 and zeros; the
// same cut without the zeroing loses nothing and passes, saying a loop
// device gives no evidence the cut happened.
func TestCycleOnLoop(t *testing.T) {
	for _, tt := range []struct {
		name, extra string
		verdict     string
		says        []string
	}{
		{"lost", "; dd if=/dev/zero of=%s bs=64k count=1 oflag=direct conv=notrunc,fsync status=none", powerloss.Fail,
			[]string{"acknowledged writes lost", "first lost range: LBA 0, 128 blocks (65536 bytes at offset 0), came back as zeros"}},
		{"kept", "", powerloss.Pass, []string{"acknowledged writes read back intact", "no evidence the cut happened: a loop device keeps no count"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, img := loopDrive(t, nil)
			extra := tt.extra
			if extra != "" {
				extra = "; " + testenv.LoopWritesLanded(img) + fmt.Sprintf(extra, img)
			}
			c := config(t, d, "blockdev --setro "+d.Path+extra, "blockdev --setrw "+d.Path)
			got := Run(context.Background(), d, c, 1, t.Logf)
			v := powerloss.Judge(got)
			t.Logf("%+v\n%s: %s", got, v.Verdict, v.Message)
			if v.Verdict != tt.verdict {
				t.Fatalf("verdict %s (%s), want %s", v.Verdict, v.Message, tt.verdict)
			}
			for _, s := range tt.says {
				if !strings.Contains(v.Message, s) {
					t.Errorf("message %q does not say %q", v.Message, s)
				}
			}
			if got.AtRisk == 0 || got.Rewritten != 0 {
				t.Errorf("%d writes at risk, %d of them rewrites: want some, each block written once", got.AtRisk, got.Rewritten)
			}
			if got.Acknowledged == 0 || got.Acknowledged >= got.Completed {
				t.Errorf("acknowledged %d of %d completed: a loop device (no vwc) is held to the flushed writes, some of them", got.Acknowledged, got.Completed)
			}
		})
	}
}

// A cut command that does nothing, on a drive whose count of power losses
// can be read and does not move, is inconclusive; with plp the drive is
// held to every completed write, all of them kept.
func TestCycleCutDidNothing(t *testing.T) {
	d, _ := loopDrive(t, func() []powerloss.Counter { return []powerloss.Counter{{Name: "unsafe shutdowns", Before: 7}} })
	d.Promise.PLP = true
	got := Run(context.Background(), d, config(t, d, "true", "true"), 1, t.Logf)
	v := powerloss.Judge(got)
	if v.Verdict != powerloss.Inconclusive || !strings.Contains(v.Message, "the drive did not see a power loss: check the cut command (unsafe shutdowns stayed at 7)") {
		t.Errorf("Judge = %s: %s, want inconclusive naming the counter", v.Verdict, v.Message)
	}
	if got.Acknowledged != got.Completed || got.Completed == 0 {
		t.Errorf("acknowledged %d of %d completed, want all (plp)", got.Acknowledged, got.Completed)
	}
	if len(got.Unstopped) != 2 {
		t.Errorf("jobs that ended without error after the cut: %v, want both", got.Unstopped)
	}
}

// A drive slow to complete its first writes is still cut while fio
// writes: held to 20 writes a second, the 164 writes of two flush
// intervals (flush_every 80) take about 8 s, and the cut comes cut_after
// (1 s) later; fio's runtime, a cap from its start, allows for that wait.
// With a cap of twice cut_after and 5 s (7 s), fio ended on its own before
// the cut and the cycle was not judged.
func TestCycleSlowFirstWrites(t *testing.T) {
	d, _ := loopDrive(t, nil)
	c := config(t, d, "blockdev --setro "+d.Path, "blockdev --setrw "+d.Path)
	c.Fio, c.Test.FlushEvery = throttledFio(t, d.Path, 20), 80
	if old := 2*c.Test.CutAfter + 5*time.Second; time.Duration(2*c.Test.FlushEvery+4)*time.Second/20+c.Test.CutAfter <= old {
		t.Fatalf("the first writes and cut_after fit in %s: this drive is not slow enough to test the cap", old)
	}
	start := time.Now()
	got := Run(context.Background(), d, c, 1, t.Logf)
	v := powerloss.Judge(got)
	t.Logf("%s: %s (%d completed, %d at risk, in %s)", v.Verdict, v.Message, got.Completed, got.AtRisk, time.Since(start).Round(time.Millisecond))
	if v.Verdict != powerloss.Pass || got.AtRisk == 0 || len(got.Unstopped) != 0 || got.NotRun != "" {
		t.Errorf("verdict %s (%s), unstopped %v: want the cut to stop fio's writes and the kept writes to pass", v.Verdict, v.Message, got.Unstopped)
	}
	if got.Completed < 2*c.Test.FlushEvery {
		t.Errorf("%d writes completed before the cut, want at least two flush intervals (%d)", got.Completed, 2*c.Test.FlushEvery)
	}
}

// fio that writes its whole region before the cut (here 256 KiB,
// unthrottled) ends before it: the cycle is not judged and says to
// raise size, never a pass on blocks the jobs wrote again and again.
func TestCycleRegionWrittenBeforeCut(t *testing.T) {
	d, _ := loopDrive(t, nil)
	c := config(t, d, "blockdev --setro "+d.Path, "blockdev --setrw "+d.Path)
	c.Fio, c.Test.Size = "", 256<<10
	got := Run(context.Background(), d, c, 1, t.Logf)
	v := powerloss.Judge(got)
	if v.Verdict != powerloss.Inconclusive || !strings.Contains(v.Message, "fio ended before the cut: it wrote its whole region (size 262144 bytes)") ||
		!strings.Contains(v.Message, "raise size") {
		t.Errorf("Judge = %s: %s, want inconclusive telling to raise size", v.Verdict, v.Message)
	}
	job, err := os.ReadFile(filepath.Join(c.Dir, "job.fio"))
	if err != nil || strings.Contains(string(job), "time_based") || strings.Contains(string(job), "norandommap") {
		t.Errorf("the job file (%v) starts a job over or lets a random job write a block twice:\n%s", err, job)
	}
}

// A drive that does not come back within ready_within fails "did not
// return".
func TestCycleDidNotReturn(t *testing.T) {
	d, _ := loopDrive(t, nil)
	gone := false
	id := d.Identity
	d.Identity = func(ctx context.Context) (string, error) {
		if gone {
			return "another drive", nil
		}
		return id(ctx)
	}
	c := config(t, d, "blockdev --setro "+d.Path, "blockdev --setrw "+d.Path)
	c.Test.ReadyWithin = time.Second
	c.Restore = "blockdev --setrw " + d.Path
	got := Run(context.Background(), d, c, 1, func(format string, args ...any) {
		if strings.Contains(format, "power cut") {
			gone = true
		}
	})
	v := powerloss.Judge(got)
	if v.Verdict != powerloss.Fail || !strings.Contains(v.Message, "did not return after the power cut") || !strings.Contains(v.Message, "came back as another drive") {
		t.Errorf("Judge = %s: %s, want a fail: did not return", v.Verdict, v.Message)
	}
}

// A drive given by a path with a ':' (a /dev/disk/by-path link) is
// written through that path: fio's filename= takes an unescaped ':' for
// a separator between files, and would write regular files named by the
// pieces (the second in the working directory) instead of the drive,
// whose cycle would then find every acknowledged write lost.
func TestCyclePathWithColon(t *testing.T) {
	d, _ := loopDrive(t, nil)
	dir := t.TempDir()
	t.Chdir(dir)
	link := dir + "/pci-0000:00:1f.2-nvme-1"
	if err := os.Symlink(d.Path, link); err != nil {
		t.Fatal(err)
	}
	dev := d.Path
	d.Path = link
	got := Run(context.Background(), d, config(t, d, "blockdev --setro "+dev, "blockdev --setrw "+dev), 1, t.Logf)
	if v := powerloss.Judge(got); v.Verdict != powerloss.Pass || got.Acknowledged == 0 {
		t.Errorf("verdict %s (%s), want a pass of the writes fio made to the drive", v.Verdict, v.Message)
	}
	for _, stray := range []string{dir + "/pci-0000", dir + "/00", dir + "/1f.2-nvme-1"} {
		if _, err := os.Lstat(stray); err == nil {
			t.Errorf("fio wrote %s, not the drive", stray)
		}
	}
}

// fio ended before the cut and its logs of completed writes do not read
// (none, or a FIFO where a log should be): the cycle says it cannot tell
// why, rather than blaming the region's size, and never blocks on the
// FIFO.
func TestEndedEarlyLogsUnread(t *testing.T) {
	c := Config{Dir: t.TempDir(), Test: specs.PowerLoss{Size: 8 << 20, BS: 4096, CutAfter: time.Second}}
	if got := endedEarly(c, "/dev/x"); !strings.Contains(got, "its logs of completed writes do not read") || strings.Contains(got, "raise size") {
		t.Errorf("no logs: %q", got)
	}
	if err := os.WriteFile(filepath.Join(c.Dir, "sequential_lat.1.log"), []byte("1, 10, 1, 4096, 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(c.Dir, "random_lat.2.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := endedEarly(c, "/dev/x"); !strings.Contains(got, "is not a regular file") {
		t.Errorf("a FIFO for a log: %q", got)
	}
}

// A snapshot read a megabyte at a time holds each block's hash, as one
// read a block would: sizes that end inside a read, blocks of 512 bytes
// and blocks larger than a read.
func TestSnapshotBlocks(t *testing.T) {
	data := make([]byte, 5<<20+3*4096)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ size, bs int64 }{{int64(len(data)), 4096}, {3<<20 + 512, 512}, {4 << 20, 2 << 20}, {8192, 4096}} {
		got, err := snapshot(path, c.size, c.bs)
		if err != nil {
			t.Fatalf("size %d bs %d: %v", c.size, c.bs, err)
		}
		if int64(len(got)) != c.size/c.bs {
			t.Fatalf("size %d bs %d: %d hashes, want %d", c.size, c.bs, len(got), c.size/c.bs)
		}
		for i := range got {
			h := fnv.New64a()
			h.Write(data[int64(i)*c.bs : int64(i+1)*c.bs])
			if got[i] != h.Sum64() {
				t.Fatalf("size %d bs %d: block %d's hash %x, want %x", c.size, c.bs, i, got[i], h.Sum64())
			}
		}
	}
}

// BenchmarkSnapshot reads a 64 MiB loop device's blocks (4 KiB) one
// block at a time and a megabyte at a time.
func BenchmarkSnapshot(b *testing.B) {
	testenv.MustHaveLoop(b)
	dev := testenv.Loop(b, 64<<20)
	for _, read := range []int64{4096, SnapshotRead} {
		b.Run(fmt.Sprintf("read=%d", read), func(b *testing.B) {
			b.SetBytes(64 << 20)
			for b.Loop() {
				if _, err := snapshotBy(dev, 64<<20, 4096, read); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The read-back reads runs of consecutive blocks at once and still
// judges each write: zeros, old data and another write's data found
// where they are (in a run that crosses two megabyte reads, and among
// random writes), a write given twice judged once, a longer write alone.
func TestReadBackRuns(t *testing.T) {
	const bs, tag = 4096, 0x5eed0002
	img := make([]byte, 4<<20)
	for i := range img {
		img[i] = byte(i*13 + i>>9 + 1)
	}
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot(path, int64(len(img)), bs)
	if err != nil {
		t.Fatal(err)
	}
	var acked []powerloss.Write
	for b := int64(0); b < 600; b++ {
		acked = append(acked, powerloss.Write{Offset: b * bs, Len: bs})
	}
	for _, b := range []int64{800, 700, 900, 5} {
		acked = append(acked, powerloss.Write{Offset: b * bs, Len: bs})
	}
	acked = append(acked, powerloss.Write{Offset: 1000 * bs, Len: 2 * bs})
	put := func(off int64, b []byte) { copy(img[off:], b) }
	for _, w := range acked {
		put(w.Offset, powerloss.Expected(tag, w.Offset, int(w.Len)))
	}
	put(100*bs, make([]byte, bs))
	put(300*bs, make([]byte, bs))
	put(900*bs, powerloss.Expected(tag, 800*bs, bs))
	orig := make([]byte, bs)
	for i := range orig {
		orig[i] = byte((257*bs+i)*13 + (257*bs+i)>>9 + 1)
	}
	put(257*bs, orig)
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	lost, n, err := readBack(path, acked, tag, snap, bs)
	if err != nil {
		t.Fatal(err)
	}
	want := []powerloss.Lost{{Offset: 100 * bs, Len: bs, Found: powerloss.Zeros}, {Offset: 257 * bs, Len: bs, Found: powerloss.Old},
		{Offset: 300 * bs, Len: bs, Found: powerloss.Zeros}, {Offset: 900 * bs, Len: bs, Found: powerloss.Misplaced, From: 800 * bs}}
	if n != len(want) || fmt.Sprint(lost) != fmt.Sprint(want) {
		t.Errorf("readBack: %d lost %v, want %v", n, lost, want)
	}
	// A run that does not read names the block that does not, not the
	// run's first: here the first block past the image's end.
	end := int64(len(img)) / bs
	run := []powerloss.Write{{Offset: (end - 2) * bs, Len: bs}, {Offset: (end - 1) * bs, Len: bs}, {Offset: end * bs, Len: bs}}
	if _, _, err := readBack(path, run, tag, snap, bs); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("offset %d:", end*bs)) {
		t.Errorf("a run past the end: %v, want an error naming offset %d", err, end*bs)
	}
}

// A cycle's fio killed by SIGKILL, as the suite's death kills it
// (Pdeathsig), leaves nothing writing the drive: its jobs are threads of
// that one process (thread=1 in Job), where fio's forked job processes
// outlive their parent and write on for the rest of the runtime.
func TestKilledFioLeavesNoWriter(t *testing.T) {
	d, _ := loopDrive(t, nil)
	c := config(t, d, "", "")
	job := filepath.Join(c.Dir, "cycle.fio")
	if err := os.WriteFile(job, []byte(Job(c, d.Path)), 0o644); err != nil {
		t.Fatal(err)
	}
	stat := filepath.Join("/sys/block", filepath.Base(d.Path), "stat")
	written := func() string {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))[6]
	}
	before := written()
	f := startFio(context.Background(), c, job)
	if f.err != nil {
		t.Fatal(f.err)
	}
	for deadline := time.Now().Add(30 * time.Second); written() == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = f.cmd.Process.Kill()
			t.Fatal("fio wrote nothing within 30 s")
		}
	}
	if err := syscall.Kill(f.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-f.done
	// What is left of it: a process whose command line names the job.
	left := func() []string {
		var out []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), job) {
				out = append(out, e.Name())
			}
		}
		return out
	}
	t.Cleanup(func() {
		for _, p := range left() {
			_ = exec.Command("kill", "-KILL", p).Run()
		}
	})
	for deadline := time.Now().Add(5 * time.Second); len(left()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fio processes of the job still run 5 s after its fio was killed: %v", left())
		}
	}
	now := written()
	time.Sleep(time.Second)
	if w := written(); w != now {
		t.Errorf("%s written after its fio was killed: sectors %s, then %s", d.Path, now, w)
	}
}

// A cut or restore command is bounded by what it runs, not by children
// it leaves, nor by the run being stopped: one that exits 0 leaving a
// child in the background that holds its output succeeds once
// CommandDrain has passed (its log saying so); one still running at its
// bound fails, saying so, without waiting for its child; one started
// after the run was stopped still runs to its end.
func TestCommandBounds(t *testing.T) {
	t.Parallel() // it mostly waits out its commands' bounds
	dir := t.TempDir()
	log := filepath.Join(dir, "cut.log")
	// The background children, killed when the test ends.
	var kids []string
	t.Cleanup(func() {
		for _, k := range kids {
			if b, err := os.ReadFile(k); err == nil && strings.TrimSpace(string(b)) != "" {
				_ = exec.Command("kill", "-KILL", strings.TrimSpace(string(b))).Run()
			}
		}
	})

	kid := filepath.Join(dir, "kid1")
	kids = append(kids, kid)
	start := time.Now()
	err := commandWithin(context.Background(), "sleep 60 & echo $! > "+kid+"; echo cut", nil, log, time.Minute)
	took := time.Since(start)
	if err != nil {
		t.Errorf("a command that exited 0 with a child holding its output: %v", err)
	}
	if took > 30*time.Second {
		t.Errorf("the command was waited for %s: its background child's 60 s, not CommandDrain's %s", took.Round(time.Second), CommandDrain)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "cut\n") || !strings.Contains(string(b), "still held its output") {
		t.Errorf("log:\n%s", b)
	}

	kid, kid3 := filepath.Join(dir, "kid2"), filepath.Join(dir, "kid3")
	kids = append(kids, kid, kid3)
	start = time.Now()
	err = commandWithin(context.Background(), "sleep 60 & echo $! > "+kid+"; sleep 60 & echo $! > "+kid3+"; wait", nil, log, time.Second)
	took = time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "did not finish within 1s") {
		t.Errorf("a command still running at its 1 s bound: error %v, want it to say so", err)
	}
	if took > 30*time.Second {
		t.Errorf("a command bounded at 1 s returned after %s", took.Round(time.Second))
	}

	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if err := commandWithin(stopped, "sleep 0.2; echo restored", nil, log, time.Minute); err != nil {
		t.Errorf("a command run after the run was stopped: %v", err)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "restored\n") {
		t.Errorf("a command run after the run was stopped did not run to its end: log:\n%s", b)
	}
}

// fio stuck in a write (its drive's writes held, as a drive without power
// whose path queues them): stop gives it StopWait after SIGINT and
// StopWait after SIGKILL and returns, saying it was killed and has not
// exited, rather than waiting on the write; once the writes are let go,
// fio exits. Real: the loop device, the kernel's blk-throttle, fio.
func TestStopBoundsAStuckWriter(t *testing.T) {
	t.Parallel() // it mostly waits on fio, held
	d, _ := loopDrive(t, nil)
	th := testenv.WriteThrottle(t, d.Path, 1000)
	c := Config{Dir: t.TempDir(), Tag: 0x5eed0002, Fio: th.Script(t, "fio"),
		Test: specs.PowerLoss{Cycles: 1, ReadyWithin: 5 * time.Second, CutAfter: time.Second, Size: 8 << 20, BS: 4096, FlushEvery: 4}}
	job := filepath.Join(c.Dir, "job.fio")
	if err := os.WriteFile(job, []byte(Job(c, d.Path)), 0o644); err != nil {
		t.Fatal(err)
	}
	f := startFio(context.Background(), c, job)
	if f.err != nil {
		t.Fatal(f.err)
	}
	t.Cleanup(func() {
		th.Release(t)
		_ = f.cmd.Process.Kill()
		select {
		case <-f.done:
		case <-time.After(30 * time.Second):
			t.Errorf("fio did not exit within 30 s of its writes being let go and SIGKILL")
		}
	})
	before, _ := writesDone(d.Path)
	firstWrites(d.Path, 8, f.done, 30*time.Second)
	if now, _ := writesDone(d.Path); now-before < 8 {
		t.Fatalf("fio completed %d writes within 30 s, want 8 before its writes are held", now-before)
	}
	th.Hold(t)
	// Held: no write completes for 300 ms and a thread of fio waits in
	// the kernel (state D) in a write (pwrite64), not in a flush, which
	// the byte limit does not hold.
	pwrite := map[string]string{"amd64": "18", "arm64": "68"}[runtime.GOARCH]
	if pwrite == "" {
		t.Skipf("the pwrite64 system call's number on %s is not known here", runtime.GOARCH)
	}
	held := func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", f.cmd.Process.Pid))
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join(task, "stat"))
			if err != nil || !strings.Contains(string(b[strings.LastIndexByte(string(b), ')'):]), ") D ") {
				continue
			}
			if sc, err := os.ReadFile(filepath.Join(task, "syscall")); err == nil {
				if f := strings.Fields(string(sc)); len(f) > 0 && f[0] == pwrite {
					return true
				}
			}
		}
		return false
	}
	for deadline, last, since := time.Now().Add(10*time.Second), int64(-1), time.Now(); ; time.Sleep(20 * time.Millisecond) {
		now, _ := writesDone(d.Path)
		if now != last {
			last, since = now, time.Now()
		}
		if time.Since(since) >= 300*time.Millisecond && held() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fio's writes were not held within 10 s of Hold (completed writes last moved %s ago, a thread of fio in a held write: %t)", time.Since(since).Round(time.Millisecond), held())
		}
	}
	start := time.Now()
	killed, exited := f.stop()
	took := time.Since(start)
	if !killed || exited {
		t.Fatalf("stop of a fio stuck in a write: killed %t, exited %t; want killed and not exited", killed, exited)
	}
	if took > 2*StopWait+10*time.Second {
		t.Errorf("stop took %s, more than its 2 × %s", took.Round(time.Second), StopWait)
	}
	th.Release(t)
	select {
	case <-f.done:
	case <-time.After(30 * time.Second):
		t.Fatal("fio did not exit within 30 s of its writes being let go")
	}
}

// A run stopped during a cycle (its context cancelled once the cut has
// run, as Ctrl-C or the -timeout's margin does) still runs the restore
// command, and the cycle is not judged: a drive still coming back (here
// it identifies only once writable again, a second after the restore
// command returns) is not one that did not return, and is never failed
// for it.
func TestCycleStoppedRestoresAndIsNotJudged(t *testing.T) {
	d, _ := loopDrive(t, nil)
	id := d.Identity
	d.Identity = func(ctx context.Context) (string, error) {
		if out, err := exec.Command("blockdev", "--getro", d.Path).Output(); err != nil || strings.TrimSpace(string(out)) != "0" {
			return "", fmt.Errorf("still without power (read-only)")
		}
		return id(ctx)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	c := config(t, d, "blockdev --setro "+d.Path, "(sleep 1; blockdev --setrw "+d.Path+") >/dev/null 2>&1 &")
	got := Run(ctx, d, c, 1, func(format string, args ...any) {
		if strings.Contains(format, "power cut") {
			stop()
		}
	})
	v := powerloss.Judge(got)
	t.Logf("%s: %s", v.Verdict, v.Message)
	if v.Verdict != powerloss.Inconclusive || got.NotReturned != "" || !strings.Contains(got.NotRun, "the run was stopped during the cycle; the restore command ran") {
		t.Errorf("Judge = %s: %s (not returned %q), want not judged: stopped during the cycle", v.Verdict, v.Message, got.NotReturned)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, err := exec.Command("blockdev", "--getro", d.Path).Output()
		if err == nil && strings.TrimSpace(string(out)) == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still read-only 5 s after the stopped cycle: its restore did not run", d.Path)
		}
	}
}
