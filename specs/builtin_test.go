package specs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// briefSpec is the Solidigm D7-PS1010 performance brief (2024), Tables 2-5:
// the spec values (not the measured Actual values), IOPS for random
// workloads and MB/s (10^6 B/s) for sequential ones.
var briefSpec = map[string]map[string]float64{
	"1.92TB": { // Table 2
		"4KB Random Read":                   2350000,
		"4KB Random Write":                  150000,
		"8KB Random Read":                   1200000,
		"8KB Random Write":                  75000,
		"128KB Sequential Read":             14500,
		"128KB Sequential Write":            4100,
		"4KB Random Mixed Read Write 70/30": 335000,
		"8KB Random Mixed Read Write 70/30": 175000,
	},
	"3.84TB": { // Table 3
		"4KB Random Read":                   3100000,
		"4KB Random Write":                  315000,
		"8KB Random Read":                   1550000,
		"8KB Random Write":                  157000,
		"128KB Sequential Read":             14500,
		"128KB Sequential Write":            8200,
		"4KB Random Mixed Read Write 70/30": 729000,
		"8KB Random Mixed Read Write 70/30": 364000,
	},
	"7.68TB": { // Table 4
		"4KB Random Read":                   2800000,
		"4KB Random Write":                  400000,
		"8KB Random Read":                   1400000,
		"8KB Random Write":                  180000,
		"128KB Sequential Read":             14500,
		"128KB Sequential Write":            9300,
		"4KB Random Mixed Read Write 70/30": 880000,
		"8KB Random Mixed Read Write 70/30": 440000,
	},
	"15.36TB": { // Table 5
		"4KB Random Read":                   2750000,
		"4KB Random Write":                  380000,
		"8KB Random Read":                   1350000,
		"8KB Random Write":                  180000,
		"128KB Sequential Read":             14500,
		"128KB Sequential Write":            9300,
		"4KB Random Mixed Read Write 70/30": 880000,
		"8KB Random Mixed Read Write 70/30": 440000,
	},
}

func loadBuiltIn(t testing.TB) *Spec {
	t.Helper()
	s, err := Load("solidigm-d7-ps1010")
	if err != nil {
		t.Fatalf("Load(solidigm-d7-ps1010): %v", err)
	}
	return s
}

func TestBuiltIn(t *testing.T) {
	if diff := cmp.Diff([]string{"solidigm-d7-ps1010"}, BuiltIn()); diff != "" {
		t.Errorf("BuiltIn() mismatch (-want +got):\n%s", diff)
	}
	for _, name := range BuiltIn() {
		s, err := Load(name)
		if err != nil {
			t.Errorf("Load(%q): %v", name, err)
			continue
		}
		if s.Name != name || s.File != "specs/"+name+".toml" {
			t.Errorf("Load(%q) Name, File = %q, %q", name, s.Name, s.File)
		}
		if err := checkSpec(s); err != nil {
			t.Errorf("Load(%q) breaks an invariant: %v", name, err)
		}
	}
}

func TestBuiltInValues(t *testing.T) {
	s := loadBuiltIn(t)
	got := map[string]map[string]float64{}
	n := 0
	for _, c := range s.Capacities {
		got[c.Name] = c.Spec
		n += len(c.Spec)
	}
	if diff := cmp.Diff(briefSpec, got); diff != "" {
		t.Errorf("built-in spec values mismatch (-brief +loaded):\n%s", diff)
	}
	if n != 32 {
		t.Errorf("built-in spec has %d cells, want 32", n)
	}
}

func TestBuiltInMethod(t *testing.T) {
	s := loadBuiltIn(t)
	wantBytes := map[string]int64{
		"1.92TB":  1_920_383_410_176,
		"3.84TB":  3_840_755_982_336,
		"7.68TB":  7_681_501_126_656,
		"15.36TB": 15_362_991_415_296,
	}
	for _, c := range s.Capacities {
		if c.Bytes != wantBytes[c.Name] {
			t.Errorf("capacity %q bytes = %d, want %d", c.Name, c.Bytes, wantBytes[c.Name])
		}
	}
	if diff := cmp.Diff(Method{Runtime: 60 * time.Second, RampTime: 10 * time.Second, IOEngine: "libaio", Direct: true}, s.Method); diff != "" {
		t.Errorf("method (-want +got):\n%s", diff)
	}
	wantPre := withSteadyDefaults(Precondition{Purge: "format", FillPasses: 2, RandomRuntime: 30 * time.Minute})
	if diff := cmp.Diff(wantPre, s.Precondition); diff != "" {
		t.Errorf("precondition (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultHealth(), s.Health); diff != "" {
		t.Errorf("health: the brief states none, want the defaults (-want +got):\n%s", diff)
	}
	for _, c := range s.Capacities {
		if c.QoS != nil {
			t.Errorf("capacity %q: latency limits %v; the brief publishes none", c.Name, c.QoS)
		}
	}
	wantScaling := Scaling{
		Capacity:  "1.92TB",
		Drives:    []int{1, 2, 4, 8, 12, 16, 20, 24},
		Baseline:  "spec",
		Tolerance: 0.10,
		Override:  map[string]Override{"8KB Random Read": {IODepth: 32}},
	}
	if diff := cmp.Diff(wantScaling, s.Scaling); diff != "" {
		t.Errorf("scaling (-want +got):\n%s", diff)
	}
	type shape struct {
		RW               string
		BS               int64
		IODepth, NumJobs int
		Metric           Metric
		RWMixRead        int
	}
	random := func(rw string, bs int64) shape { return shape{rw, bs, 64, 8, IOPS, -1} }
	want := map[string]shape{
		"4KB Random Read":                   random("randread", 4096),
		"4KB Random Write":                  random("randwrite", 4096),
		"8KB Random Read":                   random("randread", 8192),
		"8KB Random Write":                  random("randwrite", 8192),
		"128KB Sequential Read":             {"read", 131072, 128, 1, MBps, -1},
		"128KB Sequential Write":            {"write", 131072, 128, 1, MBps, -1},
		"4KB Random Mixed Read Write 70/30": {"randrw", 4096, 64, 8, IOPS, 70},
		"8KB Random Mixed Read Write 70/30": {"randrw", 8192, 64, 8, IOPS, 70},
	}
	got := map[string]shape{}
	for _, w := range s.Workloads {
		got[w.Name] = shape{w.RW, w.BS, w.IODepth, w.NumJobs, w.Metric, w.RWMixRead}
		if w.Precondition != "" || w.Runtime != 0 {
			t.Errorf("workload %q: precondition %q, runtime %v; want the defaults", w.Name, w.Precondition, w.Runtime)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
}

func BenchmarkParseBuiltIn(b *testing.B) {
	data, err := builtin.ReadFile("solidigm-d7-ps1010.toml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("solidigm-d7-ps1010.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
