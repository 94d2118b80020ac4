// Package runjson keeps a live run's run.json current as the run goes,
// each rewrite atomic.
package runjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Recorder keeps a live run's run.json current as the run goes: the
// tests whose output is on disk, the recordings two cells share, the
// steady-state records, the verify passes, the cells failed unmeasured
// and the drives' health. Every rewrite is atomic.
type Recorder struct {
	dir string

	mu   sync.Mutex
	info record.Run
	// saved is run.json as last written: what a failed rewrite rolls
	// the record back to.
	saved []byte
}

// save rewrites run.json and its sha256 beside it (record.WriteRun);
// callers hold r.mu.
func (r *Recorder) save() error {
	data, err := json.MarshalIndent(r.info, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	prev := r.saved
	if prev == nil {
		// The run.json this run takes over (a resume's), or an older
		// run's: its sha256 stays listed until this one is in place.
		prev, _ = os.ReadFile(filepath.Join(r.dir, record.RunFile))
	}
	if err := record.WriteRun(r.dir, data, prev); err != nil {
		return err
	}
	r.saved = data
	return nil
}

// Update changes run.json's record with f and rewrites it. When the
// rewrite fails, the record is rolled back to what run.json holds, so
// that a later rewrite does not list what this one could not.
func (r *Recorder) Update(f func(*record.Run)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.info)
	err := r.save()
	if err != nil {
		var back record.Run
		if r.saved != nil && json.Unmarshal(r.saved, &back) == nil {
			r.info = back
		}
	}
	return err
}

// Start writes run.json for a new run. The preparation records of an
// older run in the same directory are not this run's: run.json no longer
// describes them.
func (r *Recorder) Start(info record.Run) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	for _, dir := range []string{"prepare", "health"} {
		if err := os.RemoveAll(filepath.Join(r.dir, dir)); err != nil {
			return err
		}
	}
	return r.Update(func(i *record.Run) { *i = info })
}

// Recorded adds test to run.json's tests once its output and every
// sidecar of it are on disk, with the sha256 of each of its files; owner,
// when not "", is the test whose recording it shares. A file that does
// not read leaves the test unlisted.
func (r *Recorder) Recorded(test, owner string) error {
	sums, err := record.HashFiles(r.dir, record.TestFiles(r.dir, test))
	if err != nil {
		return fmt.Errorf("not listing %s in run.json: %w", test, err)
	}
	return r.Update(func(i *record.Run) {
		if i.Files == nil {
			i.Files = map[string]string{}
		}
		maps.Copy(i.Files, sums)
		if owner != "" {
			if i.Shared == nil {
				i.Shared = map[string]string{}
			}
			i.Shared[test] = owner
		}
		if !slices.Contains(i.Tests, test) {
			i.Tests = append(i.Tests, test)
		}
	})
}

// Forget takes test out of run.json, with the sha256 of its files, before
// it is measured again: its files are removed (record.Forget).
func (r *Recorder) Forget(test string) error {
	r.mu.Lock()
	listed := slices.Contains(r.info.Tests, test) || r.info.Shared[test] != ""
	for _, ext := range record.Exts {
		if _, ok := r.info.Files[test+ext]; ok {
			listed = true
		}
	}
	r.mu.Unlock()
	if !listed {
		return nil
	}
	return r.Update(func(i *record.Run) {
		i.Tests = slices.DeleteFunc(i.Tests, func(t string) bool { return t == test })
		delete(i.Shared, test)
		for _, ext := range record.Exts {
			delete(i.Files, test+ext)
		}
	})
}

// Landed adds to run.json the sha256 of the files under sub (relative to
// the recording) that it does not list yet, and with rehash those it
// lists too (files this run wrote again), skipping the subdirectories
// skip names; it is called once the step that wrote them has ended.
func (r *Recorder) Landed(sub string, rehash bool, skip ...string) error {
	r.mu.Lock()
	files := r.info.Files
	if rehash {
		files = nil
	}
	rels := record.Unhashed(r.dir, sub, files, skip...)
	r.mu.Unlock()
	if len(rels) == 0 {
		return nil
	}
	return r.Files(rels...)
}

// Files adds to run.json the sha256 of each file of rels (relative to
// the recording), listed or not, in one update.
func (r *Recorder) Files(rels ...string) error {
	sums, err := record.HashFiles(r.dir, rels)
	if err != nil {
		return err
	}
	return r.Update(func(i *record.Run) {
		if i.Files == nil {
			i.Files = map[string]string{}
		}
		maps.Copy(i.Files, sums)
	})
}

// Finished marks run.json as a run that ran to its end.
func (r *Recorder) Finished(at time.Time) error {
	return r.Update(func(i *record.Run) { i.Finished = at.UTC().Format(time.RFC3339) })
}

// Unmeasured lists tests in run.json as failed unmeasured because a drive
// Failed a verify pass, so that a replay lists them too.
func (r *Recorder) Unmeasured(tests []string) error {
	return r.Update(func(i *record.Run) {
		for _, t := range tests {
			if !slices.Contains(i.Unmeasured, t) {
				i.Unmeasured = append(i.Unmeasured, t)
			}
		}
	})
}

// Resumptions is how many times the run was resumed.
func (r *Recorder) Resumptions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.info.Resumptions)
}

// Sidecars keeps a cell's findings beside its recording, for a replay to
// judge it by: the steady-state evidence, the heat, the PCIe links and,
// with cpu, the load of the CPUs fio ran on. Each is written whatever
// became of the others; it returns what failed.
func (r *Recorder) Sidecars(test string, steady []report.Steady, thermal record.Thermal, link record.Link, cpu *record.CPU) []error {
	var errs []error
	write := func(ext string, v any) {
		if err := record.WriteJSON(r.dir, test, ext, v); err != nil {
			errs = append(errs, err)
		}
	}
	if len(steady) > 0 {
		write(record.SteadyExt, steady)
	}
	if thermal != (record.Thermal{}) {
		write(record.ThermalExt, thermal)
	}
	if link.Degraded != "" || link.Unknown != "" || len(link.Shared) > 0 {
		write(record.LinkExt, link)
	}
	if cpu != nil && cpu.N > 0 {
		write(record.CPUExt, *cpu)
	}
	return errs
}

// Failed adds f to run.json's failures, unless the drive's failure of
// the same cause is there already; called before anything else is
// Written to the drive.
func (r *Recorder) Failed(f record.DriveFailure) error {
	return r.Update(func(i *record.Run) {
		for _, g := range i.Failures {
			if g.Drive == f.Drive && g.Cause == f.Cause {
				return
			}
		}
		i.Failures = append(i.Failures, f)
	})
}

// Failures is run.json's failures so far.
func (r *Recorder) Failures() []record.DriveFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.info.Failures)
}

// Written marks drives (indices into n drives) written since their last
// read-back, or with false, read back whole.
func (r *Recorder) Written(drives []int, n int, mark bool) error {
	return r.Update(func(i *record.Run) {
		for len(i.WrittenSinceReadBack) < n {
			i.WrittenSinceReadBack = append(i.WrittenSinceReadBack, false)
		}
		for _, d := range drives {
			i.WrittenSinceReadBack[d] = mark
		}
		if !slices.Contains(i.WrittenSinceReadBack, true) {
			i.WrittenSinceReadBack = nil
		}
	})
}

// Peak records drive d's highest temperature so far (K), of n drives,
// when it is higher than the one recorded.
func (r *Recorder) Peak(d, n, kelvin int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d < len(r.info.MaxTempK) && r.info.MaxTempK[d] >= kelvin {
		return nil
	}
	for len(r.info.MaxTempK) < n {
		r.info.MaxTempK = append(r.info.MaxTempK, 0)
	}
	r.info.MaxTempK[d] = kelvin
	return r.save()
}

// Sanitizing records that a sanitize was sent to each of devices
// (controllers), or with false that its end was seen.
func (r *Recorder) Sanitizing(devices []string, sent bool) error {
	return r.Update(func(i *record.Run) {
		for _, dev := range devices {
			has := slices.Contains(i.SanitizeSent, dev)
			switch {
			case sent && !has:
				i.SanitizeSent = append(i.SanitizeSent, dev)
			case !sent && has:
				i.SanitizeSent = slices.DeleteFunc(i.SanitizeSent, func(s string) bool { return s == dev })
			}
		}
	})
}

// FailureOf is drive d's first recorded failure.
func (r *Recorder) FailureOf(d int) (record.DriveFailure, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info.FailureOf(d)
}

// New is the recorder of the run recorded in dir.
func New(dir string) *Recorder { return &Recorder{dir: dir} }

// Writing marks drives (indices into n drives) in run.json as written by
// step, before the step's first write: a resume after a kill does not
// ask their data to match the sample read before it.
func (r *Recorder) Writing(drives []int, n int, step string) error {
	return r.Update(func(i *record.Run) {
		for _, d := range drives {
			i.Sample(d, n).Writing = step
		}
	})
}

// Sample is one drive's data sample read after a step, or why it did
// not read.
type Sample struct {
	Drive int
	Print sample.Print
	Err   error
}

// Sampled records, in one rewrite of run.json, each drive's sample read
// after step (of n drives). A drive step marked as being written (see
// Writing) was written by it: step becomes the one that last wrote it.
// Their writing mark is cleared, unless
// writing says the step may still be writing them (a sanitize the drive
// goes on with) or a sample did not read (what the drive holds is not
// known: the mark stays, and a resume does not ask it to match).
func (r *Recorder) Sampled(samples []Sample, n int, step string, writing bool, at time.Time) error {
	if len(samples) == 0 {
		return nil
	}
	return r.Update(func(i *record.Run) {
		for _, s := range samples {
			d := i.Sample(s.Drive, n)
			if d.Writing == step {
				d.Wrote = step
			}
			d.At, d.After = at.UTC().Format(time.RFC3339), step
			if s.Err != nil {
				d.SHA256, d.Error = nil, s.Err.Error()
				continue
			}
			i.SetPrint(s.Drive, n, s.Print)
			if !writing {
				d.Writing = ""
			}
		}
	})
}
