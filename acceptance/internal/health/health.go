// Package health judges a drive's health against a spec's [health] rules
// and [receipt] limits.
//
// It judges nvme-cli's SMART / health log (nvme.SmartLog) read before and
// after a run, and the controller's identify data (nvme.Controller),
// against the [health] rules (specs.Health), and the log as the drive
// arrived against its [receipt] limits (Receipt). It owns the rules and
// their messages only: it runs nothing, reads nothing and prints nothing.
// The suite takes the snapshots, refuses a drive with Refuse before
// writing to it, stops writing to one that raises a NewWarning, marks a
// cell inconclusive with Inconclusive or HotDuring, and reports Judge's
// checks.
//
// Temperatures are in kelvin, as NVMe reports them; messages show them in
// degrees Celsius (kelvin − 273, as nvme-cli prints them).
package health

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
)

// Verdicts of a Check.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP" // nothing to judge: the spec sets no rule, or the drive reports no figure
)

// Check is one health rule judged on one drive.
type Check struct {
	// Name is the rule: "critical_warning", "percent_used", "avail_spare",
	// "media_errors", "err_log_entries", "firmware" or "temperature".
	Name    string
	Verdict string // Pass, Fail or Skip
	// Message is one line naming the field, its value before and after
	// the run and the limit, e.g. "media_errors: 0 before, 3 after: rose
	// by 3, limit +0".
	Message string
}

// ErrCriticalWarning is wrapped by Refuse's error.
var ErrCriticalWarning = errors.New("SMART critical warning set before the run")

// Refuse returns an error wrapping ErrCriticalWarning when the SMART log
// read before the run has a critical warning bit set, naming every bit set
// and the fix; nil otherwise. The caller names the drive. A drive with the
// temperature bit alone is too hot to measure, which is first the
// chassis's airflow (see Hot): the fix named is cooling, not replacing it.
func Refuse(before nvme.SmartLog) error {
	if before.CriticalWarning == 0 {
		return nil
	}
	if before.CriticalWarning == nvme.WarnTemperature {
		msg, _ := Hot(before)
		return fmt.Errorf("%w: %s; check the chassis's airflow and let the drive cool below its threshold, then rerun; the run wrote nothing",
			ErrCriticalWarning, msg)
	}
	return fmt.Errorf("%w: critical_warning 0x%02x: %s; replace the drive or clear the condition; the run wrote nothing",
		ErrCriticalWarning, before.CriticalWarning, strings.Join(nvme.DecodeCriticalWarning(before.CriticalWarning), ", "))
}

// RefuseResumed is Refuse for a resumed run's setup, which only a drive
// with the temperature bit alone stops (a drive with another warning is
// disqualified, and the other drives go on): the run did write to it, so
// the fix is to let it cool and resume, not "the run wrote nothing".
func RefuseResumed(before nvme.SmartLog) error {
	if before.CriticalWarning != nvme.WarnTemperature {
		return nil
	}
	msg, _ := Hot(before)
	return fmt.Errorf("%w: %s; check the chassis's airflow and let the drive cool below its threshold, then run -resume again; nothing was written since the run was interrupted",
		ErrCriticalWarning, msg)
}

// NewWarning says which critical warning bits now has that before (the
// log read at setup) did not, other than the temperature bit (see Hot):
// "critical_warning 0x08: media is read-only"; ok is false when there are
// none. A drive that raises one mid-run (available spare, reliability,
// read-only, volatile memory backup, persistent memory region) is
// written no more.
func NewWarning(before, now nvme.SmartLog) (msg string, ok bool) {
	bits := now.CriticalWarning &^ before.CriticalWarning &^ nvme.WarnTemperature
	if bits == 0 {
		return "", false
	}
	return fmt.Sprintf("critical_warning 0x%02x: %s", now.CriticalWarning, strings.Join(nvme.DecodeCriticalWarning(bits), ", ")), true
}

// Hot says whether a SMART log has the temperature critical warning bit
// (0x02) set: "critical_warning 0x02: temperature is outside a threshold
// (composite 86 °C)". A drive too hot is first a matter of the chassis's
// airflow: the cells measured while the bit is set are inconclusive, and
// the drive goes on once it clears.
func Hot(l nvme.SmartLog) (msg string, ok bool) {
	if l.CriticalWarning&nvme.WarnTemperature == 0 {
		return "", false
	}
	msg = fmt.Sprintf("critical_warning 0x%02x: %s", l.CriticalWarning, strings.Join(nvme.DecodeCriticalWarning(nvme.WarnTemperature), ", "))
	if l.Temperature != 0 {
		msg += fmt.Sprintf(" (composite %d °C)", nvme.Celsius(l.Temperature))
	}
	return msg, true
}

// HotDuring says whether a cell measured between two SMART logs ran with
// the temperature bit set (Hot) at its start or its end, naming which:
// "temperature critical warning after the cell: critical_warning 0x02:
// ...; check airflow and rerun"; ok is false when neither has it.
func HotDuring(before, after nvme.SmartLog) (msg string, ok bool) {
	b, hotBefore := Hot(before)
	a, hotAfter := Hot(after)
	var when string
	switch {
	case hotBefore && hotAfter:
		when, msg = "before and after the cell", a
	case hotBefore:
		when, msg = "before the cell", b
	case hotAfter:
		when, msg = "after the cell", a
	default:
		return "", false
	}
	return "temperature critical warning " + when + ": " + msg + "; check airflow and rerun", true
}

// Judge checks after (the SMART log read after the run) against before
// (read before it), the controller's identify data and limits, one Check
// per rule in a fixed order: critical_warning, percent_used, avail_spare,
// media_errors, err_log_entries, firmware, temperature. maxTempK is the
// highest composite temperature in kelvin seen during the run; 0 when it
// was not sampled, in which case before's and after's are the only ones
// judged. limits is the spec's Health, or specs.DefaultHealth() for a run
// without one (its zero value allows no endurance used at all).
func Judge(before, after nvme.SmartLog, ctrl nvme.Controller, maxTempK int, limits specs.Health) []Check {
	return []Check{
		criticalWarning(before, after),
		percentUsed(before, after, limits),
		availSpare(before, after, limits),
		counter("media_errors", "media_errors", before.MediaErrors, after.MediaErrors, limits.MediaErrorsMaxIncrease),
		counter("err_log_entries", "num_err_log_entries", before.NumErrLogEntries, after.NumErrLogEntries, limits.ErrLogEntriesMaxIncrease),
		firmware(ctrl, limits),
		temperature(before, after, ctrl, maxTempK, limits),
	}
}

func verdict(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

func criticalWarning(before, after nvme.SmartLog) Check {
	c := Check{Name: "critical_warning", Verdict: verdict(after.CriticalWarning == 0)}
	why := ""
	if after.CriticalWarning != 0 {
		why = ": " + strings.Join(nvme.DecodeCriticalWarning(after.CriticalWarning), ", ")
	}
	c.Message = fmt.Sprintf("critical_warning: 0x%02x before, 0x%02x after%s; limit: no bit set",
		before.CriticalWarning, after.CriticalWarning, why)
	return c
}

func percentUsed(before, after nvme.SmartLog, limits specs.Health) Check {
	ok := after.PercentUsed <= limits.PercentUsedMax
	why := ""
	if !ok {
		why = ": above the limit"
	}
	return Check{Name: "percent_used", Verdict: verdict(ok), Message: fmt.Sprintf(
		"percent_used: %d %% before, %d %% after%s, limit ≤ %d %% of rated endurance",
		before.PercentUsed, after.PercentUsed, why, limits.PercentUsedMax)}
}

func availSpare(before, after nvme.SmartLog, limits specs.Health) Check {
	need := after.SpareThresh + limits.SpareMargin
	ok := after.AvailSpare >= need
	why := ""
	if !ok {
		why = ": below the limit"
	}
	return Check{Name: "avail_spare", Verdict: verdict(ok), Message: fmt.Sprintf(
		"avail_spare: %d %% before, %d %% after%s, limit ≥ %d %% (spare_thresh %d %% + margin %d)",
		before.AvailSpare, after.AvailSpare, why, need, after.SpareThresh, limits.SpareMargin)}
}

// counter judges a lifetime counter that may rise by at most maxIncrease.
func counter(name, field string, before, after nvme.Uint128, maxIncrease uint64) Check {
	b, a := before.Big(), after.Big()
	rise := new(big.Int).Sub(a, b)
	c := Check{Name: name}
	switch {
	case rise.Sign() < 0:
		c.Verdict = Fail
		c.Message = fmt.Sprintf("%s: %s before, %s after: fell by %s, which a lifetime counter never does (a different drive?), limit +%d",
			field, b, a, new(big.Int).Neg(rise), maxIncrease)
	default:
		c.Verdict = verdict(rise.Cmp(new(big.Int).SetUint64(maxIncrease)) <= 0)
		c.Message = fmt.Sprintf("%s: %s before, %s after: rose by %s, limit +%d", field, b, a, rise, maxIncrease)
	}
	return c
}

func firmware(ctrl nvme.Controller, limits specs.Health) Check {
	c := Check{Name: "firmware"}
	switch {
	case len(limits.Firmware) == 0:
		c.Verdict = Skip
		c.Message = fmt.Sprintf("firmware: %q; the spec allows any revision", ctrl.Firmware)
	case slices.Contains(limits.Firmware, ctrl.Firmware):
		c.Verdict = Pass
		c.Message = fmt.Sprintf("firmware: %q, limit one of %s", ctrl.Firmware, quoteAll(limits.Firmware))
	default:
		c.Verdict = Fail
		c.Message = fmt.Sprintf("firmware: %q is not allowed, limit one of %s; install an allowed revision or add this one to [health] firmware",
			ctrl.Firmware, quoteAll(limits.Firmware))
	}
	return c
}

func temperature(before, after nvme.SmartLog, ctrl nvme.Controller, maxTempK int, limits specs.Health) Check {
	c := Check{Name: "temperature"}
	highest := max(before.Temperature, after.Temperature, maxTempK)
	switch {
	case ctrl.WCTemp == 0:
		c.Verdict = Skip
		c.Message = "temperature: the controller reports no warning composite temperature threshold (wctemp)"
		return c
	case highest == 0:
		c.Verdict = Skip
		c.Message = "temperature: the drive reports no composite temperature"
		return c
	}
	limit := ctrl.WCTemp - limits.TemperatureMarginC
	ok := highest < limit
	why := ""
	if !ok {
		why = ": not below the limit"
	}
	c.Verdict = verdict(ok)
	c.Message = fmt.Sprintf("temperature: %s before, %s after, highest %s%s, limit below %d °C (wctemp %d °C − margin %d °C)",
		celsius(before.Temperature), celsius(after.Temperature), celsius(highest), why,
		nvme.Celsius(limit), nvme.Celsius(ctrl.WCTemp), limits.TemperatureMarginC)
	return c
}

func celsius(kelvin int) string {
	if kelvin == 0 {
		return "not reported"
	}
	return fmt.Sprintf("%d °C", nvme.Celsius(kelvin))
}

// Throttled reports whether the drive was over a temperature threshold or
// thermally throttled between two SMART logs: whether warning_temp_time,
// critical_comp_time (minutes), thm_temp1_trans_count,
// thm_temp2_trans_count, thm_temp1_total_time or thm_temp2_total_time
// (seconds) rose. The string names every counter that rose, e.g.
// "thermally throttled during the cell: thm_temp1_trans_count 0 → 3;
// check airflow and rerun". The times count whole minutes or seconds, so
// a moment over a threshold may not show.
func Throttled(before, after nvme.SmartLog) (string, bool) {
	counters := []struct {
		field         string
		before, after uint32
		unit          string
		throttle      bool // host-controlled thermal management, not only a threshold crossed
	}{
		{"warning_temp_time", before.WarningTempTime, after.WarningTempTime, " min", false},
		{"critical_comp_time", before.CriticalCompTime, after.CriticalCompTime, " min", false},
		{"thm_temp1_trans_count", before.ThmTemp1TransCount, after.ThmTemp1TransCount, "", true},
		{"thm_temp1_total_time", before.ThmTemp1TotalTime, after.ThmTemp1TotalTime, " s", true},
		{"thm_temp2_trans_count", before.ThmTemp2TransCount, after.ThmTemp2TransCount, "", true},
		{"thm_temp2_total_time", before.ThmTemp2TotalTime, after.ThmTemp2TotalTime, " s", true},
	}
	var rose []string
	throttled := false
	for _, c := range counters {
		if c.after > c.before {
			rose = append(rose, fmt.Sprintf("%s %d → %d%s", c.field, c.before, c.after, c.unit))
			throttled = throttled || c.throttle
		}
	}
	if len(rose) == 0 {
		return "", false
	}
	what := "over its temperature thresholds"
	if throttled {
		what = "thermally throttled"
	}
	return fmt.Sprintf("%s during the cell: %s; check airflow and rerun", what, strings.Join(rose, ", ")), true
}

// Inconclusive applies limits.ThermalThrottle to a cell measured between
// two SMART logs: with "inconclusive" (the default) a cell during which
// Throttled holds is inconclusive, for the reason it gives; with "ignore"
// no cell is.
func Inconclusive(before, after nvme.SmartLog, limits specs.Health) (string, bool) {
	if limits.ThermalThrottle == specs.ThrottleIgnore {
		return "", false
	}
	return Throttled(before, after)
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
