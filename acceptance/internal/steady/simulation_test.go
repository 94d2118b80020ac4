package steady

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The steady-state rule is tested by its error rate (SNIA PTS, 5-round
// window, range ≤ 20 %, excursion ≤ 10 %): drives whose rounds vary
// round to round by a normal spread of 5-6 % of their mean, the spread
// of a drive that is steady but noisy, fed to the Tracker as fio's status
// reports, in steps bounded at 30 one-minute rounds (the default
// random_runtime of 30 minutes).

// simBound is the rounds of a step at the default random_runtime.
const simBound = 30

// noisy is a drive's rounds: mean IOPS with a normal spread of sigma
// (a fraction of the mean), from rng.
func noisy(rng *rand.Rand, rounds int, mean, sigma float64) []float64 {
	out := make([]float64, rounds)
	for k := range out {
		out[k] = mean * (1 + sigma*rng.NormFloat64())
	}
	return out
}

// runStep feeds every drive's rounds to a Tracker as fio's status reports
// (two a round) until it stops the step or the rounds end, and returns
// each drive's result.
func runStep(iops [][]float64) []Result {
	reps := reports(iops, time.Minute, 2, 0)
	tr, _ := feed(DefaultRule, time.Minute, len(iops), reps)
	return tr.Results()
}

// sameRoundRule is the rule the Tracker had before: the step stops when
// every drive's trailing window holds at the same round, and a drive is
// steady when its trailing window at the stop holds. It is kept here to
// show what the simulations below measure of it.
func sameRoundRule(iops [][]float64) (notSteady bool) {
	stop := len(iops[0])
	for n := DefaultRule.Window; n <= len(iops[0]); n++ {
		all := true
		for _, d := range iops {
			if !DefaultRule.Check(d[:n]).Attained {
				all = false
				break
			}
		}
		if all {
			stop = n
			break
		}
	}
	for _, d := range iops {
		if !DefaultRule.Check(d[:stop]).Attained {
			return true
		}
	}
	return false
}

// A step of 24 drives whose rounds vary 5 % and 6 % round to round ends
// with a drive not steady at most 0.2 % of the time, plus three standard
// errors of the simulation's own count (measured with this seed: 0 of
// 1,500 at 5 %, 0.13 % at 6 %, as in an independent simulation of 4,000
// steps: 0 and 0.15 %). The rule the Tracker had before, every drive's
// window holding at the same round, ends such a step with a drive not
// steady 51 % of the time at 5 % (47 % in the 4,000 steps) and 98 % at 6 % (8 drives: 0.1 %; 16:
// 11 %): the check on it below shows the test fails that rule.
func TestSimulatedStepOfTwentyFour(t *testing.T) {
	testenv.SkipUnderRace(t)
	const drives, steps, limit = 24, 1500, 0.002
	for _, sigma := range []float64{0.05, 0.06} {
		rng := rand.New(rand.NewPCG(44, uint64(100*sigma)))
		bad, before := 0, 0
		for range steps {
			iops := make([][]float64, drives)
			for d := range iops {
				iops[d] = noisy(rng, simBound, 150000+1000*float64(d), sigma)
			}
			if sameRoundRule(iops) {
				before++
			}
			for _, res := range runStep(iops) {
				if res.At == 0 {
					bad++
					break
				}
			}
		}
		p, old := float64(bad)/steps, float64(before)/steps
		allowed := limit + 3*math.Sqrt(limit*(1-limit)/steps)
		t.Logf("spread %.0f %%, %d drives, %d steps: P(a drive not steady) %.4f (the same-round rule: %.4f)", 100*sigma, drives, steps, p, old)
		if p > allowed {
			t.Errorf("spread %.0f %%: P(a drive not steady) = %.4f, want <= %.4f (%.1f %% and Monte-Carlo error)", 100*sigma, p, allowed, 100*limit)
		}
		if old <= allowed {
			t.Errorf("spread %.0f %%: the same-round rule gives %.4f, which this test would pass: it tells the rules apart no more", 100*sigma, old)
		}
	}
}

// A drive's verdict does not depend on its neighbours: the same rounds
// give the same verdict, on the same window, whether the drive ran alone
// or with 23 neighbours whose rounds vary 5-6 %. The drives judged are
// steady ones (5 % spread), drives that settle late (a ramp of 3-12
// rounds before a 5 % spread) and drives that never settle (30 %).
func TestDriveVerdictAloneOrWithNeighbours(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 23))
	differ, steadyCount := 0, 0
	const drives = 300
	for i := range drives {
		var own []float64
		switch i % 3 {
		case 0:
			own = noisy(rng, simBound, 150000, 0.05)
		case 1:
			own = noisy(rng, simBound, 150000, 0.05)
			ramp := 3 + rng.IntN(10)
			for k := range ramp {
				own[k] *= 2 - float64(k)/float64(ramp)
			}
		default:
			own = noisy(rng, simBound, 150000, 0.30)
		}
		alone := runStep([][]float64{own})[0]
		iops := [][]float64{own}
		for range 23 {
			iops = append(iops, noisy(rng, simBound, 150000, 0.05+0.01*rng.Float64()))
		}
		crowd := runStep(iops)[0]
		if alone.At > 0 {
			steadyCount++
		}
		if (alone.At > 0) != (crowd.At > 0) {
			differ++
			t.Errorf("drive %d: alone steady %v (window ending at round %d of %d), with 23 neighbours steady %v (window ending at %d of %d); rounds %.0f",
				i, alone.At > 0, alone.At, alone.Stop(), crowd.At > 0, crowd.At, crowd.Stop(), own)
		}
	}
	if steadyCount < drives/2 || steadyCount == drives {
		t.Errorf("%d of %d drives steady alone: the drives judged should be steady and not", steadyCount, drives)
	}
}
