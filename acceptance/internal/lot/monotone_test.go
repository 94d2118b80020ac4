package lot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The verdict is monotone in the drives added, by construction, checked
// over many random lots (fixed seed): figures normal, a slow minority,
// uniform or log-normal, of 3 to 130 drives, the line at a random low
// quantile of them, each lot then grown by up to 10 drives one at a time,
// each passing (3 in 4; every one for a third of the lots) or failing, at
// the line itself, just past it, in the lot's own spread or far out. For each method:
//
//   - a passing drive never turns a lot not rejected into rejected;
//   - under distribution-free, a passing drive keeps an accepted lot
//     accepted; under normal, it leaves it accepted or inconclusive
//     (never rejected; how often inconclusive, and why, is logged);
//   - a failing drive never turns a lot not accepted into accepted (under
//     normal, a failing drive rules acceptance out);
//   - with missing drives (WithMissing), a lot is rejected only if it is
//     rejected were the missing drives to pass (as real passing figures
//     added), and accepted only if it is accepted were they to fail.
//
// Judge gives the verdict Decide does on every tenth sample.
func TestMonotoneInAddedDrives(t *testing.T) {
	testenv.SkipUnderRace(t)
	rng := rand.New(rand.NewPCG(37, 2026))
	type transition struct{ from, to string }
	seen := map[string]map[transition]int{Normal: {}, DistributionFree: {}}
	verdicts := map[string]map[string]int{Normal: {}, DistributionFree: {}}
	checks := 0
	draw := func(kind int) float64 {
		switch kind {
		case 0:
			return 100 + 10*rng.NormFloat64()
		case 1:
			if rng.Float64() < 0.05 {
				return 80 + 2*rng.NormFloat64()
			}
			return 110 + 2*rng.NormFloat64()
		case 2:
			return 80 + 40*rng.Float64()
		}
		return 50 * math.Exp(0.3*rng.NormFloat64())
	}
	for lot := range 1500 {
		kind := rng.IntN(4)
		n := 3 + rng.IntN(128)
		base := make([]float64, n)
		for i := range base {
			base[i] = draw(kind)
		}
		sorted := slices.Sorted(slices.Values(base))
		spread := sorted[n-1] - sorted[0]
		line := sorted[rng.IntN(max(1, n/4))] - 0.01*rng.Float64()
		if rng.IntN(2) == 0 {
			// Below every drive: lots the methods can accept.
			line = sorted[0] - rng.Float64()*spread
		}
		added := func(pass bool) float64 {
			var v float64
			switch rng.IntN(6) {
			case 0:
				v = line // exactly at the line: passes
				if !pass {
					v = math.Nextafter(line, math.Inf(-1))
				}
			case 1:
				v = line + 1e-6*spread
				if !pass {
					v = line - 1e-6*spread
				}
			case 2, 3, 4:
				// In the lot's own spread, on the drive's side of the line.
				v = draw(kind)
				if (v >= line) != pass {
					v = 2*line - v
				}
			default:
				v = line + 5*spread
				if !pass {
					v = line - 5*spread
				}
			}
			return v
		}
		for _, m := range []string{Normal, DistributionFree} {
			r := Rule{Coverage: 0.95, Confidence: 0.95, Method: m}
			figs := slices.Clone(base)
			prev := Decide(figs, line, false, r)
			for step := range 10 {
				pass := lot%3 == 0 || rng.IntN(4) > 0 // every third lot grows by passing drives alone
				figs = append(figs, added(pass))
				next := Decide(figs, line, false, r)
				verdicts[m][next.Verdict]++
				checks++
				// Written only for a failure: formatting every lot costs more
				// than judging it.
				where := func() string {
					return fmt.Sprintf("lot %d (%s, %d drives + %d), adding a %s drive at %v to %v", lot, m, n, step+1,
						map[bool]string{true: "passing", false: "failing"}[pass], figs[len(figs)-1], figs[:len(figs)-1])
				}
				if pass {
					if prev.Verdict != Rejected && next.Verdict == Rejected {
						t.Fatalf("%s: rejected", where())
					}
					if m == DistributionFree && prev.Verdict == Accepted && next.Verdict != Accepted {
						t.Fatalf("%s: %s, no longer accepted", where(), next.Verdict)
					}
					if prev.Verdict == Accepted && next.Verdict != Accepted {
						seen[m][transition{prev.Verdict, next.Verdict + " (" + next.Undecided + ")"}]++
					}
				} else {
					if prev.Verdict != Accepted && next.Verdict == Accepted {
						t.Fatalf("%s: accepted", where())
					}
					if m == Normal && next.Verdict == Accepted {
						t.Fatalf("%s: accepted by the normal method with a drive failing", where())
					}
				}
				if checks%10 == 0 {
					if v := Judge(figs, line, false, r, nil).Verdict; v != next.Verdict {
						t.Fatalf("%s: Judge %s, Decide %s", where(), v, next.Verdict)
					}
				}
				// Missing drives: the verdict WithMissing gives holds were
				// they to pass, or to fail.
				missing := 1 + rng.IntN(4)
				w := WithMissing(next, missing, r, "test")
				withPass, withFail := slices.Clone(figs), slices.Clone(figs)
				for range missing {
					withPass = append(withPass, line+rng.Float64()*spread)
					withFail = append(withFail, line-(0.01+rng.Float64())*spread)
				}
				if w.Verdict == Rejected && Decide(withPass, line, false, r).Verdict != Rejected {
					t.Fatalf("%s, %d missing: rejected, not were they to pass", where(), missing)
				}
				if w.Verdict == Accepted && Decide(withFail, line, false, r).Verdict != Accepted {
					t.Fatalf("%s, %d missing: accepted, not were they to fail", where(), missing)
				}
				if w.Verdict != next.Verdict {
					seen[m][transition{next.Verdict, "with missing: " + w.Verdict}]++
				}
				prev = next
			}
		}
	}
	for _, m := range []string{Normal, DistributionFree} {
		t.Logf("%s: %d additions checked, verdicts %v; changes an added passing drive or missing drives made: %v", m, checks/2, verdicts[m], seen[m])
		assert.Greater(t, verdicts[m][Accepted], 300, "the sweep reaches accepted lots")
		assert.Greater(t, verdicts[m][Rejected], 1000, "and rejected ones")
	}
	assert.Greater(t, checks, 20_000)
}
