package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"none", nil, Summary{}},
		{"only NaN and Inf", []float64{math.NaN(), math.Inf(1)}, Summary{}},
		{"odd", []float64{3, 1, 2}, Summary{N: 3, Min: 1, Median: 2, Mean: 2, Max: 3}},
		{"even", []float64{4, 1, 3, 2}, Summary{N: 4, Min: 1, Median: 2.5, Mean: 2.5, Max: 4}},
		{"NaN left out", []float64{10, math.NaN(), 30}, Summary{N: 2, Min: 10, Median: 20, Mean: 20, Max: 30}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Of(tt.in)); diff != "" {
			t.Errorf("%s: Of(%v) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}

func TestSpread(t *testing.T) {
	s := Of([]float64{90, 100, 110, 140})
	if got, want := s.Spread(), 50.0/105; math.Abs(got-want) > 1e-12 {
		t.Errorf("Spread = %v, want %v", got, want)
	}
	if got := (Summary{}).Spread(); got != 0 {
		t.Errorf("empty Spread = %v, want 0", got)
	}
}
