package live

import (
	"context"
	"fmt"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
)

// samples is the runner's record of what each drive's data sample holds
// (package device/sample) as the plan runs: a resume reads the same
// sample before it trusts any recorded state of the drive.
type samples struct{ *Runner }

// stepName names st in run.json as a resumption lists its steps.
func stepName(st plan.Step) string { return fmt.Sprintf("%d %s: %s", st.N, st.Kind, st.Name) }

// writing marks st's drives in run.json as being written, before the
// step's first write; nothing for a step that only reads.
func (s samples) writing(st plan.Step) {
	if s.Record == "" || !st.Writes() || len(st.Drives) == 0 {
		return
	}
	if err := s.rec.Writing(st.Drives, len(s.Drives), stepName(st)); err != nil {
		s.lines.progress(nil, "%s: %v", s.Record, err)
	}
}

// after reads the sample of each drive of st (still present: a drive
// that disappeared or changed is not read at its path, where another may
// be) and records it before the next step starts. skipped is why st did
// not run to its end: a writing step stopped or failed keeps its mark
// (the drive may hold a half-written block, a sanitize goes on in the
// drive).
func (s samples) after(ctx context.Context, st plan.Step, skipped string, logf func(string, ...any)) {
	if s.Record == "" {
		return
	}
	var read []runjson.Sample
	for _, d := range s.drives.present(st.Drives) {
		p, err := sample.Read(s.Drives[d].Path, s.Drives[d].Size, s.Drives[d].Block)
		read = append(read, runjson.Sample{Drive: d, Print: p, Err: err})
	}
	writing := st.Writes() && (skipped != "" || ctx.Err() != nil)
	if err := s.rec.Sampled(read, len(s.Drives), stepName(st), writing, time.Now()); err != nil && logf != nil {
		logf("%s: %v", s.Record, err)
	}
}

// setup records every drive's sample before the run's first step (a
// resumed run's: before its first step, the interrupted run's marks
// cleared, since nothing writes the drives now).
func (s samples) setup() {
	if s.Record == "" {
		return
	}
	var read []runjson.Sample
	for d, drv := range s.Drives {
		p, err := sample.Read(drv.Path, drv.Size, drv.Block)
		read = append(read, runjson.Sample{Drive: d, Print: p, Err: err})
	}
	if err := s.rec.Sampled(read, len(s.Drives), "setup", false, time.Now()); err != nil {
		s.lines.progress(nil, "%s: %v", s.Record, err)
	}
}

// RunJSON is r's run.json, for a test at the end of the run that keeps
// its own file in the recording (TestFirmware) to list its sha256.
func RunJSON(r *Runner) *runjson.Recorder { r.init(); return r.facts.rec }

// PurgingAtTheEnd records, before TestPurge's purge writes st's drives,
// that their read-back and data sample no longer hold (as a purge step
// does), so that a resume neither refuses them as changed nor trusts them.
func PurgingAtTheEnd(r *Runner, st plan.Step) {
	r.init()
	r.facts.markWritten(st)
	samples{r}.writing(st)
}
