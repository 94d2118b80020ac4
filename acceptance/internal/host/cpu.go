package host

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CPUTimes is each CPU's time so far, in the kernel's clock ticks, as
// /proc/stat's cpuN lines give it: busy (user, nice, system, irq,
// softirq, steal) and idle (idle, iowait).
type CPUTimes map[int]struct{ Busy, Idle uint64 }

// ReadCPUTimes reads /proc/stat.
func ReadCPUTimes() (CPUTimes, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	return ParseCPUTimes(data)
}

// ParseCPUTimes reads /proc/stat's per-CPU lines ("cpu0 user nice system
// idle iowait irq softirq steal guest guest_nice"); guest time is already
// in user time, so it is not added again.
func ParseCPUTimes(data []byte) (CPUTimes, error) {
	out := CPUTimes{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(f[0], "cpu"))
		if err != nil {
			continue
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= len(v); i++ {
			if v[i-1], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/stat line %d: %q: %v", line, f[i], err)
			}
		}
		out[n] = struct{ Busy, Idle uint64 }{v[0] + v[1] + v[2] + v[5] + v[6] + v[7], v[3] + v[4]}
	}
	return out, nil
}

// Busy is the fraction of time cpus were busy between two readings, 0 to
// 1; ok is false when no CPU of cpus is in both or no time passed.
func Busy(before, after CPUTimes, cpus []int) (frac float64, ok bool) {
	var busy, total uint64
	for _, c := range cpus {
		b, okb := before[c]
		a, oka := after[c]
		if !okb || !oka || a.Busy < b.Busy || a.Idle < b.Idle {
			continue
		}
		busy += a.Busy - b.Busy
		total += a.Busy - b.Busy + a.Idle - b.Idle
	}
	if total == 0 {
		return 0, false
	}
	return float64(busy) / float64(total), true
}
