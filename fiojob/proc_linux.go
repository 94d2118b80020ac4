package fiojob

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// fio forks one process per job unless thread is set, and each job process
// calls setsid(), leaving fio's process group. Killing fio's group therefore
// misses them, and a job process whose fio was killed keeps doing I/O until
// its runtime ends (fio 3.33 was checked). Job files from Job.File use
// thread=1, but Run accepts any job file, so it also watches fio's
// descendants while fio runs and kills those still alive once fio is gone.

// A running fio's descendants are listed after procWatchFirst, then at
// intervals doubling up to procWatchMax: fio forks its job processes as it
// starts, and a full pass over /proc must not take CPU from the I/O being
// measured for hours. Cancellation lists them once more, from a full pass
// over /proc, before interrupting.
const (
	procWatchFirst = 20 * time.Millisecond
	procWatchMax   = 5 * time.Second
)

// procKey identifies a process across pid reuse: pid plus its start time in
// clock ticks since boot (/proc/PID/stat field 22).
type procKey struct {
	pid   int
	start uint64
}

// descendantWatch records every descendant of one process seen while it runs.
type descendantWatch struct {
	root int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	seen map[procKey]bool
}

func watchDescendants(root int) *descendantWatch {
	w := &descendantWatch{
		root: root,
		stop: make(chan struct{}),
		done: make(chan struct{}),
		seen: map[procKey]bool{},
	}
	go w.loop()
	return w
}

func (w *descendantWatch) loop() {
	defer close(w.done)
	d := procWatchFirst
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.scan()
			d = min(2*d, procWatchMax)
			t.Reset(d)
		}
	}
}

// scan adds the current descendants of root to w.seen.
func (w *descendantWatch) scan() { w.add(descendants(w.root)) }

// scanAll is scan from a pass over /proc: for the last look before fio
// is stopped, which must miss no job process. A children file is read
// from where the last read stopped, so a list longer than a read (some
// 64 pids) skips a live child for each earlier one that exited between
// two reads (proc_tid_children(5)); a missed look while fio runs is made
// up by the next, the last one by nothing.
func (w *descendantWatch) scanAll() { w.add(scanDescendants(w.root)) }

func (w *descendantWatch) add(kids []procKey) {
	w.mu.Lock()
	for _, k := range kids {
		w.seen[k] = true
	}
	w.mu.Unlock()
}

// killSurvivors stops watching and sends SIGKILL to every recorded
// descendant that is still the same process (same start time).
func (w *descendantWatch) killSurvivors() {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.seen {
		if _, start, ok := readStat(k.pid); ok && start == k.start {
			_ = unix.Kill(k.pid, unix.SIGKILL)
		}
	}
}

// descendants lists the processes below root (children, their children,
// ...): from each process's children files where the kernel has them,
// else from one pass over /proc.
func descendants(root int) []procKey {
	if haveChildren() {
		var out []procKey
		queue := []int{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, c := range childrenOf(p) {
				// The child is p's still, not a process that took its pid.
				if ppid, start, ok := readStat(c); ok && ppid == p {
					out = append(out, procKey{c, start})
					queue = append(queue, c)
				}
			}
		}
		return out
	}
	return scanDescendants(root)
}

// haveChildren says whether the kernel lists each thread's children in
// /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, Linux 3.5; Debian's
// kernels have it). Reading them is a few small reads a process of the
// tree; a pass over /proc reads every process's stat, on a busy host
// hundreds: it was a quarter of the CPU the suite itself used in a run of
// 35 cells, watching each of its fio runs.
var haveChildren = sync.OnceValue(func() bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(os.Getpid()), "task", strconv.Itoa(unix.Gettid()), "children"))
	return err == nil
})

// childrenOf lists the children of every thread of pid (a process whose
// job forked from a thread of its own is the child of that thread).
func childrenOf(pid int) []int {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// scanDescendants is descendants from one pass over /proc.
func scanDescendants(root int) []procKey {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procKey{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, ok := readStat(pid)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], procKey{pid, start})
	}
	var out []procKey
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// readStat returns the parent pid and start time of pid from
// /proc/PID/stat.
func readStat(pid int) (ppid int, start uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 {
		return 0, 0, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	st, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pp, st, true
}
