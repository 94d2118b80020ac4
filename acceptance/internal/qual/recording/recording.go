// Package recording reads a recorded run (the -record directory of a live
// run) back as the evidence its verdicts are judged from.
//
// A Reader is the replay's implementation of evidence.Evidence: each
// cell's fio output with the sidecars the live run judged it by, the
// verify passes, and the health logs, read from disk. A resumed run reads
// the cells it keeps with Read, the very code a replay reads them with.
package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// Reader reads one recorded run.
type Reader struct {
	Dir  string
	Info record.Run // run.json as the run left it
	// Drives are the run's drives, as recorded (placeholders for outputs
	// recorded without a drive's identity).
	Drives  []plan.Drive
	Planner *plan.Planner
	// Cells lists every cell of the run, for reading them ahead.
	Cells func() []plan.Cell

	mu sync.Mutex
	// prefetched says, by cell kind, that those recordings were read and
	// parsed ahead; done holds them until their cells are judged.
	prefetched map[string]bool
	done       map[string]*evidence.Measured
	// failed is each drive's failed read-back, once judged.
	failedOnce sync.Once
	failed     map[int]verdict.ReadBackDrive
}

// Files are where a recorded run keeps each test's output.
type Files struct {
	Dir string
	// Shared maps a test to the test whose recording it shares (run.json's
	// "shared"): one fio run judged as two cells.
	Shared map[string]string
}

// RawPath is where the measurement named test is kept.
func (f Files) RawPath(test string) string {
	return record.Base(f.Dir, f.owner(test)) + record.OutputExt
}

// owner is the test whose recording test reads.
func (f Files) owner(test string) string {
	if o, ok := f.Shared[test]; ok {
		return o
	}
	return test
}

// Has reports whether the recording holds test: listed in run.json's
// tests (format 2), or else recorded on disk.
func (r *Reader) Has(test string) bool {
	if slices.Contains(r.Info.Unmeasured, test) {
		return true // failed unmeasured: the replay fails it the same way
	}
	if r.listed(test) || r.unfinished() {
		return true
	}
	if r.Info.Format >= 2 {
		return false
	}
	return record.Exists(r.Dir, r.files().owner(test)+record.OutputExt)
}

// unfinished reports whether the recording is of a live run that did
// not run to its end (from format 3, run.json says "finished" when it
// did): every cell the spec plans is listed, and one it did not reach
// fails, so that an interrupted run never replays as a whole one.
func (r *Reader) unfinished() bool {
	return r.Info.Format >= 3 && r.Info.Mode == "record" && !r.Info.Reconstructed && r.Info.Finished == ""
}

// listed reports whether run.json says test was measured: listed in its
// tests, or its output among the files it holds a sha256 of (a run.json
// whose tests lost the cell still has it there).
func (r *Reader) listed(test string) bool {
	if slices.Contains(r.Info.Tests, test) {
		return true
	}
	_, ok := r.Info.Files[r.files().owner(test)+record.OutputExt]
	return ok
}

func (r *Reader) files() Files { return Files{Dir: r.Dir, Shared: r.Info.Shared} }

// unlisted reports whether run.json, which lists the cells the run
// recorded whole in its tests (format 2 on), does not list test, or the
// cell whose recording test shares: a resume keeps only what tests lists
// (a sha256 in files alone is not a listing).
func (r *Reader) unlisted(test string) bool {
	if r.Info.Format < 2 {
		return false
	}
	if !slices.Contains(r.Info.Tests, test) {
		return true
	}
	o := r.files().owner(test)
	return o != test && !slices.Contains(r.Info.Tests, o)
}

// Cell implements evidence.Evidence. The first call for a kind of cell
// (single-drive, scaling) reads and parses every cell of that kind at
// once, on as many workers as there are CPUs, and each cell's recording
// is let go once judged: a fleet replay, which judges every host's
// single-drive cells before any host's scaling cells, holds one run's
// cells of one kind in memory at a time. A cell not recorded because a
// drive failed a recorded read-back fails as it did live.
func (r *Reader) Cell(ctx context.Context, cell plan.Cell, _ func(string, ...any)) *evidence.Measured {
	r.mu.Lock()
	if r.prefetched == nil {
		r.prefetched, r.done = map[string]bool{}, map[string]*evidence.Measured{}
	}
	if !r.prefetched[cell.Kind] {
		r.prefetched[cell.Kind] = true
		r.mu.Unlock()
		r.prefetch(ctx, cell.Kind)
		r.mu.Lock()
	}
	m, ok := r.done[cell.Test]
	delete(r.done, cell.Test)
	r.mu.Unlock()
	if !ok {
		m = Read(ctx, r.files(), cell, r.Planner.Measure(cell))
	}
	unlisted := !errors.Is(m.RunErr, record.ErrNotRecorded) && m.Cause != report.CauseBadRecording && r.unlisted(cell.Test)
	if unlisted {
		// Its output is there, but run.json never listed it: the run was
		// stopped between writing the cell's files and listing them (its
		// sidecars may be missing), and a resume measured it again or
		// failed it unmeasured, as not recorded. Judged as the resume did.
		m = &evidence.Measured{Raw: m.Raw, RunErr: fmt.Errorf("%w: %s is there, but run.json does not list it among the cells the run recorded whole", record.ErrNotRecorded, m.Raw)}
	}
	if errors.Is(m.RunErr, record.ErrNotRecorded) {
		if why, cause := r.unusable(cell); why != "" {
			return evidence.NotMeasured(why, cause)
		}
		if r.listed(cell.Test) {
			// run.json lists the cell as measured (or holds its
			// output's sha256): its output is evidence that is gone,
			// never a cell to leave out.
			return evidence.NotMeasured(fmt.Sprintf("recorded output missing: %s, which run.json lists among the cells the run measured, is not there", m.Raw), report.CauseNotRecorded)
		}
		if unlisted {
			return evidence.NotMeasured(fmt.Sprintf("not recorded whole: %s is there, but %s does not list it among the cells the run recorded (the run was stopped before it did, or the file was added since); resume the run (-resume) to measure it", m.Raw, filepath.Join(r.Dir, "run.json")), report.CauseNotRecorded)
		}
		if r.unfinished() {
			return evidence.NotMeasured(fmt.Sprintf("not recorded: the run ended before this cell (%s has no \"finished\": it was interrupted), and %s is not there; resume the run (-resume) to measure it", filepath.Join(r.Dir, "run.json"), m.Raw), report.CauseNotRecorded)
		}
		return &evidence.Measured{Skip: m.RunErr.Error()}
	}
	return m
}

// prefetch reads and parses every cell of kind in parallel.
func (r *Reader) prefetch(ctx context.Context, kind string) {
	cells := make(chan plan.Cell)
	var wg sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range cells {
				m := Read(ctx, r.files(), c, r.Planner.Measure(c))
				m.Parse()
				r.mu.Lock()
				r.done[c.Test] = m
				r.mu.Unlock()
			}
		}()
	}
	for _, c := range r.Cells() {
		if c.Skip == "" && c.Kind == kind {
			cells <- c
		}
	}
	close(cells)
	wg.Wait()
}

// unusable says why cell was not measured live: one of its drives failed
// a recorded verify pass, and the live run failed the cell at once. The
// verify passes are judged here once, without reporting them
// (TestIntegrity reports them when selected).
func (r *Reader) unusable(cell plan.Cell) (why, cause string) {
	r.failedOnce.Do(func() {
		r.failed = map[int]verdict.ReadBackDrive{}
		judged := make([][]verdict.ReadBackDrive, len(r.Info.Verify))
		for i, rec := range r.Info.Verify {
			// Judged as the live run judged it when it ran: a recording
			// that does not read fails its drives (bad recording), as
			// TestIntegrity fails them.
			judged[i] = verdict.ReadBack(evidence.ReadBack{Dir: r.Dir, Pass: rec, Disappeared: verdict.Disappeared(r.Info.Failures)}, r.Drives)
		}
		// A drive's last read-back first, as the live run (a resumed
		// one's) failed its cells with it; then any earlier failure.
		last := verdict.LastReadBack(r.Info.Verify)
		for _, lastOnly := range []bool{true, false} {
			for i, out := range judged {
				for _, f := range out {
					if lastOnly && !last[i][f.Path] {
						continue
					}
					if _, seen := r.failed[f.Drive]; f.Drive >= 0 && f.Verdict == report.Fail && !seen {
						r.failed[f.Drive] = f
					}
				}
			}
		}
	})
	var texts []string
	for _, d := range cell.Drives {
		if f, ok := r.Info.FailureOf(d); ok && verdict.Disqualifying(f.Cause) {
			// Recorded as it happened: the drive's first failure.
			texts = append(texts, verdict.DisqualifiedText(f))
			if cause == "" {
				cause = f.Cause
			}
			continue
		}
		if f, ok := r.failed[d]; ok {
			texts = append(texts, fmt.Sprintf("%s failed the verify pass (%s) earlier in this run: %s", f.Path, verdict.IntegrityTest(f.Path), f.Message))
			if cause == "" {
				cause = f.Cause
			}
		}
	}
	return strings.Join(texts, "; "), cause
}

// Read reads cell's recording in f with every sidecar a live run judged
// it by: a replay and a resumed run's kept cells read the same. job is
// the measurement's job, as the plan makes it.
func Read(_ context.Context, f Files, cell plan.Cell, job fiojob.Job) *evidence.Measured {
	m := &evidence.Measured{Raw: f.RawPath(cell.Test), Job: job}
	m.Stdout, m.RunErr = measure(f, cell.Test)
	if m.Stdout != nil {
		m.Recycle = recycle
	}
	if m.RunErr != nil && errors.Is(m.RunErr, record.ErrNotRecorded) {
		return m
	}
	if errors.Is(m.RunErr, record.ErrRefused) {
		// Not a regular file inside the recording, or too large: not
		// read, and the cell is not judged from it.
		return evidence.NotMeasured(m.RunErr.Error(), report.CauseBadRecording)
	}
	var st []report.Steady
	if _, err := record.ReadJSON(f.Dir, cell.Test, record.SteadyExt, &st); err != nil {
		m.NotRun, m.Cause = err.Error(), report.CauseBadRecording
	}
	m.Steady = st
	var refused []string
	sidecar := func(err error) bool {
		if errors.Is(err, record.ErrRefused) {
			refused = append(refused, err.Error())
		}
		return err == nil
	}
	_, err := record.ReadJSON(f.Dir, cell.Test, record.OCPExt, &m.WAF)
	sidecar(err)
	var t record.Thermal
	if found, err := record.ReadJSON(f.Dir, cell.Test, record.ThermalExt, &t); sidecar(err) && found {
		m.Thermal, m.Hot = t.Throttled, t.CriticalWarning
	}
	var l record.Link
	if found, err := record.ReadJSON(f.Dir, cell.Test, record.LinkExt, &l); sidecar(err) && found {
		m.Link, m.LinkUnknown, m.Shared, m.Fabric = l.Degraded, l.Unknown, l.Shared, l.Fabric
	}
	_, err = record.ReadJSON(f.Dir, f.owner(cell.Test), record.CPUExt, &m.CPU)
	sidecar(err)
	m.CPU = checkedCPU(m.CPU, len(m.Job.Targets))
	m.Job.Targets = pinned(m.Job.Targets, m.CPU.Pinned)
	if len(refused) > 0 && m.NotRun == "" {
		// A sidecar that is no regular file of the recording may hide
		// what the live run judged the cell by (a throttle, a link).
		m.NotRun, m.Cause = strings.Join(refused, "; "), report.CauseBadRecording
	}
	return m
}

// measure is test's recorded stdout. A measurement recorded with a
// failure (<test>.status.json beside it) replays with the same failure.
func measure(f Files, test string) ([]byte, error) {
	path := f.RawPath(test)
	data, err := readBuffered(f.Dir, f.owner(test)+record.OutputExt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", record.ErrNotRecorded, path)
	}
	if err != nil {
		return nil, err
	}
	var rf record.Failure
	found, err := record.ReadJSON(f.Dir, f.owner(test), record.StatusExt, &rf)
	if err != nil || !found {
		return data, err
	}
	return data, &rf
}

// buffers holds the buffers replayed cells were read into, once parsed
// (see evidence.Measured.Parse): a fleet replay reads gigabytes of json+
// cells, and a new buffer for each, faulted in page by page and cleared,
// cost a third of its CPU time in the kernel.
var buffers sync.Pool // of *[]byte

// readBuffered reads the fio output rel names in the recording dir, as
// record.Open allows and within record.MaxOutput bytes, into a buffer of
// buffers when one is large enough.
func readBuffered(dir, rel string) ([]byte, error) {
	f, size, err := record.Open(dir, rel, record.MaxOutput)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf []byte
	if p, ok := buffers.Get().(*[]byte); ok && cap(*p) > int(size) {
		buf = (*p)[:0]
	} else {
		buf = make([]byte, 0, size+512)
	}
	// One byte past the limit says the file grew past it since it was
	// opened.
	r := io.LimitReader(f, record.MaxOutput+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > record.MaxOutput {
			return nil, &record.RefusedError{Path: f.Name(), Why: fmt.Sprintf("grew past the %d bytes a recording's fio output may hold while it was read", record.MaxOutput)}
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// recycle gives back a buffer of readBuffered that nothing refers to any
// more.
func recycle(b []byte) { buffers.Put(&b) }

// ReadBacks implements evidence.Evidence: every recorded verify pass,
// each for the drives whose last read-back it is.
func (r *Reader) ReadBacks(context.Context, func(string, ...any)) ([]evidence.ReadBack, string) {
	if len(r.Info.Verify) == 0 {
		return nil, "the recording holds no verify pass (run.json has no \"verify\"): it was recorded with -precondition=none, with fill_passes = 0, before drivequal verified its fills, or reconstructed"
	}
	var out []evidence.ReadBack
	last := verdict.LastReadBack(r.Info.Verify)
	for i, rec := range r.Info.Verify {
		if len(last[i]) > 0 {
			out = append(out, evidence.ReadBack{Dir: r.Dir, Pass: rec, Only: last[i], Disappeared: verdict.Disappeared(r.Info.Failures)})
		}
	}
	return out, ""
}

// HealthFile is where a recorded run keeps nvme-cli's output for drive i:
// health/<i>.<what>.json (what: id-ctrl, before, after).
func HealthFile(dir string, i int, what string) string {
	return filepath.Join(dir, filepath.FromSlash(HealthRel(i, what)))
}

// HealthRel is HealthFile relative to the recording, with slashes.
func HealthRel(i int, what string) string { return fmt.Sprintf("health/%d.%s.json", i, what) }

// ReadHealth reads drive i's nvme-cli output what from the recording in
// dir, as record.Open allows.
func ReadHealth(dir string, i int, what string) ([]byte, error) {
	return record.ReadFile(dir, HealthRel(i, what))
}

// noHealth says why the recording has no health logs to judge; "" when
// it kept them.
func (r *Reader) noHealth() string {
	if len(r.Info.HealthSkips) > 0 {
		return ""
	}
	if fi, err := os.Lstat(filepath.Join(r.Dir, "health")); err != nil || !fi.IsDir() {
		return "the recording holds no health logs (" + r.Dir + " has no health/ directory): it was recorded without them, or reconstructed"
	}
	return ""
}

// skipOf is why drive i's health was not recorded.
func (r *Reader) skipOf(i int) string {
	if i < len(r.Info.HealthSkips) && r.Info.HealthSkips[i] != "" {
		return r.Info.HealthSkips[i]
	}
	return r.Drives[i].Path + ": no health log was recorded"
}

// Health implements evidence.Evidence: the nvme-cli outputs the recorded
// run kept.
func (r *Reader) Health(context.Context) ([]evidence.DriveHealth, string) {
	if why := r.noHealth(); why != "" {
		return nil, why
	}
	out := make([]evidence.DriveHealth, len(r.Drives))
	for i, d := range r.Drives {
		h := &out[i]
		read := func(what string) ([]byte, error) { return ReadHealth(r.Dir, i, what) }
		if i < len(r.Info.HealthLost) && r.Info.HealthLost[i] != "" {
			// Lost mid-run: it fails, as it did live.
			h.Lost = r.Info.HealthLost[i]
			continue
		}
		before, err := read("before")
		if err != nil {
			h.Skip = r.skipOf(i)
			continue
		}
		after, err := read("after")
		if err != nil {
			h.Skip = d.Path + ": the run recorded no health log after it (it was stopped before the end)"
			continue
		}
		b, err1 := nvme.ParseSmartLog(before)
		a, err2 := nvme.ParseSmartLog(after)
		if err := errors.Join(err1, err2); err != nil {
			h.Skip = fmt.Sprintf("%s: the recorded health logs do not parse: %v", d.Path, err)
			continue
		}
		h.Before, h.Last, h.MaxTempK = b, a, max(b.Temperature, a.Temperature, r.Info.MaxTemp(i))
		if id, err := read("id-ctrl"); err == nil {
			h.Ctrl, _ = nvme.ParseIDCtrl(id)
		}
		h.OCP = readOCP(read, r.Info.Host.NvmeVersion)
	}
	return out, ""
}

// Receipt implements evidence.Evidence: each drive's SMART log as the
// recorded run read it before anything was written.
func (r *Reader) Receipt() ([]evidence.Received, string) {
	if why := r.noHealth(); why != "" {
		return nil, why
	}
	out := make([]evidence.Received, len(r.Drives))
	for i, d := range r.Drives {
		data, err := ReadHealth(r.Dir, i, "before")
		if err != nil {
			out[i].Skip = r.skipOf(i)
			continue
		}
		l, err := nvme.ParseSmartLog(data)
		if err != nil {
			out[i].Skip = fmt.Sprintf("%s: the recorded health log does not parse: %v", d.Path, err)
			continue
		}
		out[i].Log = l
	}
	return out, ""
}

// checkedCPU is the CPU sidecar c as a cell of targets fio targets is
// judged by it: its CPUs a CPU list of N CPUs, else nothing of the CPUs
// (N 0, as when the live run could not tell); pinned lists, one for each
// target, each of those CPUs and together all of them, else none (a list
// that is none, or names other CPUs, is an edit, and would decide whether
// the drive's jobs shared their CPUs). The lists are counted before any
// is read.
func checkedCPU(c record.CPU, targets int) record.CPU {
	cpus, err := parseList(c.CPUs)
	if err != nil || len(cpus) == 0 || len(cpus) != c.N {
		return record.CPU{}
	}
	c.CPUs = cpulist.Format(cpus)
	if len(c.Pinned) != targets {
		c.Pinned = nil
		return c
	}
	lists := make([]string, 0, len(c.Pinned))
	used := map[int]bool{}
	for _, l := range c.Pinned {
		p, err := parseList(l)
		if l == "" {
			p = cpus // unpinned: every CPU
		}
		if err != nil || slices.ContainsFunc(p, func(cpu int) bool { _, ok := slices.BinarySearch(cpus, cpu); return !ok }) {
			c.Pinned = nil
			return c
		}
		for _, cpu := range p {
			used[cpu] = true
		}
		lists = append(lists, cpulist.Format(p))
		if l == "" {
			lists[len(lists)-1] = ""
		}
	}
	if len(used) != len(cpus) {
		c.Pinned = nil
		return c
	}
	c.Pinned = lists
	return c
}

// parseList is cpulist.Parse of a list read from a recording, refused
// above 64 KiB (Linux's 8,192 CPUs take at most about 40 KiB).
func parseList(l string) ([]int, error) {
	if len(l) > 64<<10 {
		return nil, fmt.Errorf("a CPU list of %d bytes", len(l))
	}
	return cpulist.Parse(l)
}

// pinned is targets with the cpus_allowed the recording says each was
// pinned to (checkedCPU's lists, "" unpinned), when it names one for each
// target; else targets as the plan made them.
func pinned(targets []fiojob.Target, lists []string) []fiojob.Target {
	if len(lists) != len(targets) {
		return targets
	}
	out := slices.Clone(targets)
	for i, l := range lists {
		out[i].CPUs = l
	}
	return out
}
