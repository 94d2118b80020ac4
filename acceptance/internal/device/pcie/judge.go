package pcie

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/specs"
)

// The link rules judge a cell of a run from its drives' paths as Read
// returned them: paths and names are indexed alike by drive (a nil path
// for a drive with no PCIe link: a loop device, a file, a fabrics
// controller), and a cell is the indices of its drives. They read
// nothing.

// DegradedLinks says which links bound a cell of the drives: a drive's
// own link below the link the spec states (wantSpeed, wantWidth; 0 for
// none), or else below the device's own maximum ("/dev/nvme1n1: PCIe
// link 16.0 GT/s x2 of 32.0 GT/s x4 (0000:02:00.0)"); and a link above
// it (a switch's uplink) that trained below its maximum and whose
// bandwidth, shared by the cell's drives below it, is short of what each
// of their own links carries at full speed ("/dev/nvme7n1: PCIe link
// 8.0 GT/s x8 at switch port 0000:01:00.0 (upstream of 6 drives) of 16.0
// GT/s x16: ..."), or one at its maximum that carries less than one
// drive's own link at full speed (a Gen4 switch in a Gen3 x4 slot). A
// degraded uplink that still carries its share, as a single drive's
// often does, does not bound the cell, nor does one at its maximum that
// carries each drive in full but not all at once (oversubscription by
// design): the drives table shows it, and Bound judges whether it
// bounded a figure. unknown names the links sysfs does not know, which
// are not judged. A drive with no PCIe link is never degraded.
func DegradedLinks(paths []Path, names []string, drives []int, wantSpeed float64, wantWidth int) (degraded, unknown string) {
	var why, unk []string
	seen := map[string]bool{}
	for _, d := range drives {
		p, path := paths[d], names[d]
		if len(p) == 0 {
			continue
		}
		ep := p[0]
		if ep.Unknown != "" {
			unk = append(unk, fmt.Sprintf("%s: PCIe link not checked: %s", path, ep.Unknown))
		} else if msg := ep.Degraded(wantSpeed, wantWidth); msg != "" {
			why = append(why, fmt.Sprintf("%s: %s (%s)", path, msg, ep.PCI))
		}
		// What one drive's link carries at the speed and width it should
		// train to; 0 when not known.
		speed, width := wantSpeed, wantWidth
		if speed <= 0 {
			speed = ep.MaxSpeed
		}
		if width <= 0 {
			width = ep.MaxWidth
		}
		need := Bandwidth(speed, width)
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
					h.Bandwidth()/1e9, need/1e9, speed, width)
			case need > 0:
				text += fmt.Sprintf(": %.2f GB/s a drive for the %d of this cell below it, short of the %.2f GB/s of one drive's %.1f GT/s x%d",
					share/1e9, k, need/1e9, speed, width)
			}
			why = append(why, text)
		}
	}
	return strings.Join(why, "; "), strings.Join(unk, "; ")
}

// below counts the paths that pass through PCI function fn, of the
// drives in only (of all of them when only is nil).
func below(paths []Path, fn string, only []int) int {
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

// BeforeAndAfter joins a cell's link findings read before and after its
// measurement: the non-empty of the two, after only when it differs.
func BeforeAndAfter(before, after string) string {
	switch {
	case before == "" || before == after:
		return after
	case after == "":
		return before
	}
	return before + "; after the measurement: " + after
}

// SharedLink is one link above the drives' own that two or more of a
// cell's drives reach their root port through.
type SharedLink struct {
	Where  string   `json:"where"`     // Hop.Where
	Speed  float64  `json:"speed_gts"` // GT/s a lane, as it trained
	Width  int      `json:"width"`     // lanes, as it trained
	Drives []string `json:"drives"`
}

// SharedLinks lists each link above a drive's own (a switch's uplink, in
// order from the first drive's) that two or more of the drives reach
// their root port through, with the names of those below it. A link
// sysfs does not know is left out: it is not judged (see DegradedLinks).
func SharedLinks(paths []Path, names []string, drives []int) []SharedLink {
	var out []SharedLink
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
				out = append(out, SharedLink{Where: h.Where(), Speed: h.Speed, Width: h.Width})
			}
			out[i].Drives = append(out[i].Drives, names[d])
		}
	}
	return slices.DeleteFunc(out, func(l SharedLink) bool { return len(l.Drives) < 2 })
}

// Slower is after with each link that carried less in before (it
// retrained up during the measurement) as before read it.
func Slower(before, after []SharedLink) []SharedLink {
	for i, a := range after {
		for _, b := range before {
			if b.Where == a.Where && Bandwidth(b.Speed, b.Width) < Bandwidth(a.Speed, a.Width) {
				after[i].Speed, after[i].Width = b.Speed, b.Width
			}
		}
	}
	return after
}

// Payload and saturation are the fractions of a PCIe link's bandwidth after
// line coding (Bandwidth) that Bound takes as what it carries of data (the
// rest goes to each packet's header, sequence number and CRC, about 24
// bytes a 256-byte payload, and to acknowledgement and flow-control
// packets) and as the least its drives must have moved through it for it
// to have been full.
const (
	payload    = 0.90
	saturation = 0.80
)

// Bound says why a scaling cell below spec is bounded by its host's PCIe
// topology rather than its drives: some link that several of its drives
// share carries less of data (payload × its bandwidth) than the cell asks
// of them, perDrive bytes a second each in the busier direction, and they
// moved at least saturation × its bandwidth through it (moved, by drive
// name, in the same bytes a second): "6 of this cell's drives share
// switch port 0000:09:00.0, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data
// at 90 %): 87.0 GB/s asked at the spec's 14.5 GB/s a drive, 58.2 GB/s
// moved". Of several such links the fullest is named and the others
// counted. basis says where perDrive comes from ("the spec's"). "" when
// no shared link bounds the cell.
func Bound(shared []SharedLink, perDrive float64, basis string, moved map[string]float64) string {
	type found struct {
		text  string
		ratio float64
		where string
	}
	var bound []found
	for _, l := range shared {
		bw := Bandwidth(l.Speed, l.Width)
		if bw <= 0 || perDrive <= 0 {
			continue
		}
		asked := perDrive * float64(len(l.Drives))
		var through float64
		for _, d := range l.Drives {
			through += moved[d]
		}
		if asked <= payload*bw || through < saturation*bw {
			continue
		}
		bound = append(bound, found{where: l.Where, ratio: asked / bw, text: fmt.Sprintf(
			"%d of this cell's drives share %s, %.1f GT/s x%d (%.1f GB/s, %.1f GB/s of data at %.0f %%): %.1f GB/s asked at %s %.1f GB/s a drive, %.1f GB/s moved",
			len(l.Drives), l.Where, l.Speed, l.Width, bw/1e9, payload*bw/1e9, payload*100, asked/1e9, basis, perDrive/1e9, through/1e9)})
	}
	if len(bound) == 0 {
		return ""
	}
	slices.SortStableFunc(bound, func(a, b found) int { return cmp.Compare(b.ratio, a.ratio) })
	text := bound[0].text
	if n := len(bound) - 1; n > 0 {
		var others []string
		for _, b := range bound[1:] {
			others = append(others, b.where)
		}
		links := "links"
		if n == 1 {
			links = "link"
		}
		text += fmt.Sprintf(" (and %d more shared %s alike: %s)", n, links, strings.Join(others, ", "))
	}
	return text
}

// ScalingBound is Bound for a scaling cell of workload w on drives
// drives: each drive is asked the spec's figure spec, or the 1-drive
// baseline's when that is higher (expected, the cell's expected total,
// over its drives), and moved what it measured (measured, by drive name),
// figures in w's metric, taken to bytes a second by DataRate.
func ScalingBound(shared []SharedLink, w specs.Workload, spec, expected float64, drives int, measured map[string]float64) string {
	if len(shared) == 0 || drives == 0 {
		return ""
	}
	per, basis := spec, "the spec's"
	if base := expected / float64(drives); base > spec {
		per, basis = base, "the 1-drive baseline's"
	}
	moved := make(map[string]float64, len(measured))
	for d, v := range measured {
		moved[d] = DataRate(v, w)
	}
	if share := busier(w); share < 1 {
		basis = fmt.Sprintf("%s (its %.0f %% in the busier direction)", basis, share*100)
	}
	return Bound(shared, DataRate(per, w), basis, moved)
}

// DataRate is what a figure v of workload w moves over PCIe in its busier
// direction, in bytes a second: MB/s are 10^6 B/s, IOPS times the block
// size; 0 for a latency.
func DataRate(v float64, w specs.Workload) float64 {
	switch w.Metric {
	case specs.MBps:
		v *= 1e6
	case specs.IOPS:
		v *= float64(w.BS)
	default:
		return 0
	}
	return v * busier(w)
}

// busier is the share of a workload's bytes in its busier direction: 1
// for a read or a write, the larger of rwmixread and its rest for a mix
// (PCIe carries each direction on its own lanes).
func busier(w specs.Workload) float64 {
	switch w.RW {
	case "rw", "readwrite", "randrw":
		mix := w.RWMixRead
		if mix < 0 {
			mix = 50
		}
		return float64(max(mix, 100-mix)) / 100
	}
	return 1
}
