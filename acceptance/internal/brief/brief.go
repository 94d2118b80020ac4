// Package brief reconstructs the replay fixtures of the Solidigm D7-PS1010
// spec from the figures its performance brief publishes.
//
// For every cell of the brief's tables (and its 24-drive scaling totals)
// it writes the JSON fio 3.28 would print for a 60 s run that measured
// exactly that figure. The figures live in a data file
// (fixtures/solidigm-d7-ps1010/brief.toml); the workloads (rw, bs,
// iodepth, numjobs, rwmixread, runtime) come from the built-in spec, so
// the fixtures describe the runs the suite would start. Nothing here is a
// measurement: fixtures made by this package say so in run.json
// ("reconstructed": true) and in their README.
package brief

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/drivequal/drivequal/specs"
)

// SpecName is the built-in spec the fixtures belong to; the fixtures live in
// fixtures/SpecName.
const SpecName = "solidigm-d7-ps1010"

// FioVersion is the fio the brief measured with, as fio prints its version.
const FioVersion = "fio-3.28"

// RunFile is the fixture describing the reconstructed run and its drives.
const RunFile = "run.json"

// Data is the content of the data file: the brief's figures.
type Data struct {
	Source string `toml:"source"`
	// Single maps a capacity name and a workload name to the brief's cell.
	Single map[string]map[string]Cell `toml:"single"`
	// Scaling holds the brief's multi-drive totals.
	Scaling ScalingData `toml:"scaling"`
}

// Cell is one cell of the brief's single-drive tables, in the workload's
// metric: IOPS, or MB/s (10^6 bytes/s, reads + writes).
type Cell struct {
	Spec   int64 `toml:"spec"`   // the brief's Spec column
	Actual int64 `toml:"actual"` // the brief's Actual column, corrected where misprinted
	// Printed is the Actual as the brief prints it, when it differs from
	// Actual; 0 otherwise.
	Printed int64 `toml:"printed"`
	// PrintedPercent is the "% of Spec" the brief prints beside a corrected
	// Actual (a percentage, two decimals); 0 when not recorded.
	PrintedPercent float64 `toml:"printed_percent"`
}

// ScalingData is the brief's scaling figures: Drives drives of Capacity.
type ScalingData struct {
	Capacity string `toml:"capacity"`
	Drives   int    `toml:"drives"`
	// Total maps a workload name to the whole server's figure.
	Total map[string]Total `toml:"total"`
}

// Total is one multi-drive figure of the brief.
type Total struct {
	// Total is the sum over all drives in the workload's metric: IOPS, or
	// MB/s (10^6 bytes/s; the brief's 346 GB/s is 346000).
	Total           int64  `toml:"total"`
	Printed         string `toml:"printed"`          // as the brief writes it
	PrintedExpected string `toml:"printed_expected"` // the expected scaling it prints beside it, if any
}

// Drive is one drive of run.json, with the keys of the report's drives.
type Drive struct {
	Path     string `json:"path"`
	Model    string `json:"model"`
	Serial   string `json:"serial"`
	Firmware string `json:"firmware"`
	Bytes    int64  `json:"bytes"` // user capacity
	Capacity string `json:"capacity"`
	NUMANode int    `json:"numa_node"` // -1: unknown
}

// ReadData reads and checks a data file.
func ReadData(file string) (*Data, error) {
	var d Data
	md, err := toml.DecodeFile(file, &d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", file, un[0])
	}
	for capName, cells := range d.Single {
		for wl, c := range cells {
			if c.Spec <= 0 || c.Actual <= 0 {
				return nil, fmt.Errorf("%s: single.%q.%q: spec and actual must be > 0", file, capName, wl)
			}
		}
	}
	if d.Scaling.Drives < 1 {
		return nil, fmt.Errorf("%s: scaling.drives must be >= 1", file)
	}
	for wl, t := range d.Scaling.Total {
		if t.Total <= 0 {
			return nil, fmt.Errorf("%s: scaling.total.%q: total must be > 0", file, wl)
		}
	}
	return &d, nil
}

// Generate reads the data file and returns every fixture it makes: the path
// relative to the fixtures directory (slash-separated, e.g.
// "TestSingleDrive/1.92TB/4KB_Random_Read.json") mapped to the file's bytes,
// run.json included. The README is written by hand and not generated.
func Generate(dataFile string) (map[string][]byte, error) {
	d, err := ReadData(dataFile)
	if err != nil {
		return nil, err
	}
	spec, err := specs.Load(SpecName)
	if err != nil {
		return nil, err
	}
	files, err := generate(d, spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dataFile, err)
	}
	return files, nil
}

// start is when the first reconstructed run ended; the others follow at
// fixed steps so that every file has its own, fixed timestamp.
var start = time.Date(2024, time.March, 4, 9, 0, 0, 0, time.UTC)

const step = 90 * time.Minute

// DrivePath is the filename the reconstruction gives drive i (0-based) of a
// capacity: "brief/1.92TB/01".
func DrivePath(capacity string, i int) string {
	return fmt.Sprintf("brief/%s/%02d", capacity, i+1)
}

// SinglePath is the fixture path of a single-drive subtest:
// "TestSingleDrive/1.92TB/4KB_Random_Read.json".
func SinglePath(capacity, workload string) string {
	return "TestSingleDrive/" + specs.SubtestName(capacity) + "/" + specs.SubtestName(workload) + ".json"
}

// ScalingPath is the fixture path of the scaling subtest of n drives:
// "TestScaling/24_drives/4KB_Random_Read.json".
func ScalingPath(n int, workload string) string {
	return fmt.Sprintf("TestScaling/%d_drives/%s.json", n, specs.SubtestName(workload))
}

func generate(d *Data, spec *specs.Spec) (map[string][]byte, error) {
	files := map[string][]byte{}
	stamp := start
	emit := func(path string, r fioRun) error {
		if _, dup := files[path]; dup {
			return fmt.Errorf("%s: made twice", path)
		}
		h := fnv.New64a()
		h.Write([]byte(path))
		r.Seed = h.Sum64()
		r.Timestamp = stamp.Add(time.Duration(r.Seed%1000) * time.Millisecond)
		stamp = stamp.Add(step)
		b, err := r.output(FioVersion)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		files[path] = b
		return nil
	}

	// Every cell of the data file must be a cell of the spec, with the same
	// spec value, and the other way round.
	for capName := range d.Single {
		if !slices.ContainsFunc(spec.Capacities, func(c specs.Capacity) bool { return c.Name == capName }) {
			return nil, fmt.Errorf("single.%q: no such capacity in spec %s", capName, spec.Name)
		}
	}
	var drives []Drive
	for _, c := range spec.Capacities {
		cells := d.Single[c.Name]
		for wl := range cells {
			if _, ok := c.Spec[wl]; !ok {
				return nil, fmt.Errorf("single.%q.%q: not a workload of capacity %s in spec %s", c.Name, wl, c.Name, spec.Name)
			}
		}
		n := 1
		if c.Name == d.Scaling.Capacity {
			n = d.Scaling.Drives
		}
		for i := range n {
			drives = append(drives, Drive{
				Path: DrivePath(c.Name, i), Model: spec.Model, Bytes: c.Bytes, Capacity: c.Name, NUMANode: -1,
			})
		}
		for _, w := range spec.Workloads {
			want, ok := c.Spec[w.Name]
			if !ok {
				continue
			}
			cell, ok := cells[w.Name]
			if !ok {
				return nil, fmt.Errorf("single.%q.%q: missing", c.Name, w.Name)
			}
			if float64(cell.Spec) != want {
				return nil, fmt.Errorf("single.%q.%q: spec %d, but spec %s says %v", c.Name, w.Name, cell.Spec, spec.Name, want)
			}
			r, err := newRun(spec, w, c.Name, 1)
			if err != nil {
				return nil, err
			}
			r.DriveIOs = r.ios(w.Metric, float64(cell.Actual), 1)
			if err := emit(SinglePath(c.Name, w.Name), r); err != nil {
				return nil, err
			}
		}
	}

	if err := scaling(d, spec, emit); err != nil {
		return nil, err
	}

	run := struct {
		Spec          string  `json:"spec"`
		Mode          string  `json:"mode"`
		FioVersion    string  `json:"fio_version"`
		Precondition  string  `json:"precondition"`
		Reconstructed bool    `json:"reconstructed"`
		Drives        []Drive `json:"drives"`
	}{spec.Model, "record", FioVersion, "full", true, drives}
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return nil, err
	}
	files[RunFile] = append(b, '\n')
	return files, nil
}

// scaling emits the scaling fixtures: one drive from the brief's Actual of
// the scaling capacity, and all drives from the brief's totals, each drive
// carrying total / drives.
func scaling(d *Data, spec *specs.Spec, emit func(string, fioRun) error) error {
	sc := d.Scaling
	if sc.Capacity != spec.Scaling.Capacity {
		return fmt.Errorf("scaling.capacity %q, but spec %s scales %q", sc.Capacity, spec.Name, spec.Scaling.Capacity)
	}
	for _, n := range []int{1, sc.Drives} {
		if !slices.Contains(spec.Scaling.Drives, n) {
			return fmt.Errorf("scaling: spec %s does not scale to %d drives", spec.Name, n)
		}
	}
	ci := slices.IndexFunc(spec.Capacities, func(c specs.Capacity) bool { return c.Name == sc.Capacity })
	if ci < 0 {
		return fmt.Errorf("scaling.capacity %q: no such capacity in spec %s", sc.Capacity, spec.Name)
	}
	c := spec.Capacities[ci]
	for wl := range sc.Total {
		if _, ok := c.Spec[wl]; !ok {
			return fmt.Errorf("scaling.total.%q: not a workload of capacity %s in spec %s", wl, c.Name, spec.Name)
		}
	}
	for _, n := range []int{1, sc.Drives} {
		for _, w := range spec.Workloads {
			if _, ok := c.Spec[w.Name]; !ok {
				continue
			}
			var total float64
			if n == 1 {
				cell, ok := d.Single[c.Name][w.Name]
				if !ok {
					return fmt.Errorf("single.%q.%q: missing", c.Name, w.Name)
				}
				total = float64(cell.Actual)
			} else {
				t, ok := sc.Total[w.Name]
				if !ok {
					return fmt.Errorf("scaling.total.%q: missing", w.Name)
				}
				total = float64(t.Total)
			}
			r, err := newRun(spec, spec.ForScaling(w), c.Name, n)
			if err != nil {
				return err
			}
			r.DriveIOs = r.ios(w.Metric, total, n)
			if err := emit(ScalingPath(n, w.Name), r); err != nil {
				return err
			}
		}
	}
	return nil
}

func newRun(spec *specs.Spec, w specs.Workload, capacity string, drives int) (fioRun, error) {
	r := fioRun{
		RW:        w.RW,
		BS:        w.BS,
		IODepth:   w.IODepth,
		NumJobs:   w.NumJobs,
		RWMixRead: w.RWMixRead,
		IOEngine:  spec.Method.IOEngine,
		Direct:    spec.Method.Direct,
		Runtime:   cmp.Or(w.Runtime, spec.Method.Runtime),
		RampTime:  spec.Method.RampTime,
	}
	if r.Runtime%time.Millisecond != 0 || r.Runtime <= 0 {
		return r, fmt.Errorf("workload %q: runtime %v is not a positive number of milliseconds", w.Name, r.Runtime)
	}
	for i := range drives {
		r.Drives = append(r.Drives, DrivePath(capacity, i))
	}
	return r, nil
}

// ios turns a figure for n drives together (IOPS, or MB/s = 10^6 bytes/s)
// into each drive's I/O count over the run's runtime. IOPS figures come out
// exact: the counts sum to total × runtime (any remainder of the division by
// n goes to the first drives). MB/s figures are rounded to whole blocks per
// drive.
func (r fioRun) ios(metric specs.Metric, total float64, n int) []int64 {
	sec := r.Runtime.Seconds()
	out := make([]int64, n)
	if metric == specs.MBps {
		per := math.Round(total / float64(n) * 1e6 * sec / float64(r.BS))
		for i := range out {
			out[i] = int64(per)
		}
		return out
	}
	all := int64(math.Round(total * sec))
	for i := range out {
		out[i] = all / int64(n)
		if int64(i) < all%int64(n) {
			out[i]++
		}
	}
	return out
}
