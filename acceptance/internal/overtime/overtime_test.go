package overtime

import (
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/record"
)

type percentileTest struct {
	key, dir string
	p        float64
	ok       bool
}

var percentileTests = []percentileTest{
	{"read_p99_us", "read", 99, true},
	{"read_p99_9_us", "read", 99.9, true},
	{"write_p99_999_us", "write", 99.999, true},
	{"read_max_us", "read", 100, true},
	{"read_p50_us", "write", 0, false},
}

// A QoS limit is drawn on its direction at its percentile.
func TestPercentile(t *testing.T) {
	for _, tt := range percentileTests {
		p, ok := percentile(tt.key, tt.dir)
		if p != tt.p || ok != tt.ok {
			t.Errorf("percentile(%q, %q) = %v, %v, want %v, %v", tt.key, tt.dir, p, ok, tt.p, tt.ok)
		}
	}
}

// A chart names the date the run started and whether its drives were
// measured live, replayed or not; a recording without the date says so.
func TestHeadingOf(t *testing.T) {
	for _, tt := range []struct {
		info       record.Run
		date, mode string
	}{
		{record.Run{Mode: "record", Started: "2026-12-03T22:56:57Z"}, "2026-12-03", "live"},
		{record.Run{Mode: "record"}, "date not recorded", "live"},
		{record.Run{Mode: "record", Reconstructed: true}, "date not recorded", "reconstructed"},
	} {
		h := HeadingOf("D7-PS1010", tt.info)
		if h.Model != "D7-PS1010" || h.Date != tt.date || h.Mode != tt.mode {
			t.Errorf("HeadingOf(%+v) = %+v, want date %q, mode %q", tt.info, h, tt.date, tt.mode)
		}
	}
}
