package specs

import (
	"strings"
	"testing"
	"time"
)

const powerLossHead = `model = "m"
source = "s"
[method]
runtime = "1s"
[[workload]]
name = "w"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
metric = "iops"
[[capacity]]
name = "c"
bytes = 1000000
[capacity.spec]
w = 1.0
`

// A [power_loss] table's defaults, and each key as written.
func TestPowerLossKeys(t *testing.T) {
	s, err := Parse("pl.toml", []byte(powerLossHead+"[power_loss]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := PowerLoss{Cycles: 1, ReadyWithin: 60 * time.Second, CutAfter: 5 * time.Second, Size: 16 << 30, BS: 4096, FlushEvery: 32, MaxCutGap: 5 * time.Second, Line: 17}
	if s.PowerLoss == nil || *s.PowerLoss != want {
		t.Errorf("Parse([power_loss]) = %+v, want %+v", s.PowerLoss, want)
	}
	s, err = Parse("pl.toml", []byte(powerLossHead+"[power_loss]\ncycles = 3\nplp = true\nready_within = \"2m\"\ncut_after = \"1s\"\nsize = \"64m\"\nbs = \"8k\"\nflush_every = 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	want = PowerLoss{Cycles: 3, PLP: true, ReadyWithin: 2 * time.Minute, CutAfter: time.Second, Size: 64 << 20, BS: 8192, FlushEvery: 4, MaxCutGap: 5 * time.Second, Line: 17}
	if s.PowerLoss == nil || *s.PowerLoss != want {
		t.Errorf("Parse([power_loss] set) = %+v, want %+v", s.PowerLoss, want)
	}
	if s, _ := Parse("pl.toml", []byte(powerLossHead)); s == nil || s.PowerLoss != nil {
		t.Errorf("Parse(no [power_loss]) = %+v, want no power-loss test", s)
	}
}

// Each bad [power_loss] key is named on its line with the fix.
func TestPowerLossBad(t *testing.T) {
	for _, tt := range []struct{ keys, want string }{
		{"cycles = 0", "pl.toml:18: power_loss: cycles must be >= 1, got 0"},
		{"cycles = 5000", "pl.toml:18: power_loss: cycles 5000 is more than 1000"},
		{"plp = \"yes\"", "pl.toml:18: power_loss: plp must be true or false"},
		{"ready_within = \"soon\"", `pl.toml:18: power_loss: ready_within "soon" is not a duration`},
		{"cut_after = \"0s\"", `pl.toml:18: power_loss: cut_after must be > 0`},
		// A cycle's waits add several of each: 1281023h would overflow them.
		{"cut_after = \"1281023h53m38s\"", "pl.toml:18: power_loss: cut_after 1281023h53m38s is longer than 1h0m0s"},
		{"ready_within = \"61m\"", "pl.toml:18: power_loss: ready_within 1h1m0s is longer than 1h0m0s"},
		{"size = \"4k\"", "pl.toml:18: power_loss: size must hold at least two blocks of bs (8192 bytes)"},
		{"bs = 1000", "pl.toml:18: power_loss: bs must be > 0 and a multiple of 512 bytes"},
		{"flush_every = 0", "pl.toml:18: power_loss: flush_every must be >= 1, got 0"},
		{"cycle = 3", `pl.toml:18: power_loss: unknown key "cycle"`},
	} {
		_, err := Parse("pl.toml", []byte(powerLossHead+"[power_loss]\n"+tt.keys+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) error = %v, want %q", tt.keys, err, tt.want)
		}
	}
}
