package chart

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

var heading = Heading{Model: "D7-PS1010", Date: "2026-12-03", Mode: "live"}

// series is n drives' figures a second for secs seconds, drive i at
// base × (1 − i/100), with a slow start (the write cliff).
func series(n, secs int, base float64) []Series {
	out := make([]Series, n)
	for i := range out {
		s := Series{Name: fmt.Sprintf("/dev/nvme%dn1", i)}
		written := 0.0
		for k := 1; k <= secs; k++ {
			v := base * (1 - float64(i)/100)
			if k < secs/3 {
				v *= 3
			}
			written += v * 4096
			s.Seconds, s.Values, s.Written = append(s.Seconds, float64(k)), append(s.Values, v), append(s.Written, written)
		}
		out[i] = s
	}
	return out
}

// A write saturation chart shades the steady window with its mean and
// range limits, and its title names the model, the date and the mode; a
// drive that did not reach steady state has its window flagged.
func TestWSATWindow(t *testing.T) {
	for _, attained := range []bool{true, false} {
		d := series(1, 600, 1000)
		d[0].Window = &Window{From: 300, To: 600, Mean: 1000, RangePct: 20, Attained: attained}
		for _, byBytes := range []bool{false, true} {
			svg, err := WSAT(heading, "step 5, random preconditioning", d, byBytes)
			if err != nil {
				t.Fatal(err)
			}
			s := string(svg)
			want := "steady window"
			if !attained {
				want = "window judged (not steady)"
			}
			for _, w := range []string{want, "range limit ±10 %", "window mean 1,000 IOPS", "D7-PS1010 · 2026-12-03 · live"} {
				if !strings.Contains(s, w) {
					t.Errorf("WSAT(attained %v, bytes %v) holds no %q", attained, byBytes, w)
				}
			}
		}
	}
	d := series(1, 60, 1000)
	svg, err := WSAT(heading, "step 5", d, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(svg), "steady window") {
		t.Error("WSAT without a window draws one")
	}
}

// At 24 drives a write saturation chart is small multiples, each panel
// named by its drive, and an 8-hour step is drawn with at most
// maxPanelPoints points a drive, so that the chart stays a few MB.
func TestWSAT24Drives(t *testing.T) {
	d := series(24, 8*3600, 50000)
	svg, err := WSAT(heading, "step 5", d, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		if !strings.Contains(string(svg), fmt.Sprintf(">/dev/nvme%dn1<", i)) {
			t.Errorf("no panel named /dev/nvme%dn1", i)
		}
	}
	if len(svg) > 4<<20 {
		t.Errorf("24 drives × 8 hours: %d bytes of SVG, want at most 4 MiB", len(svg))
	}
}

// A scaling cell's consistency chart is a band of its drives with the
// lowest drive named, the mean and the spec a drive.
func TestConsistencyBand(t *testing.T) {
	d := series(24, 60, 1000)
	svg, err := Consistency(heading, "1.92TB, 4KB Random Read, 24 drives", "IOPS", d, 23, 990, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"lowest to highest of 24 drives", "median drive", "lowest: /dev/nvme23n1", "mean a drive 990 IOPS", "spec a drive 1,000 IOPS"} {
		if !strings.Contains(string(svg), w) {
			t.Errorf("Consistency of 24 drives holds no %q", w)
		}
	}
	one, err := Consistency(heading, "1.92TB, 4KB Random Read", "IOPS", d[:1], 0, 1000, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(one); strings.Contains(s, "lowest") || !strings.Contains(s, "/dev/nvme0n1, a second") || !strings.Contains(s, "spec 1,000 IOPS") {
		t.Error("Consistency of one drive is not its dots with the spec")
	}
}

// An exceedance chart draws 1 − CDF from fio's bins, and each QoS limit
// as met or missed.
func TestExceedance(t *testing.T) {
	bins := map[int64]int64{}
	for k := range 1000 {
		bins[int64(50_000+k*100)] = 1000 - int64(k) // 50 µs to 150 µs
	}
	bins[5_000_000] = 1 // one 5 ms outlier
	svg, err := Exceedance(heading, "1.92TB, 4KB Random Read: latency exceedance", []Distribution{
		{Dir: "read", Bins: bins, Limits: []LatencyLimit{{Percentile: 99, Us: 200, Pass: true}, {Percentile: 99.999, Us: 1000, Pass: false}}},
		{Dir: "write", Percentiles: map[float64]float64{50: 20, 99: 80, 99.9: 300}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"read p99 ≤ 200 µs (met)", "read p99.999 ≤ 1,000 µs (missed)", "write (percentiles)", "share of I/Os slower"} {
		if !strings.Contains(string(svg), w) {
			t.Errorf("Exceedance holds no %q", w)
		}
	}
	// The last share before the outlier is its one I/O in all.
	pts := exceedance(Distribution{Bins: bins})
	n := 0.0
	for _, c := range bins {
		n += float64(c)
	}
	if last := pts[len(pts)-1]; math.Abs(last.Y-1/n) > 1e-12 || last.X != 149.9 {
		t.Errorf("last point %+v, want (149.9 µs, 1/%v)", last, n)
	}
	if _, err := Exceedance(heading, "x", nil); err == nil {
		t.Error("Exceedance with nothing to draw drew a chart")
	}
}
