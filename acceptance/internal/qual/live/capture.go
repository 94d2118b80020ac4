package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// CaptureTimeout bounds each nvme-cli command of a failure capture. The
// drives are read at once, each its two commands in turn, so that a
// capture never holds the run up longer than two of them, however many
// drives failed (24 failed drives read one after the other would hold it
// up to 48 of them).
var CaptureTimeout = 60 * time.Second

// Broken lists the drives the run stopped using and why (a critical
// warning, a failed preparation or read-back), by drive index.
func (r *Runner) Broken() map[int]string {
	r.init()
	out := map[int]string{}
	for d := range r.Drives {
		if why := r.drives.brokenText(d); why != "" {
			out[d] = why
		}
	}
	return out
}

// CaptureFailures reads, for each failed drive that nvme-cli can read,
// what a supplier asks for first: its error information log (`nvme
// error-log DEV -o json`) and, where the controller has it, its
// host-initiated telemetry log (`nvme telemetry-log DEV
// --output-file=FILE`), into <record>/failure/<drive index>.*, each
// command bounded by CaptureTimeout, all drives at once. The files are
// listed in run.json with their sha256, as every recorded file is. It
// returns what was kept or why not, by drive; it changes no verdict.
func (r *Runner) CaptureFailures(ctx context.Context, failed []int) map[int]report.Capture {
	r.init()
	out := map[int]report.Capture{}
	if r.Record == "" {
		return out
	}
	dir := filepath.Join(r.Record, "failure")
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, d := range failed {
		if d >= len(r.Drives) || d >= len(r.Monitor.health) {
			continue
		}
		if why := r.Monitor.health[d].Skip; why != "" || !r.Drives[d].Block {
			continue // no NVMe log to read (a loop device, a file)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := captureDrive(ctx, r, dir, d)
			mu.Lock()
			defer mu.Unlock()
			out[d] = c
			r.lines.progress(nil, "%s failed: kept for its supplier: %v %v", r.Drives[d].Path, c.Files, c.Notes)
		}()
	}
	wg.Wait()
	if len(out) > 0 {
		// run.json's drives table names them too, for a replay.
		err := r.rec.update(func(i *record.Run) {
			for k := range i.Drives {
				for d, c := range out {
					if i.Drives[k].Path == r.Drives[d].Path {
						c := c
						i.Drives[k].Failure = &c
					}
				}
			}
		})
		if err != nil {
			r.lines.progress(nil, "%s: %v", r.Record, err)
		}
		if err := r.rec.landed("failure", true); err != nil {
			r.lines.progress(nil, "%s: %v", r.Record, err)
		}
	}
	return out
}

// captureDrive reads drive d's error log and telemetry into dir.
func captureDrive(ctx context.Context, r *Runner, dir string, d int) report.Capture {
	var c report.Capture
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.Notes = append(c.Notes, err.Error())
		return c
	}
	dev := r.Drives[d].Path
	errLog := filepath.Join(dir, fmt.Sprintf("%d.error-log.json", d))
	if b, err := bounded(ctx, r, "error-log", dev, "-o", "json"); err != nil {
		c.Notes = append(c.Notes, "no error log: "+shortErr(err))
	} else if err := report.WriteFileAtomic(errLog, b); err != nil {
		c.Notes = append(c.Notes, err.Error())
	} else {
		c.Files = append(c.Files, errLog)
	}
	tel := filepath.Join(dir, fmt.Sprintf("%d.telemetry.bin", d))
	if _, err := bounded(ctx, r, "telemetry-log", dev, "--output-file="+tel); err != nil {
		os.Remove(tel)
		c.Notes = append(c.Notes, "no telemetry: "+shortErr(err))
	} else if st, err := os.Stat(tel); err != nil || st.Size() == 0 {
		os.Remove(tel)
		c.Notes = append(c.Notes, "no telemetry: nvme telemetry-log wrote nothing")
	} else {
		c.Files = append(c.Files, tel)
	}
	return c
}

// bounded runs nvme-cli with args, killed after CaptureTimeout.
func bounded(ctx context.Context, r *Runner, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CaptureTimeout)
	defer cancel()
	return r.Monitor.nvme.Run(ctx, args...)
}

// shortErr is nvme-cli's own words for a failed command, or the error.
func shortErr(err error) string {
	var ce *nvme.CommandError
	if errors.As(err, &ce) && ce.Stderr != "" {
		return firstOCPLine(ce.Stderr)
	}
	return err.Error()
}

func firstOCPLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
