// Package steadyrec words and records a drive's steady-state verdict of a
// preconditioning step.
package steadyrec

import (
	"fmt"
	"math"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/steady"
)

// Window is res's verdict with the rounds of its window: "rounds 1-5
// of 6: steady state reached: ...", and for a drive not steady whose
// latest holding window is too old, which one it was.
func Window(res steady.Result) string {
	v := res.Verdict
	if v.Note != "" {
		return v.String()
	}
	text := fmt.Sprintf("rounds %d-%d of %d: %s", v.First+1, v.First+v.Rule.Window, len(res.Rounds), v)
	if res.At == 0 && res.Held > 0 {
		text += fmt.Sprintf(" (its last window that held, rounds %d-%d, is more than %d rounds before the stop)",
			res.Held-v.Rule.Window+1, res.Held, v.Rule.Window-1)
	}
	return text
}

// Record is res, the steady-state verdict of drive in step st, as the
// report keeps it, naming the drive by its path and serial (a resume
// after a reboot may find it at another path, even a neighbour's);
// source says what its rounds were read from.
func Record(st plan.Step, drive plan.Drive, res steady.Result, source string) report.Steady {
	v := res.Verdict
	rec := report.Steady{Step: st.N, Name: st.Name, Kind: st.Kind.String(), Twin: st.Twin.Name, Drive: drive.Path, Serial: drive.Serial,
		Attained: v.Attained, BoundSeconds: st.Est.Seconds(), RoundSeconds: st.Round.Seconds(), Rounds: len(res.Rounds),
		Window: v.Rule.Window, Mean: v.Mean, RangePct: 100 * v.RelRange(), RangeLimitPct: 100 * v.Rule.MaxRange,
		ExcursionPct: 100 * v.RelExcursion(), ExcursionLimitPct: 100 * v.Rule.MaxExcursion, Source: source, Note: v.Note}
	if v.Note == "" {
		rec.FirstRound, rec.LastRound = v.First+1, v.First+v.Rule.Window
	}
	rec.StopRound, rec.HeldRound = res.Stop(), res.Held
	rec.RoundIOPS = make([]*float64, len(res.Rounds))
	for k, x := range res.Rounds {
		if !math.IsNaN(x) {
			rec.RoundIOPS[k] = &x
		}
	}
	return rec
}
