package verdict

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Payload and saturation are the fractions of a PCIe link's bandwidth after
// line coding (device.Bandwidth) that the pcie-bound rule takes as what it
// carries of data (the rest goes to each packet's header, sequence number
// and CRC, about 24 bytes a 256-byte payload, and to acknowledgement and
// flow-control packets) and as the least its drives must have moved
// through it for it to have been full.
const (
	payload    = 0.90
	saturation = 0.80
)

// pcieBound says why a scaling cell below spec is bounded by its host's
// PCIe topology rather than its drives: some link that several of its
// drives share carries less of data (payload × its bandwidth) than the
// cell asks of them, perDrive bytes a second each in the busier
// direction, and they moved at least saturation × its bandwidth through
// it (moved, by drive path, in the same bytes a second): "6 of this
// cell's drives share switch port 0000:09:00.0, 32.0 GT/s x16 (63.0 GB/s,
// 56.7 GB/s of data at 90 %): 87.0 GB/s asked at the spec's 14.5 GB/s a
// drive, 58.2 GB/s moved". Of several such links the fullest is named and
// the others counted. basis says where perDrive comes from ("the spec's").
// "" when no shared link bounds the cell.
func pcieBound(shared []record.SharedLink, perDrive float64, basis string, moved map[string]float64) string {
	type found struct {
		text  string
		ratio float64
		where string
	}
	var bound []found
	for _, l := range shared {
		bw := device.Bandwidth(l.Speed, l.Width)
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

// boundBy is pcieBound for a scaling cell's result res of workload w:
// each drive is asked the spec's figure, or the 1-drive baseline's when
// that is higher (res.Expected over its drives), and moved what it
// measured (res.PerDrive), both in bytes a second (see dataRate).
func boundBy(shared []record.SharedLink, w specs.Workload, spec float64, res report.Result) string {
	if len(shared) == 0 || res.Drives == 0 {
		return ""
	}
	per, basis := spec, "the spec's"
	if base := res.Expected / float64(res.Drives); base > spec {
		per, basis = base, "the 1-drive baseline's"
	}
	moved := map[string]float64{}
	for _, d := range res.PerDrive {
		moved[d.Path] = dataRate(d.Actual, w)
	}
	if share := busier(w); share < 1 {
		basis = fmt.Sprintf("%s (its %.0f %% in the busier direction)", basis, share*100)
	}
	return pcieBound(shared, dataRate(per, w), basis, moved)
}

// dataRate is what a figure v of workload w moves over PCIe in its busier
// direction, in bytes a second: MB/s are 10^6 B/s, IOPS times the block
// size; 0 for a latency.
func dataRate(v float64, w specs.Workload) float64 {
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
