package qual

import (
	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// pciePaths reads the PCIe path of every drive of the run (nil for one
// that has none: a loop device, a file, a fabrics controller).
func (s *Suite) pciePaths() []pcie.Path {
	paths := make([]pcie.Path, len(s.Drives))
	for i, d := range s.Drives {
		if p, ok, err := s.sys.PCIePath(d.Controller); ok && err == nil {
			paths[i] = p
		}
	}
	return paths
}

// linkDegraded reads the PCIe path of each of drives now, from the drive
// up to its root port, and says which links bound the cell, and which
// sysfs does not know (see pcie.DegradedLinks).
func (s *Suite) linkDegraded(drives []int) (degraded, unknown string) {
	return s.linkDegradedOn(s.pciePaths(), drives)
}

// linkDegradedOn is linkDegraded on the paths read (pciePaths), judged
// against the link the spec states.
func (s *Suite) linkDegradedOn(paths []pcie.Path, drives []int) (degraded, unknown string) {
	return pcie.DegradedLinks(paths, drivePaths(s.Drives), drives, s.Spec.PCIe.Speed, s.Spec.PCIe.Width)
}

// drivePaths names drives in the link rules' messages.
func drivePaths(drives []plan.Drive) []string {
	out := make([]string, len(drives))
	for i, d := range drives {
		out[i] = d.Path
	}
	return out
}

// joinDistinct joins the link findings before and after a measurement
// (pcie.BeforeAndAfter).
func joinDistinct(a, b string) string { return pcie.BeforeAndAfter(a, b) }

// recordLink keeps a cell's PCIe findings beside its recording: the
// degraded links that bound it, the links not known, and the links its
// drives share.
func (s *Suite) recordLink(test, why, unknown string, shared []record.SharedLink) error {
	if why == "" && unknown == "" && len(shared) == 0 {
		return nil
	}
	return record.WriteJSON(s.Cfg.Record, test, record.LinkExt, record.Link{Degraded: why, Unknown: unknown, Shared: shared})
}

// link reads a cell's recorded PCIe findings; "" for none.
func (r Replay) link(test string) (degraded, unknown string) {
	var l record.Link
	if found, err := record.ReadJSON(r.Dir, test, record.LinkExt, &l); !found || err != nil {
		return "", ""
	}
	return l.Degraded, l.Unknown
}

// shared reads the links a cell's drives shared, as recorded; nil for
// none, or for a recording made before they were kept.
func (r Replay) shared(test string) []record.SharedLink {
	var l record.Link
	if found, err := record.ReadJSON(r.Dir, test, record.LinkExt, &l); !found || err != nil {
		return nil
	}
	return l.Shared
}

// sharedLinks lists, on the PCIe paths read (pciePaths), the links two
// or more of the drives share (pcie.SharedLinks).
func (s *Suite) sharedLinks(paths []pcie.Path, drives []int) []record.SharedLink {
	return recordedLinks(pcie.SharedLinks(paths, drivePaths(s.Drives), drives))
}

// slowerOf is after with each link that carried less in before as before
// read it (pcie.Slower).
func slowerOf(before, after []record.SharedLink) []record.SharedLink {
	return recordedLinks(pcie.Slower(pcieLinks(before), pcieLinks(after)))
}

// pcieBound says why a scaling cell below spec is bounded by a link its
// drives share (pcie.Bound).
func pcieBound(shared []record.SharedLink, perDrive float64, basis string, moved map[string]float64) string {
	return pcie.Bound(pcieLinks(shared), perDrive, basis, moved)
}

// boundBy is pcieBound for a scaling cell's result res of workload w
// (pcie.ScalingBound): each drive asked spec, or the 1-drive baseline's
// figure when higher, and moved what it measured (res.PerDrive).
func boundBy(shared []record.SharedLink, w specs.Workload, spec float64, res report.Result) string {
	measured := make(map[string]float64, len(res.PerDrive))
	for _, d := range res.PerDrive {
		measured[d.Path] = d.Actual
	}
	return pcie.ScalingBound(pcieLinks(shared), w, spec, res.Expected, res.Drives, measured)
}

// dataRate is what a figure v of workload w moves over PCIe in its
// busier direction, in bytes a second (pcie.DataRate).
func dataRate(v float64, w specs.Workload) float64 { return pcie.DataRate(v, w) }

// pcieLinks and recordedLinks convert shared links between the
// recording's type and the link rules' (the same fields), nil staying nil.
func pcieLinks(in []record.SharedLink) []pcie.SharedLink {
	return convertLinks(in, func(l record.SharedLink) pcie.SharedLink { return pcie.SharedLink(l) })
}

func recordedLinks(in []pcie.SharedLink) []record.SharedLink {
	return convertLinks(in, func(l pcie.SharedLink) record.SharedLink { return record.SharedLink(l) })
}

func convertLinks[From, To any](in []From, conv func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, l := range in {
		out[i] = conv(l)
	}
	return out
}
