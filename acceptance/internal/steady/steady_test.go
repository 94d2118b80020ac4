package steady

import (
	"math"
	"strings"
	"testing"
)

// fixtureDir holds real fio recordings (see its README.md).
const fixtureDir = "../../../fixtures/fio"

type checkTest struct {
	name      string
	rounds    []float64
	attained  bool
	mean      float64 // IOPS
	relRange  float64 // fraction of mean
	relExc    float64 // fraction of mean
	attainAt  int     // Track's round; 0 for never
	stringHas string
}

// rising15 rises linearly by 15 % of its first round across the window.
var rising15 = []float64{100000, 103750, 107500, 111250, 115000}

var checkTests = []checkTest{
	{"flat", []float64{152300, 152300, 152300, 152300, 152300}, true, 152300, 0, 0, 5,
		"steady state reached: window mean 152,300 IOPS, range 0.0 % (limit 20 %), excursion 0.0 % (limit 10 %)"},
	// Range 15000 and excursion 15000 of a 107500 mean: 14.0 % each, the
	// range within 20 %, the excursion over 10 %.
	{"rising 15 %", rising15, false, 107500, 15000.0 / 107500, 15000.0 / 107500, 0,
		"not reached: window mean 107,500 IOPS, range 14.0 % (limit 20 %), excursion 14.0 % (limit 10 %)"},
	// ±25 % about 100000 with no trend: range 50 %, excursion 0.
	{"noisy ±25 %", []float64{125000, 75000, 100000, 75000, 125000}, false, 100000, 0.5, 0, 0,
		"not reached: window mean 100,000 IOPS, range 50.0 % (limit 20 %), excursion 0.0 % (limit 10 %)"},
	// The window of rounds 5-9 (130k … 149k) still fails the excursion
	// (10.7 %); rounds 6-10 are flat within 2,000 IOPS, slope -100 a round.
	{"rising then flat", []float64{50000, 70000, 90000, 110000, 130000, 150000, 150000, 151000, 149000, 150000, 150000},
		true, 150000, 2000.0 / 150000, 400.0 / 150000, 10,
		"steady state reached: window mean 150,000 IOPS, range 1.3 % (limit 20 %), excursion 0.3 % (limit 10 %)"},
	{"fewer rounds than the window", []float64{100000, 100000, 100000}, false, 0, 0, 0, 0,
		"not reached: 3 rounds, fewer than the 5-round window"},
	{"no rounds", nil, false, 0, 0, 0, 0, "not reached: 0 rounds, fewer than the 5-round window"},
	{"no I/O", []float64{0, 0, 0, 0, 0}, false, 0, 0, 0, 0, "not reached: window mean is 0 IOPS"},
	{"unmeasured round", []float64{1, 1, 1, Unmeasured, 1}, false, 0, 0, 0, 0, "not reached: round 4 was not measured: too few samples of it"},
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func TestCheck(t *testing.T) {
	for _, tt := range checkTests {
		v := DefaultRule.Check(tt.rounds)
		if tt.name == "rising then flat" {
			// Check judges the last window; so does Track once attained.
			v = DefaultRule.Check(tt.rounds[:tt.attainAt])
		}
		if v.Attained != tt.attained || !near(v.Mean, tt.mean) || !near(v.RelRange(), tt.relRange) || !near(v.RelExcursion(), tt.relExc) {
			t.Errorf("%s: Check(%v) = attained %v, mean %v, range %v, excursion %v; want %v, %v, %v, %v",
				tt.name, tt.rounds, v.Attained, v.Mean, v.RelRange(), v.RelExcursion(),
				tt.attained, tt.mean, tt.relRange, tt.relExc)
		}
		if s := v.String(); !strings.HasPrefix(s, tt.stringHas) {
			t.Errorf("%s: Check(%v).String() = %q, want prefix %q", tt.name, tt.rounds, s, tt.stringHas)
		}
	}
}

func TestCheckFigures(t *testing.T) {
	v := DefaultRule.Check(rising15)
	// Least squares over 5 evenly rising points: the slope is the step.
	if v.Slope != 3750 || v.Excursion != 15000 || v.Range != 15000 || v.First != 0 || v.Rounds != 5 {
		t.Errorf("Check(rising15) = %+v, want slope 3750, excursion 15000, range 15000, window of rounds 1-5", v)
	}
	falling := []float64{115000, 111250, 107500, 103750, 100000}
	if v := DefaultRule.Check(falling); v.Slope != -3750 || v.Excursion != 15000 || v.Attained {
		t.Errorf("Check(falling) = %+v, want slope -3750, excursion 15000, not attained", v)
	}
	// Only the last Window rounds count.
	v = DefaultRule.Check(append([]float64{1, 1e9}, 5, 5, 5, 5, 5))
	if !v.Attained || v.First != 2 || v.Rounds != 7 || v.Mean != 5 {
		t.Errorf("Check(..., 5, 5, 5, 5, 5) = %+v, want attained on rounds 3-7", v)
	}
	// A looser rule passes what the default fails.
	loose := Rule{Window: 5, MaxRange: 0.20, MaxExcursion: 0.15}
	if v := loose.Check(rising15); !v.Attained || !strings.Contains(v.String(), "(limit 15 %)") {
		t.Errorf("Rule{5, 0.20, 0.15}.Check(rising15) = %v, want attained with the 15 %% limit", v)
	}
}

func TestTrack(t *testing.T) {
	for _, tt := range checkTests {
		at, v := DefaultRule.Track(tt.rounds)
		if at != tt.attainAt || v.Attained != (tt.attainAt > 0) {
			t.Errorf("%s: Track(%v) = %d, %v; want round %d", tt.name, tt.rounds, at, v, tt.attainAt)
		}
		if at > 0 && v.First != at-DefaultRule.Window {
			t.Errorf("%s: Track's verdict is on rounds %d-%d, want the window ending at round %d", tt.name, v.First+1, v.First+DefaultRule.Window, at)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultRule.Validate(); err != nil {
		t.Errorf("DefaultRule.Validate() = %v", err)
	}
	err := Rule{Window: 1, MaxRange: 0, MaxExcursion: math.Inf(1)}.Validate()
	for _, want := range []string{"window must be at least 2 rounds, not 1", "range limit must be a fraction > 0, not 0", "excursion limit must be a fraction > 0, not +Inf"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
	if v := (Rule{}).Check([]float64{1, 1, 1, 1, 1}); v.Attained || !strings.Contains(v.String(), "window must be at least 2 rounds") {
		t.Errorf("Rule{}.Check = %v, want not attained, saying why", v)
	}
}
