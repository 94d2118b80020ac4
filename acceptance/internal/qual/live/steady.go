package live

import (
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/steadyrec"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/progress"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
	"github.com/drivequal/drivequal/fiojob"
)

// judgeSteady records each drive's steady-state verdict for a random
// step: the rounds track made of fio's status reports, which decided when
// to stop the step, or, for a drive without a whole round from them, the
// rounds of fio's IOPS logs.
func (r *Runner) judgeSteady(st plan.Step, prep Prepared, track *steady.Tracker, took time.Duration, logf func(string, ...any)) {
	results := track.Results()
	var recs []report.Steady
	for i, d := range st.Drives {
		res, source := results[i], "fio status reports"
		if len(res.Rounds) == 0 && i < len(prep.Logs) {
			// Judged as the Tracker judges: a window of the drive's own
			// that held within the last window's span of the stop.
			res, source = st.Rule.Hold(steady.LogRounds(prep.Logs[i], st.Job.LogInterval, st.Round)), "fio iops log"
		}
		rec := steadyrec.Record(st, r.Drives[d], res, source)
		if r.Resume != nil {
			// A resume's plan numbers its steps from 1 again.
			rec.Resume = r.rec.Resumptions()
		}
		rec.Seconds = took.Seconds()
		if res.At > 0 {
			// fio's runtime when the window that held ended.
			rec.Seconds = (time.Duration(res.At) * st.Round).Seconds()
		}
		r.drives.steady(d, rec, st.Kind == plan.StepRandom)
		r.Sink.Steady(rec)
		recs = append(recs, rec)
		logf("step %d: %s: %s", st.N, r.Drives[d].Path, steadyrec.Window(res))
	}
	if err := r.rec.Update(func(i *record.Run) { i.Steady = append(i.Steady, recs...) }); err != nil {
		logf("%s: %v", r.Record, err)
	}
}

// MaxCellReports is the most status reports fio prints during a
// measurement cell, its final report aside. Each is in the cell's
// recorded output, byte for byte, and a replay reads that output only up
// to record.MaxOutput: a json+ report of a 24-drive, 8-job cell is about
// 5.4 MB (measured, fio 3.33 on 24 loop devices, randrw 70/30), so one
// every 30 s would make a cell longer than about 5 minutes a recording
// its own replay refuses.
const MaxCellReports = 6

// cellReportEvery is how often fio reports its status during a
// measurement cell of est: every, or less often, so that the cell prints
// at most MaxCellReports.
func cellReportEvery(every, est time.Duration) time.Duration {
	n := time.Duration(MaxCellReports)
	return max(every, (est+n-1)/n)
}

// watch follows a running step: progress lines at most every
// progress.Every (on the terminal and through logf, into the subtest's log
// and so its JUnit), and for random steps track, fed every status report,
// which stops the step once every drive has a recent window of its own that
// holds the steady-state rule (steady.Rule.Hold); a short step's has no
// Interval (no status reports).
func (r *Runner) watch(st plan.Step, start time.Time, track *steady.Tracker, logf func(string, ...any)) *Watch {
	interval := progress.Every
	if track != nil {
		interval = min(interval, steady.ReportEvery(st.Round))
	} else if st.Est <= progress.Min {
		return &Watch{}
	}
	last := start
	return &Watch{Interval: interval, Report: func(p fiojob.Progress) bool {
		stop := track != nil && track.Report(p)
		if now := time.Now(); st.Est > progress.Min && now.Sub(last) >= progress.Every-time.Second/2 {
			last = now
			r.lines.progress(logf, "%s", r.lines.progressLine(st, now.Sub(start), p))
		}
		return stop
	}}
}
