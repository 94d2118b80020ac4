package health

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
	"github.com/google/go-cmp/cmp"
)

// healthy is a drive in good health: 36 °C, spare 100 % of threshold 10 %,
// 3 % used, one old media error and 12 error log entries.
var healthy = nvme.SmartLog{
	Temperature:      309,
	AvailSpare:       100,
	SpareThresh:      10,
	PercentUsed:      3,
	MediaErrors:      nvme.Uint128{Lo: 1},
	NumErrLogEntries: nvme.Uint128{Lo: 12},
}

// ctrl has a warning composite temperature threshold of 70 °C.
var ctrl = nvme.Controller{Firmware: "GDC7102Q", WCTemp: 343, CCTemp: 353}

// with returns healthy changed by f.
func with(f func(*nvme.SmartLog)) nvme.SmartLog {
	l := healthy
	f(&l)
	return l
}

type refuseTest struct {
	warning uint8
	want    string // "" for no error
}

var refuseTests = []refuseTest{
	{0x00, ""},
	{0x01, "critical_warning 0x01: available spare is below its threshold;"},
	{0x02, "critical_warning 0x02: temperature is outside a threshold (composite 36 °C);"},
	{0x04, "critical_warning 0x04: NVM subsystem reliability is degraded by media or internal errors;"},
	{0x08, "critical_warning 0x08: media is read-only;"},
	{0x10, "critical_warning 0x10: volatile memory backup device has failed;"},
	{0x20, "critical_warning 0x20: persistent memory region is read-only or unreliable;"},
	{0x40, "critical_warning 0x40: reserved critical warning bit 6 is set;"},
	{0x09, "critical_warning 0x09: available spare is below its threshold, media is read-only;"},
	{0x0a, "critical_warning 0x0a: temperature is outside a threshold, media is read-only;"},
}

func TestRefuse(t *testing.T) {
	for _, tt := range refuseTests {
		err := Refuse(with(func(l *nvme.SmartLog) { l.CriticalWarning = tt.warning }))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Refuse(critical_warning %#x) = %v, want nil", tt.warning, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Refuse(critical_warning %#x) = nil, want an error", tt.warning)
			continue
		}
		fix := "; replace the drive or clear the condition; the run wrote nothing"
		if tt.warning == nvme.WarnTemperature {
			// Too hot before anything is written: the chassis first.
			fix = "; check the chassis's airflow and let the drive cool below its threshold, then rerun; the run wrote nothing"
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.HasSuffix(msg, fix) {
			t.Errorf("Refuse(critical_warning %#x) = %q, want it to contain %q and end %q", tt.warning, msg, tt.want, fix)
		}
		if !errors.Is(err, ErrCriticalWarning) {
			t.Errorf("Refuse(critical_warning %#x) = %v, not wrapping ErrCriticalWarning", tt.warning, err)
		}
	}
}

type judgeTest struct {
	name          string // the case
	before, after nvme.SmartLog
	ctrl          nvme.Controller
	maxTempK      int
	limits        specs.Health
	want          Check // the check of that Name
}

// limits returns the default [health] rules changed by f.
func limits(f func(*specs.Health)) specs.Health {
	h := specs.DefaultHealth()
	f(&h)
	return h
}

var defaults = specs.DefaultHealth()

var judgeTests = []judgeTest{
	{"no warning", healthy, healthy, ctrl, 0, defaults,
		Check{"critical_warning", Pass, "critical_warning: 0x00 before, 0x00 after; limit: no bit set"}},
	{"warning after", healthy, with(func(l *nvme.SmartLog) { l.CriticalWarning = 0x06 }), ctrl, 0, defaults,
		Check{"critical_warning", Fail, "critical_warning: 0x00 before, 0x06 after: temperature is outside a threshold, " +
			"NVM subsystem reliability is degraded by media or internal errors; limit: no bit set"}},

	{"endurance left", healthy, with(func(l *nvme.SmartLog) { l.PercentUsed = 100 }), ctrl, 0, defaults,
		Check{"percent_used", Pass, "percent_used: 3 % before, 100 % after, limit ≤ 100 % of rated endurance"}},
	{"past rated endurance", healthy, with(func(l *nvme.SmartLog) { l.PercentUsed = 101 }), ctrl, 0, defaults,
		Check{"percent_used", Fail, "percent_used: 3 % before, 101 % after: above the limit, limit ≤ 100 % of rated endurance"}},
	{"past the spec's endurance", healthy, with(func(l *nvme.SmartLog) { l.PercentUsed = 51 }), ctrl, 0,
		limits(func(h *specs.Health) { h.PercentUsedMax = 50 }),
		Check{"percent_used", Fail, "percent_used: 3 % before, 51 % after: above the limit, limit ≤ 50 % of rated endurance"}},

	{"spare at threshold", healthy, with(func(l *nvme.SmartLog) { l.AvailSpare = 10 }), ctrl, 0, defaults,
		Check{"avail_spare", Pass, "avail_spare: 100 % before, 10 % after, limit ≥ 10 % (spare_thresh 10 % + margin 0)"}},
	{"spare below threshold", healthy, with(func(l *nvme.SmartLog) { l.AvailSpare = 9 }), ctrl, 0, defaults,
		Check{"avail_spare", Fail, "avail_spare: 100 % before, 9 % after: below the limit, limit ≥ 10 % (spare_thresh 10 % + margin 0)"}},
	{"spare within margin", healthy, with(func(l *nvme.SmartLog) { l.AvailSpare = 14 }), ctrl, 0,
		limits(func(h *specs.Health) { h.SpareMargin = 5 }),
		Check{"avail_spare", Fail, "avail_spare: 100 % before, 14 % after: below the limit, limit ≥ 15 % (spare_thresh 10 % + margin 5)"}},
	{"spare above margin", healthy, with(func(l *nvme.SmartLog) { l.AvailSpare = 15 }), ctrl, 0,
		limits(func(h *specs.Health) { h.SpareMargin = 5 }),
		Check{"avail_spare", Pass, "avail_spare: 100 % before, 15 % after, limit ≥ 15 % (spare_thresh 10 % + margin 5)"}},

	{"no new media errors", healthy, healthy, ctrl, 0, defaults,
		Check{"media_errors", Pass, "media_errors: 1 before, 1 after: rose by 0, limit +0"}},
	{"new media errors", healthy, with(func(l *nvme.SmartLog) { l.MediaErrors = nvme.Uint128{Lo: 4} }), ctrl, 0, defaults,
		Check{"media_errors", Fail, "media_errors: 1 before, 4 after: rose by 3, limit +0"}},
	{"media errors allowed", healthy, with(func(l *nvme.SmartLog) { l.MediaErrors = nvme.Uint128{Lo: 4} }), ctrl, 0,
		limits(func(h *specs.Health) { h.MediaErrorsMaxIncrease = 3 }),
		Check{"media_errors", Pass, "media_errors: 1 before, 4 after: rose by 3, limit +3"}},
	{"media errors past 2^64", with(func(l *nvme.SmartLog) { l.MediaErrors = nvme.Uint128{Lo: ^uint64(0)} }),
		with(func(l *nvme.SmartLog) { l.MediaErrors = nvme.Uint128{Hi: 1, Lo: 1} }), ctrl, 0, defaults,
		Check{"media_errors", Fail, "media_errors: 18446744073709551615 before, 18446744073709551617 after: rose by 2, limit +0"}},
	{"media errors fell", healthy, with(func(l *nvme.SmartLog) { l.MediaErrors = nvme.Uint128{} }), ctrl, 0, defaults,
		Check{"media_errors", Fail, "media_errors: 1 before, 0 after: fell by 1, which a lifetime counter never does (a different drive?), limit +0"}},

	{"no new error log entries", healthy, healthy, ctrl, 0, defaults,
		Check{"err_log_entries", Pass, "num_err_log_entries: 12 before, 12 after: rose by 0, limit +0"}},
	{"new error log entries", healthy, with(func(l *nvme.SmartLog) { l.NumErrLogEntries = nvme.Uint128{Lo: 13} }), ctrl, 0, defaults,
		Check{"err_log_entries", Fail, "num_err_log_entries: 12 before, 13 after: rose by 1, limit +0"}},
	{"error log entries allowed", healthy, with(func(l *nvme.SmartLog) { l.NumErrLogEntries = nvme.Uint128{Lo: 28} }), ctrl, 0,
		limits(func(h *specs.Health) { h.ErrLogEntriesMaxIncrease = 16 }),
		Check{"err_log_entries", Pass, "num_err_log_entries: 12 before, 28 after: rose by 16, limit +16"}},

	{"any firmware", healthy, healthy, ctrl, 0, defaults,
		Check{"firmware", Skip, `firmware: "GDC7102Q"; the spec allows any revision`}},
	{"allowed firmware", healthy, healthy, ctrl, 0,
		limits(func(h *specs.Health) { h.Firmware = []string{"GDC7101Q", "GDC7102Q"} }),
		Check{"firmware", Pass, `firmware: "GDC7102Q", limit one of "GDC7101Q", "GDC7102Q"`}},
	{"other firmware", healthy, healthy, ctrl, 0,
		limits(func(h *specs.Health) { h.Firmware = []string{"GDC7201Q"} }),
		Check{"firmware", Fail, `firmware: "GDC7102Q" is not allowed, limit one of "GDC7201Q"; install an allowed revision or add this one to [health] firmware`}},

	{"cool", healthy, with(func(l *nvme.SmartLog) { l.Temperature = 314 }), ctrl, 338, defaults,
		Check{"temperature", Pass, "temperature: 36 °C before, 41 °C after, highest 65 °C, limit below 70 °C (wctemp 70 °C − margin 0 °C)"}},
	{"at wctemp during the run", healthy, healthy, ctrl, 343, defaults,
		Check{"temperature", Fail, "temperature: 36 °C before, 36 °C after, highest 70 °C: not below the limit, limit below 70 °C (wctemp 70 °C − margin 0 °C)"}},
	{"hot after, not sampled", healthy, with(func(l *nvme.SmartLog) { l.Temperature = 345 }), ctrl, 0, defaults,
		Check{"temperature", Fail, "temperature: 36 °C before, 72 °C after, highest 72 °C: not below the limit, limit below 70 °C (wctemp 70 °C − margin 0 °C)"}},
	{"within margin", healthy, healthy, ctrl, 338,
		limits(func(h *specs.Health) { h.TemperatureMarginC = 5 }),
		Check{"temperature", Fail, "temperature: 36 °C before, 36 °C after, highest 65 °C: not below the limit, limit below 65 °C (wctemp 70 °C − margin 5 °C)"}},
	{"below margin", healthy, healthy, ctrl, 337,
		limits(func(h *specs.Health) { h.TemperatureMarginC = 5 }),
		Check{"temperature", Pass, "temperature: 36 °C before, 36 °C after, highest 64 °C, limit below 65 °C (wctemp 70 °C − margin 5 °C)"}},
	{"no wctemp", healthy, healthy, nvme.Controller{Firmware: "X"}, 400, defaults,
		Check{"temperature", Skip, "temperature: the controller reports no warning composite temperature threshold (wctemp)"}},
	{"no temperature", with(func(l *nvme.SmartLog) { l.Temperature = 0 }), with(func(l *nvme.SmartLog) { l.Temperature = 0 }), ctrl, 0, defaults,
		Check{"temperature", Skip, "temperature: the drive reports no composite temperature"}},
}

func TestJudge(t *testing.T) {
	for _, tt := range judgeTests {
		checks := Judge(tt.before, tt.after, tt.ctrl, tt.maxTempK, tt.limits)
		var got *Check
		for i := range checks {
			if checks[i].Name == tt.want.Name {
				got = &checks[i]
			}
		}
		if got == nil {
			t.Errorf("%s: Judge(...) has no %q check: %+v", tt.name, tt.want.Name, checks)
			continue
		}
		if diff := cmp.Diff(tt.want, *got); diff != "" {
			t.Errorf("%s: Judge(...) %s check mismatch (-want +got):\n%s", tt.name, tt.want.Name, diff)
		}
	}
}

// TestJudgeHealthy checks that a healthy drive passes every check under the
// default rules, in Judge's order, with only firmware skipped.
func TestJudgeHealthy(t *testing.T) {
	checks := Judge(healthy, healthy, ctrl, 320, specs.DefaultHealth())
	var names []string
	for _, c := range checks {
		names = append(names, c.Name)
		want := Pass
		if c.Name == "firmware" {
			want = Skip
		}
		if c.Verdict != want {
			t.Errorf("Judge(healthy) %s = %s (%s), want %s", c.Name, c.Verdict, c.Message, want)
		}
	}
	wantNames := []string{"critical_warning", "percent_used", "avail_spare", "media_errors", "err_log_entries", "firmware", "temperature"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("Judge check names (-want +got):\n%s", diff)
	}
}

type throttledTest struct {
	name   string
	after  func(*nvme.SmartLog)
	want   string
	wantOK bool
}

var throttledTests = []throttledTest{
	{"nothing rose", func(*nvme.SmartLog) {}, "", false},
	{"thm_temp1_trans_count", func(l *nvme.SmartLog) { l.ThmTemp1TransCount = 3 },
		"thermally throttled during the cell: thm_temp1_trans_count 0 → 3; check airflow and rerun", true},
	{"thm_temp2_trans_count", func(l *nvme.SmartLog) { l.ThmTemp2TransCount = 1 },
		"thermally throttled during the cell: thm_temp2_trans_count 0 → 1; check airflow and rerun", true},
	{"still throttled from before", func(l *nvme.SmartLog) { l.ThmTemp1TotalTime = 41 },
		"thermally throttled during the cell: thm_temp1_total_time 0 → 41 s; check airflow and rerun", true},
	{"thm_temp2_total_time", func(l *nvme.SmartLog) { l.ThmTemp2TotalTime = 7 },
		"thermally throttled during the cell: thm_temp2_total_time 0 → 7 s; check airflow and rerun", true},
	{"warning_temp_time", func(l *nvme.SmartLog) { l.WarningTempTime = 6 },
		"over its temperature thresholds during the cell: warning_temp_time 5 → 6 min; check airflow and rerun", true},
	{"critical_comp_time", func(l *nvme.SmartLog) { l.CriticalCompTime = 1 },
		"over its temperature thresholds during the cell: critical_comp_time 0 → 1 min; check airflow and rerun", true},
	{"several", func(l *nvme.SmartLog) { l.WarningTempTime, l.ThmTemp1TransCount, l.ThmTemp1TotalTime = 7, 2, 90 },
		"thermally throttled during the cell: warning_temp_time 5 → 7 min, thm_temp1_trans_count 0 → 2, thm_temp1_total_time 0 → 90 s; check airflow and rerun", true},
	{"a counter fell", func(l *nvme.SmartLog) { l.WarningTempTime = 4 }, "", false},
}

func TestThrottled(t *testing.T) {
	before := with(func(l *nvme.SmartLog) { l.WarningTempTime = 5 })
	for _, tt := range throttledTests {
		after := before
		tt.after(&after)
		got, ok := Throttled(before, after)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: Throttled(...) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestInconclusive(t *testing.T) {
	after := with(func(l *nvme.SmartLog) { l.ThmTemp1TransCount = 3 })
	for _, rule := range []string{specs.ThrottleInconclusive, ""} {
		h := specs.DefaultHealth()
		h.ThermalThrottle = rule
		if why, ok := Inconclusive(healthy, after, h); !ok || !strings.Contains(why, "thm_temp1_trans_count 0 → 3") {
			t.Errorf("Inconclusive(throttled, thermal_throttle %q) = %q, %v; want the reason, true", rule, why, ok)
		}
		if why, ok := Inconclusive(healthy, healthy, h); ok {
			t.Errorf("Inconclusive(not throttled, thermal_throttle %q) = %q, true; want false", rule, why)
		}
	}
	h := specs.DefaultHealth()
	h.ThermalThrottle = specs.ThrottleIgnore
	if why, ok := Inconclusive(healthy, after, h); ok {
		t.Errorf("Inconclusive(throttled, thermal_throttle ignore) = %q, true; want false", why)
	}
}

type newWarningTest struct {
	before, now uint8
	msg         string
	ok          bool
}

var newWarningTests = []newWarningTest{
	{0, 0, "", false},
	{0, 0x08, "critical_warning 0x08: media is read-only", true},
	{0x01, 0x01, "", false}, // there at setup: not new
	{0x01, 0x05, "critical_warning 0x05: NVM subsystem reliability is degraded by media or internal errors", true},
	// The temperature bit does not stop writes (see Hot); the others
	// raised with it still do.
	{0, 0x02, "", false},
	{0, 0x03, "critical_warning 0x03: available spare is below its threshold", true},
	{0, 0x06, "critical_warning 0x06: NVM subsystem reliability is degraded by media or internal errors", true},
	{0, 0x0a, "critical_warning 0x0a: media is read-only", true},
	{0, 0x12, "critical_warning 0x12: volatile memory backup device has failed", true},
}

func TestNewWarning(t *testing.T) {
	for _, tt := range newWarningTests {
		msg, ok := NewWarning(nvme.SmartLog{CriticalWarning: tt.before}, nvme.SmartLog{CriticalWarning: tt.now})
		if msg != tt.msg || ok != tt.ok {
			t.Errorf("NewWarning(0x%02x, 0x%02x) = %q, %v, want %q, %v", tt.before, tt.now, msg, ok, tt.msg, tt.ok)
		}
	}
}

// smartFixture parses fixtures/nvme/NAME.
func smartFixture(t *testing.T, name string) nvme.SmartLog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "nvme", name))
	if err != nil {
		t.Fatal(err)
	}
	l, err := nvme.ParseSmartLog(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l
}

// heatCell is what the suite makes of one cell from the SMART logs read
// around it, given the log read at setup: whether it stops writing to
// the drive (NewWarning) and whether the cell is inconclusive on heat
// (HotDuring).
func heatCell(setup, before, after nvme.SmartLog) (stop, hot string) {
	if msg, ok := NewWarning(setup, before); ok {
		return msg, ""
	}
	if msg, ok := NewWarning(setup, after); ok {
		stop = msg
	}
	hot, _ = HotDuring(before, after)
	return stop, hot
}

// Sequences of nvme-cli 2.3 smart-log outputs read around three cells
// (before and after each): a temperature bit set during cell 1 and
// cleared before cell 2 makes cell 1 inconclusive and leaves cell 2
// judged; one that stays set makes every remaining cell inconclusive and
// never stops writes; the spare bit still stops them.
func TestHeatSequence(t *testing.T) {
	clean := smartFixture(t, "smart-log-v2.3-quoted-decimal.json")
	hot := smartFixture(t, "smart-log-v2.3-temperature-warning.json")
	spare := smartFixture(t, "smart-log-v2.3-spare-warning.json")
	const hotAfter = "temperature critical warning after the cell: critical_warning 0x02: temperature is outside a threshold (composite 85 °C); check airflow and rerun"
	const hotBoth = "temperature critical warning before and after the cell: critical_warning 0x02: temperature is outside a threshold (composite 85 °C); check airflow and rerun"
	for _, tt := range []struct {
		name string
		logs []nvme.SmartLog // before and after cell 0, cell 1, cell 2
		stop []string        // per cell: "" or the warning that stops writes
		hot  []string        // per cell: "" or why it is inconclusive on heat
	}{
		{"transient", []nvme.SmartLog{clean, clean, clean, hot, clean, clean},
			[]string{"", "", ""}, []string{"", hotAfter, ""}},
		{"stays set", []nvme.SmartLog{clean, clean, clean, hot, hot, hot},
			[]string{"", "", ""}, []string{"", hotAfter, hotBoth}},
		{"spare", []nvme.SmartLog{clean, clean, clean, spare, spare, spare},
			[]string{"", "critical_warning 0x01: available spare is below its threshold", "critical_warning 0x01: available spare is below its threshold"},
			[]string{"", "", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k := 0; k < 3; k++ {
				stop, hot := heatCell(clean, tt.logs[2*k], tt.logs[2*k+1])
				if stop != tt.stop[k] || hot != tt.hot[k] {
					t.Errorf("cell %d: stop %q, hot %q; want %q, %q", k, stop, hot, tt.stop[k], tt.hot[k])
				}
			}
		})
	}
	if msg, ok := Hot(clean); ok {
		t.Errorf("Hot(clean) = %q", msg)
	}
	if msg, ok := HotDuring(hot, clean); !ok || !strings.HasPrefix(msg, "temperature critical warning before the cell: ") {
		t.Errorf("HotDuring(hot, clean) = %q, %v", msg, ok)
	}
	// Hot at setup the drive is still refused: nothing has been written
	// to it yet, and the run would judge nothing.
	if err := Refuse(hot); err == nil {
		t.Error("Refuse(hot) = nil")
	}
}

// A resumed run's setup stops only for a drive too hot to measure, and
// says so as a resume: the run did write to its drives, so "the run
// wrote nothing" would be false; the fix is cooling, then -resume again.
// Any other warning does not stop it (the drive is disqualified).
func TestRefuseResumed(t *testing.T) {
	err := RefuseResumed(with(func(l *nvme.SmartLog) { l.CriticalWarning = nvme.WarnTemperature }))
	if err == nil || !errors.Is(err, ErrCriticalWarning) {
		t.Fatalf("RefuseResumed(temperature) = %v, want an ErrCriticalWarning", err)
	}
	if msg := err.Error(); strings.Contains(msg, "wrote nothing") || !strings.HasSuffix(msg, "let the drive cool below its threshold, then run -resume again; nothing was written since the run was interrupted") {
		t.Errorf("RefuseResumed(temperature) = %q", msg)
	}
	for _, w := range []uint8{0, 0x08, 0x08 | nvme.WarnTemperature} {
		if err := RefuseResumed(with(func(l *nvme.SmartLog) { l.CriticalWarning = w })); err != nil {
			t.Errorf("RefuseResumed(critical_warning %#x) = %v, want nil", w, err)
		}
	}
}
