package steady

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/fiojob"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func w(at float64, iops float64) fiojob.Sample {
	return fiojob.Sample{At: sec(at), IOPS: iops, Dir: fiojob.DirWrite}
}

// sameRounds compares rounds, Unmeasured (NaN) equal to Unmeasured.
func sameRounds(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.IsNaN(got[i]) != math.IsNaN(want[i]) || !math.IsNaN(got[i]) && !near(got[i], want[i]) {
			return false
		}
	}
	return true
}

var nan = Unmeasured

type logRoundsTest struct {
	name     string
	jobs     [][]fiojob.Sample
	interval time.Duration
	round    time.Duration
	want     []float64
}

var logRoundsTests = []logRoundsTest{
	{"two windows a round", [][]fiojob.Sample{{w(1, 100), w(2, 200), w(3, 300), w(4, 400), w(5, 500), w(6, 600)}},
		time.Second, 2 * time.Second, []float64{150, 350, 550}},
	{"partial last round left out", [][]fiojob.Sample{{w(1, 100), w(2, 200), w(3, 300), w(4, 400), w(5, 500)}},
		time.Second, 2 * time.Second, []float64{150, 350}},
	// fio writes no line for a window without I/O: the log does not cover
	// it, and the round is Unmeasured, not 0 IOPS.
	{"a window without a sample", [][]fiojob.Sample{{w(1, 1000), w(2, 1000), w(4, 1000), w(5, 1000)}},
		time.Second, time.Second, []float64{1000, 1000, nan, 1000, 1000}},
	// Rounds start at the step's start: a first tick 1 ms late still
	// closes round 1, and five ticks make five rounds.
	{"a late first tick", [][]fiojob.Sample{{w(1.001, 1000), w(2, 1000), w(3, 1000), w(4, 1000), w(5, 1000)}},
		time.Second, time.Second, []float64{1000, 1000, 1000, 1000, 1000}},
	// A late tick: the window (1, 2.5] holds 1.5 s × 2000 I/Os per s.
	{"late window split at the round", [][]fiojob.Sample{{w(1, 1000), w(2.5, 2000), w(3, 1000), w(4, 1000)}},
		time.Second, time.Second, []float64{1000, 2000, 1500, 1000}},
	{"read and write added", [][]fiojob.Sample{{
		{At: sec(1), IOPS: 700, Dir: fiojob.DirRead}, {At: sec(1), IOPS: 300, Dir: fiojob.DirWrite},
		{At: sec(2), IOPS: 710, Dir: fiojob.DirRead}, {At: sec(2), IOPS: 290, Dir: fiojob.DirWrite}}},
		time.Second, time.Second, []float64{1000, 1000}},
	{"unsorted", [][]fiojob.Sample{{w(2, 20), w(1, 10)}}, time.Second, time.Second, []float64{10, 20}},
	// Two jobs of one drive whose clocks drift apart by more than half an
	// interval (a starved host): each is read on its own clock, and the
	// rounds are their sum, not windows split by sample index.
	{"jobs on drifting clocks", [][]fiojob.Sample{
		{w(1, 100), w(2, 100), w(3, 100), w(4, 100)},
		{w(1, 100), w(2.3, 100), w(3.6, 100), w(4.9, 100)}},
		time.Second, time.Second, []float64{200, 200, 200, 200}},
	// A job that wrote no log line for 3 s leaves those rounds unmeasured
	// for the drive, however much the other job did.
	{"one job silent", [][]fiojob.Sample{
		{w(1, 100), w(2, 100), w(3, 100), w(4, 100), w(5, 100)},
		{w(1, 100), w(2, 100), w(5, 100)}},
		time.Second, time.Second, []float64{200, 200, nan, nan, 200}},
	{"shorter than a round", [][]fiojob.Sample{{w(1, 10)}}, time.Second, 2 * time.Second, []float64{}},
	{"none", nil, time.Second, time.Second, nil},
}

func TestLogRounds(t *testing.T) {
	for _, tt := range logRoundsTests {
		got := LogRounds(tt.jobs, tt.interval, tt.round)
		if !sameRounds(got, tt.want) {
			t.Errorf("%s: LogRounds(%v, %v, %v) = %v, want %v", tt.name, tt.jobs, tt.interval, tt.round, got, tt.want)
		}
	}
}

// reports are fio's status reports of drives running at iops[d][k] in
// round k, every round/perRound of runtime, each lag short of the tick
// (fio's reports come slightly before its log's tick).
func reports(iops [][]float64, round time.Duration, perRound int, lag time.Duration) []fiojob.Progress {
	var out []fiojob.Progress
	ios := make([]float64, len(iops))
	for k := range iops[0] {
		for j := 1; j <= perRound; j++ {
			var p fiojob.Progress
			at := time.Duration(k)*round + time.Duration(j)*round/time.Duration(perRound) - lag
			for d := range iops {
				// The I/Os done by at, at the round's rate.
				done := ios[d] + iops[d][k]*(at-time.Duration(k)*round).Seconds()
				p.Groups = append(p.Groups, fiojob.Result{GroupID: d, Runtime: at, Write: fiojob.Direction{TotalIOs: int64(math.Round(done))}})
			}
			out = append(out, p)
		}
		for d := range iops {
			ios[d] += iops[d][k] * round.Seconds()
		}
	}
	return out
}

func flat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// feed reads reps into a new Tracker until it says stop; it returns the
// Tracker and the number of reports read.
func feed(rule Rule, round time.Duration, drives int, reps []fiojob.Progress) (*Tracker, int) {
	tr := NewTracker(rule, round, drives)
	for i, p := range reps {
		if tr.Report(p) {
			return tr, i + 1
		}
	}
	return tr, len(reps)
}

// At the PTS's 1-minute round, with fio's reports every 10 s, each 0.1 s
// before the tick: round 5 closes with the report at 309.9 s, the first
// past 300 s, and that report stops the run; the recorded window is
// rounds 1-5, the one that stopped it.
func TestTrackerStopsOnTheSteadyRound(t *testing.T) {
	reps := reports([][]float64{flat(8, 150000)}, time.Minute, 6, 100*time.Millisecond)
	tr, n := feed(DefaultRule, time.Minute, 1, reps)
	if n != 31 || reps[n-1].Groups[0].Runtime != sec(309.9) {
		t.Fatalf("stopped after report %d (runtime %v), want report 31 at 309.9 s", n, reps[n-1].Groups[0].Runtime)
	}
	res := tr.Results()[0]
	if res.At != 5 || len(res.Rounds) != 5 || !res.Verdict.Attained || res.Verdict.First != 0 || !near(res.Verdict.Mean, 150000) {
		t.Errorf("Results() = %+v, want steady at round 5 on rounds 1-5, mean 150,000", res)
	}
	// Rounds pinned between reports are exact for a constant rate.
	for k, r := range res.Rounds {
		if math.Abs(r-150000) > 0.05 {
			t.Errorf("round %d = %v IOPS, want 150,000", k+1, r)
		}
	}
}

// Whatever the rule, a run is never stopped before Window whole rounds.
func TestTrackerNeverStopsEarly(t *testing.T) {
	loose := Rule{Window: 5, MaxRange: 1.5, MaxExcursion: 1.5}
	for _, round := range []time.Duration{200 * time.Millisecond, 2 * time.Second, 12 * time.Second, time.Minute} {
		reps := reports([][]float64{{100, 300, 200, 250, 180, 220, 200}}, round, 6, 0)
		tr, n := feed(loose, round, 1, reps)
		if at := reps[n-1].Groups[0].Runtime; at < 5*round || !tr.Steady() {
			t.Errorf("round %v: stopped at runtime %v (steady %v), want at 5 rounds", round, at, tr.Steady())
		}
	}
}

// Reports 70 s apart around the end of round 2 (fio's reporting starved of
// CPU) cannot pin it: rounds 2 and 3 are Unmeasured, named in the verdict
// of every window holding them, and never read as 0 IOPS; steady state is
// then shown on rounds 4-8.
func TestTrackerReportsTooFarApart(t *testing.T) {
	reps := reports([][]float64{flat(9, 1000)}, time.Minute, 6, 0)
	var kept []fiojob.Progress
	for _, p := range reps {
		if at := p.Groups[0].Runtime; at <= 100*time.Second || at >= 170*time.Second {
			kept = append(kept, p)
		}
	}
	tr := NewTracker(DefaultRule, time.Minute, 1)
	for i, p := range kept {
		if tr.Report(p) {
			if at := p.Groups[0].Runtime; at != 8*time.Minute {
				t.Errorf("stopped at report %d, runtime %v: want at 8 min, when rounds 4-8 are whole", i+1, at)
			}
			break
		}
		if p.Groups[0].Runtime == 5*time.Minute {
			v := tr.Results()[0].Verdict
			if v.Attained || !strings.Contains(v.String(), "round 2 was not measured: too few samples of it") {
				t.Errorf("verdict at 5 min = %v, want round 2 named unmeasured", v)
			}
		}
	}
	res := tr.Results()[0]
	if !math.IsNaN(res.Rounds[1]) || !math.IsNaN(res.Rounds[2]) || math.IsNaN(res.Rounds[0]) || math.IsNaN(res.Rounds[3]) {
		t.Errorf("rounds = %v, want rounds 2 and 3 unmeasured, 1 and 4 measured", res.Rounds)
	}
	if res.At != 8 || res.Verdict.First != 3 {
		t.Errorf("At = %d on the window from round %d, want 8 on rounds 4-8", res.At, res.Verdict.First+1)
	}
}

// The run stops only once every drive's trailing window holds, and each
// drive is recorded on the window that ends there: the early drive, flat
// throughout, on rounds 4-8 like the late one.
func TestTrackerWaitsForEveryDrive(t *testing.T) {
	steadyAt5 := flat(10, 1000)
	steadyAt8 := []float64{100, 300, 600, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	reps := reports([][]float64{steadyAt5, steadyAt8}, time.Minute, 6, 0)
	tr, n := feed(DefaultRule, time.Minute, 2, reps)
	if at := reps[n-1].Groups[0].Runtime; at != 8*time.Minute {
		t.Errorf("stopped at runtime %v, want 8 min", at)
	}
	for d, res := range tr.Results() {
		if res.At != 8 || res.Verdict.First != 3 || !res.Verdict.Attained {
			t.Errorf("drive %d: steady at round %d (window from %d), want 8 (from 4)", d, res.At, res.Verdict.First+1)
		}
	}
}

// The drive: steady on rounds 1-5, then swinging 400-1,600 IOPS
// while the step runs on for a slower drive that settles only on rounds
// 7-11. It is not recorded as "attained, rounds 1-5": that window is 6
// rounds old at round 11, more than a window's span, so the drive is not
// steady, and the step does not stop while it swings; it runs to its
// bound (here the 12 rounds fed) and records the early drive's trailing
// window and its last holding window (Held) beside it.
func TestTrackerEarlyDriveSwingsAfterItsWindow(t *testing.T) {
	early := []float64{1000, 1000, 1000, 1000, 1000, 400, 1600, 400, 1600, 400, 1600, 400}
	late := []float64{100, 200, 300, 400, 500, 600, 1000, 1000, 1000, 1000, 1000, 1000}
	reps := reports([][]float64{early, late}, time.Minute, 6, 0)
	tr := NewTracker(DefaultRule, time.Minute, 2)
	for _, p := range reps {
		if tr.Report(p) {
			t.Fatalf("stopped at runtime %v while the early drive swings", p.Groups[0].Runtime)
		}
		if p.Groups[0].Runtime == 5*time.Minute && !tr.Results()[0].Verdict.Attained {
			t.Errorf("the early drive at round 5: %v, want steady on rounds 1-5", tr.Results()[0].Verdict)
		}
	}
	res := tr.Results()
	e := res[0]
	if e.At != 0 || e.Held != 5 || e.Verdict.Attained || e.Verdict.First != 7 || len(e.Rounds) != 12 || e.Stop() != 12 {
		t.Errorf("the early drive: %d rounds, steady at %d (held at %d), window from %d (%v); want 12, not steady (held at 5), rounds 8-12",
			len(e.Rounds), e.At, e.Held, e.Verdict.First+1, e.Verdict)
	}
	// Its window at the stop: 400, 1600, 400, 1600, 400, mean 880, range
	// 1,200 IOPS = 136.4 % of it.
	if !near(e.Verdict.Mean, 880) || math.Abs(100*e.Verdict.RelRange()-136.36) > 0.01 {
		t.Errorf("the early drive's window: %v, want mean 880 IOPS, range 136.4 %%", e.Verdict)
	}
	if l := res[1]; l.At != 12 || !l.Verdict.Attained || l.Verdict.First != 7 {
		t.Errorf("the late drive: steady at %d, window from %d, want 12, rounds 8-12", l.At, l.Verdict.First+1)
	}
	// No window of it that ends after round 5 holds: the step could not
	// stop on any of them.
	for n := 6; n <= 12; n++ {
		if v := DefaultRule.Check(early[:n]); v.Attained {
			t.Errorf("the early drive's window ending at round %d holds: %v", n, v)
		}
	}
}

// A drive steady on rounds 1-5 that swings from round 6 while its
// neighbour settles on rounds 4-8: at round 8 its window is 3 rounds old,
// within a window's span, so the step stops there and the drive is
// recorded steady on rounds 1-5, the window of its own that held, with
// the round the step stopped at beside it.
func TestTrackerRecentWindowCounts(t *testing.T) {
	early := []float64{1000, 1000, 1000, 1000, 1000, 400, 1600, 400, 1600, 400}
	late := []float64{100, 300, 600, 1000, 1000, 1000, 1000, 1000, 1000, 1000}
	reps := reports([][]float64{early, late}, time.Minute, 6, 0)
	tr, n := feed(DefaultRule, time.Minute, 2, reps)
	if at := reps[n-1].Groups[0].Runtime; at != 8*time.Minute {
		t.Fatalf("stopped at runtime %v, want 8 min, when the late drive's rounds 4-8 hold", at)
	}
	res := tr.Results()
	if e := res[0]; e.At != 5 || e.Held != 5 || e.Stop() != 8 || !e.Verdict.Attained || e.Verdict.First != 0 {
		t.Errorf("the early drive: steady at %d (held %d) of %d rounds, window from %d; want 5 (held 5) of 8, rounds 1-5",
			e.At, e.Held, e.Stop(), e.Verdict.First+1)
	}
	if l := res[1]; l.At != 8 || l.Stop() != 8 || l.Verdict.First != 3 {
		t.Errorf("the late drive: steady at %d of %d rounds, window from %d; want 8 of 8, rounds 4-8", l.At, l.Stop(), l.Verdict.First+1)
	}
}

// The recorded verdict (Rule.Hold) and the stop (the Tracker) draw the
// same line: a drive whose last holding window ended at round 5 is
// steady at a stop 4 rounds later (Window − 1: the window overlaps the
// last 5 rounds) and not steady at a stop 5 rounds later, at every stop
// in between and after alike.
func TestHoldAndTrackerAgreeAtTheWindowsAge(t *testing.T) {
	swing := []float64{1000, 1000, 1000, 1000, 1000, 400, 1600, 400, 1600, 400, 1600, 400}
	for stop := 5; stop <= len(swing); stop++ {
		res := DefaultRule.Hold(swing[:stop])
		want := stop-5 <= DefaultRule.Window-1
		if got := res.At > 0; got != want || res.Held != 5 {
			t.Errorf("Hold(%d rounds) = steady at %d (held at %d), want steady %v (held at 5)", stop, res.At, res.Held, want)
		}
		tr := NewTracker(DefaultRule, time.Minute, 1)
		for _, p := range reports([][]float64{swing[:stop]}, time.Minute, 6, 0) {
			tr.Report(p)
		}
		if got := tr.Steady(); got != want || len(tr.Results()[0].Rounds) != stop {
			t.Errorf("Tracker after %d rounds: Steady() = %v, want %v", stop, got, want)
		}
	}
}

// A report that goes back in runtime or I/Os (fio restarting its
// counters), and a group that is no drive of the step, change nothing.
func TestTrackerIgnoresWhatItCannotUse(t *testing.T) {
	reps := reports([][]float64{flat(6, 1000)}, time.Second, 6, 0)
	tr := NewTracker(DefaultRule, time.Second, 1)
	for i, p := range reps {
		tr.Report(p)
		if i == 10 {
			tr.Report(fiojob.Progress{Groups: []fiojob.Result{{GroupID: 0, Runtime: sec(0.5), Write: fiojob.Direction{TotalIOs: 10}}}})
			tr.Report(fiojob.Progress{Groups: []fiojob.Result{{GroupID: 3, Runtime: sec(2), Write: fiojob.Direction{TotalIOs: 1e9}}}})
		}
	}
	if res := tr.Results()[0]; !sameRounds(res.Rounds, flat(6, 1000)) || res.At != 6 || res.Verdict.First != 1 {
		t.Errorf("Results() = %+v, want 6 rounds of 1,000 IOPS, steady on rounds 2-6", res)
	}
}

// TestRecordedRun judges a real run from its IOPS logs:
// fixtures/fio/iops-log-30s_iops.{1,2}.log, 30 s of 4 KiB random write by
// 2 jobs on a loop device, logged in 1 s windows, judged in 1 s rounds.
// The expected figures were computed from the two logs, outside Go, with
// the PTS rule as written in the package doc: the run first held steady
// state on rounds 18-22 (mean 27,798 IOPS, range 13.5 %, excursion 8.4 %),
// then lost it; its last 5 rounds (mean 24,320) range over 247 % of their
// mean.
func TestRecordedRun(t *testing.T) {
	jobs := readJobLogs(t, "iops-log-30s")
	rounds := LogRounds(jobs, time.Second, time.Second)
	if len(rounds) != 30 {
		t.Fatalf("%d rounds, want 30", len(rounds))
	}
	at, v := DefaultRule.Track(rounds)
	if at != 22 || math.Abs(v.Mean-27798) > 30 || math.Abs(v.RelRange()-0.1348) > 0.002 || math.Abs(v.RelExcursion()-0.0841) > 0.002 {
		t.Errorf("Track = round %d, %v; want round 22, mean 27,798, range 13.5 %%, excursion 8.4 %%", at, v)
	}
	last := DefaultRule.Check(rounds)
	if last.Attained || math.Abs(last.Mean-24320) > 30 || last.RelRange() < 2.4 {
		t.Errorf("Check(all rounds) = %v, want not reached on the last window (mean 24,320, range 247 %%)", last)
	}
}

// readJobLogs reads the IOPS logs fio wrote for prefix in fixtures/fio,
// one series per job.
func readJobLogs(t *testing.T, prefix string) [][]fiojob.Sample {
	t.Helper()
	files, err := fiojob.IOPSLogFiles(filepath.Join(fixtureDir, prefix))
	if err != nil {
		t.Fatal(err)
	}
	var jobs [][]fiojob.Sample
	for _, f := range files {
		s, err := fiojob.ReadIOPSLog(f)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, s)
	}
	return jobs
}

// statusReports reads every status report fio printed in the recording
// fixtures/fio/name.json, as the live run's watch reads them.
func statusReports(t *testing.T, name string) []fiojob.Progress {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var reps []fiojob.Progress
	if err := fiojob.WatchStatus(f, func(p fiojob.Progress) { reps = append(reps, p) }); err != nil {
		t.Fatal(err)
	}
	return reps
}

// loose holds any drive whose rounds stay within 150 % of their mean, as
// a loop device's do: it tests where the run stops, not the drive.
var loose = Rule{Window: 5, MaxRange: 1.5, MaxExcursion: 1.5}

// TestRecordedDefaultRound replays a real run at the PTS's 1-minute round
// through the Tracker, report by report, as the live run feeds it:
// fixtures/fio/precondition-1m.json, the suite's own random
// preconditioning job (4 KiB random write, 4 jobs × QD32 per drive, two
// loop devices) run for 7 minutes with a status report every 10 s, as
// ReportEvery asks for 1-minute rounds. The rounds below were computed
// from the recording outside Go: each drive's cumulative I/Os of the
// reports, interpolated linearly at every whole minute of runtime.
func TestRecordedDefaultRound(t *testing.T) {
	reps := statusReports(t, "precondition-1m")
	if len(reps) != 43 {
		t.Fatalf("%d status reports, want 43 (42 every 10 s and the final one)", len(reps))
	}
	want := [][]float64{
		{52776.7, 62172.0, 33465.8, 50238.3, 60084.6, 59343.7, 45316.2},
		{85488.5, 62670.8, 67525.6, 57893.6, 57476.0, 43987.4, 67746.2},
	}
	all := NewTracker(DefaultRule, time.Minute, 2)
	for _, p := range reps {
		all.Report(p)
	}
	for d, res := range all.Results() {
		if len(res.Rounds) != 7 {
			t.Fatalf("drive %d: %d rounds, want 7", d, len(res.Rounds))
		}
		for k, r := range res.Rounds {
			if math.Abs(r-want[d][k]) > 0.1 {
				t.Errorf("drive %d round %d = %.1f IOPS, want %.1f", d, k+1, r, want[d][k])
			}
		}
		// The host's load swung the loop devices by half their mean: the
		// PTS rule does not hold on any window.
		if res.At != 0 || res.Verdict.Attained || res.Verdict.First != 2 {
			t.Errorf("drive %d: %+v, want never steady, judged on rounds 3-7", d, res.Verdict)
		}
	}
	if v := all.Results()[0].Verdict; math.Abs(v.Mean-49689.7) > 0.1 || math.Abs(100*v.RelRange()-53.57) > 0.01 || math.Abs(100*v.RelExcursion()-26.41) > 0.01 {
		t.Errorf("drive 0's last window = %v, want mean 49,689.7, range 53.57 %%, excursion 26.41 %%", v)
	}

	// With a rule both drives hold, the run stops on the first report past
	// 300 s of runtime, at round 5, and the window recorded is the one
	// that stopped it.
	tr, n := feed(loose, time.Minute, 2, reps)
	stopAt := reps[n-1].Elapsed
	if stopAt < 5*time.Minute || stopAt > 5*time.Minute+10*time.Second || n != 31 {
		t.Errorf("stopped after report %d at %v of runtime, want the 31st, the first past 5 min", n, stopAt)
	}
	for d, res := range tr.Results() {
		if res.At != 5 || len(res.Rounds) != 5 || !res.Verdict.Attained || res.Verdict.First != 0 {
			t.Errorf("drive %d: %d rounds, steady at %d on the window from %d; want 5, 5, 1", d, len(res.Rounds), res.At, res.Verdict.First+1)
		}
	}
	// A report after the stop that closes no round (fio's final one,
	// printed as it stops within round 6) changes nothing.
	tr.Report(reps[n])
	for d, res := range tr.Results() {
		if res.At != 5 || res.Verdict.First != 0 || len(res.Rounds) != 5 {
			t.Errorf("drive %d after the next report: steady at %d, want 5 still", d, res.At)
		}
	}

	// fio's own IOPS logs of the same run (one line a minute per job, up to
	// 6 minutes) give the same rounds to within 0.2 %.
	for d := range 2 {
		logs := LogRounds(readJobLogs(t, fmt.Sprintf("precondition-1m-drive%d", d)), time.Minute, time.Minute)
		if len(logs) != 6 {
			t.Fatalf("drive %d: %d rounds from the logs, want 6", d, len(logs))
		}
		for k, r := range logs {
			if math.Abs(r-want[d][k]) > 0.002*want[d][k] {
				t.Errorf("drive %d round %d: %.1f IOPS from the logs, %.1f from the reports", d, k+1, r, want[d][k])
			}
		}
	}
}

// TestRecordedStarvedRun replays a real run on a starved host:
// fixtures/fio/precondition-1m-starved.json and its logs, the same job as
// TestRecordedDefaultRound with every job on one CPU at nice 19 beside
// three busy loops at nice -20. fio asked for a report every 10 s printed
// 16 in 517 s, up to 79 s apart, and the jobs' log lines a minute apart
// came 20 s late on some jobs and 60 s on others. The rounds this evidence
// pins are few: from the reports none (every round's end lies between
// reports more than 30 s apart), from the logs rounds 2, 5 and 6, where
// every job's log covers the whole minute, at about 10 IOPS. A run like
// this is never steady, and says which round it could not measure; read
// as before, sample by sample, the logs gave 7 rounds of 4 to 28 IOPS
// and "steady state reached" under the loose rule.
func TestRecordedStarvedRun(t *testing.T) {
	reps := statusReports(t, "precondition-1m-starved")
	if len(reps) != 16 {
		t.Fatalf("%d status reports, want 16", len(reps))
	}
	tr := NewTracker(loose, time.Minute, 2)
	for i, p := range reps {
		if tr.Report(p) {
			t.Fatalf("stopped at report %d on rounds %v", i+1, tr.Results()[0].Rounds)
		}
	}
	for d, res := range tr.Results() {
		if len(res.Rounds) != 8 {
			t.Errorf("drive %d: %d rounds, want 8 (517 s of runtime)", d, len(res.Rounds))
		}
		for k, r := range res.Rounds {
			if !math.IsNaN(r) {
				t.Errorf("drive %d round %d = %v IOPS, want Unmeasured", d, k+1, r)
			}
		}
		if res.At != 0 || res.Verdict.Attained || res.Verdict.Note != "round 4 was not measured: too few samples of it" {
			t.Errorf("drive %d: %v, want not reached, naming round 4", d, res.Verdict)
		}
	}
	for d := range 2 {
		rounds := LogRounds(readJobLogs(t, fmt.Sprintf("precondition-1m-starved-drive%d", d)), time.Minute, time.Minute)
		var measured []int
		for k, r := range rounds {
			if !math.IsNaN(r) {
				measured = append(measured, k+1)
				if r < 1 || r > 30 {
					t.Errorf("drive %d round %d = %v IOPS from the logs, want about 10", d, k+1, r)
				}
			}
		}
		if len(rounds) != 8 || fmt.Sprint(measured) != "[2 5 6]" {
			t.Errorf("drive %d: rounds %v from the logs, want 8 with rounds 2, 5 and 6 measured", d, rounds)
		}
		if at, v := loose.Track(rounds); at != 0 || v.Attained {
			t.Errorf("drive %d: Track(logs) = %d, %v; want never steady", d, at, v)
		}
	}
}

// Rounds so short that fio reports at its 50 ms floor still pin every
// round, with fio's reports a few milliseconds late.
func TestTrackerShortRounds(t *testing.T) {
	for _, round := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		every := ReportEvery(round)
		var reps []fiojob.Progress
		for at := every + 3*time.Millisecond; at <= 8*round; at += every + 3*time.Millisecond {
			reps = append(reps, fiojob.Progress{Groups: []fiojob.Result{{Runtime: at, Write: fiojob.Direction{TotalIOs: int64(at.Seconds() * 1000)}}}})
		}
		tr, _ := feed(DefaultRule, round, 1, reps)
		res := tr.Results()[0]
		if res.At != 5 || slicesHasNaN(res.Rounds) {
			t.Errorf("round %v: %+v, want every round measured, steady at 5", round, res)
		}
	}
}

func slicesHasNaN(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

// A step of 24 drives: 22 flat from the start, one late to settle (steady
// on rounds 6-10), and one steady on rounds 1-5 that swings on rounds 6-9
// and settles again from round 10. At round 10 the early drive's window
// (rounds 1-5) is 5 rounds old, more than a window's span: the step runs
// on while no recent window of it holds, stops at round 14 when its
// window (rounds 10-14) holds again, and every drive is recorded on rounds
// 10-14, its own latest window.
func TestTrackerTwentyFourDrives(t *testing.T) {
	const rounds = 16
	iops := make([][]float64, 24)
	for d := range iops {
		iops[d] = flat(rounds, 150000+1000*float64(d))
	}
	copy(iops[0][5:9], []float64{60000, 240000, 60000, 240000})
	copy(iops[23], []float64{15000, 45000, 90000, 100000, 100000})
	reps := reports(iops, time.Minute, 6, 100*time.Millisecond)
	tr, n := feed(DefaultRule, time.Minute, 24, reps)
	if at := reps[n-1].Groups[0].Runtime; at < 14*time.Minute || at > 14*time.Minute+10*time.Second {
		t.Fatalf("stopped at runtime %v, want on the report that closes round 14", at)
	}
	for d, res := range tr.Results() {
		if res.At != 14 || !res.Verdict.Attained || res.Verdict.First != 9 {
			t.Errorf("drive %d: steady at %d on the window from round %d (%v), want 14 on rounds 10-14", d, res.At, res.Verdict.First+1, res.Verdict)
		}
	}
	// Fed round by round, the early drive was steady at round 5 and not
	// from round 6 to 13.
	for k := 5; k <= 14; k++ {
		if got, want := DefaultRule.Check(iops[0][:k]).Attained, k == 5 || k == 14; got != want {
			t.Errorf("the early drive's window ending at round %d holds: %v, want %v", k, got, want)
		}
	}
}
