package qual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/fiojob"
)

// Executor is the one seam between live and replayed runs: it yields fio's
// stdout for a measurement. Everything after it (parse, aggregate, verdict)
// is shared.
type Executor interface {
	// Measure returns fio's stdout for the measurement named test. The
	// stdout is returned even with an error when fio printed any.
	Measure(ctx context.Context, test string, job fiojob.Job) ([]byte, error)
	// Prepare runs a preparation step (purge, fill, random preconditioning);
	// logf is told about fallbacks, such as a purge method the target
	// cannot do.
	Prepare(ctx context.Context, a Action, drives []Drive, logf func(string, ...any)) error
	// RawPath is where the measurement named test is (or would be) kept.
	RawPath(test string) string
}

// ErrNotRecorded is returned by a replay for a measurement it has no output for.
var ErrNotRecorded = errors.New("no recorded fio output")

// Replay reads recorded fio outputs: DIR/<test name>.json.
type Replay struct{ Dir string }

// RawPath implements Executor.
func (r Replay) RawPath(test string) string {
	return filepath.Join(r.Dir, filepath.FromSlash(test)+".json")
}

// Measure implements Executor. A measurement recorded with a failure
// (<test>.status.json beside it) replays with the same failure.
func (r Replay) Measure(_ context.Context, test string, _ fiojob.Job) ([]byte, error) {
	path := r.RawPath(test)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNotRecorded, path)
	}
	if err != nil {
		return nil, err
	}
	st, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".status.json")
	if errors.Is(err, os.ErrNotExist) {
		return data, nil
	}
	if err != nil {
		return data, err
	}
	var rf RecordedFailure
	if err := json.Unmarshal(st, &rf); err != nil {
		return data, fmt.Errorf("%s: %w", strings.TrimSuffix(path, ".json")+".status.json", err)
	}
	return data, &rf
}

// RecordedFailure is how a measurement ended when fio did not succeed: kept
// as <test>.status.json beside its output, so that a replay judges the
// output as the live run did.
type RecordedFailure struct {
	// Interrupted says the run was stopped (Ctrl-C, SIGTERM, the -timeout)
	// rather than fio failing on its own.
	Interrupted bool   `json:"interrupted"`
	Message     string `json:"error"`
}

func (f *RecordedFailure) Error() string { return f.Message }

// interrupted reports whether err says the run was stopped, live or recorded.
func interrupted(ctx context.Context, err error) bool {
	var rf *RecordedFailure
	return err != nil && (ctx.Err() != nil || errors.As(err, &rf) && rf.Interrupted)
}

// Prepare implements Executor: a replay has nothing to prepare.
func (Replay) Prepare(context.Context, Action, []Drive, func(string, ...any)) error { return nil }

// Live runs fio for real and records each run under Dir: the job file as
// <test>.fio, stdout byte for byte as <test>.json and stderr, when any, as
// <test>.stderr. Preparation runs are kept under Dir/prepare/.
type Live struct {
	Dir    string
	Runner fiojob.Runner
	// Ctrls is the identify data of the drives' NVMe controllers, which
	// decides how far a format or sanitize reaches (see purge.Plan).
	Ctrls map[string]nvme.Controller
	// Discarder discards a held drive (the purge "discard", and the
	// fallback of a drive that cannot format or sanitize).
	Discarder purge.Discarder

	mu  sync.Mutex
	seq int
}

// RawPath implements Executor.
func (l *Live) RawPath(test string) string {
	return filepath.Join(l.Dir, filepath.FromSlash(test)+".json")
}

// Measure implements Executor.
func (l *Live) Measure(ctx context.Context, test string, job fiojob.Job) ([]byte, error) {
	return l.run(ctx, strings.TrimSuffix(l.RawPath(test), ".json"), job)
}

func (l *Live) run(ctx context.Context, base string, job fiojob.Job) ([]byte, error) {
	if err := job.Validate(); err != nil {
		return nil, fmt.Errorf("job %q: %w", job.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	jobFile := base + ".fio"
	if err := os.WriteFile(jobFile, []byte(job.File()), 0o644); err != nil {
		return nil, err
	}
	stdout, stderr, runErr := l.Runner.Run(ctx, jobFile)
	// Keep what fio printed before judging it: a failed run is evidence.
	if err := writeFile(base+".json", stdout); err != nil {
		return stdout, err
	}
	if runErr != nil {
		st, _ := json.Marshal(RecordedFailure{Interrupted: ctx.Err() != nil, Message: runErr.Error()})
		if err := writeFile(base+".status.json", append(st, '\n')); err != nil {
			return stdout, err
		}
	}
	if len(stderr) > 0 {
		if err := writeFile(base+".stderr", stderr); err != nil {
			return stdout, err
		}
	}
	return stdout, runErr
}

// Prepare implements Executor.
func (l *Live) Prepare(ctx context.Context, a Action, drives []Drive, logf func(string, ...any)) error {
	l.mu.Lock()
	l.seq++
	seq := l.seq
	l.mu.Unlock()
	switch a.Kind {
	case ActPurge:
		var infos []device.Info
		for _, d := range a.Drives {
			infos = append(infos, drives[d].Info)
		}
		steps, errs := purge.Plan(infos, a.Purge, l.Ctrls)
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		return purge.Run(ctx, steps, l.Discarder, logf)
	default:
		name := fmt.Sprintf("%03d-%s", seq, slug(a.Name))
		stdout, runErr := l.run(ctx, filepath.Join(l.Dir, "prepare", name), a.Job)
		out, err := fiojob.Parse(stdout)
		if runErr != nil && ctx.Err() != nil {
			return runErr
		}
		if runErr != nil || err == nil && len(out.Total().Errors) > 0 {
			if err != nil {
				out = nil
			}
			return errors.New(strings.TrimPrefix(fioFailure("", runErr, out), ": "))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(l.Dir, "prepare", name+".json"), err)
		}
		return nil
	}
}

func slug(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// writeFile writes data to path through a temporary file and a rename.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
