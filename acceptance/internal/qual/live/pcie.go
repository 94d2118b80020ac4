package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
)

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

// linkDegraded says which links, on the paths read (pciePaths), bound a
// cell on drives, and which are not known (see qual.linkDegraded).
func linkDegraded(spec *specs.Spec, all []plan.Drive, paths []device.Path, drives []int) (degraded, unknown string) {
	var why, unk []string
	seen := map[string]bool{}
	for _, d := range drives {
		p, path := paths[d], all[d].Path
		if len(p) == 0 {
			continue
		}
		ep := p[0]
		if ep.Unknown != "" {
			unk = append(unk, fmt.Sprintf("%s: PCIe link not checked: %s", path, ep.Unknown))
		} else if msg := ep.Degraded(spec.PCIe.Speed, spec.PCIe.Width); msg != "" {
			why = append(why, fmt.Sprintf("%s: %s (%s)", path, msg, ep.PCI))
		}
		// What one drive's link carries at the speed and width it should
		// train to; 0 when not known.
		wantSpeed, wantWidth := spec.PCIe.Speed, spec.PCIe.Width
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

// sharedLinks lists, on the PCIe paths read (pciePaths), each link above
// a drive's own (a switch's uplink, in order from the first drive's) that
// two or more of the drives reach their root port through, with those
// below it. A link sysfs does not know is left out: it is not judged (see
// linkDegraded).
func sharedLinks(all []plan.Drive, paths []device.Path, drives []int) []record.SharedLink {
	var out []record.SharedLink
	at := map[string]int{}
	for _, d := range drives {
		if d >= len(paths) {
			continue
		}
		p := paths[d]
		if len(p) < 2 {
			continue
		}
		for _, h := range p[1:] {
			if h.Unknown != "" {
				continue
			}
			i, ok := at[h.PCI]
			if !ok {
				i = len(out)
				at[h.PCI] = i
				out = append(out, record.SharedLink{Where: h.Where(), Speed: h.Speed, Width: h.Width})
			}
			out[i].Drives = append(out[i].Drives, all[d].Path)
		}
	}
	return slices.DeleteFunc(out, func(l record.SharedLink) bool { return len(l.Drives) < 2 })
}

// slowerOf is after with each link that carried less in before (it
// retrained up during the measurement) as before read it.
func slowerOf(before, after []record.SharedLink) []record.SharedLink {
	for i, a := range after {
		for _, b := range before {
			if b.Where == a.Where && device.Bandwidth(b.Speed, b.Width) < device.Bandwidth(a.Speed, a.Width) {
				after[i].Speed, after[i].Width = b.Speed, b.Width
			}
		}
	}
	return after
}
