package brief

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

var update = flag.Bool("update", false, "rewrite the fixtures in fixtures/"+SpecName+" from the data file")

// fixturesDir is fixtures/SpecName of the module this package is in.
func fixturesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "fixtures", SpecName)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

func dataFile(t *testing.T) string {
	return filepath.Join(fixturesDir(t), "brief.toml")
}

// generated holds what Generate made; fixtures runs it once per test binary.
var generated = struct {
	files map[string][]byte
	err   error
	done  bool
}{}

func fixtures(t *testing.T) map[string][]byte {
	t.Helper()
	if !generated.done {
		generated.files, generated.err = Generate(dataFile(t))
		generated.done = true
	}
	if generated.err != nil {
		t.Fatalf("Generate: %v", generated.err)
	}
	return generated.files
}

// committedJSON lists the .json files under dir, relative and slash-separated.
func committedJSON(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// TestFixturesUpToDate checks that the committed fixtures are exactly what
// Generate makes from the data file; -update rewrites them.
func TestFixturesUpToDate(t *testing.T) {
	files := fixtures(t)
	dir := fixturesDir(t)
	if *update {
		for _, rel := range committedJSON(t, dir) {
			if _, ok := files[rel]; !ok {
				if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
					t.Fatal(err)
				}
			}
		}
		for rel, b := range files {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d files to %s", len(files), dir)
	}
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Errorf("%v (run go test ./acceptance/internal/brief -update)", err)
			continue
		}
		if !bytes.Equal(got, files[rel]) {
			diff := cmp.Diff(string(files[rel]), string(got))
			if len(diff) > 4000 {
				diff = diff[:4000] + "\n..."
			}
			t.Errorf("%s differs from what Generate makes (-generated +committed):\n%s", rel, diff)
		}
	}
	for _, rel := range committedJSON(t, dir) {
		if _, ok := files[rel]; !ok {
			t.Errorf("%s: committed, but Generate does not make it", rel)
		}
	}
}

// fioFile is the part of fio's JSON the figures are computed from.
type fioFile struct {
	Version string `json:"fio version"`
	Jobs    []struct {
		JobName    string            `json:"jobname"`
		GroupID    int               `json:"groupid"`
		Error      int               `json:"error"`
		JobOptions map[string]string `json:"job options"`
		Read       fioDir            `json:"read"`
		Write      fioDir            `json:"write"`
		Trim       fioDir            `json:"trim"`
	} `json:"jobs"`
}

type fioDir struct {
	IOBytes  int64   `json:"io_bytes"`
	TotalIOs int64   `json:"total_ios"`
	Runtime  int64   `json:"runtime"` // ms
	IOPS     float64 `json:"iops"`
	BWBytes  int64   `json:"bw_bytes"`
	LatNs    struct {
		Mean float64 `json:"mean"`
		N    int64   `json:"N"`
	} `json:"lat_ns"`
}

// figures is what the suite computes from one fio output: Σ I/Os and Σ bytes
// of reads and writes, and the longest runtime of any job in ms.
type figures struct {
	ios, bytes, runtimeMs int64
}

func (f figures) iops() float64 { return float64(f.ios) * 1000 / float64(f.runtimeMs) }
func (f figures) mbps() float64 { return float64(f.bytes) * 1000 / float64(f.runtimeMs) / 1e6 }

// value is the figure in metric m.
func (f figures) value(m specs.Metric) float64 {
	if m == specs.MBps {
		return f.mbps()
	}
	return f.iops()
}

// exactIOPS reports whether the I/O count is exactly want IOPS over the runtime.
func (f figures) exactIOPS(want int64) bool { return f.ios*1000 == want*f.runtimeMs }

// sums adds up one fio output: over all jobs, and per reporting group
// (groups[i] is group i).
func sums(t *testing.T, rel string, b []byte) (all figures, groups []figures) {
	t.Helper()
	var out fioFile
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	for _, j := range out.Jobs {
		if j.GroupID < 0 {
			t.Fatalf("%s: job %s: groupid %d", rel, j.JobName, j.GroupID)
		}
		for len(groups) <= j.GroupID {
			groups = append(groups, figures{})
		}
		for _, d := range []fioDir{j.Read, j.Write} {
			for _, f := range []*figures{&all, &groups[j.GroupID]} {
				f.ios += d.TotalIOs
				f.bytes += d.IOBytes
				f.runtimeMs = max(f.runtimeMs, d.Runtime)
			}
		}
	}
	if all.runtimeMs == 0 {
		t.Fatalf("%s: no runtime", rel)
	}
	return all, groups
}

// sum is the figures over all jobs of one fio output.
func sum(t *testing.T, rel string, b []byte) figures {
	t.Helper()
	all, _ := sums(t, rel, b)
	return all
}

func loadSpec(t *testing.T) *specs.Spec {
	t.Helper()
	s, err := specs.Load(SpecName)
	if err != nil {
		t.Fatalf("specs.Load(%q): %v", SpecName, err)
	}
	return s
}

func readData(t *testing.T) *Data {
	t.Helper()
	d, err := ReadData(dataFile(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// percentOfSpec is a ratio as the brief prints it: a percentage, two decimals.
func percentOfSpec(actual, spec float64) float64 {
	return math.Round(actual/spec*100*100) / 100
}

// TestSingleDriveFigures checks that every single-drive fixture reproduces
// the brief's Actual: IOPS exactly, MB/s within 0.01 %, and the brief's
// "% of Spec" to two decimals.
func TestSingleDriveFigures(t *testing.T) {
	files, spec, d := fixtures(t), loadSpec(t), readData(t)
	for _, c := range spec.Capacities {
		for _, w := range spec.Workloads {
			if _, ok := c.Spec[w.Name]; !ok {
				continue
			}
			cell := d.Single[c.Name][w.Name]
			rel := SinglePath(c.Name, w.Name)
			b, ok := files[rel]
			if !ok {
				t.Errorf("%s: not generated", rel)
				continue
			}
			f := sum(t, rel, b)
			got := f.value(w.Metric)
			switch w.Metric {
			case specs.IOPS:
				if !f.exactIOPS(cell.Actual) {
					t.Errorf("%s: %d I/Os in %d ms = %.3f IOPS, want exactly %d", rel, f.ios, f.runtimeMs, got, cell.Actual)
				}
			case specs.MBps:
				if dev := math.Abs(got-float64(cell.Actual)) / float64(cell.Actual); dev > 1e-4 {
					t.Errorf("%s: %.3f MB/s, want %d within 0.01 %%", rel, got, cell.Actual)
				}
			}
			want := percentOfSpec(float64(cell.Actual), float64(cell.Spec))
			if cell.PrintedPercent != 0 && want != cell.PrintedPercent {
				t.Errorf("single.%q.%q: actual %d is %.2f %% of spec %d, but the brief prints %.2f %%", c.Name, w.Name, cell.Actual, want, cell.Spec, cell.PrintedPercent)
			}
			if p := percentOfSpec(got, c.Spec[w.Name]); p != want {
				t.Errorf("%s: %% of Spec = %.2f, want %.2f", rel, p, want)
			}
		}
	}
}

// TestPercentOfSpecExamples pins the brief's printed "% of Spec" for the
// cells the design notes quote.
func TestPercentOfSpecExamples(t *testing.T) {
	files, spec := fixtures(t), loadSpec(t)
	tests := []struct {
		capacity, workload string
		want               float64
	}{
		{"1.92TB", "4KB Random Read", 102.55},
		{"1.92TB", "8KB Random Read", 105.01},
	}
	for _, tt := range tests {
		ci := slices.IndexFunc(spec.Capacities, func(c specs.Capacity) bool { return c.Name == tt.capacity })
		if ci < 0 {
			t.Fatalf("spec has no capacity %s", tt.capacity)
		}
		rel := SinglePath(tt.capacity, tt.workload)
		f := sum(t, rel, files[rel])
		if got := percentOfSpec(f.iops(), spec.Capacities[ci].Spec[tt.workload]); got != tt.want {
			t.Errorf("%% of Spec(%s) = %.2f, want %.2f", rel, got, tt.want)
		}
	}
}

// TestScalingFigures checks the scaling fixtures: one drive reproduces the
// scaling capacity's Actual, N drives the brief's totals, each drive total/N.
func TestScalingFigures(t *testing.T) {
	files, spec, d := fixtures(t), loadSpec(t), readData(t)
	n := d.Scaling.Drives
	ci := slices.IndexFunc(spec.Capacities, func(c specs.Capacity) bool { return c.Name == d.Scaling.Capacity })
	if ci < 0 {
		t.Fatalf("spec has no capacity %s", d.Scaling.Capacity)
	}
	for _, w := range spec.Workloads {
		if _, ok := spec.Capacities[ci].Spec[w.Name]; !ok {
			continue
		}
		one := ScalingPath(1, w.Name)
		f := sum(t, one, files[one])
		actual := d.Single[d.Scaling.Capacity][w.Name].Actual
		if w.Metric == specs.IOPS && !f.exactIOPS(actual) {
			t.Errorf("%s: %.3f IOPS, want exactly %d", one, f.iops(), actual)
		}
		if w.Metric == specs.MBps && math.Abs(f.mbps()-float64(actual))/float64(actual) > 1e-4 {
			t.Errorf("%s: %.3f MB/s, want %d within 0.01 %%", one, f.mbps(), actual)
		}

		all := ScalingPath(n, w.Name)
		total := d.Scaling.Total[w.Name].Total
		f, groups := sums(t, all, files[all])
		if w.Metric == specs.IOPS && !f.exactIOPS(total) {
			t.Errorf("%s: %.3f IOPS, want exactly %d", all, f.iops(), total)
		}
		if got := f.value(w.Metric); math.Abs(got-float64(total))/float64(total) > 1e-4 {
			t.Errorf("%s: %.3f, want %d within 0.01 %%", all, got, total)
		}
		if len(groups) != n {
			t.Errorf("%s: %d groups, want %d", all, len(groups), n)
		}
		for g, per := range groups {
			want := float64(total) / float64(n)
			if got := per.value(w.Metric); math.Abs(got-want)/want > 1e-4 {
				t.Errorf("%s: drive%d: %.3f, want %.3f (total / %d)", all, g, got, want, n)
			}
			if w.Metric == specs.IOPS && per.ios*int64(n)*1000 != total*per.runtimeMs {
				t.Errorf("%s: drive%d: %d I/Os, want exactly %d × %d ms / 1000 / %d", all, g, per.ios, total, per.runtimeMs, n)
			}
		}
	}
}

// TestFixtureJobs checks the job entries against the workload: one section
// per drive, each its own group, numjobs entries each (no group_reporting),
// and the read/write split of a mixed workload.
func TestFixtureJobs(t *testing.T) {
	files, spec, d := fixtures(t), loadSpec(t), readData(t)
	type check struct {
		rel    string
		w      specs.Workload
		drives int
	}
	var checks []check
	for _, c := range spec.Capacities {
		for _, w := range spec.Workloads {
			if _, ok := c.Spec[w.Name]; ok {
				checks = append(checks, check{SinglePath(c.Name, w.Name), w, 1})
			}
		}
	}
	for _, n := range []int{1, d.Scaling.Drives} {
		for _, w := range spec.Workloads {
			checks = append(checks, check{ScalingPath(n, w.Name), spec.ForScaling(w), n})
		}
	}
	for _, c := range checks {
		var out fioFile
		if err := json.Unmarshal(files[c.rel], &out); err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		if out.Version != FioVersion {
			t.Errorf("%s: fio version %q, want %q", c.rel, out.Version, FioVersion)
		}
		if got, want := len(out.Jobs), c.drives*c.w.NumJobs; got != want {
			t.Errorf("%s: %d jobs, want %d", c.rel, got, want)
			continue
		}
		for i, j := range out.Jobs {
			g := i / c.w.NumJobs
			if j.GroupID != g || j.JobName != fmt.Sprintf("drive%d", g) || j.Error != 0 {
				t.Errorf("%s: job %d: %s group %d error %d, want drive%d group %d error 0", c.rel, i, j.JobName, j.GroupID, j.Error, g, g)
			}
			if got, want := j.JobOptions["iodepth"], fmt.Sprint(c.w.IODepth); got != want {
				t.Errorf("%s: job %d: iodepth %s, want %s", c.rel, i, got, want)
			}
			if j.JobOptions["rw"] != c.w.RW {
				t.Errorf("%s: job %d: rw %s, want %s", c.rel, i, j.JobOptions["rw"], c.w.RW)
			}
			for _, dir := range []fioDir{j.Read, j.Write} {
				if dir.TotalIOs == 0 {
					continue
				}
				if dir.IOBytes != dir.TotalIOs*c.w.BS {
					t.Errorf("%s: job %d: io_bytes %d, want total_ios %d × bs %d", c.rel, i, dir.IOBytes, dir.TotalIOs, c.w.BS)
				}
				if want := float64(dir.TotalIOs) * 1000 / float64(dir.Runtime); math.Abs(dir.IOPS-want) > 1e-6*want {
					t.Errorf("%s: job %d: iops %f, want %f", c.rel, i, dir.IOPS, want)
				}
				// Little's law over the job: iodepth = rate × mean latency.
				if dir.LatNs.N != dir.TotalIOs {
					t.Errorf("%s: job %d: lat_ns N %d, want %d", c.rel, i, dir.LatNs.N, dir.TotalIOs)
				}
			}
			n := j.Read.TotalIOs + j.Write.TotalIOs
			rate := float64(n) * 1000 / float64(max(j.Read.Runtime, j.Write.Runtime))
			lat := (j.Read.LatNs.Mean*float64(j.Read.TotalIOs) + j.Write.LatNs.Mean*float64(j.Write.TotalIOs)) / float64(n) / 1e9
			if inFlight := rate * lat; math.Abs(inFlight-float64(c.w.IODepth)) > 0.01*float64(c.w.IODepth) {
				t.Errorf("%s: job %d: %.0f IOPS × %.1f µs = %.2f in flight, want iodepth %d", c.rel, i, rate, lat*1e6, inFlight, c.w.IODepth)
			}
			mix := c.w.RWMixRead
			switch c.w.RW {
			case "read", "randread":
				mix = 100
			case "write", "randwrite":
				mix = 0
			}
			if want := (n*int64(mix) + 50) / 100; j.Read.TotalIOs != want {
				t.Errorf("%s: job %d: %d reads of %d I/Os, want %d (%d %%)", c.rel, i, j.Read.TotalIOs, n, want, mix)
			}
		}
	}
}

// TestFiojobParse reads every fixture through the suite's own parser and
// aggregation, which must find the same figures as the sums above.
func TestFiojobParse(t *testing.T) {
	files := fixtures(t)
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if rel == RunFile {
			continue
		}
		out, err := fiojob.Parse(files[rel])
		if err != nil {
			t.Errorf("fiojob.Parse(%s): %v", rel, err)
			continue
		}
		if out.Version != FioVersion || len(out.Notes) != 0 {
			t.Errorf("fiojob.Parse(%s): version %q, notes %q; want %q, none", rel, out.Version, out.Notes, FioVersion)
		}
		f := sum(t, rel, files[rel])
		tot := out.Total()
		if len(tot.Errors) != 0 {
			t.Errorf("%s: Total().Errors = %q, want none", rel, tot.Errors)
		}
		if got, want := tot.IOPS, f.iops(); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: Total().IOPS = %f, want %f", rel, got, want)
		}
		if got, want := tot.MBps(), f.mbps(); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: Total().MBps() = %f, want %f", rel, got, want)
		}
	}
}

// TestRunFile checks run.json: the reconstructed record and its drives.
func TestRunFile(t *testing.T) {
	files, spec, d := fixtures(t), loadSpec(t), readData(t)
	var run struct {
		Spec          string `json:"spec"`
		Mode          string `json:"mode"`
		FioVersion    string `json:"fio_version"`
		Precondition  string `json:"precondition"`
		Reconstructed bool   `json:"reconstructed"`
		Drives        []struct {
			Path     string `json:"path"`
			Model    string `json:"model"`
			Serial   string `json:"serial"`
			Firmware string `json:"firmware"`
			Bytes    int64  `json:"bytes"`
			Capacity string `json:"capacity"`
			NUMANode int    `json:"numa_node"`
		} `json:"drives"`
	}
	dec := json.NewDecoder(bytes.NewReader(files[RunFile]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&run); err != nil {
		t.Fatalf("%s: %v", RunFile, err)
	}
	if run.Spec != spec.Model || run.Mode != "record" || run.FioVersion != FioVersion || run.Precondition != "full" || !run.Reconstructed {
		t.Errorf("%s: spec %q mode %q fio %q precondition %q reconstructed %v", RunFile, run.Spec, run.Mode, run.FioVersion, run.Precondition, run.Reconstructed)
	}
	// IDEMA user capacities of the four models.
	idema := map[string]int64{
		"1.92TB":  1_920_383_410_176,
		"3.84TB":  3_840_755_982_336,
		"7.68TB":  7_681_501_126_656,
		"15.36TB": 15_362_991_415_296,
	}
	count := map[string]int{}
	for i, dr := range run.Drives {
		count[dr.Capacity]++
		if want := DrivePath(dr.Capacity, count[dr.Capacity]-1); dr.Path != want {
			t.Errorf("drive %d: path %q, want %q", i, dr.Path, want)
		}
		if dr.Bytes != idema[dr.Capacity] || dr.Model != spec.Model || dr.NUMANode != -1 || dr.Serial != "" || dr.Firmware != "" {
			t.Errorf("drive %d (%s): %+v", i, dr.Path, dr)
		}
	}
	want := map[string]int{"1.92TB": d.Scaling.Drives, "3.84TB": 1, "7.68TB": 1, "15.36TB": 1}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("drives per capacity (-want +got):\n%s", diff)
	}
}

// TestShapeMatchesFio runs the real fio briefly on a small file and checks
// that a generated file has the same keys, in the same order, as fio's own
// output of the same kind of job file (values and disk_util aside).
func TestShapeMatchesFio(t *testing.T) {
	fio := testenv.MustHaveFio(t)
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "shape.fio")
	var b strings.Builder
	b.WriteString("[global]\nioengine=psync\ndirect=0\ntime_based=1\nruntime=1\nsize=1m\n")
	for i := range 2 {
		fmt.Fprintf(&b, "\n[drive%d]\nnew_group\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=1\nnumjobs=2\nfilename=%s\n", i, filepath.Join(dir, fmt.Sprintf("d%d", i)))
	}
	if err := os.WriteFile(jobFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), fio, "--output-format=json", jobFile)
	cmd.Dir = dir
	real, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	ours := fixtures(t)[ScalingPath(24, "4KB Random Mixed Read Write 70/30")]

	realKeys, err := keyPaths(real)
	if err != nil {
		t.Fatalf("fio output: %v", err)
	}
	ourKeys, err := keyPaths(ours)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(realKeys, ourKeys); diff != "" {
		t.Errorf("keys of a generated file differ from fio's (-fio +generated):\n%s", diff)
	}
}

// keyPaths lists the keys of fio's output in order: the top level, the first
// job (without its job options, which depend on the job file) and the global
// options are left out, as is disk_util, which depends on the machine.
func keyPaths(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var paths []string
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				p := prefix + "/" + k.(string)
				if !strings.HasPrefix(p, "/jobs/0") && strings.HasPrefix(p, "/jobs/") ||
					strings.HasPrefix(p, "/disk_util/") || strings.HasSuffix(p, "/job options/"+k.(string)) ||
					strings.HasPrefix(p, "/global options/") {
					if err := skip(dec); err != nil {
						return err
					}
					continue
				}
				paths = append(paths, p)
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(fmt.Sprintf("%s/%d", prefix, i)); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ']'
			return err
		}
		return nil
	}
	return paths, walk("")
}

// skip consumes one value from dec.
func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}
