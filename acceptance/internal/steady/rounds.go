package steady

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/drivequal/drivequal/fiojob"
)

// Unmeasured is the value of a round that fio's reports or logs do not
// cover closely enough to measure: NaN, which Check names and never
// counts as 0 IOPS.
var Unmeasured = math.NaN()

// ReportEvery is how often fio is asked for a status report
// (--status-interval) while a step is tracked in rounds of round: six
// reports a round, so that a round's ends are pinned to within a sixth of
// a round and the run is stopped within a sixth of a round of the round
// that shows steady state; at least every 50 ms. For the PTS's 1-minute
// round that is every 10 s.
func ReportEvery(round time.Duration) time.Duration {
	return max(round/6, 50*time.Millisecond)
}

// maxGap is the widest span between two status reports across which a
// round's end is interpolated: half a round, three times ReportEvery, or
// twice ReportEvery for rounds so short that fio reports at its 50 ms
// floor. A wider one (fio's reporting thread starved of CPU) leaves the
// rounds on either side Unmeasured.
func maxGap(round time.Duration) time.Duration { return max(round/2, 2*ReportEvery(round)) }

// Result is one drive's rounds of one step and the rule applied to them.
type Result struct {
	// Rounds holds the mean IOPS (read + write) of each whole round, in
	// order from the step's start; Unmeasured where it could not be
	// measured.
	Rounds []float64
	// At is the last round read (counted from 1) when its trailing window
	// holds the rule, 0 when it does not; Verdict is that trailing
	// window's verdict. A drive that held the rule on an earlier window
	// and lost it by the last round is not steady: the window recorded is
	// always the drive's state when the step stopped.
	At      int
	Verdict Verdict
}

// Tracker follows the drives of one step through fio's status reports
// (fiojob.WatchStatus) and turns them into whole rounds as fio runs. It
// reads each drive's cumulative I/Os at fio's runtime in each report (the
// reporting group of target i is drive i) and pins each round's end,
// k·round of runtime, by linear interpolation between the two reports
// around it: every job of a drive is read in the same report, at the same
// instant, so the jobs' own clocks never split a round. A round is whole
// once a report at or after its end has been read.
//
// Each drive is judged on its trailing window, the last Window rounds, and
// the step stops on the first report after which every drive's trailing
// window holds at once. A drive that was steady early is not kept steady
// while the step runs on for a slower one: the window recorded for each
// drive is the one that ends when the step stops, so a drive whose IOPS
// swing again after an early window is recorded as not steady. (The
// alternative, each drive's step ending at its own steady round, is not
// taken: the drives of a step share one fio process, a host and often a
// PCIe switch, so stopping one drive's jobs early changes what the others
// are measured under, and the drive's next cell comes after the whole
// step anyway: its state then is what the recorded window must show.)
//
// The Tracker is pure: no clock, no process. The live run feeds it the
// reports as they come and stops fio when Report says so; a recorded run's
// reports fed to a new Tracker give the same rounds and verdicts.
type Tracker struct {
	rule   Rule
	round  time.Duration
	drives []tracked
}

type tracked struct {
	at, ios float64 // the last report read: runtime in ns, cumulative I/Os
	// bounds[k] is the drive's cumulative I/Os at k·round and whether it
	// was pinned between reports close enough (bounds[0] is the start).
	bounds []bound
	res    Result
}

type bound struct {
	ios float64
	ok  bool
}

// NewTracker tracks drives drives in rounds of round against rule.
func NewTracker(rule Rule, round time.Duration, drives int) *Tracker {
	t := &Tracker{rule: rule, round: round, drives: make([]tracked, drives)}
	for i := range t.drives {
		t.drives[i].bounds = []bound{{0, true}}
	}
	return t
}

// Report reads one status report; it returns true when every drive's
// trailing window holds the rule, which is when the step may stop.
// Groups the Tracker does not track are ignored, and so is a report that
// goes back in time or in I/Os (fio restarted its counters).
func (t *Tracker) Report(p fiojob.Progress) (stop bool) {
	for _, g := range p.Groups {
		if g.GroupID < 0 || g.GroupID >= len(t.drives) {
			continue
		}
		t.add(&t.drives[g.GroupID], float64(g.Runtime), float64(g.Read.TotalIOs+g.Write.TotalIOs))
	}
	return t.Steady()
}

// Steady reports whether every drive's trailing window holds the rule.
func (t *Tracker) Steady() bool {
	for _, d := range t.drives {
		if d.res.At == 0 {
			return false
		}
	}
	return len(t.drives) > 0
}

func (t *Tracker) add(d *tracked, at, ios float64) {
	if t.round <= 0 || at <= d.at || ios < d.ios {
		return
	}
	round := float64(t.round)
	ok := at-d.at <= float64(maxGap(t.round))
	for k := len(d.bounds); float64(k)*round <= at; k++ {
		end := float64(k) * round
		b := bound{d.ios + (ios-d.ios)*(end-d.at)/(at-d.at), ok}
		d.bounds = append(d.bounds, b)
		iops := Unmeasured
		if prev := d.bounds[k-1]; prev.ok && b.ok {
			iops = (b.ios - prev.ios) / t.round.Seconds()
		}
		d.res.Rounds = append(d.res.Rounds, iops)
		d.res.At, d.res.Verdict = 0, t.rule.Check(d.res.Rounds)
		if d.res.Verdict.Attained {
			d.res.At = len(d.res.Rounds)
		}
	}
	d.at, d.ios = at, ios
}

// Results returns each drive's rounds so far and the verdict of its
// trailing window: At is the last round when that window holds, else 0.
func (t *Tracker) Results() []Result {
	out := make([]Result, len(t.drives))
	for i, d := range t.drives {
		r := d.res
		r.Rounds = slices.Clone(r.Rounds)
		r.Verdict = t.rule.Check(r.Rounds)
		r.At = 0
		if r.Verdict.Attained {
			r.At = len(r.Rounds)
		}
		out[i] = r
	}
	return out
}

// LogRounds makes the rounds of one drive from fio's IOPS logs of its jobs
// (one series per job, as fiojob.ReadIOPSLog reads each of
// IOPSLogFiles), written with log_avg_msec = interval: whole rounds of
// round from the step's start, read and write added, the same rounds a
// Tracker makes from status reports.
//
// Each job is read on its own clock: a sample stands for the I/Os of its
// window, from the job's previous sample of the same direction (or one
// interval before it, for the first sample and after a gap) to its At,
// and is split across rounds in proportion. A gap of more than 1.5
// intervals between samples is a span the log does not cover (fio writes
// no line for a window without I/O, and a starved job writes late). A
// round is measured only when every job's log covers at least 99 % of it,
// at the job's mean rate over what it covers; otherwise it is Unmeasured. The rounds end with the last one that every
// job's log reaches.
func LogRounds(jobs [][]fiojob.Sample, interval, round time.Duration) []float64 {
	if round <= 0 || interval <= 0 || len(jobs) == 0 {
		return nil
	}
	type series struct {
		ios, cover []float64 // per round
		end        time.Duration
	}
	var all []series
	for _, job := range jobs {
		byDir := map[fiojob.IODir][]fiojob.Sample{}
		for _, s := range job {
			byDir[s.Dir] = append(byDir[s.Dir], s)
		}
		if len(byDir) == 0 {
			return nil // a job that logged nothing covers no round
		}
		for _, dir := range []fiojob.IODir{fiojob.DirRead, fiojob.DirWrite, fiojob.DirTrim} {
			samples := byDir[dir]
			if len(samples) == 0 {
				continue
			}
			slices.SortStableFunc(samples, func(a, b fiojob.Sample) int { return cmp.Compare(a.At, b.At) })
			s := series{end: samples[len(samples)-1].At}
			n := int(s.end / round)
			s.ios, s.cover = make([]float64, n), make([]float64, n)
			prev := time.Duration(-1)
			for _, smp := range samples {
				start := smp.At - interval
				if prev >= 0 && 2*(smp.At-prev) <= 3*interval {
					start = prev
				}
				start = max(start, 0)
				prev = smp.At
				if smp.At <= start {
					continue
				}
				rate := smp.IOPS / float64(time.Second) // I/Os per ns
				for k := int(start / round); k < n; k++ {
					rs, re := time.Duration(k)*round, time.Duration(k+1)*round
					if rs >= smp.At {
						break
					}
					if overlap := min(re, smp.At) - max(rs, start); overlap > 0 {
						s.ios[k] += rate * float64(overlap)
						s.cover[k] += float64(overlap)
					}
				}
			}
			all = append(all, s)
		}
	}
	n := math.MaxInt
	for _, s := range all {
		n = min(n, len(s.ios))
	}
	out := make([]float64, n)
	for k := range out {
		for _, s := range all {
			if s.cover[k] < 0.99*float64(round) {
				out[k] = Unmeasured
				break
			}
			// The mean rate over the part of the round the log covers.
			out[k] += s.ios[k] / s.cover[k] * float64(time.Second)
		}
	}
	return out
}
