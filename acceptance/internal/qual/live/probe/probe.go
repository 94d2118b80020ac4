// Package probe reads what the host says of a live run's drives around a
// cell: their PCIe paths and links, the fabric paths and what their
// interfaces carried, and the CPUs fio may run on.
package probe

import (
	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
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

// Host reads what the host says of the run's drives around a cell:
// their PCIe paths and the CPUs fio may run on.
type Host struct {
	// Sys is the runner's, read as each cell is measured.
	Sys    *device.System
	Drives []plan.Drive
	Spec   *specs.Spec
	// Online are the online CPUs, which an unpinned job may run on.
	Online []int
}

// pciePaths reads the PCIe path of every drive of the run (nil for one
// that has none: a loop device, a file, a fabrics controller).
func (h Host) pciePaths() []pcie.Path {
	paths := make([]pcie.Path, len(h.Drives))
	for i, d := range h.Drives {
		if p, ok, err := h.Sys.PCIePath(d.Controller); ok && err == nil {
			paths[i] = p
		}
	}
	return paths
}

// FabricRead is a fabric drive's path with its interface's counters, read
// at one time.
type FabricRead struct {
	path   fabric.Path
	rx, tx uint64
	ok     bool
	at     time.Time
}

// Fabric reads the fabric path of each NVMe over Fabrics drive of drives
// and its interface's counters now.
func (h Host) Fabric(drives []int) []FabricRead {
	var out []FabricRead
	sys, proc := h.Sys.Path("/sys"), h.Sys.Path("/proc")
	for _, d := range drives {
		info := h.Drives[d].Info
		p, ok := fabric.Read(sys, proc, info.Path, info.Transport, info.Address)
		if !ok {
			continue
		}
		f := FabricRead{path: p, at: time.Now()}
		if p.Interface != "" {
			f.rx, f.tx, f.ok = fabric.Counters(sys, p.Interface)
		}
		out = append(out, f)
	}
	return out
}

// Carried is each fabric path of after with what its interface moved a
// second, in its busier direction, since before.
func Carried(before, after []FabricRead) []fabric.Path {
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

// Links is what the drives' PCIe paths, read now, say of a cell on
// drives: the links that bound it, those sysfs does not know, and those
// two or more of its drives share (see pcie.DegradedLinks and
// pcie.SharedLinks).
type Links struct {
	Degraded, Unknown string
	Shared            []pcie.SharedLink
}

// ReadLinks reads the PCIe paths of the run's drives and judges them for
// a cell on drives, against the link the spec states.
func (h Host) ReadLinks(drives []int) Links {
	paths := h.pciePaths()
	names := make([]string, len(h.Drives))
	for i, d := range h.Drives {
		names[i] = d.Path
	}
	var l Links
	l.Degraded, l.Unknown = pcie.DegradedLinks(paths, names, drives, h.Spec.PCIe.Speed, h.Spec.PCIe.Width)
	l.Shared = pcie.SharedLinks(paths, names, drives)
	return l
}

// Around is what the links were around a measurement, before and after:
// each finding of either, and each shared link as it carried least.
func Around(before, after Links) Links {
	return Links{Degraded: pcie.BeforeAndAfter(before.Degraded, after.Degraded), Unknown: pcie.BeforeAndAfter(before.Unknown, after.Unknown),
		Shared: pcie.Slower(before.Shared, after.Shared)}
}

// AllowedCPUs lists the CPUs job's targets may run on (their cpus_allowed),
// or every online CPU when a target is not pinned; nil when unknown.
func (h Host) AllowedCPUs(job fiojob.Job) []int {
	set := map[int]bool{}
	for _, t := range job.Targets {
		if t.CPUs == "" {
			return slices.Clone(h.Online)
		}
		cpus, err := cpulist.Parse(t.CPUs)
		if err != nil {
			return nil
		}
		for _, c := range cpus {
			set[c] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// ReadCPUTimes reads /proc/stat; nil when it cannot.
func ReadCPUTimes() host.CPUTimes {
	t, err := host.ReadCPUTimes()
	if err != nil {
		return nil
	}
	return t
}

// CPUUse is how busy cpus were between two readings, as the recording
// keeps it; N 0 when cpus is unknown, Busy -1 when the readings say
// nothing of them.
func CPUUse(cpus []int, before, after host.CPUTimes) record.CPU {
	if len(cpus) == 0 {
		return record.CPU{}
	}
	busy, ok := host.Busy(before, after, cpus)
	if !ok {
		busy = -1
	}
	return record.CPU{CPUs: cpulist.Format(cpus), N: len(cpus), Busy: busy}
}
