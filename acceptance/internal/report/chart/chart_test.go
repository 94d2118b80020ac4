package chart

import "testing"

// The labels are chosen to read well: millions of IOPS and GB/s (10^9 B/s)
// with about three significant digits.
func TestLabel(t *testing.T) {
	tests := []struct {
		v      float64
		metric string
		out    string
	}{
		{57_400_000, "iops", "57.4 M IOPS"},
		{2_409_894, "iops", "2.41 M IOPS"},
		{157_885, "iops", "0.16 M IOPS"},
		{346_000, "MBps", "346 GB/s"},
		{14_506, "MBps", "14.5 GB/s"},
	}
	for _, tt := range tests {
		if out := Label(tt.v, tt.metric); out != tt.out {
			t.Errorf("label for %v %s = %q, want %q", tt.v, tt.metric, out, tt.out)
		}
	}
}

// A lot chart needs a cell to draw.
func TestLotNoCells(t *testing.T) {
	if _, err := Lot(nil); err == nil {
		t.Error("Lot(nil) drew a chart")
	}
}
