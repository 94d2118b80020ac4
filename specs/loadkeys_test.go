package specs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/specs/bssplit"
)

// TestLoadLatencySpec loads a spec with every application key and a
// latency-at-load target, and checks what each key became.
func TestLoadLatencySpec(t *testing.T) {
	s, err := Load("testdata/latency.toml")
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	rr, _ := s.Workload("4KB Random Read")
	if !cmp.Equal(rr.SweepIODepth, []int{1, 2, 4, 8, 16, 32}) || !cmp.Equal(rr.SweepRateIOPS, []int64{500, 1000, 4000}) || !rr.Sweeps() {
		t.Errorf("sweeps = %v, %v; want [1 2 4 8 16 32], [500 1000 4000]", rr.SweepIODepth, rr.SweepRateIOPS)
	}
	mix, _ := s.Workload("App Mix")
	want := []bssplit.Share{{BS: 4096, Pct: 60}, {BS: 16384, Pct: 30}, {BS: 131072, Pct: 10}}
	if !cmp.Equal(mix.BSSplit, want) || bssplit.Fio(mix.BSSplit) != "4096/60:16384/30:131072/10" {
		t.Errorf("bssplit = %v (%q), want %v", mix.BSSplit, bssplit.Fio(mix.BSSplit), want)
	}
	if mix.RW != "randwrite" || mix.RateIOPS != 250 || mix.ThinkTime != 100*time.Microsecond || mix.BufferCompressPercentage != 50 {
		t.Errorf("App Mix = rw %q rate_iops %d thinktime %v compress %d; want randwrite 250 100µs 50", mix.RW, mix.RateIOPS, mix.ThinkTime, mix.BufferCompressPercentage)
	}
	if !mix.Writes() || !mix.WritesData() || mix.Reads() {
		t.Errorf("randwrite: Writes %v WritesData %v Reads %v, want true true false", mix.Writes(), mix.WritesData(), mix.Reads())
	}
	c, _ := s.Capacity("1.92TB")
	a, ok := c.AtLatency["4KB Random Read"]
	if !ok || a.Limit.Key != "read_p99_us" || a.Limit.Percentile != 99 || a.Limit.Limit != 20*time.Millisecond || a.MinIOPS != 1800 {
		t.Errorf("at_latency = %+v, %v; want read_p99_us 20ms min 1800", a, ok)
	}
}

// TestTrimWorkloads checks that a trim-only workload changes the drive
// (Writes) without writing data, so no write latency limit applies.
func TestTrimWorkloads(t *testing.T) {
	for _, tt := range []struct {
		rw                         string
		writes, writesData, random bool
	}{
		{"trim", true, false, false},
		{"randtrim", true, false, true},
		{"trimwrite", true, true, false},
		{"randtrimwrite", true, true, true},
		{"randread", false, false, true},
	} {
		w := Workload{RW: tt.rw, RWMixRead: -1}
		if w.Writes() != tt.writes || w.WritesData() != tt.writesData || w.IsRandom() != tt.random {
			t.Errorf("%s: Writes %v WritesData %v IsRandom %v, want %v %v %v", tt.rw, w.Writes(), w.WritesData(), w.IsRandom(), tt.writes, tt.writesData, tt.random)
		}
	}
}
