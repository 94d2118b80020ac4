// Package fioexec runs fio for the live runner and records each run: the
// job file, stdout byte for byte, stderr as fio writes it, the failure,
// and the IOPS logs of a measurement or preparation step.
package fioexec

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/timelog"
	"github.com/drivequal/drivequal/fiojob"
)

// Executor runs the plan's fio steps for the runner: Fio runs fio, a
// test's executor stands in for it.
type Executor interface {
	// Measure returns fio's stdout for the measurement named test. The
	// stdout is returned even with an error when fio printed any. watch,
	// when set, sees fio's status reports as they come.
	Measure(ctx context.Context, test string, job fiojob.Job, watch *Watch) ([]byte, error)
	// Prepare runs a preparation step (purge, fill, random preconditioning,
	// top-up); logf is told about fallbacks, such as a purge method the
	// target cannot do.
	Prepare(ctx context.Context, st plan.Step, drives []plan.Drive, logf func(string, ...any), watch *Watch) (Prepared, error)
	// RawPath is where the measurement named test is (or would be) kept.
	RawPath(test string) string
}

// Watch follows a running fio: fio prints a status report every Interval
// and Report is called with each; when Report returns true, fio is stopped
// (SIGINT, so that it still prints its final report) and the step counts
// as finished, not interrupted.
type Watch struct {
	Interval time.Duration
	Report   func(fiojob.Progress) (stop bool)
	// Stderr, when set, is fiojob.Runner's StderrLine, whatever Interval is.
	Stderr func(line string)
}

// Prepared is what a preparation step leaves to judge it by.
type Prepared struct {
	// Logs holds, for a step that logged IOPS (Job.LogInterval), each
	// target's IOPS logs, one series per job, in the order of the job's
	// targets; nil when fio wrote none.
	Logs [][][]fiojob.Sample
	// Stopped says the watch stopped fio before its runtime ended.
	Stopped bool
	// Raw is where fio's stdout was recorded, for a step judged from its
	// output (StepVerify); its stderr and status sit beside it.
	Raw string
}

// Fio runs fio for real and records each run under Dir: the job file as
// <test>.fio, stdout byte for byte as <test>.json and stderr, when any, as
// <test>.stderr. Preparation runs are kept under Dir/prepare/.
type Fio struct {
	Dir    string
	Runner fiojob.Runner
	// Ctrls is the identify data of the drives' NVMe controllers, which
	// decides how far a format or sanitize reaches (see purge.Plan).
	Ctrls map[string]nvme.Controller
	// Discarder discards a held drive (the purge "discard", and the
	// fallback of a drive that cannot format or sanitize).
	Discarder purge.Discarder
	// PrepareDir, when set, is where preparation runs are kept instead of
	// Dir/prepare (a resumed run's, beside the earlier ones).
	PrepareDir string
	// SanitizeSent is, in a resumed run, the controllers the interrupted
	// run sent a sanitize to without seeing its end (run.json's
	// sanitize_sent): each sanitize of the resumed run reads its
	// controller's sanitize log first and waits for one still in
	// progress instead of sending another.
	SanitizeSent []string
}

// RawPath implements Executor.
func (l *Fio) RawPath(test string) string {
	return filepath.Join(l.Dir, filepath.FromSlash(test)+".json")
}

// Measure implements Executor.
// Each target logs its IOPS and bandwidth a second, packed into
// <test>.log.gz once fio ends (timelog.Pack).
func (l *Fio) Measure(ctx context.Context, test string, job fiojob.Job, watch *Watch) ([]byte, error) {
	base := strings.TrimSuffix(l.RawPath(test), ".json")
	job.LogInterval, job.Targets = cmp.Or(job.LogInterval, timelog.Interval), timelog.Logged(job.Targets, base)
	stdout, _, err := l.run(ctx, base, job, watch, "")
	_, perr := timelog.Pack(base+record.LogExt, job.Targets, job.LogInterval)
	return stdout, errors.Join(err, perr)
}

// run runs job, recorded as base.fio, base.json, base.stderr and, when fio
// failed, base.status.json. stopped says watch stopped fio, which is then
// no failure. format is fio's output format ("": the runner's, json+).
func (l *Fio) run(ctx context.Context, base string, job fiojob.Job, watch *Watch, format string) (stdout []byte, stopped bool, err error) {
	if err := job.Validate(); err != nil {
		return nil, false, fmt.Errorf("job %q: %w", job.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, false, err
	}
	jobFile := base + ".fio"
	if err := report.WriteFileAtomic(jobFile, []byte(job.File())); err != nil {
		return nil, false, err
	}
	runner := l.Runner
	if format != "" {
		runner.Format = format
	}
	// fio's stderr goes to base.stderr as fio writes it: a mismatch fio
	// names there (its verify error lines) is on disk even when the run
	// is killed before fio ends.
	errFile, err := os.Create(base + record.StderrExt)
	if err != nil {
		return nil, false, err
	}
	stream := &bestEffort{w: errFile}
	runner.Stderr = stream
	if watch != nil {
		runner.StderrLine = watch.Stderr
	}
	runCtx := ctx
	var (
		stop    atomic.Bool
		watched chan struct{}
		pw      *io.PipeWriter
	)
	if watch != nil && watch.Interval > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		runner.Args = append(slices.Clone(runner.Args), "--status-interval="+fiojob.StatusInterval(watch.Interval))
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		runner.Watch = pw
		watched = make(chan struct{})
		go func() {
			defer close(watched)
			// A report that does not parse is skipped: the final output is
			// judged on its own once fio ends.
			_ = fiojob.WatchStatus(pr, func(p fiojob.Progress) {
				if !stop.Load() && watch.Report(p) {
					stop.Store(true)
					cancel()
				}
			})
		}()
	}
	stdout, stderr, runErr := runner.Run(runCtx, jobFile)
	if pw != nil {
		pw.Close()
		<-watched
	}
	serr := errFile.Sync()
	if cerr := errFile.Close(); serr == nil {
		serr = cerr
	}
	if stream.err != nil {
		serr = stream.err
	}
	if stop.Load() && ctx.Err() == nil {
		// Stopped on purpose: fio's SIGINT exit is how the step ends.
		stopped, runErr = true, nil
	}
	// Keep what fio printed before judging it: a failed run is evidence.
	if err := report.WriteFileAtomic(base+".json", stdout); err != nil {
		return stdout, stopped, err
	}
	if runErr != nil {
		st, _ := json.Marshal(record.Failure{Interrupted: ctx.Err() != nil, Message: runErr.Error()})
		if err := report.WriteFileAtomic(base+".status.json", append(st, '\n')); err != nil {
			return stdout, stopped, err
		}
	}
	if len(stderr) > 0 || serr != nil {
		// The whole of it, whatever the stream lost.
		if err := report.WriteFileAtomic(base+record.StderrExt, stderr); err != nil {
			return stdout, stopped, err
		}
	} else if err := os.Remove(base + record.StderrExt); err != nil && !errors.Is(err, os.ErrNotExist) {
		return stdout, stopped, err
	}
	return stdout, stopped, runErr
}

// Prepare implements Executor. A step that logs IOPS (Job.LogInterval)
// logs each target's IOPS and bandwidth to prepare/NNN-name.driveI,
// returns its IOPS logs and keeps both packed as prepare/NNN-name.log.gz.
func (l *Fio) Prepare(ctx context.Context, st plan.Step, drives []plan.Drive, logf func(string, ...any), watch *Watch) (Prepared, error) {
	if st.Kind == plan.StepPurge {
		var infos []device.Info
		for _, d := range st.Drives {
			infos = append(infos, drives[d].Info)
		}
		steps, errs := purge.Plan(infos, st.Purge, l.Ctrls)
		if len(errs) > 0 {
			return Prepared{}, errors.Join(errs...)
		}
		// A sanitize an interrupted run sent is waited for, by whichever
		// purge of the resumed run reaches its controller first (a later
		// one reads the log of its own, completed sanitize, and sends).
		return Prepared{}, purge.Runner{Sent: l.SanitizeSent}.Run(ctx, steps, l.Discarder, logf)
	}
	base := l.prepareBase(st)
	job := st.Job
	if job.LogInterval > 0 {
		job.Targets = timelog.Logged(job.Targets, base)
	}
	// Nothing judges a preparation step's latency: its status reports
	// (six a round in a random step) and final report are recorded as
	// fio's plain json, without json+'s bins (see record.PrepareFormat).
	stdout, stopped, runErr := l.run(ctx, base, job, watch, record.PrepareFormat)
	prep := Prepared{Stopped: stopped}
	// A failed step's logs are kept too: they are evidence.
	logs, perr := timelog.ReadAndPack(base+record.LogExt, job)
	if perr != nil {
		logf("%v", perr)
	}
	if st.Kind == plan.StepVerify {
		// A mismatch is the drive's verdict, not a failed step: the suite
		// judges each drive from the recording (see the live runner's verifyStep).
		prep.Raw = base + record.OutputExt
		return prep, runErr
	}
	out, err := fiojob.Parse(stdout)
	if runErr != nil && ctx.Err() != nil {
		return prep, runErr
	}
	if runErr != nil || err == nil && len(out.Total().Errors) > 0 {
		if err != nil {
			out = nil
		}
		failed := &TargetsFailed{Err: errors.New(strings.TrimPrefix(verdict.FioFailure("", runErr, out), ": "))}
		if out != nil {
			// One group a target: the drives whose jobs failed are named,
			// and a neighbour that finished its part is not failed for them.
			if groups := out.Groups(); len(groups) == len(job.Targets) {
				for i, g := range groups {
					if len(g.Errors) > 0 {
						failed.Targets = append(failed.Targets, i)
					}
				}
			}
		}
		return prep, failed
	}
	if err != nil {
		return prep, fmt.Errorf("%s: %w", base+".json", err)
	}
	prep.Logs = logs
	return prep, nil
}

// Slug is s as one file name: letters, digits, "-" and "." kept, every
// other character "_".
func Slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// prepareBase is the path of preparation step st's files, without an
// extension.
func (l *Fio) prepareBase(st plan.Step) string {
	return filepath.Join(l.prepareDir(), fmt.Sprintf("%03d-%s", st.N, Slug(st.Name)))
}

// PreparedRaw is where a preparation step's fio output is kept: a verify
// pass is listed in run.json before fio starts, so that a kill mid-pass
// leaves what fio said of it (its stderr) to judge.
func (l *Fio) PreparedRaw(st plan.Step) string { return l.prepareBase(st) + record.OutputExt }

// prepareDir is where Fio keeps preparation runs: PrepareDir, else
// Dir/prepare.
func (l *Fio) prepareDir() string {
	if l.PrepareDir != "" {
		return l.PrepareDir
	}
	return filepath.Join(l.Dir, "prepare")
}

// bestEffort writes to w until a write fails, and never fails itself:
// fio must not block on a stderr its copy could not write.
type bestEffort struct {
	w   io.Writer
	err error
}

func (b *bestEffort) Write(p []byte) (int, error) {
	if b.err == nil {
		_, b.err = b.w.Write(p)
	}
	return len(p), nil
}

// TargetsFailed is a preparation step's fio failure that names the
// targets (indices into the job's targets, the step's drives in order)
// whose jobs reported errors; the others finished their part.
type TargetsFailed struct {
	Targets []int
	Err     error
}

func (e *TargetsFailed) Error() string { return e.Err.Error() }
func (e *TargetsFailed) Unwrap() error { return e.Err }
