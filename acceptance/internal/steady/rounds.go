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
	// measured. The step stopped after the last of them.
	Rounds []float64
	// Held is the last round (counted from 1) of the drive's latest
	// window that held the rule, however long ago; 0 when none did.
	Held int
	// At is Held when that window is recent enough to count (Rule.Hold:
	// it ends at most Window − 1 rounds before the step stopped), else 0:
	// the drive is steady when At > 0. Verdict is that window's verdict
	// when At > 0, else the trailing window's. A drive that held the rule
	// on an early window and lost it for longer than a window's span by
	// the time the step stopped is not steady.
	At      int
	Verdict Verdict
}

// Stop is the round the step stopped at: the number of whole rounds.
func (r Result) Stop() int { return len(r.Rounds) }

// Hold applies r to one drive's rounds of a step that stopped after the
// last of them: the drive is steady when a window of Window rounds of its
// own held the rule and ended at most Window − 1 rounds before the stop,
// so that the window overlaps the last Window rounds. Each drive of a
// step is judged on its own rounds alone: its verdict does not depend on
// when its neighbours settled, only on whether it held within the last
// window's span of rounds when the step stopped.
func (r Rule) Hold(rounds []float64) Result {
	res := Result{Rounds: rounds}
	for n := len(rounds); n >= r.Window && n > 0; n-- {
		if v := r.Check(rounds[:n]); v.Attained {
			res.Held = n
			if len(rounds)-n <= r.Window-1 {
				res.At, res.Verdict = n, v
				return res
			}
			break
		}
	}
	res.Verdict = r.Check(rounds)
	return res
}

// recent reports whether a drive that last held the rule at round held
// (0: never) counts as steady after rounds rounds.
func (r Rule) recent(held, rounds int) bool {
	return held > 0 && rounds-held <= r.Window-1
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
// Each drive is judged on its own rounds (Rule.Hold): it is steady once a
// window of its own holds the rule, and stays steady while that window is
// at most Window − 1 rounds old; the step stops on the first report after
// which every drive is steady so. A drive that was steady early and lost
// it for longer than a window's span while the step ran on for a slower
// one is recorded as not steady, on its trailing window. The SNIA PTS asks
// each drive for a window of its own, not for every drive's window at the
// same round: with that stricter rule, the chance that a step of drives
// whose rounds vary 5 % round to round ends with one of them not steady
// grows with the drives (0.48 at 24 drives); with this one it stays at a
// few in a thousand (TestSimulatedStepOfTwentyFour), and a drive's verdict
// is the same alone as with 23 neighbours. (Each drive's step ending at
// its own steady round is not taken: the drives of a step share one fio
// process, a host and often a PCIe switch, so stopping one drive's jobs
// early changes what the others are measured under, and the drive's next
// cell comes after the whole step anyway: its recent window must show
// its state then.)
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
	held    int     // the last round whose trailing window held the rule
	// bounds[k] is the drive's cumulative I/Os at k·round and whether it
	// was pinned between reports close enough (bounds[0] is the start).
	bounds []bound
	rounds []float64 // the rounds so far, as Result.Rounds
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

// Report reads one status report; it returns true when every drive has a
// window of its own that holds the rule and ends at most Window − 1 rounds
// before its last round (Rule.Hold), which is when the step may stop.
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

// Steady reports whether every drive is steady by Rule.Hold now.
func (t *Tracker) Steady() bool {
	for _, d := range t.drives {
		if !t.rule.recent(d.held, len(d.rounds)) {
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
		d.rounds = append(d.rounds, iops)
		if t.rule.Check(d.rounds).Attained {
			d.held = len(d.rounds)
		}
	}
	d.at, d.ios = at, ios
}

// Results returns each drive's rounds so far judged by Rule.Hold, as
// though the step stopped now.
func (t *Tracker) Results() []Result {
	out := make([]Result, len(t.drives))
	for i, d := range t.drives {
		out[i] = t.rule.Hold(slices.Clone(d.rounds))
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
