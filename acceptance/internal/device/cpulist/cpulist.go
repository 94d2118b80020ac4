// Package cpulist reads and writes the kernel's CPU lists ("0-3,8").
package cpulist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPUs bounds the CPU numbers a list may name and how many (Linux's own
// bound is 8,192): a list read from a recording is input.
const maxCPUs = 1 << 16

// Parse parses a kernel CPU list ("0-3,8", as in
// /sys/devices/system/cpu/online and local_cpulist) into sorted CPU numbers
// without duplicates. Surrounding white space is ignored; an empty list is
// nil.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 || a >= maxCPUs {
			return nil, fmt.Errorf("parsing CPU list %q: bad CPU %q", s, part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a || b >= maxCPUs {
				return nil, fmt.Errorf("parsing CPU list %q: bad range %q", s, part)
			}
		}
		if len(cpus)+b-a >= maxCPUs {
			// A list from a recording is input: Linux numbers fewer CPUs.
			return nil, fmt.Errorf("parsing CPU list %q: more than %d CPUs", s, maxCPUs)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// Format formats CPU numbers as a kernel CPU list ("0-3,8"), the form
// fio's cpus_allowed takes. The input need not be sorted.
func Format(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}
