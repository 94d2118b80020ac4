package host

import (
	"math"
	"testing"
)

// Two readings of a 2-CPU machine's /proc/stat (Linux 6.x layout), 1 s
// (100 ticks) apart: CPU 0 busy 99 ticks of 100, CPU 1 busy 20.
var (
	stat0 = []byte(`cpu  1000 0 500 8000 100 0 10 0 0 0
cpu0 500 0 250 4000 50 0 5 0 0 0
cpu1 500 0 250 4000 50 0 5 0 0 0
intr 12345
ctxt 999
`)
	stat1 = []byte(`cpu  1119 0 500 8080 101 0 10 0 0 0
cpu0 570 0 278 4000 51 0 6 0 0 0
cpu1 520 0 250 4080 50 0 5 0 0 0
intr 12399
`)
)

func TestBusy(t *testing.T) {
	before, err := ParseCPUTimes(stat0)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseCPUTimes(stat1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cpus []int
		want float64
		ok   bool
	}{
		{[]int{0}, 0.99, true},
		{[]int{1}, 0.20, true},
		{[]int{0, 1}, 0.595, true},
		{[]int{7}, 0, false},
	} {
		got, ok := Busy(before, after, tt.cpus)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Busy(%v) = %v, %v; want %v, %v", tt.cpus, got, ok, tt.want, tt.ok)
		}
	}
	if _, err := ParseCPUTimes([]byte("cpu0 1 2 x 4 5\n")); err == nil {
		t.Error("ParseCPUTimes(cpu0 with a word) = nil error")
	}
	if live, err := ReadCPUTimes(); err != nil || len(live) == 0 {
		t.Errorf("ReadCPUTimes() = %d CPUs, %v", len(live), err)
	}
}
