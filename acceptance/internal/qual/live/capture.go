package live

import (
	"context"
	"os"
	"path/filepath"

	"github.com/drivequal/drivequal/acceptance/internal/qual/live/capture"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

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
// its error information log and telemetry (capture.Drives) into
// <record>/failure/<drive index>.*. The files are listed in run.json
// with their sha256, as every recorded file is. It returns what was kept
// or why not, by drive; it changes no verdict. In a resumed run, a drive
// the interrupted run captured keeps that capture, the one read nearest
// its failure: it is not read again, and its files are not overwritten.
func (r *Runner) CaptureFailures(ctx context.Context, failed []int) map[int]report.Capture {
	r.init()
	if r.Record == "" {
		return map[int]report.Capture{}
	}
	devs, known := map[int]string{}, map[int]report.Capture{}
	for _, d := range failed {
		if d >= len(r.Drives) || d >= len(r.Monitor.health) {
			continue
		}
		if c, ok := priorCapture(r.Resume, d); ok {
			known[d] = c
			continue
		}
		if why := r.drives.changed(d); why != "" {
			// Another drive, or none, may be at its path now: what would
			// be read there is not this drive's evidence.
			known[d] = report.Capture{Notes: []string{"not read: " + why}}
			continue
		}
		if why := r.Monitor.health[d].Skip; why != "" || !r.Drives[d].Block {
			continue // no NVMe log to read (a loop device, a file)
		}
		devs[d] = r.Drives[d].Path
	}
	out := capture.Drives(ctx, r.Monitor.nvme, filepath.Join(r.Record, "failure"), devs, func(d int, c report.Capture) {
		r.lines.progress(nil, "%s failed: kept for its supplier: %v %v", r.Drives[d].Path, c.Files, c.Notes)
	})
	for d, c := range known {
		out[d] = c
	}
	if len(out) > 0 {
		// run.json's drives table names them too, for a replay.
		err := r.rec.Update(func(i *record.Run) {
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
		if err := r.rec.Landed("failure", true); err != nil {
			r.lines.progress(nil, "%s: %v", r.Record, err)
		}
	}
	return out
}

// priorCapture is the capture the interrupted run made of drive d, when
// res (nil for a run that is not resumed) resumes one that did and its
// files are all still there.
func priorCapture(res *Resume, d int) (report.Capture, bool) {
	if res == nil || d >= len(res.Prior.Drives) || res.Prior.Drives[d].Failure == nil {
		return report.Capture{}, false
	}
	c := *res.Prior.Drives[d].Failure
	for _, f := range c.Files {
		if _, err := os.Stat(f); err != nil {
			return report.Capture{}, false
		}
	}
	return c, len(c.Files) > 0
}
