package ocp

import (
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

type latencyOverTest struct {
	name          string
	before, after nvme.OCPLatency
	want          string
}

var latencyOverTests = []latencyOverTest{
	{"counted", c3(10, 20, 30, false), c3(1010, 220, 33, false),
		"latency monitor (C3) active buckets: bucket 0: read +1000, write +200, trim +3; bucket 1: read +0, write +0, trim +0; bucket 2: read +0, write +0, trim +0; bucket 3: read +0, write +0, trim +0"},
	// The drive clears its active buckets when their timer expires: a
	// counter that went down is reset, not 2^64 - 480 commands.
	{"reset", c3(10, 500, 30, false), c3(1010, 20, 33, false),
		"latency monitor (C3) active buckets: bucket 0: read +1000, write reset by the drive (500 → 20), trim +3; bucket 1: read +0, write +0, trim +0; bucket 2: read +0, write +0, trim +0; bucket 3: read +0, write +0, trim +0"},
	{"nvme-cli before 2.5", c3(0, 20, 30, true), c3(0, 220, 33, true),
		"latency monitor (C3) active buckets: bucket 0: read n/a, write +200, trim +3; bucket 1: read n/a, write +0, trim +0; bucket 2: read n/a, write +0, trim +0; bucket 3: read n/a, write +0, trim +0 (read n/a: nvme-cli before 2.5 does not print the Read counters)"},
}

func c3(read, write, trim uint64, noRead bool) nvme.OCPLatency {
	return nvme.OCPLatency{FeatureStatus: 1, Active: [4]nvme.LatencyBucket{{Read: read, Write: write, Trim: trim}}, NoRead: noRead}
}

func TestLatencyOver(t *testing.T) {
	for _, tt := range latencyOverTests {
		if got := LatencyOver(tt.before, tt.after); got != tt.want {
			t.Errorf("%s: LatencyOver = %q, want %q", tt.name, got, tt.want)
		}
	}
}
