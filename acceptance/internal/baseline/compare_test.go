package baseline

import (
	"math"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// tight is n drives' figures within ±1 % of v, deterministic.
func tight(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.01*math.Sin(float64(i)*1.7))
	}
	return out
}

// spread is n drives' figures within ±5 % of v (the brief allows up to
// 10 % drive to drive), deterministic.
func spread(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.05*math.Sin(float64(i)*1.7))
	}
	return out
}

func scale(vals []float64, f float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = v * f
	}
	return out
}

type compareTest struct {
	name       string
	base, this []float64
	lower      bool
	verdict    string
	tested     bool
	note       string
}

var compareTests = []compareTest{
	{"10 % drop on tight figures", tight(24, 2.4e6), scale(tight(24, 2.4e6), 0.90), false, report.Regressed, true, ""},
	{"1 % change is noise", spread(24, 2.4e6), scale(spread(24, 2.4e6), 0.99), false, report.Same, true, ""},
	{"1 % change on tight figures is real, within tolerance", tight(24, 2.4e6), scale(tight(24, 2.4e6), 0.99), false, report.Worse, true, ""},
	{"itself", tight(24, 2.4e6), tight(24, 2.4e6), false, report.Same, true, ""},
	{"improvement", tight(8, 150e3), scale(tight(8, 150e3), 1.12), false, report.Improved, true, ""},
	{"3 % drop, significant, within tolerance", tight(24, 1e5), scale(tight(24, 1e5), 0.97), false, report.Worse, true, ""},
	{"1 sample, 10 % drop: tolerance alone", []float64{100}, []float64{90}, false, report.Regressed, false, "1 sample"},
	{"1 sample, 3 % drop", []float64{100}, []float64{97}, false, report.Same, false, "1 sample"},
	{"1 sample, 10 % better", []float64{100}, []float64{110}, false, report.Improved, false, "1 sample"},
	{"3 a side cannot reach 0.05", []float64{100, 101, 99}, []float64{80, 81, 79}, false, report.Regressed, false, "n=3+3: too few for p < 0.05"},
	{"latency 20 % higher", tight(8, 200), scale(tight(8, 200), 1.2), true, report.Regressed, true, ""},
	{"latency 20 % lower", tight(8, 200), scale(tight(8, 200), 0.8), true, report.Improved, true, ""},
	{"no figure", nil, []float64{1}, false, report.Same, false, "no figure to compare"},
	// The two cases: 3 + 3 drives at -49.5 % (too few for a test,
	// judged by the tolerance) and 4 + 4 at -49.3 % with one outlying
	// drive (p = 0.343): one more drive a side must not pass a halved
	// median.
	{"3+3 at -49.5 %", []float64{100, 101, 102}, []float64{50, 51, 52}, false, report.Regressed, false, "n=3+3: too few for p < 0.05"},
	{"4+4 at -49.3 %, one outlier", []float64{100, 101, 102, 103}, []float64{50, 51, 52, 104}, false, report.Regressed, true, ""},
	{"4+4 at +49.3 %, one outlier", []float64{50, 51, 52, 104}, []float64{100, 101, 102, 103}, false, report.Improved, true, ""},
	{"4+4 within the tolerance, one outlier", []float64{100, 101, 102, 103}, []float64{97, 98, 99, 140}, false, report.Same, true, ""},
	{"3+3 within the tolerance", []float64{100, 101, 102}, []float64{97, 98, 99}, false, report.Same, false, "n=3+3: too few for p < 0.05"},
}

func TestCompare(t *testing.T) {
	for _, tt := range compareTests {
		c := Compare(tt.base, tt.this, tt.lower, DefaultThresholds)
		if c.Verdict != tt.verdict || c.Tested != tt.tested || c.Note != tt.note {
			t.Errorf("%s: Compare = verdict %q tested %v note %q (delta %.4f p %.4g), want %q, %v, %q",
				tt.name, c.Verdict, c.Tested, c.Note, c.Delta, c.P, tt.verdict, tt.tested, tt.note)
		}
	}
}

// A 10 % drop says so with its delta and p.
func TestRowRegressed(t *testing.T) {
	c := Compare(tight(24, 2.4e6), scale(tight(24, 2.4e6), 0.9), false, DefaultThresholds)
	c.Figure = "iops"
	row := Row("4KB Random Read", c)
	for _, want := range []string{"-10.00 %", "p=0.000 n=24", "regressed beyond the 5 % tolerance"} {
		if !strings.Contains(row, want) {
			t.Errorf("Row = %q, want it to contain %q", row, want)
		}
	}
}

func TestMinP(t *testing.T) {
	for _, tt := range []struct {
		n1, n2 int
		want   float64
	}{{1, 1, 1}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {1, 24, 2.0 / 25}} {
		if got := minP(tt.n1, tt.n2); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("minP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
	}
}

// The 4 + 4 case reads p = 0.343 (as the issue measured it) and says
// that the median's change, not p, decides; the 3 + 3 case says it had
// too few figures for a test.
func TestRowBeyondToleranceNotPassedOnP(t *testing.T) {
	c := Compare([]float64{100, 101, 102, 103}, []float64{50, 51, 52, 104}, false, DefaultThresholds)
	c.Figure = "iops"
	if math.Abs(c.P-0.343) > 0.0005 {
		t.Errorf("p = %.4f, want 0.343", c.P)
	}
	row := Row("4KB Random Read", c)
	want := "4KB Random Read: 52 IOPS vs baseline 102 IOPS: -49.26 % (p=0.343 n=4): regressed beyond the 5 % tolerance (p=0.343 is not below 0.05, but a median change beyond the tolerance is not passed on p alone)"
	if row != want {
		t.Errorf("Row =\n%q, want\n%q", row, want)
	}
	c = Compare([]float64{100, 101, 102}, []float64{50, 51, 52}, false, DefaultThresholds)
	c.Figure = "iops"
	if row := Row("4KB Random Read", c); !strings.Contains(row, "-49.50 % (n=3, too few for a test): regressed beyond the 5 % tolerance (judged by tolerance alone)") {
		t.Errorf("Row = %q", row)
	}
}

// Monotone in the change: scaling this run's figures down never makes
// the verdict better, at any sample size, with or without an outlier.
func TestCompareMonotone(t *testing.T) {
	rank := map[string]int{report.Improved: 0, report.Same: 1, report.Worse: 2, report.Regressed: 3}
	for _, tt := range []struct {
		name       string
		base, this []float64
	}{
		{"1+1", []float64{100}, []float64{100}},
		{"3+3", []float64{100, 101, 102}, []float64{100, 101, 102}},
		{"4+4, one outlier", []float64{100, 101, 102, 103}, []float64{100, 101, 102, 206}},
		{"24+24 spread", spread(24, 1e5), spread(24, 1e5)},
		{"8+8 tight", tight(8, 1e5), tight(8, 1e5)},
	} {
		prev := -1
		for f := 1.2; f >= 0.3; f -= 0.005 {
			v := Compare(tt.base, scale(tt.this, f), false, DefaultThresholds).Verdict
			if rank[v] < prev {
				t.Errorf("%s: at %.3f × the figures the verdict is %q, better than at a smaller drop", tt.name, f, v)
			}
			prev = rank[v]
		}
		if prev != rank[report.Regressed] {
			t.Errorf("%s: at 0.3 × the figures the verdict is not regressed", tt.name)
		}
	}
}
