package live

import (
	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
)

// pciePaths reads the PCIe path of every drive of the run (nil for one
// that has none: a loop device, a file, a fabrics controller).
func (r *Runner) pciePaths() []pcie.Path {
	paths := make([]pcie.Path, len(r.Drives))
	for i, d := range r.Drives {
		if p, ok, err := r.Sys.PCIePath(d.Controller); ok && err == nil {
			paths[i] = p
		}
	}
	return paths
}

// links is what the drives' PCIe paths, read now, say of a cell on
// drives: the links that bound it, those sysfs does not know, and those
// two or more of its drives share (see pcie.DegradedLinks and
// pcie.SharedLinks).
type links struct {
	degraded, unknown string
	shared            []pcie.SharedLink
}

// readLinks reads the PCIe paths of the run's drives and judges them for
// a cell on drives, against the link the spec states.
func (r *Runner) readLinks(drives []int) links {
	paths := r.pciePaths()
	names := r.paths(allDrives(len(r.Drives)))
	var l links
	l.degraded, l.unknown = pcie.DegradedLinks(paths, names, drives, r.Spec.PCIe.Speed, r.Spec.PCIe.Width)
	l.shared = pcie.SharedLinks(paths, names, drives)
	return l
}

// around is what the links were around a measurement, before and after:
// each finding of either, and each shared link as it carried least.
func around(before, after links) links {
	return links{degraded: pcie.BeforeAndAfter(before.degraded, after.degraded), unknown: pcie.BeforeAndAfter(before.unknown, after.unknown),
		shared: pcie.Slower(before.shared, after.shared)}
}

func allDrives(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
