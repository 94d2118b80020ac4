// Package fleet judges the recorded runs of many hosts as one population.
//
// Every drive that a host measured on its own (its TestSingleDrive cells)
// is one member of the fleet's cell for that capacity and workload, and the
// cell passes only when every member meets the spec and the members agree
// with each other within a tolerance. Each host's run was already judged
// by itself; fleet adds what no single host can see: a drive that is slow
// compared with its peers on other hosts.
//
// The package only judges values; it never reads recordings or runs a
// process. Chart is the one function that writes a file.
package fleet

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Run is one host's recorded run, as read from its report directory.
type Run struct {
	Host   host.Info
	Dir    string // the report directory, as given; names the run in messages
	Report *report.Run
}

// name is how the run's host is named: its hostname (or machine id), else
// the run's directory.
func (r Run) name() string {
	if n := r.Host.Name(); n != "" {
		return n
	}
	return r.Dir
}

// Recorded, given as Judge's tolerance, takes the tolerance the runs
// recorded for drives against the spec: each member result's own (the
// spec's method tolerance).
const Recorded = -1

// Causes of a fleet cell's verdict other than pass, beside
// report.CauseBelowSpec (a drive below spec × (1 − tolerance)).
const (
	CauseSpread         = "fleet spread"  // (max − min) / median above the fleet tolerance
	CauseMemberFailed   = "member failed" // a drive's own cell failed other than below spec
	CauseNoFigure       = "no figure"     // a drive's own cell has no measured value
	CauseMemberNotClear = "member inconclusive"
	CauseTooFew         = "too few drives" // fewer than 2 drives with a figure
)

// Cell is the fleet's verdict on one capacity × workload.
type Cell struct {
	Test     string // "TestFleet/1.92TB/4KB_Random_Read"
	Capacity string
	Workload string
	Metric   string  // "iops", "MBps" (10^6 bytes/s) or "lat_us"
	Spec     float64 // the single-drive spec value, in Metric's unit
	// Tolerance is the fraction a drive may fall short of Spec and pass;
	// FleetTolerance the largest spread allowed, a fraction of Median.
	Tolerance      float64
	FleetTolerance float64
	Verdict        string // report.Pass, report.Fail or report.Inconclusive
	Cause          string // the first problem's cause; "" for a pass
	Message        string
	// Drives is the number of members with a figure: the ones Min, Median,
	// Max and Spread are computed over. Hosts is the number of hosts the
	// members are on.
	Drives           int
	Hosts            int
	Min, Median, Max float64 // in Metric's unit
	Spread           float64 // (Max − Min) / Median
	Members          []Member
}

// Member is one drive's single-drive result in a fleet cell.
type Member struct {
	Host   string // the host's name
	Dir    string // its run's report directory
	Path   string // the drive's path on that host
	Serial string
	// Actual is the drive's measured value in the cell's Metric unit, and
	// Ratio Actual / Spec; Counted says it has one (a drive whose fio
	// failed may have none).
	Actual  float64
	Ratio   float64
	Counted bool
	// Verdict, Cause and Error are the drive's own result in its run.
	Verdict string
	Cause   string
	Error   string
	// Below says the drive misses Spec × (1 − Tolerance); Outlier that it
	// is worse than the median by more than FleetTolerance.
	Below   bool
	Outlier bool

	spec      float64 // the drive's own spec value
	tolerance float64 // the drive's own tolerance, for Recorded
}

// Name is the drive as messages name it: "host:path (serial S)".
func (m Member) Name() string {
	s := m.Host + ":" + m.Path
	if m.Serial != "" {
		s += " (serial " + m.Serial + ")"
	}
	return s
}

// Compatible reports whether runs can be judged as one population: each
// has a report, no directory or drive serial appears twice (a drive
// counted twice would weigh twice), every run was judged by the same spec
// (the sha256 of its text) and recorded with the same fio major version.
// A run with no fio version (fio never finished a job) is not compared.
// Every problem is returned at once, joined.
func Compatible(runs []Run) error {
	if len(runs) == 0 {
		return errors.New("fleet: no runs to judge")
	}
	var errs []error
	dirs := make(map[string]bool)
	serials := make(map[string]string) // serial → "dir (path)"
	var specGroups, fioGroups groups
	specLabel := make(map[string]string) // sha256 → "model (file, sha256 …)"
	for _, r := range runs {
		if dirs[r.Dir] {
			errs = append(errs, fmt.Errorf("fleet: %s is given twice", r.Dir))
			continue
		}
		dirs[r.Dir] = true
		if r.Report == nil {
			errs = append(errs, fmt.Errorf("fleet: %s: no report", r.Dir))
			continue
		}
		for _, d := range r.Report.Drives {
			if d.Serial == "" {
				continue
			}
			where := fmt.Sprintf("%s (%s)", r.Dir, d.Path)
			if first, ok := serials[d.Serial]; ok {
				errs = append(errs, fmt.Errorf("fleet: drive serial %s is in %s and in %s; the same drive recorded twice would be counted twice", d.Serial, first, where))
				continue
			}
			serials[d.Serial] = where
		}
		j := r.Report.JudgedBy
		if j == nil {
			errs = append(errs, fmt.Errorf("fleet: %s: its report names no spec it was judged by (judged_by)", r.Dir))
		} else {
			if _, ok := specLabel[j.SHA256]; !ok {
				specLabel[j.SHA256] = fmt.Sprintf("%s (%s, sha256 %s)", j.Model, j.File, short(j.SHA256))
			}
			specGroups.add(j.SHA256, r.Dir)
		}
		if v := fioVersion(r); v != "" {
			fioGroups.add(fioMajor(v), fmt.Sprintf("%s (%s)", r.Dir, v))
		}
	}
	if len(specGroups) > 1 {
		parts := make([]string, len(specGroups))
		for i, g := range specGroups {
			parts[i] = fmt.Sprintf("%s: %s", specLabel[g.key], strings.Join(g.dirs, ", "))
		}
		errs = append(errs, fmt.Errorf("fleet: runs judged by %d different specs: %s; judge them all against one spec (replay with -spec)",
			len(specGroups), strings.Join(parts, "; ")))
	}
	if len(fioGroups) > 1 {
		parts := make([]string, len(fioGroups))
		for i, g := range fioGroups {
			parts[i] = fmt.Sprintf("fio-%s.x: %s", g.key, strings.Join(g.dirs, ", "))
		}
		errs = append(errs, fmt.Errorf("fleet: runs recorded with different fio major versions: %s; record every host with the same fio major version",
			strings.Join(parts, "; ")))
	}
	return errors.Join(errs...)
}

// groups are runs grouped by a key, in the order keys first appear.
type groups []*group

type group struct {
	key  string
	dirs []string
}

func (gs *groups) add(key, dir string) {
	for _, g := range *gs {
		if g.key == key {
			g.dirs = append(g.dirs, dir)
			return
		}
	}
	*gs = append(*gs, &group{key: key, dirs: []string{dir}})
}

// fioVersion is the fio version fio itself reported in the run, else the
// one its host recorded.
func fioVersion(r Run) string {
	if r.Report != nil && r.Report.FioVersion != "" {
		return r.Report.FioVersion
	}
	return r.Host.FioVersion
}

// fioMajor is the major version of a fio version: "fio-3.36" → "3".
func fioMajor(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "fio-")
	major, _, _ := strings.Cut(v, ".")
	return major
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}

// Judge returns one Cell per capacity × workload that any run has a
// single-drive (TestSingleDrive) result for, in the first run's
// capacity and workload order. Scaling results are each host's own
// business and are not judged here. Judge expects Compatible(runs) to
// be nil; it judges whatever it is given.
//
// tolerance is the fraction a drive may fall short of its spec
// (actual ≥ spec × (1 − tolerance); for a latency, actual ≤ spec ×
// (1 + tolerance)), or Recorded; fleetTolerance the largest
// (max − min) / median allowed (the spec's Fleet.Tolerance), ≥ 0: Judge
// panics on a negative one, which would name every drive an outlier.
//
// A cell fails when any member is below spec, when the spread exceeds
// fleetTolerance (naming every drive worse than the median by more than
// fleetTolerance), when a member has no figure, or when a member's own
// cell failed for a cause other than below spec (fio failed, drive
// changed, ...). A member whose own cell failed is still counted by its
// actual when it has one, and a member that failed below spec in its own
// run is judged again against this tolerance. Otherwise the cell is
// inconclusive when any member is (its figure may flatter it) or when
// fewer than 2 drives have a figure; else it passes. Failures take
// precedence, as in a run's own cells: a drive below spec is below spec
// however its peers were measured.
func Judge(runs []Run, tolerance, fleetTolerance float64) []Cell {
	if fleetTolerance < 0 {
		panic(fmt.Sprintf("fleet.Judge: fleet tolerance %v < 0", fleetTolerance))
	}
	type key struct{ capacity, workload string }
	cells := make(map[key]*Cell)
	var order []key
	for _, r := range runs {
		if r.Report == nil {
			continue
		}
		for i := range r.Report.Results {
			res := &r.Report.Results[i]
			if res.Kind != report.KindSingle || !strings.HasPrefix(res.Test, "TestSingleDrive/") {
				continue
			}
			k := key{res.Capacity, res.Workload}
			c := cells[k]
			if c == nil {
				tol := tolerance
				if tol < 0 {
					tol = res.Tolerance
				}
				c = &Cell{
					Test:     "TestFleet/" + res.Capacity + "/" + specs.SubtestName(res.Workload),
					Capacity: res.Capacity, Workload: res.Workload, Metric: res.Metric, Spec: res.Spec,
					Tolerance: tol, FleetTolerance: fleetTolerance,
				}
				cells[k] = c
				order = append(order, k)
			}
			c.Members = append(c.Members, member(r, res))
		}
	}
	capRank, wlRank := ranks(runs)
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(rank(capRank, a.capacity), rank(capRank, b.capacity)),
			cmp.Compare(rank(wlRank, a.workload), rank(wlRank, b.workload)))
	})
	out := make([]Cell, len(order))
	for i, k := range order {
		c := cells[k]
		judge(c, tolerance)
		out[i] = *c
	}
	return out
}

// ranks maps the first run's capacities and workloads (the spec's order)
// to their positions.
func ranks(runs []Run) (capacities, workloads map[string]int) {
	capacities, workloads = make(map[string]int), make(map[string]int)
	i := slices.IndexFunc(runs, func(r Run) bool { return r.Report != nil })
	if i < 0 {
		return capacities, workloads
	}
	for j, c := range runs[i].Report.Capacities {
		capacities[c] = j
	}
	for j, w := range runs[i].Report.Workloads {
		workloads[w] = j
	}
	return capacities, workloads
}

// rank is name's position, or after every ranked name.
func rank(m map[string]int, name string) int {
	if i, ok := m[name]; ok {
		return i
	}
	return len(m)
}

// member is res as a fleet member: the drive it measured is the first of
// the run's drives of its capacity (the one TestSingleDrive measures).
func member(r Run, res *report.Result) Member {
	m := Member{Host: r.name(), Dir: r.Dir, Verdict: res.Verdict, Cause: res.Cause, Error: res.Error}
	switch {
	case len(res.PerDrive) == 1:
		m.Path, m.Serial = res.PerDrive[0].Path, res.PerDrive[0].Serial
	default:
		for _, d := range r.Report.Drives {
			if d.Capacity == res.Capacity {
				m.Path, m.Serial = d.Path, d.Serial
				break
			}
		}
		if m.Path == "" && len(r.Report.Drives) > 0 {
			m.Path, m.Serial = r.Report.Drives[0].Path, r.Report.Drives[0].Serial
		}
	}
	if res.Actual > 0 && !math.IsInf(res.Actual, 0) && !math.IsNaN(res.Actual) {
		m.Actual, m.Counted = res.Actual, true
		if res.Spec > 0 {
			m.Ratio = res.Actual / res.Spec
		}
	}
	m.spec, m.tolerance = res.Spec, res.Tolerance
	return m
}
