package host

import (
	"fmt"
	"math"
	"strings"
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

// manyCoreStat is /proc/stat of a two-socket host of 192 CPUs (8 NUMA
// nodes of 24) after ticks ticks per CPU, in the kernel's layout: CPU c
// has done busy(c) of every 100 ticks in user and system time, the rest
// idle and iowait.
func manyCoreStat(ticks uint64, busy func(c int) uint64) []byte {
	var b strings.Builder
	b.WriteString("cpu  0 0 0 0 0 0 0 0 0 0\n")
	for c := range 192 {
		n := ticks / 100 * busy(c)
		user, system := n*3/4, n-n*3/4
		idle := ticks - n
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d %d 0 0 0 0 0\n", c, 1000+user, 500+system, 9000+idle-idle/10, 100+idle/10)
	}
	b.WriteString("intr 1\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 9\n")
	return []byte(b.String())
}

// On a 192-CPU host, a drive's jobs pinned to its node's 24 CPUs: 8 of
// them pegged (100 of 100 ticks) and the other 16 idle read 33 % busy,
// the figure that hid 8 pegged jobs; another node busy at 97 % is seen.
func TestBusyManyCores(t *testing.T) {
	node1 := func(c int) bool { return c >= 24 && c < 48 }
	before, err := ParseCPUTimes(manyCoreStat(0, func(int) uint64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseCPUTimes(manyCoreStat(6000, func(c int) uint64 {
		switch {
		case node1(c) && c < 32:
			return 100 // 8 fio jobs, one per CPU
		case c >= 48 && c < 72:
			return 97
		}
		return 0
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 192 {
		t.Fatalf("%d CPUs read, want 192", len(after))
	}
	cpus := func(lo, hi int) []int {
		var out []int
		for c := lo; c < hi; c++ {
			out = append(out, c)
		}
		return out
	}
	for _, tt := range []struct {
		cpus []int
		want float64
	}{
		{cpus(24, 48), 8.0 / 24},
		{cpus(24, 32), 1},
		{cpus(48, 72), 0.97},
		{cpus(0, 192), (8 + 24*0.97) / 192},
	} {
		got, ok := Busy(before, after, tt.cpus)
		if !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Busy(CPUs %d-%d) = %v, %v; want %v", tt.cpus[0], tt.cpus[len(tt.cpus)-1], got, ok, tt.want)
		}
	}
}
