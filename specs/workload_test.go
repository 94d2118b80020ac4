package specs

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// twinSpec has write twins for 4 KiB random and 128 KiB sequential
// workloads but not for 8 KiB or 64 KiB ones.
var twinSpec = &Spec{Workloads: []Workload{
	{Name: "4K RR", RW: "randread", BS: 4096, IODepth: 64, NumJobs: 8, Metric: IOPS, RWMixRead: -1},
	{Name: "4K RW", RW: "randwrite", BS: 4096, IODepth: 64, NumJobs: 8, Metric: IOPS, RWMixRead: -1},
	{Name: "4K RW QD1", RW: "randwrite", BS: 4096, IODepth: 1, NumJobs: 1, Metric: IOPS, RWMixRead: -1},
	{Name: "4K Mixed", RW: "randrw", BS: 4096, IODepth: 64, NumJobs: 8, Metric: IOPS, RWMixRead: 70},
	{Name: "128K SR", RW: "read", BS: 131072, IODepth: 128, NumJobs: 1, Metric: MBps, RWMixRead: -1},
	{Name: "128K SW", RW: "write", BS: 131072, IODepth: 128, NumJobs: 1, Metric: MBps, RWMixRead: -1},
	{Name: "128K Seq Mixed", RW: "rw", BS: 131072, IODepth: 32, NumJobs: 1, Metric: MBps, RWMixRead: 50},
	{Name: "8K RR", RW: "randread", BS: 8192, IODepth: 32, NumJobs: 4, Metric: IOPS, RWMixRead: -1},
	{Name: "8K RR by 4K", RW: "randread", BS: 8192, IODepth: 64, NumJobs: 8, Metric: IOPS, RWMixRead: -1, Precondition: "4K RW QD1"},
	{Name: "8K RR via 4K RR", RW: "randread", BS: 8192, IODepth: 64, NumJobs: 8, Metric: IOPS, RWMixRead: -1, Precondition: "4K RR"},
	{Name: "64K SR", RW: "read", BS: 65536, IODepth: 16, NumJobs: 2, Metric: MBps, RWMixRead: -1, Runtime: time.Second},
	{Name: "Loop A", RW: "randread", BS: 4096, IODepth: 1, NumJobs: 1, Metric: IOPS, RWMixRead: -1, Precondition: "Loop B"},
	{Name: "Loop B", RW: "randread", BS: 4096, IODepth: 1, NumJobs: 1, Metric: IOPS, RWMixRead: -1, Precondition: "Loop A"},
	{Name: "Dangling", RW: "read", BS: 131072, IODepth: 1, NumJobs: 1, Metric: MBps, RWMixRead: -1, Precondition: "nothing"},
}}

type writeTwinTest struct {
	workload string
	want     string // name of the twin in twinSpec, or of a made-up twin
}

var writeTwinTests = []writeTwinTest{
	{"4K RW", "4K RW"},                // write-only: itself
	{"4K RW QD1", "4K RW QD1"},        // write-only: itself, not the first match
	{"128K SW", "128K SW"},            // sequential write-only: itself
	{"4K RR", "4K RW"},                // same bs, random: the first randwrite
	{"4K Mixed", "4K RW"},             // randrw pairs with randwrite
	{"128K SR", "128K SW"},            // read pairs with write
	{"128K Seq Mixed", "128K SW"},     // rw pairs with write
	{"8K RR", "8K RR (write twin)"},   // no 8 KiB randwrite: made up
	{"8K RR by 4K", "4K RW QD1"},      // precondition names a write-only workload
	{"8K RR via 4K RR", "4K RW"},      // precondition names a read: its twin
	{"64K SR", "64K SR (write twin)"}, // no 64 KiB write: made up
	{"Loop A", "4K RW"},               // a precondition loop ends in the default rule
	{"Dangling", "128K SW"},           // an unknown precondition falls back to the default
}

func TestWriteTwin(t *testing.T) {
	for _, tt := range writeTwinTests {
		w, ok := twinSpec.Workload(tt.workload)
		if !ok {
			t.Fatalf("twinSpec has no workload %q", tt.workload)
		}
		got := twinSpec.WriteTwin(w)
		if want, ok := twinSpec.Workload(tt.want); ok {
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("WriteTwin(%q) mismatch (-want +got):\n%s", tt.workload, diff)
			}
			continue
		}
		rw := "write"
		if w.IsRandom() {
			rw = "randwrite"
		}
		want := Workload{Name: tt.want, RW: rw, BS: w.BS, IODepth: w.IODepth, NumJobs: w.NumJobs, Metric: w.Metric, RWMixRead: -1}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WriteTwin(%q) mismatch (-want +got):\n%s", tt.workload, diff)
		}
	}
}

// TestWriteTwinBuiltIn checks the rule on the brief's workloads: every
// read and mixed workload pairs with the write of its block size.
func TestWriteTwinBuiltIn(t *testing.T) {
	s := loadBuiltIn(t)
	want := map[string]string{
		"4KB Random Read":                   "4KB Random Write",
		"4KB Random Write":                  "4KB Random Write",
		"8KB Random Read":                   "8KB Random Write",
		"8KB Random Write":                  "8KB Random Write",
		"128KB Sequential Read":             "128KB Sequential Write",
		"128KB Sequential Write":            "128KB Sequential Write",
		"4KB Random Mixed Read Write 70/30": "4KB Random Write",
		"8KB Random Mixed Read Write 70/30": "8KB Random Write",
	}
	for _, w := range s.Workloads {
		if got := s.WriteTwin(w).Name; got != want[w.Name] {
			t.Errorf("WriteTwin(%q) = %q, want %q", w.Name, got, want[w.Name])
		}
	}
}

func TestForScaling(t *testing.T) {
	s := loadBuiltIn(t)
	rr, _ := s.Workload("8KB Random Read")
	got := s.ForScaling(rr)
	if got.IODepth != 32 || got.NumJobs != 8 {
		t.Errorf("ForScaling(8KB Random Read) iodepth, numjobs = %d, %d; want 32, 8", got.IODepth, got.NumJobs)
	}
	if rr.IODepth != 64 {
		t.Errorf("ForScaling changed the spec's workload: iodepth %d", rr.IODepth)
	}
	if w, _ := s.Workload("8KB Random Read"); w.IODepth != 64 {
		t.Errorf("ForScaling changed the spec: iodepth %d", w.IODepth)
	}
	rw, _ := s.Workload("4KB Random Write")
	if diff := cmp.Diff(rw, s.ForScaling(rw)); diff != "" {
		t.Errorf("ForScaling(4KB Random Write) changed a workload without override (-want +got):\n%s", diff)
	}
	only := &Spec{Scaling: Scaling{Override: map[string]Override{"x": {NumJobs: 3}}}}
	if got := only.ForScaling(Workload{Name: "x", IODepth: 7, NumJobs: 1}); got.IODepth != 7 || got.NumJobs != 3 {
		t.Errorf("ForScaling with numjobs override = iodepth %d numjobs %d, want 7, 3", got.IODepth, got.NumJobs)
	}
}

func TestLookup(t *testing.T) {
	s := loadBuiltIn(t)
	if w, ok := s.Workload("128KB Sequential Read"); !ok || w.BS != 131072 {
		t.Errorf("Workload(128KB Sequential Read) = %+v, %v", w, ok)
	}
	if _, ok := s.Workload("4KB random read"); ok {
		t.Errorf("Workload matched a name differing in case")
	}
	if c, ok := s.Capacity("7.68TB"); !ok || c.Bytes != 7_681_501_126_656 {
		t.Errorf("Capacity(7.68TB) = %+v, %v", c, ok)
	}
	if _, ok := s.Capacity("7.68"); ok {
		t.Errorf("Capacity(7.68) found a capacity")
	}
}

type patternTest struct {
	rw                  string
	writeOnly, isRandom bool
}

var patternTests = []patternTest{
	{"read", false, false},
	{"write", true, false},
	{"randread", false, true},
	{"randwrite", true, true},
	{"rw", false, false},
	{"readwrite", false, false},
	{"randrw", false, true},
}

func TestPatterns(t *testing.T) {
	for _, tt := range patternTests {
		w := Workload{RW: tt.rw}
		if got := w.IsWriteOnly(); got != tt.writeOnly {
			t.Errorf("Workload{RW: %q}.IsWriteOnly() = %v, want %v", tt.rw, got, tt.writeOnly)
		}
		if got := w.IsRandom(); got != tt.isRandom {
			t.Errorf("Workload{RW: %q}.IsRandom() = %v, want %v", tt.rw, got, tt.isRandom)
		}
	}
}

func TestRuntimeOr(t *testing.T) {
	if got := (Workload{}).RuntimeOr(time.Minute); got != time.Minute {
		t.Errorf("RuntimeOr without runtime = %v, want 1m", got)
	}
	if got := (Workload{Runtime: 2 * time.Second}).RuntimeOr(time.Minute); got != 2*time.Second {
		t.Errorf("RuntimeOr with runtime 2s = %v, want 2s", got)
	}
}

type subtestNameTest struct {
	in, out string
}

var subtestNameTests = []subtestNameTest{
	{"4KB Random Read", "4KB_Random_Read"},
	{"4KB Random Mixed Read Write 70/30", "4KB_Random_Mixed_Read_Write_70-30"},
	{"1.92TB", "1.92TB"},
	{"a/b c/d", "a-b_c-d"},
	{"", ""},
}

func TestSubtestName(t *testing.T) {
	for _, tt := range subtestNameTests {
		if got := SubtestName(tt.in); got != tt.out {
			t.Errorf("SubtestName(%q) = %q, want %q", tt.in, got, tt.out)
		}
	}
}

type readsWritesTest struct {
	rw            string
	rwmixread     int // -1: not set
	reads, writes bool
}

var readsWritesTests = []readsWritesTest{
	{"read", -1, true, false},
	{"randread", -1, true, false},
	{"write", -1, false, true},
	{"randwrite", -1, false, true},
	{"randrw", -1, true, true}, // fio's default of 50 % reads
	{"randrw", 70, true, true},
	{"rw", 100, true, false},
	{"readwrite", 0, false, true},
	{"", -1, false, false},
}

func TestReadsWrites(t *testing.T) {
	for _, tt := range readsWritesTests {
		w := Workload{RW: tt.rw, RWMixRead: tt.rwmixread}
		if got := w.Reads(); got != tt.reads {
			t.Errorf("Workload{RW: %q, RWMixRead: %d}.Reads() = %v, want %v", tt.rw, tt.rwmixread, got, tt.reads)
		}
		if got := w.Writes(); got != tt.writes {
			t.Errorf("Workload{RW: %q, RWMixRead: %d}.Writes() = %v, want %v", tt.rw, tt.rwmixread, got, tt.writes)
		}
	}
}
