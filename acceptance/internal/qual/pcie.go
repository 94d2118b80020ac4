package qual

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// pciePaths reads the PCIe path of every drive of the run (nil for one
// that has none: a loop device, a file, a fabrics controller).
func (s *Suite) pciePaths() []device.Path {
	paths := make([]device.Path, len(s.Drives))
	for i, d := range s.Drives {
		if p, ok, err := s.sys.PCIePath(d.Controller); ok && err == nil {
			paths[i] = p
		}
	}
	return paths
}

// below counts the paths that pass through PCI function fn.
func below(paths []device.Path, fn string, only []int) int {
	n := 0
	for i, p := range paths {
		if only != nil && !slices.Contains(only, i) {
			continue
		}
		if slices.Contains(p.Functions(), fn) {
			n++
		}
	}
	return n
}

// linkDegraded reads the PCIe path of each of drives now, from the drive
// up to its root port, and says which links bound the cell: a drive's own
// link below the link the spec states, or else below the device's own
// maximum ("/dev/nvme1n1: PCIe link 16.0 GT/s x2 of 32.0 GT/s x4
// (0000:02:00.0)"); and a link above it (a switch's uplink) that trained
// below its maximum and whose bandwidth, shared by the cell's drives
// below it, is short of what each of their own links carries at full
// speed ("/dev/nvme7n1: PCIe link 8.0 GT/s x8 at switch port
// 0000:01:00.0 (upstream of 6 drives) of 16.0 GT/s x16: ..."), or one
// at its maximum that carries less than one drive's own link at full
// speed (a Gen4 switch in a Gen3 x4 slot). A degraded uplink that still
// carries its share, as a single drive's often does, does not bound the
// cell, nor does one at its maximum that carries each drive in full but
// not all at once (oversubscription by design); the drives table shows
// it.
// unknown names the links sysfs does not know, which are not judged. A
// drive with no PCIe link (a loop device, a file, a fabrics controller)
// is never degraded.
func (s *Suite) linkDegraded(drives []int) (degraded, unknown string) {
	paths := s.pciePaths()
	var why, unk []string
	seen := map[string]bool{}
	for _, d := range drives {
		p, path := paths[d], s.Drives[d].Path
		if len(p) == 0 {
			continue
		}
		ep := p[0]
		if ep.Unknown != "" {
			unk = append(unk, fmt.Sprintf("%s: PCIe link not checked: %s", path, ep.Unknown))
		} else if msg := ep.Degraded(s.Spec.PCIe.Speed, s.Spec.PCIe.Width); msg != "" {
			why = append(why, fmt.Sprintf("%s: %s (%s)", path, msg, ep.PCI))
		}
		// What one drive's link carries at the speed and width it should
		// train to; 0 when not known.
		wantSpeed, wantWidth := s.Spec.PCIe.Speed, s.Spec.PCIe.Width
		if wantSpeed <= 0 {
			wantSpeed = ep.MaxSpeed
		}
		if wantWidth <= 0 {
			wantWidth = ep.MaxWidth
		}
		need := device.Bandwidth(wantSpeed, wantWidth)
		for _, h := range p[1:] {
			if seen[h.PCI] {
				continue
			}
			seen[h.PCI] = true
			if h.Unknown != "" {
				unk = append(unk, fmt.Sprintf("%s: PCIe link at %s not checked: %s", path, h.Where(), h.Unknown))
				continue
			}
			full := need > 0 && h.Bandwidth() >= need*(1-1e-9)
			degraded := h.Degraded(0, 0) != ""
			if !degraded && (need <= 0 || full) {
				// At its maximum and able to carry one drive in full:
				// the platform's oversubscription, if any, is by design.
				continue
			}
			k := below(paths, h.PCI, drives)
			share := h.Bandwidth() / float64(k)
			if need > 0 && share >= need*(1-1e-9) {
				continue
			}
			text := fmt.Sprintf("%s: %s", path, h.Describe(below(paths, h.PCI, nil)))
			switch {
			case !degraded:
				// A link that trained to all it can and still carries less
				// than one drive's own is the slot, as a Gen4 slot is for
				// a Gen5 drive.
				text += fmt.Sprintf(": at its maximum, %.2f GB/s, short of the %.2f GB/s of one drive's %.1f GT/s x%d",
					h.Bandwidth()/1e9, need/1e9, wantSpeed, wantWidth)
			case need > 0:
				text += fmt.Sprintf(": %.2f GB/s a drive for the %d of this cell below it, short of the %.2f GB/s of one drive's %.1f GT/s x%d",
					share/1e9, k, need/1e9, wantSpeed, wantWidth)
			}
			why = append(why, text)
		}
	}
	return strings.Join(why, "; "), strings.Join(unk, "; ")
}

// joinDistinct joins the non-empty of a and b, b only when it differs.
func joinDistinct(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + "; after the measurement: " + b
}

// recordLink keeps a cell's PCIe findings beside its recording: the
// degraded links that bound it, and the links not known.
func (s *Suite) recordLink(test, why, unknown string) error {
	if why == "" && unknown == "" {
		return nil
	}
	return record.WriteJSON(s.Cfg.Record, test, record.LinkExt, record.Link{Degraded: why, Unknown: unknown})
}

// link reads a cell's recorded PCIe findings; "" for none.
func (r Replay) link(test string) (degraded, unknown string) {
	var l record.Link
	if found, err := record.ReadJSON(r.Dir, test, record.LinkExt, &l); !found || err != nil {
		return "", ""
	}
	return l.Degraded, l.Unknown
}
