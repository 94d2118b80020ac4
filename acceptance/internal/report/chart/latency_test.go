package chart

import (
	"encoding/xml"
	"strings"
	"testing"
)

// The latency chart names every percentile drawn, the bound, min_iops
// and the knee, and is well-formed SVG; points without a figure are left
// out rather than drawn at 0 on a log scale.
func TestLatencyChart(t *testing.T) {
	pts := []LatencyPoint{
		{IOPS: 523, Us: [5]float64{1000, 21889, 30000, 40000, 50000}},
		{IOPS: 2011, Us: [5]float64{900, 18219, 25000, 0, 60000}},
		{IOPS: 1905, Us: [5]float64{16000, 158335, 200000, 250000, 300000}},
	}
	svg, err := Latency("64MiB 4KB Random Read: latency at load", pts, LatencyTarget{Bound: "read p99 ≤ 100,000 µs", BoundUs: 100_000, MinIOPS: 400}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("Latency() is not XML: %v", err)
	}
	for _, want := range []string{"p50", "p99", "p99.9", "p99.99", "max", "bound: read p99 ≤ 100,000 µs", "min_iops 400 IOPS", "knee", "log scale"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("Latency() lacks %q", want)
		}
	}
	if _, err := Latency("empty", nil, LatencyTarget{}, -1); err != nil {
		t.Errorf("Latency() of no points = %v, want a chart", err)
	}
}
