package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/report/bottomline"
)

// ScalingGate is the name of the gate over every scaling step; HealthGate
// of the gate over every drive's health checks, ReceiptGate over their
// receipt inspections, FleetGate over a fleet replay's TestFleet cells.
const (
	ScalingGate   = "scaling"
	HealthGate    = "health"
	ReceiptGate   = "receipt"
	FleetGate     = "fleet"
	PowerLossGate = "power_loss"
)

// Gate is the verdict on one part of a run (bottomline.Gate).
type Gate = bottomline.Gate

// Gates returns the verdict on each capacity whose single-drive cells ran,
// in the run's capacity order, then on the scaling steps, the fleet, the
// baseline and the lot cells, the receipt and the health checks, each when
// the run has any. A
// gate is QUALIFIED only when every one of its cells passed; any failure
// makes it NOT QUALIFIED; otherwise any other verdict makes it INCONCLUSIVE.
func (r *Run) Gates() []Gate {
	var gates []Gate
	for _, c := range r.testedCapacities() {
		var rs []Result
		for _, res := range r.Results {
			if res.Capacity == c && res.Kind != KindSweep && res.Kind != KindScaling && res.Kind != KindFleet && res.Kind != KindBaseline && res.Kind != KindLot {
				rs = append(rs, res)
			}
		}
		if len(rs) > 0 {
			gates = append(gates, gateOf(c, rs, r.Precondition))
		}
	}
	for _, k := range []struct{ kind, gate string }{{KindScaling, ScalingGate}, {KindFleet, FleetGate}, {KindBaseline, BaselineGate}, {KindLot, LotGate}} {
		var rs []Result
		for _, res := range r.Results {
			if res.Kind == k.kind {
				rs = append(rs, res)
			}
		}
		if len(rs) > 0 {
			gates = append(gates, gateOf(k.gate, rs, r.Precondition))
		}
	}
	if g, ok := checksGate(ReceiptGate, r.Receipt); ok {
		gates = append(gates, g)
	}
	if g, ok := checksGate(HealthGate, r.Health); ok {
		gates = append(gates, g)
	}
	if g, _ := checksGate(PowerLossGate, r.PowerLoss); len(r.PowerLoss) > 0 {
		for _, h := range r.PowerLoss {
			if h.Verdict == Inconclusive && g.Verdict == Qualified {
				g.Verdict, g.Reason = CapacityInconclusive, h.Drive+" "+h.Check+": "+h.Message
			}
		}
		gates = append(gates, g)
	}
	return gates
}

// checksGate is the verdict on the drives' health or receipt checks: NOT
// QUALIFIED when one failed. Checks that were skipped (no NVMe health log,
// no limit) count for nothing; a run whose checks were all skipped has no
// such gate.
func checksGate(name string, checks []HealthCheck) (Gate, bool) {
	g := Gate{Name: name, Verdict: Qualified}
	var first string
	for _, h := range checks {
		switch h.Verdict {
		case Pass:
			g.Cells++
			g.Passed++
		case Fail:
			g.Cells++
			g.Failed++
			if first == "" {
				first = h.Drive + ": " + h.Message
			}
		}
	}
	if g.Failed > 0 {
		g.Verdict = NotQualified
		g.Reason = fmt.Sprintf("%d of %d checks failed; first: %s", g.Failed, g.Cells, first)
	}
	return g, g.Cells > 0
}

// Overall is the verdict on the whole run, the worst of its gates: what the
// exit status and the closing line give. A run with no gate at all judged
// nothing and is INCONCLUSIVE.
func (r *Run) Overall() Gate {
	gates := r.Gates()
	all := Gate{Name: "run", Verdict: Qualified}
	if len(gates) == 0 {
		all.Verdict, all.Reason = CapacityInconclusive, "nothing was judged: no cell was measured or replayed"
		return all
	}
	var worst *Gate
	for i, g := range gates {
		all.Cells += g.Cells
		all.Passed += g.Passed
		all.Failed += g.Failed
		all.Inconclusive += g.Inconclusive
		if worst == nil || rank(g.Verdict) > rank(worst.Verdict) {
			worst = &gates[i]
		}
	}
	all.Verdict = worst.Verdict
	if worst.Verdict != Qualified {
		all.Reason = worst.Name + ": " + worst.Reason
	}
	return all
}

func rank(verdict string) int {
	switch verdict {
	case Qualified:
		return 0
	case CapacityInconclusive:
		return 1
	}
	return 2
}

func gateOf(name string, rs []Result, precondition string) Gate {
	g := Gate{Name: name, Cells: len(rs)}
	var firstFail, firstUnsure *Result
	for i, res := range rs {
		switch {
		case res.Verdict == Fail:
			g.Failed++
			if firstFail == nil {
				firstFail = &rs[i]
			}
		case res.Verdict == Pass && res.Error == "":
			g.Passed++
		default:
			g.Inconclusive++
			if firstUnsure == nil {
				firstUnsure = &rs[i]
			}
		}
	}
	switch {
	case g.Failed > 0:
		g.Verdict = NotQualified
		g.Reason = fmt.Sprintf("%d of %d cells failed; first: %s", g.Failed, g.Cells, firstLine(firstFail.Error))
		g.Cause, g.Subject = firstFail.Cause, subject(*firstFail)
	case g.Inconclusive > 0:
		g.Verdict = CapacityInconclusive
		g.Reason = fmt.Sprintf("%d of %d cells inconclusive; first: %s", g.Inconclusive, g.Cells, inconclusiveReason(*firstUnsure, precondition))
		g.Cause, g.Subject = firstUnsure.Cause, subject(*firstUnsure)
	default:
		g.Verdict = Qualified
	}
	return g
}

// subject names a cell in a sentence: "4KB Random Read", "4KB Random
// Read at 24 drives".
func subject(res Result) string {
	if res.Kind == KindScaling {
		return fmt.Sprintf("%s at %s", res.Workload, CountOf(res.Drives, 0))
	}
	return res.Workload
}

// BottomLine is the run's decision, its reason in plain words and the
// next step (bottomline.Of): summary.md's first line, index.html's top.
func (r *Run) BottomLine() bottomline.Line {
	return bottomline.Of(bottomline.Input{Gates: r.Gates(), Precondition: r.Precondition,
		Reconstructed: r.Reconstructed, From: cmp.Or(r.ReconstructedFrom, r.Source), Evidence: r.Recording.Evidence()})
}

// inconclusiveReason says why res proves nothing, and what to do about it.
func inconclusiveReason(res Result, precondition string) string {
	if res.Cause == CausePrecondition {
		return "measured with -precondition=" + precondition + "; rerun with -precondition=full to qualify"
	}
	if res.Error == "" {
		return res.Workload + ": " + res.Verdict
	}
	return firstLine(res.Error)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	// A recording may supply it (a firmware step's message): it reaches
	// the test log and the closing line as its text.
	return Escape(s)
}

// Measured says what the run's figures are: "" for measured drives as
// recorded; "replay of figures reconstructed from <source>; no drive was
// measured"; and, for a replay of a recording whose files are not as it
// recorded them, that it was judged from edited evidence and which files
// (hashes.Check.Evidence).
func (r *Run) Measured() string {
	e := r.Recording.Evidence()
	if !r.Reconstructed {
		return e
	}
	if e != "" {
		return r.reconstructed() + "; " + e
	}
	return r.reconstructed()
}

func (r *Run) reconstructed() string {
	from := r.ReconstructedFrom
	if from == "" {
		from = r.Source
	}
	if from == "" {
		from = "a publication"
	}
	return "replay of figures reconstructed from " + strings.TrimSuffix(from, ".") + "; no drive was measured"
}

// ClosingLine is the run's verdict in one line, as the terminal ends with:
// "QUALIFIED: 1.92TB, 3.84TB and scaling: 48 of 48 cells passed", or the
// worst gate's verdict and reason.
func (r *Run) ClosingLine() string {
	all := r.Overall()
	var line string
	if all.Verdict == Qualified {
		var names []string
		for _, g := range r.Gates() {
			names = append(names, g.Name)
		}
		line = fmt.Sprintf("%s: %s: %d of %d cells passed", Qualified, andList(names), all.Passed, all.Cells)
	} else {
		line = all.Verdict + ": " + all.Reason
	}
	if m := r.Measured(); m != "" {
		line += " (" + m + ")"
	}
	return line
}

func andList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
