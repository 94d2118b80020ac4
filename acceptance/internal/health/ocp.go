package health

import (
	"fmt"
	"math/big"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
)

// JudgeOCP judges a drive's OCP extended SMART log (C0h) read before and
// after the run against the [health] ocp_* rules: no more new bad user or
// system NAND blocks, uncorrectable reads, end-to-end detected errors and
// incomplete shutdowns than allowed (0 by default), and the capacitor's
// health not below its minimum. Each check is named "ocp_<field>" and its
// message names nvme-cli's field and both values. A field the drive does
// not report (all ones, see nvme.OCPSmart.Reported) in either reading is
// skipped, saying so: never judged as that many blocks or errors.
func JudgeOCP(before, after nvme.OCPSmart, rules specs.OCPHealth) []Check {
	field := func(name, printed string, v func(nvme.OCPSmart) uint64, maxIncrease uint64) Check {
		if c, ok := unreported(name, printed, before, after, v); ok {
			return c
		}
		return counter(name, printed, nvme.Uint128{Lo: v(before)}, nvme.Uint128{Lo: v(after)}, maxIncrease)
	}
	checks := []Check{
		field("ocp_bad_user_blocks", "Bad user nand blocks - Raw", func(o nvme.OCPSmart) uint64 { return o.BadUserNANDBlocks }, rules.BadUserBlocksMaxIncrease),
		field("ocp_bad_system_blocks", "Bad system nand blocks - Raw", func(o nvme.OCPSmart) uint64 { return o.BadSystemNANDBlocks }, rules.BadSystemBlocksMaxIncrease),
		field("ocp_uncorrectable_reads", "Uncorrectable read error count", func(o nvme.OCPSmart) uint64 { return o.UncorrectableReads }, rules.UncorrectableReadsMaxIncrease),
		field("ocp_end_to_end_errors", "End to end detected errors", func(o nvme.OCPSmart) uint64 { return o.EndToEndDetected }, rules.EndToEndErrorsMaxIncrease),
		field("ocp_incomplete_shutdowns", "Incomplete shutdowns", func(o nvme.OCPSmart) uint64 { return o.IncompleteShutdowns }, rules.IncompleteShutdownsMaxIncrease),
	}
	c := Check{Name: "ocp_capacitor_health"}
	switch h := after.CapacitorHealth; {
	case h == 0xffff && before.CapacitorHealth != 0xffff:
		// It had one on receipt: a capacitor the drive no longer
		// reports is not one that holds up a power loss.
		c.Verdict = Fail
		c.Message = fmt.Sprintf("Capacitor health: %d %% before, 65535 after: the drive no longer reports the PLP capacitor it had, limit %d %%",
			before.CapacitorHealth, rules.CapacitorHealthMin)
	case h == 0xffff:
		c.Verdict, c.Message = Skip, "Capacitor health: 65535: the drive reports no PLP capacitor"
	default:
		c.Verdict = verdict(h >= uint64(rules.CapacitorHealthMin))
		c.Message = fmt.Sprintf("Capacitor health: %d %% before, %d %% after, limit %d %%", before.CapacitorHealth, h, rules.CapacitorHealthMin)
	}
	return append(checks, c)
}

// unreported is the skipped check of a field the drive did not report
// (all ones) in either reading; ok is false when it reported both.
func unreported(name, printed string, before, after nvme.OCPSmart, v func(nvme.OCPSmart) uint64) (Check, bool) {
	b, a := before.Reported(printed), after.Reported(printed)
	var when string
	switch {
	case b && a:
		return Check{}, false
	case !b && !a:
		when = fmt.Sprintf("%#x before and after", v(after))
	case !b:
		when = fmt.Sprintf("%#x before, %d after", v(before), v(after))
	default:
		when = fmt.Sprintf("%d before, %#x after", v(before), v(after))
	}
	return Check{Name: name, Verdict: Skip,
		Message: fmt.Sprintf("%s: not reported by the drive (all ones: %s); not judged", printed, when)}, true
}

// ThrottledOCP says whether the C0 log's thermal throttling event count
// rose between two readings around a cell, as Throttled says of the SMART
// log; the heat rule (Inconclusive) treats it the same way. The count is
// 8 bits and wraps at 255.
func ThrottledOCP(before, after nvme.OCPSmart, limits specs.Health) (string, bool) {
	if limits.ThermalThrottle == specs.ThrottleIgnore || after.ThermalThrottlingEvents == before.ThermalThrottlingEvents {
		return "", false
	}
	return fmt.Sprintf("thermally throttled during the cell: Number of Thermal throttling events %d → %d (OCP C0); check airflow and rerun",
		before.ThermalThrottlingEvents, after.ThermalThrottlingEvents), true
}

// WAF is the write amplification of a step or cell: the bytes written to
// the media (C0 "Physical media units written", in bytes) over the bytes
// the host wrote (SMART data_units_written × 512,000), between two
// readings of each.
type WAF struct {
	MediaBytes, HostBytes *big.Int
	// Value is MediaBytes ÷ HostBytes; valid only when Note is "".
	Value float64
	// Note, when set, says why there is no figure: a counter did not move,
	// or the ratio is below 1 (which no NAND drive does: the counters were
	// read at different times, or the drive reports them otherwise).
	Note string
}

// WriteAmplification computes the WAF between two readings.
func WriteAmplification(c0Before, c0After nvme.OCPSmart, before, after nvme.SmartLog) WAF {
	media := new(big.Int).Sub(c0After.PhysicalMediaWritten.Big(), c0Before.PhysicalMediaWritten.Big())
	host := new(big.Int).Sub(nvme.DataUnitBytes(after.DataUnitsWritten), nvme.DataUnitBytes(before.DataUnitsWritten))
	w := WAF{MediaBytes: media, HostBytes: host}
	switch {
	case !c0Before.Reported("Physical media units written") || !c0After.Reported("Physical media units written"):
		w.Note = "no WAF: C0 Physical media units written not reported by the drive (all ones)"
	case host.Sign() <= 0:
		w.Note = fmt.Sprintf("no WAF: SMART data_units_written did not move (%s → %s)", before.DataUnitsWritten, after.DataUnitsWritten)
	case media.Sign() <= 0:
		w.Note = fmt.Sprintf("no WAF: C0 Physical media units written did not move (%s → %s) while the host wrote %s bytes",
			c0Before.PhysicalMediaWritten, c0After.PhysicalMediaWritten, host)
	default:
		w.Value, _ = new(big.Rat).SetFrac(media, host).Float64()
		if w.Value < 1 {
			w.Note = fmt.Sprintf("WAF below 1 (%.2f: %s media bytes for %s host bytes): not a figure a NAND drive gives; the counters are not comparable", w.Value, media, host)
		}
	}
	return w
}

// String is the figure ("2.00") or its note.
func (w WAF) String() string {
	if w.Note != "" {
		return w.Note
	}
	return fmt.Sprintf("%.2f", w.Value)
}

// Life estimates how long the drive lasts writing at the workload's WAF:
// its rated endurance in host bytes (specs.Endurance.RatedBytes, rated by
// vendors at their own workload's WAF, ratedWAF, usually that of 4 KiB
// random writes) scaled by ratedWAF ÷ waf, in drive writes: the number of
// times the host can fill capacity bytes. ok is false without a rating or
// a WAF figure.
func Life(e specs.Endurance, capacity uint64, w WAF, ratedWAF float64) (driveWrites float64, ok bool) {
	rated, ok := e.RatedBytes(capacity)
	if !ok || w.Note != "" || w.Value <= 0 || capacity == 0 {
		return 0, false
	}
	if ratedWAF <= 0 {
		ratedWAF = 1
	}
	return rated * ratedWAF / w.Value / float64(capacity), true
}
