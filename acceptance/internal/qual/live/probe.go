package live

import (
	"maps"
	"slices"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/device/fabric"
	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// probe reads what the host says of the run's drives around a cell:
// their PCIe paths and the CPUs fio may run on.
type probe struct {
	// sys is the runner's, read as each cell is measured.
	sys    *device.System
	drives []plan.Drive
	spec   *specs.Spec
	// online are the online CPUs, which an unpinned job may run on.
	online []int
}

// pciePaths reads the PCIe path of every drive of the run (nil for one
// that has none: a loop device, a file, a fabrics controller).
func (h probe) pciePaths() []pcie.Path {
	paths := make([]pcie.Path, len(h.drives))
	for i, d := range h.drives {
		if p, ok, err := h.sys.PCIePath(d.Controller); ok && err == nil {
			paths[i] = p
		}
	}
	return paths
}

// fabricRead is a fabric drive's path with its interface's counters, read
// at one time.
type fabricRead struct {
	path   fabric.Path
	rx, tx uint64
	ok     bool
	at     time.Time
}

// fabric reads the fabric path of each NVMe over Fabrics drive of drives
// and its interface's counters now.
func (h probe) fabric(drives []int) []fabricRead {
	var out []fabricRead
	sys, proc := h.sys.Path("/sys"), h.sys.Path("/proc")
	for _, d := range drives {
		info := h.drives[d].Info
		p, ok := fabric.Read(sys, proc, info.Path, info.Transport, info.Address)
		if !ok {
			continue
		}
		f := fabricRead{path: p, at: time.Now()}
		if p.Interface != "" {
			f.rx, f.tx, f.ok = fabric.Counters(sys, p.Interface)
		}
		out = append(out, f)
	}
	return out
}

// carried is each fabric path of after with what its interface moved a
// second, in its busier direction, since before.
func carried(before, after []fabricRead) []fabric.Path {
	var out []fabric.Path
	for i, a := range after {
		p := a.path
		if i < len(before) && before[i].ok && a.ok && before[i].path.Interface == p.Interface {
			if secs := a.at.Sub(before[i].at).Seconds(); secs > 0 {
				p.Carried = float64(max(a.rx-before[i].rx, a.tx-before[i].tx)) / secs
			}
		}
		out = append(out, p)
	}
	return out
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
func (h probe) readLinks(drives []int) links {
	paths := h.pciePaths()
	names := pathsOf(h.drives, allDrives(len(h.drives)))
	var l links
	l.degraded, l.unknown = pcie.DegradedLinks(paths, names, drives, h.spec.PCIe.Speed, h.spec.PCIe.Width)
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

// allowedCPUs lists the CPUs job's targets may run on (their cpus_allowed),
// or every online CPU when a target is not pinned; nil when unknown.
func (h probe) allowedCPUs(job fiojob.Job) []int {
	set := map[int]bool{}
	for _, t := range job.Targets {
		if t.CPUs == "" {
			return slices.Clone(h.online)
		}
		cpus, err := device.ParseCPUList(t.CPUs)
		if err != nil {
			return nil
		}
		for _, c := range cpus {
			set[c] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// pathsOf is the paths of the drives of all at indices drives.
func pathsOf(all []plan.Drive, drives []int) []string {
	out := make([]string, len(drives))
	for i, d := range drives {
		out[i] = all[d].Path
	}
	return out
}

// readCPUTimes reads /proc/stat; nil when it cannot.
func readCPUTimes() host.CPUTimes {
	t, err := host.ReadCPUTimes()
	if err != nil {
		return nil
	}
	return t
}

// cpuUse is how busy cpus were between two readings, as the recording
// keeps it; N 0 when cpus is unknown, Busy -1 when the readings say
// nothing of them.
func cpuUse(cpus []int, before, after host.CPUTimes) record.CPU {
	if len(cpus) == 0 {
		return record.CPU{}
	}
	busy, ok := host.Busy(before, after, cpus)
	if !ok {
		busy = -1
	}
	return record.CPU{CPUs: device.FormatCPUList(cpus), N: len(cpus), Busy: busy}
}
