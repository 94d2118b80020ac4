package units

import (
	"math"
	"testing"
)

var thousandsTests = []struct {
	in   float64
	want string
}{
	{0, "0"}, {999, "999"}, {1000, "1,000"}, {536_870_912, "536,870,912"},
	{1_073_741_824, "1,073,741,824"}, {-1234, "-1,234"}, {-0.4, "0"}, {2.5, "3"},
	{math.NaN(), "n/a"}, {math.Inf(1), "n/a"},
}

func TestThousands(t *testing.T) {
	for _, tt := range thousandsTests {
		if got := Thousands(tt.in); got != tt.want {
			t.Errorf("Thousands(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUnit(t *testing.T) {
	for in, want := range map[string]string{"iops": "IOPS", "MBps": "MB/s", "other": "other"} {
		if got := Unit(in); got != want {
			t.Errorf("Unit(%q) = %q, want %q", in, got, want)
		}
	}
}
