package qual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

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
		var wg sync.WaitGroup
		errs := make([]error, len(a.Drives))
		for i, d := range a.Drives {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = l.purge(ctx, drives[d], a.Purge, logf)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
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

// purge brings one drive back to a fresh state with the spec's method. A
// method the target cannot do falls back to a discard, and says so.
func (l *Live) purge(ctx context.Context, d Drive, method string, logf func(string, ...any)) error {
	path := d.Resolved
	if path == "" {
		path = d.Path
	}
	if !d.Block {
		// A regular file is deallocated; the fill that follows rewrites it.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("purging %s: %w", d.Path, err)
		}
		defer f.Close()
		if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, d.Size); err != nil {
			return fmt.Errorf("purging %s: deallocating the file: %w", d.Path, err)
		}
		return nil
	}
	argv, fallback := purgeCommand(d, path, method)
	if fallback != "" {
		logf("%s: %s", d.Path, fallback)
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("purging %s: %s: %v: %s", d.Path, strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	if argv[0] == "nvme" && argv[1] == "sanitize" {
		return waitSanitize(ctx, argv[2])
	}
	return nil
}

// waitSanitize polls the controller's sanitize log until the operation
// ends. The log's status (SSTAT bits 2:0) is 2 while in progress, 1 when
// the last sanitize succeeded and 3 when it failed.
func waitSanitize(ctx context.Context, ctrl string) error {
	for {
		out, err := exec.CommandContext(ctx, "nvme", "sanitize-log", ctrl, "--output-format=json").Output()
		if err != nil {
			return fmt.Errorf("waiting for sanitize on %s: nvme sanitize-log: %w", ctrl, err)
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			return fmt.Errorf("waiting for sanitize on %s: reading the sanitize log: %w", ctrl, err)
		}
		sstat, ok := findNumber(v, "sstat")
		if !ok {
			return fmt.Errorf("waiting for sanitize on %s: no sstat in the sanitize log", ctrl)
		}
		switch int(sstat) & 7 {
		case 1:
			return nil
		case 3:
			return fmt.Errorf("sanitize on %s failed (sanitize log status %#x)", ctrl, int(sstat))
		case 2:
		default:
			return fmt.Errorf("sanitize on %s: unexpected sanitize log status %#x", ctrl, int(sstat))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

// findNumber finds the first number under key anywhere in a decoded JSON value.
func findNumber(v any, key string) (float64, bool) {
	switch t := v.(type) {
	case map[string]any:
		if n, ok := t[key].(float64); ok {
			return n, true
		}
		for _, c := range t {
			if n, ok := findNumber(c, key); ok {
				return n, true
			}
		}
	case []any:
		for _, c := range t {
			if n, ok := findNumber(c, key); ok {
				return n, true
			}
		}
	}
	return 0, false
}

// purgeCommand is the command that purges block device d (at path) with
// method, and a note when it falls back to a discard.
func purgeCommand(d Drive, path, method string) (argv []string, fallback string) {
	nvme := d.Controller != ""
	if nvme {
		if _, err := exec.LookPath("nvme"); err != nil {
			nvme = false
		}
	}
	switch {
	case method == "format" && nvme:
		return []string{"nvme", "format", path, "--ses=1", "--force"}, ""
	case method == "sanitize" && nvme:
		// Block erase on the controller; purge then waits on the sanitize log.
		return []string{"nvme", "sanitize", "/dev/" + d.Controller, "--sanact=2"}, ""
	case method == "discard":
		return []string{"blkdiscard", "-f", path}, ""
	}
	return []string{"blkdiscard", "-f", path}, fmt.Sprintf("purge %q is not possible on %s (not an NVMe namespace, or nvme-cli missing); discarding instead", method, d.Name)
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
