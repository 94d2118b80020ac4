package device

import (
	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
	"slices"
)

// Place returns a cpus_allowed list for each drive, in the drives' order.
//
// Drives whose NUMA node is known (NUMANode >= 0) and whose LocalCPUs
// include online CPUs share those CPUs with the other drives local to the
// same CPUs. Drives with unknown topology share all online CPUs. Within a
// group, the CPUs (sorted) are split into contiguous chunks whose sizes
// differ by at most one; when a group has more drives than CPUs, each drive
// gets one CPU, handed out round-robin, so no list is ever empty. Only when
// online is empty is a drive's list "" (no pinning).
func Place(drives []Info, online []int) []string {
	out := make([]string, len(drives))
	onl := slices.Clone(online)
	slices.Sort(onl)
	onl = slices.Compact(onl)
	if len(onl) == 0 {
		return out
	}
	isOnline := make(map[int]bool, len(onl))
	for _, c := range onl {
		isOnline[c] = true
	}

	type group struct {
		cpus   []int
		drives []int // indexes into drives
	}
	var order []string
	groups := map[string]*group{}
	for i, d := range drives {
		cpus := onl
		if d.NUMANode >= 0 {
			var local []int
			for _, c := range d.LocalCPUs {
				if isOnline[c] {
					local = append(local, c)
				}
			}
			if len(local) > 0 {
				slices.Sort(local)
				cpus = slices.Compact(local)
			}
		}
		key := cpulist.Format(cpus)
		g, ok := groups[key]
		if !ok {
			g = &group{cpus: cpus}
			groups[key] = g
			order = append(order, key)
		}
		g.drives = append(g.drives, i)
	}
	for _, key := range order {
		g := groups[key]
		for k, chunk := range split(g.cpus, len(g.drives)) {
			out[g.drives[k]] = cpulist.Format(chunk)
		}
	}
	return out
}

// split divides cpus among n drives: contiguous chunks when there are at
// least as many CPUs as drives, one CPU each round-robin otherwise.
func split(cpus []int, n int) [][]int {
	out := make([][]int, n)
	if len(cpus) < n {
		for i := range out {
			out[i] = []int{cpus[i%len(cpus)]}
		}
		return out
	}
	size, extra := len(cpus)/n, len(cpus)%n
	start := 0
	for i := range out {
		end := start + size
		if i < extra {
			end++
		}
		out[i] = cpus[start:end]
		start = end
	}
	return out
}
