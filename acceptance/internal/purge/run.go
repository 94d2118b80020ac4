package purge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// Discarder discards every block of a block device (BLKDISCARD). drivequal
// implements it on the O_EXCL descriptor it holds for the target, so that
// no other opener can be writing while the blocks go.
type Discarder interface {
	// Discard discards the whole device at path (a Step's Device).
	Discard(path string) error
}

// Runner executes purge steps.
type Runner struct {
	// NVMe runs nvme-cli for format, sanitize and the sanitize log.
	NVMe nvme.CLI
	// Poll is how often the sanitize log is read while a sanitize runs;
	// 0 means 5 seconds.
	Poll time.Duration
	// Sent lists the controllers ("/dev/nvme0") an interrupted run sent
	// a sanitize to whose end it did not see. When it is not empty, the
	// sanitize log of every controller sanitized is read first, and a
	// sanitize still in progress is waited for rather than sending
	// another (which the controller refuses while one runs): every
	// controller, not only those named, since after a reboot the kernel
	// may name the controllers in another order (nvme0 is then the
	// controller that was nvme1).
	Sent []string
}

// Run executes steps with the default Runner.
func Run(ctx context.Context, steps []Step, d Discarder, logf func(string, ...any)) error {
	return Runner{}.Run(ctx, steps, d, logf)
}

// Run executes steps: those of different controllers (and devices) in
// parallel, those of one controller one after the other, each once. Notes
// of fallback steps, and the progress of a sanitize, go to logf. The error
// joins one error per failed step, each naming its device.
func (r Runner) Run(ctx context.Context, steps []Step, d Discarder, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	groups := map[string][]Step{}
	var order []string
	for _, s := range steps {
		key := s.Group()
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], s)
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, key := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var gerrs []error
			for _, s := range groups[key] {
				if err := ctx.Err(); err != nil {
					gerrs = append(gerrs, fmt.Errorf("purging %s: %w", strings.Join(s.Targets, ", "), err))
					break
				}
				if s.Note != "" {
					logf("%s", s.Note)
				}
				logf("purge: %s", s)
				if err := r.step(ctx, s, d, logf); err != nil {
					gerrs = append(gerrs, err)
				}
			}
			errs[i] = errors.Join(gerrs...)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Group is what the step's purges are sent one at a time within: its
// subsystem (one subsystem's purges one at a time), else its controller,
// else its device. Steps of different groups run at once.
func (s Step) Group() string {
	switch {
	case s.Subsystem != "":
		return s.Subsystem
	case s.Controller != "":
		return s.Controller
	}
	return s.Device
}

func (r Runner) step(ctx context.Context, s Step, d Discarder, logf func(string, ...any)) error {
	targets := strings.Join(s.Targets, ", ")
	switch s.Kind {
	case PunchHole:
		f, err := os.OpenFile(s.Device, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("purging %s: %w", targets, err)
		}
		defer f.Close()
		if err := device.PunchHole(f, s.Size); err != nil {
			return fmt.Errorf("purging %s: deallocating the file: %w: use a file system that can punch holes (ext4, xfs, tmpfs), or purge with none", targets, err)
		}
		return nil
	case DiscardBlocks:
		if d == nil {
			return fmt.Errorf("purging %s: no discarder was given to discard %s", targets, s.Device)
		}
		if err := d.Discard(s.Device); err != nil {
			return fmt.Errorf("purging %s: discarding %s: %w", targets, s.Device, err)
		}
		return nil
	case FormatNVM:
		if _, err := r.NVMe.Run(ctx, s.Argv()...); err != nil {
			return refusedBy(s, targets, "Format NVM", err)
		}
		return nil
	case SanitizeNVM:
		if len(r.Sent) > 0 {
			done, err := r.resumeSanitize(ctx, s, logf)
			if done || err != nil {
				return err
			}
		}
		if _, err := r.NVMe.Run(ctx, s.Argv()...); err != nil {
			return refusedBy(s, targets, "Sanitize", err)
		}
		return r.waitSanitize(ctx, s, logf)
	}
	return fmt.Errorf("purging %s: unknown step kind %q", targets, s.Kind)
}

// refusedBy is the error of a format or sanitize command that failed: on
// an NVMe over Fabrics controller, the target refused it, and the error
// says so, naming the transport and the purge the target allows.
func refusedBy(s Step, targets, what string, err error) error {
	if s.Transport == "" || ctxErr(err) {
		return fmt.Errorf("purging %s: %w", targets, err)
	}
	var ce *nvme.CommandError
	why := err.Error()
	if errors.As(err, &ce) && ce.Stderr != "" {
		why, _, _ = strings.Cut(strings.TrimSpace(ce.Stderr), "\n")
	}
	return fmt.Errorf("purging %s: the NVMe over %s target at %s (%s) refused %s (%s: %s): a fabric namespace's purge is what its target allows; purge it with discard ([precondition] purge = \"discard\")",
		targets, s.Transport, s.Address, s.Subsystem, what, "nvme "+strings.Join(s.Argv(), " "), why)
}

func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// resumeSanitize reads the sanitize log of a controller an interrupted
// run sent a sanitize to: one in progress is waited for (done is then
// true); otherwise done is false, and the sanitize is sent.
func (r Runner) resumeSanitize(ctx context.Context, s Step, logf func(string, ...any)) (done bool, err error) {
	l, err := r.NVMe.SanitizeLog(ctx, s.Device)
	if err != nil {
		return true, fmt.Errorf("purging %s: reading the sanitize log of %s, sent a sanitize by the interrupted run: %w", strings.Join(s.Targets, ", "), s.Device, err)
	}
	switch l.Status {
	case nvme.SanitizeInProgress:
		was := ""
		if !slices.Contains(r.Sent, s.Device) {
			was = fmt.Sprintf(" (to %s, named otherwise now)", strings.Join(r.Sent, ", "))
		}
		logf("%s: the sanitize the interrupted run sent%s is in progress (%.1f%% done): waiting for it, not sending another", s.Device, was, l.Percent())
		return true, r.waitSanitize(ctx, s, logf)
	}
	// Completed (or never run): the log cannot tell the interrupted
	// run's sanitize from an older one, and a new one is accepted.
	return false, nil
}

// waitSanitize polls the controller's sanitize log until the sanitize ends:
// status 1 or 4 is success, 3 failure, 2 still running.
func (r Runner) waitSanitize(ctx context.Context, s Step, logf func(string, ...any)) error {
	poll := r.Poll
	if poll <= 0 {
		poll = 5 * time.Second
	}
	targets := strings.Join(s.Targets, ", ")
	lastTenth := -1
	for {
		l, err := r.NVMe.SanitizeLog(ctx, s.Device)
		if err != nil {
			return fmt.Errorf("purging %s: waiting for the sanitize of %s: %w", targets, s.Device, err)
		}
		switch l.Status {
		case nvme.SanitizeCompleted, nvme.SanitizeCompletedNoDealloc:
			logf("%s: sanitize (%s) done: %s", s.Device, sanActName(s.SanAct), l.Status)
			return nil
		case nvme.SanitizeFailed:
			return fmt.Errorf("purging %s: the sanitize (%s) of %s failed (sanitize log: %q): the controller is now in sanitize failure mode; leave it with `nvme sanitize %s --sanact=1` and retry, or purge with format",
				targets, sanActName(s.SanAct), s.Device, l.StatusText, s.Device)
		case nvme.SanitizeInProgress:
			if tenth := int(l.Percent() / 10); tenth != lastTenth {
				lastTenth = tenth
				logf("%s: sanitize (%s) in progress, %.1f%% done", s.Device, sanActName(s.SanAct), l.Percent())
			}
		default:
			return fmt.Errorf("purging %s: after the sanitize command, the sanitize log of %s says %q (status %d), not in progress or completed: check the controller with `nvme sanitize-log %s`",
				targets, s.Device, l.StatusText, l.Status, s.Device)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("purging %s: waiting for the sanitize of %s: %w (the sanitize goes on in the drive)", targets, s.Device, ctx.Err())
		case <-time.After(poll):
		}
	}
}
