package fiojob

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drivequal/drivequal/fiojob/internal/nonfinite"
)

// closeTo reports whether got equals fio's printed figure want within the
// rounding of fio's "%f" (6 decimals) plus float64 error.
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 2e-6+1e-12*math.Abs(want)
}

// TestParseFixtures checks every field Parse reads against fio's own JSON,
// decoded generically, for every job of every recorded fixture; the clat
// percentiles computed from the json+ bins must equal fio's own.
func TestParseFixtures(t *testing.T) {
	for _, f := range fixtures(t) {
		name := filepath.Base(f)
		if name == "nan.json" {
			continue // not plain JSON; see TestParseNaN
		}
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			out, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			v := lastObject(t, data)
			if out.Version != v.str("fio version") {
				t.Errorf("Version = %q, want %q", out.Version, v.str("fio version"))
			}
			var want []fioJSON
			for _, j := range v.jobs() {
				if j.str("jobname") != "All clients" {
					want = append(want, j)
				}
			}
			if len(out.Jobs) != len(want) {
				t.Fatalf("%d jobs, want %d", len(out.Jobs), len(want))
			}
			for i, w := range want {
				g := out.Jobs[i]
				if g.Name != w.str("jobname") || int64(g.GroupID) != w.int("groupid") ||
					int64(g.Error) != w.int("error") || g.Hostname != w.str("hostname") {
					t.Errorf("job %d = %q group %d error %d host %q, want %q group %d error %d host %q",
						i, g.Name, g.GroupID, g.Error, g.Hostname,
						w.str("jobname"), w.int("groupid"), w.int("error"), w.str("hostname"))
				}
				for _, dir := range []struct {
					name string
					got  Direction
				}{{"read", g.Read}, {"write", g.Write}, {"trim", g.Trim}} {
					checkDirection(t, i, dir.name, dir.got, w.obj(dir.name))
				}
			}
		})
	}
}

func checkDirection(t *testing.T, job int, name string, got Direction, w fioJSON) {
	t.Helper()
	where := "job " + strconv.Itoa(job) + " " + name
	if got.IOBytes != w.int("io_bytes") || got.TotalIOs != w.int("total_ios") || got.RuntimeMs != w.int("runtime") {
		t.Errorf("%s: io_bytes %d total_ios %d runtime %d, want %d %d %d", where,
			got.IOBytes, got.TotalIOs, got.RuntimeMs, w.int("io_bytes"), w.int("total_ios"), w.int("runtime"))
	}
	if got.IOPS != w.num("iops") || got.BWBytes != w.num("bw_bytes") {
		t.Errorf("%s: iops %v bw_bytes %v, want %v %v", where, got.IOPS, got.BWBytes, w.num("iops"), w.num("bw_bytes"))
	}
	lat := w.obj("lat_ns")
	if got.LatN != lat.int("N") || got.LatMeanNs != lat.num("mean") {
		t.Errorf("%s: lat N %d mean %v, want %d %v", where, got.LatN, got.LatMeanNs, lat.int("N"), lat.num("mean"))
	}
	clat := w.obj("clat_ns")
	bins := clat.obj("bins")
	if len(got.Bins) != len(bins) {
		t.Errorf("%s: %d bins, want %d", where, len(got.Bins), len(bins))
	}
	var n int64
	for _, c := range got.Bins {
		n += c
	}
	if n != clat.int("N") {
		t.Errorf("%s: bins hold %d samples, want clat N %d", where, n, clat.int("N"))
	}
	pct := clat.obj("percentile")
	if len(pct) == 0 {
		return
	}
	for _, p := range []struct {
		key string
		got float64
	}{{"50.000000", got.P50Ns}, {"99.000000", got.P99Ns}, {"99.900000", got.P999Ns}, {"99.990000", got.P9999Ns}} {
		if want := pct.num(p.key); p.got != want {
			t.Errorf("%s: p%s = %v ns from bins, fio printed %v", where, p.key, p.got, want)
		}
	}
}

// TestAggregateFixtures checks that every aggregate is the sum of fio's own
// per-job fields, and that where fio printed a group figure (one entry per
// group with group_reporting) the group's IOPS and bandwidth equal it.
func TestAggregateFixtures(t *testing.T) {
	for _, f := range fixtures(t) {
		name := filepath.Base(f)
		if name == "nan.json" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			out, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			type sums struct{ readBytes, readIOs, writeBytes, writeIOs, jobs int64 }
			byGroup := map[int64]*sums{}
			total := &sums{}
			for _, j := range lastObject(t, data).jobs() {
				if j.str("jobname") == "All clients" {
					continue
				}
				g := byGroup[j.int("groupid")]
				if g == nil {
					g = &sums{}
					byGroup[j.int("groupid")] = g
				}
				for _, s := range []*sums{g, total} {
					s.readBytes += j.obj("read").int("io_bytes")
					s.readIOs += j.obj("read").int("total_ios")
					s.writeBytes += j.obj("write").int("io_bytes")
					s.writeIOs += j.obj("write").int("total_ios")
					s.jobs++
				}
			}
			check := func(what string, r Result, s *sums) {
				t.Helper()
				got := sums{r.Read.IOBytes, r.Read.TotalIOs, r.Write.IOBytes, r.Write.TotalIOs, int64(r.Jobs)}
				if got != *s {
					t.Errorf("%s: (read bytes, ios, write bytes, ios, jobs) = %v, fio's jobs sum to %v", what, got, *s)
				}
			}
			check("Total()", out.Total(), total)
			groups := out.Groups()
			if len(groups) != len(byGroup) {
				t.Fatalf("Groups() = %d groups, want %d", len(groups), len(byGroup))
			}
			for i, g := range groups {
				if i > 0 && g.GroupID <= groups[i-1].GroupID {
					t.Errorf("Groups() not in ascending groupid order: %d after %d", g.GroupID, groups[i-1].GroupID)
				}
				check("group "+strconv.Itoa(g.GroupID), g, byGroup[int64(g.GroupID)])
			}
			// Where fio printed one entry per group, it is fio's group figure.
			if len(groups) == len(out.Jobs) {
				for i, g := range groups {
					j := out.Jobs[i]
					wantIOPS := j.Read.IOPS + j.Write.IOPS
					if !closeTo(g.IOPS, wantIOPS) {
						t.Errorf("group %d: IOPS = %.6f, fio printed %.6f", g.GroupID, g.IOPS, wantIOPS)
					}
					// fio truncates bw_bytes to an integer.
					if wantBW := j.Read.BWBytes + j.Write.BWBytes; math.Abs(g.BytesPerSec-wantBW) > 2 {
						t.Errorf("group %d: BytesPerSec = %.1f, fio printed %.0f", g.GroupID, g.BytesPerSec, wantBW)
					}
					if !cmp.Equal(g.Read.Bins, j.Read.Bins) || g.Read.P99Ns != j.Read.P99Ns {
						t.Errorf("group %d: one-job aggregate changed the read bins or p99", g.GroupID)
					}
				}
			}
		})
	}
}

// TestAggregateAllClients compares Total() with the "All clients" entry
// fio computed itself for two clients.
func TestAggregateAllClients(t *testing.T) {
	data := readFixture(t, "client-server-2.json")
	out, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Jobs) != 2 {
		t.Fatalf("%d jobs, want 2 (the All clients entry dropped)", len(out.Jobs))
	}
	var all fioJSON
	for _, j := range lastObject(t, data).jobs() {
		if j.str("jobname") == "All clients" {
			all = j
		}
	}
	if all == nil {
		t.Fatal(`fixture has no "All clients" entry`)
	}
	r := out.Total()
	w := all.obj("read")
	if r.Read.IOBytes != w.int("io_bytes") || r.Read.TotalIOs != w.int("total_ios") || r.Read.RuntimeMs != w.int("runtime") {
		t.Errorf("Total().Read = %d bytes %d ios %d ms, All clients has %d %d %d",
			r.Read.IOBytes, r.Read.TotalIOs, r.Read.RuntimeMs, w.int("io_bytes"), w.int("total_ios"), w.int("runtime"))
	}
	if !closeTo(r.IOPS, w.num("iops")) {
		t.Errorf("Total().IOPS = %.6f, All clients has %.6f", r.IOPS, w.num("iops"))
	}
	if r.GroupID != 0 {
		t.Errorf("Total().GroupID = %d, want 0 (both clients report group 0)", r.GroupID)
	}
}

func TestParseNotes(t *testing.T) {
	out, err := Parse(readFixture(t, "notes-psync.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1"}
	if diff := cmp.Diff(want, out.Notes); diff != "" {
		t.Errorf("Notes mismatch (-want +got):\n%s", diff)
	}

	out, err = Parse(readFixture(t, "client-server-2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Notes) == 0 || !strings.Contains(out.Notes[0], "drive0: (g=0): rw=randread") {
		t.Errorf("client-server-2.json: Notes = %q, want fio's normal-format header", out.Notes)
	}
}

func TestParseStatusInterval(t *testing.T) {
	data := readFixture(t, "status-interval.json")
	if n := bytes.Count(data, []byte("\n{")) + 1; n < 3 {
		t.Fatalf("fixture holds %d JSON objects, want several", n)
	}
	out, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Parse(data[:bytes.Index(data, []byte("\n}\n"))+3])
	if err != nil {
		t.Fatal(err)
	}
	// The reports are cumulative: the final one has the most I/O.
	if out.Jobs[0].Read.TotalIOs <= first.Jobs[0].Read.TotalIOs {
		t.Errorf("final report has %d I/Os, first %d: Parse did not keep the last object",
			out.Jobs[0].Read.TotalIOs, first.Jobs[0].Read.TotalIOs)
	}
	if want := lastObject(t, data).jobs()[0].obj("read").int("total_ios"); out.Jobs[0].Read.TotalIOs != want {
		t.Errorf("TotalIOs = %d, want the last object's %d", out.Jobs[0].Read.TotalIOs, want)
	}
	if len(out.Notes) != 0 {
		t.Errorf("Notes = %q, want none", out.Notes)
	}
}

// TestParseSplitByLayout: the line rule Parse skips status reports by
// (split with lines) cuts fio's output where scanObject does, and output
// laid out otherwise is still read the exact way: a report whose nested
// braces close at the start of a line, status reports with notes between
// them, and a compact object, all give Parse's exact result.
func TestParseSplitByLayout(t *testing.T) {
	data := readFixture(t, "status-interval.json")
	exact := func(data []byte) *Output {
		t.Helper()
		notes, last, _, err := split(data, false)
		if err != nil {
			t.Fatal(err)
		}
		var v fioOutput
		if err := json.Unmarshal(nonfinite.Zero(last), &v); err != nil {
			t.Fatal(err)
		}
		return &Output{Version: v.Version, Notes: notes}
	}
	n1, l1, line1, err1 := split(data, true)
	n2, l2, line2, err2 := split(data, false)
	if err1 != nil || err2 != nil || !bytes.Equal(l1, l2) || line1 != line2 || !cmp.Equal(n1, n2) {
		t.Fatalf("split by lines: last object of %d bytes at line %d (%v), by scanObject %d bytes at line %d (%v)",
			len(l1), line1, err1, len(l2), line2, err2)
	}
	last := lastObject(t, data).jobs()[0].obj("read").int("total_ios")
	// The final report with its nested objects' closing braces moved to
	// the start of their lines, notes between the reports, and a compact
	// copy of the first report at the start.
	first := data[:bytes.Index(data, []byte("\n}\n"))+3]
	var compact bytes.Buffer
	if err := json.Compact(&compact, nonfinite.Zero(first)); err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(data, []byte("\n{"))
	unindented := regexp.MustCompile(`\n\s+\}`).ReplaceAll(data[i:], []byte("\n}"))
	if n, ok := reportEnd(data); !ok || n != len(first)-1 {
		t.Errorf("reportEnd of fio's first report = %d, %v; want %d, true", n, ok, len(first)-1)
	}
	if n, ok := reportEnd(unindented[1:]); ok {
		t.Errorf("reportEnd of a report whose nested braces close at the start of a line = %d, true; want false", n)
	}
	odd := slices.Concat(compact.Bytes(), []byte("\nfio: a note\n"), data[:i], []byte("\nnote: between\n"), unindented)
	for name, in := range map[string][]byte{"fio's layout": data, "another layout": odd} {
		out, err := Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := out.Jobs[0].Read.TotalIOs; got != last {
			t.Errorf("%s: TotalIOs = %d, want the last report's %d", name, got, last)
		}
		if want := exact(in).Notes; !cmp.Equal(out.Notes, want) {
			t.Errorf("%s: Notes = %q, want %q", name, out.Notes, want)
		}
	}
}

// TestParseNaN: nan.json is randread-8jobs-group.json with fio's bare
// nan / -nan / inf / -inf put where that fixture printed 0.000000 (see the
// fixtures README), so both must parse to the same Output.
func TestParseNaN(t *testing.T) {
	want, err := Parse(readFixture(t, "randread-8jobs-group.json"))
	if err != nil {
		t.Fatal(err)
	}
	data := readFixture(t, "nan.json")
	if !bytes.Contains(data, []byte(": -nan,")) {
		t.Fatal("nan.json holds no -nan")
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(nan.json): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nan.json parses differently from its source (-want +got):\n%s", diff)
	}
}

func TestParseJobError(t *testing.T) {
	out, err := Parse(readFixture(t, "error-bs1000.json"))
	if err != nil {
		t.Fatalf("Parse: %v (a failed job is not a parse error)", err)
	}
	if out.Jobs[0].Error != 22 {
		t.Errorf("Jobs[0].Error = %d, want 22 (EINVAL)", out.Jobs[0].Error)
	}
	want := []string{`job "drive0": errno 22 (invalid argument)`}
	if diff := cmp.Diff(want, out.Total().Errors); diff != "" {
		t.Errorf("Total().Errors mismatch (-want +got):\n%s", diff)
	}
}

type parseErrorTest struct {
	name string
	data func(t *testing.T) []byte
	want string // error prefix
}

func fixtureCut(name string, frac float64) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		b := readFixture(t, name)
		return b[:int(float64(len(b))*frac)]
	}
}

func literal(s string) func(t *testing.T) []byte {
	return func(*testing.T) []byte { return []byte(s) }
}

var parseErrorTests = []parseErrorTest{
	{"empty", literal(""), "fio printed no JSON object: the output is empty"},
	{"text only", literal("\nfio: failed parsing bs=x\nfio: job global dropped\n"),
		`fio printed no JSON object; its output begins "fio: failed parsing bs=x"`},
	{"truncated", fixtureCut("seq-read-128k.json", 0.5), "truncated fio JSON output ("},
	{"truncated after note", fixtureCut("notes-psync.json", 0.9), "truncated fio JSON output ("},
	{"last of several truncated", fixtureCut("status-interval.json", 0.95), "truncated fio JSON output ("},
	{"syntax", func(t *testing.T) []byte {
		b := readFixture(t, "seq-read-128k.json")
		return bytes.Replace(b, []byte(`"jobs" :`), []byte(`"jobs" ;`), 1)
	}, "fio JSON output line 18: invalid character ';' after object key"},
	{"bad bin", func(t *testing.T) []byte {
		b := readFixture(t, "seq-read-128k.json")
		i := bytes.Index(b, []byte(`"bins" : {`))
		if i < 0 {
			t.Fatal("no bins in fixture")
		}
		return append(b[:i:i], append([]byte(`"bins" : {"x1" : 1, `), b[i+len(`"bins" : {`):]...)...)
	}, `fio JSON output line 1: clat_ns bin "x1" is not an integer`},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorTests {
		out, err := Parse(tt.data(t))
		if err == nil {
			t.Errorf("%s: Parse() = %d jobs, nil; want error %q", tt.name, len(out.Jobs), tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: Parse() error = %q, want prefix %q", tt.name, err, tt.want)
		}
	}
}

type percentileTest struct {
	bins map[int64]int64
	ps   []float64
	want []float64
}

var percentileTests = []percentileTest{
	{nil, []float64{50}, []float64{0}},
	{map[int64]int64{100: 1, 200: 1}, []float64{50, 99}, []float64{100, 200}},
	{map[int64]int64{100: 1, 200: 2, 300: 1}, []float64{25, 50, 75, 100}, []float64{100, 200, 200, 300}},
	// 99.9 as a float64 is 99.90000000000000568..., so fio (comparing in
	// long double) needs more than 999 of 1000 samples: all 1000.
	{map[int64]int64{10: 998, 20: 1, 30: 1}, []float64{99.9}, []float64{30}},
	{map[int64]int64{10: 999, 20: 1}, []float64{99, 99.9, 99.99}, []float64{10, 20, 20}},
	// 99.99 as a float64 is 99.98999999999999488..., just below: 9999 of 10000 do.
	{map[int64]int64{10: 9998, 20: 1, 30: 1}, []float64{99.99}, []float64{20}},
}

func TestPercentiles(t *testing.T) {
	for _, tt := range percentileTests {
		got := Percentiles(tt.bins, tt.ps...)
		if !cmp.Equal(got, tt.want) {
			t.Errorf("Percentiles(%v, %v) = %v, want %v", tt.bins, tt.ps, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range fixtures(f) {
		b := readFixture(f, filepath.Base(p))
		if len(b) > 256<<10 {
			b = b[:256<<10] // the large fixture, cut: a truncation seed
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Parse(data)
		if err != nil {
			return
		}
		out.Total()
		out.Groups()
	})
}

func BenchmarkParse(b *testing.B) {
	data := readFixture(b, "scale-24x8.json")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGroups(b *testing.B) {
	out, err := Parse(readFixture(b, "scale-24x8.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if g := out.Groups(); len(g) != 24 {
			b.Fatalf("%d groups, want 24", len(g))
		}
	}
}

// TestCPUSeconds reads the jobs' CPU time from fio's usr_cpu and sys_cpu,
// in % of job_runtime, for 8 jobs reported apart and as one
// group_reporting group, whose job_runtime is the jobs' sum (8,000 ms for
// 8 jobs of 1 s). The figures were computed from the fixtures outside Go:
// Σ (usr_cpu + sys_cpu) / 100 × job_runtime / 1000 over their job entries.
func TestCPUSeconds(t *testing.T) {
	for _, tt := range []struct {
		file string
		want float64
	}{
		{"randread-8jobs-group.json", 0.507}, // (1.5125 + 4.825) % of 8,000 ms
		{"randread-8jobs-nogroup.json", 0.487},
	} {
		out, err := Parse(readFixture(t, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Total().CPUSeconds; math.Abs(got-tt.want) > 0.0005 {
			t.Errorf("%s: Total().CPUSeconds = %v, want %v", tt.file, got, tt.want)
		}
	}
}

// TestCPUPct keeps each job entry's usr_cpu + sys_cpu, in % of one CPU
// over its job_runtime: a job of its own (one thread, whose time fio reads
// with RUSAGE_THREAD), or a group_reporting entry's mean job, since fio
// divides the group's summed CPU time by its jobs' summed runtime. The
// figures are those fio printed in the fixtures.
func TestCPUPct(t *testing.T) {
	for _, tt := range []struct {
		file    string
		entries int
		first   float64 // usr_cpu + sys_cpu of the first entry
		runtime int64   // its job_runtime, ms
	}{
		{"cpu-sync-tmpfs.json", 1, 27.7 + 67.4, 3000},
		{"cpu-3x8-tmpfs-group.json", 3, 0.390625 + 1.494296, 16128},
		{"randread-8jobs-group.json", 1, 1.5125 + 4.825, 8000},
	} {
		out, err := Parse(readFixture(t, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Jobs) != tt.entries {
			t.Fatalf("%s: %d entries, want %d", tt.file, len(out.Jobs), tt.entries)
		}
		j := out.Jobs[0]
		if math.Abs(j.CPUPct-tt.first) > 1e-6 || j.RuntimeMs != tt.runtime {
			t.Errorf("%s: CPUPct %v, RuntimeMs %d; want %v, %d", tt.file, j.CPUPct, j.RuntimeMs, tt.first, tt.runtime)
		}
		if want := j.CPUPct / 100 * float64(j.RuntimeMs) / 1000; math.Abs(j.CPUSeconds-want) > 1e-9 {
			t.Errorf("%s: CPUSeconds %v, want CPUPct × runtime = %v", tt.file, j.CPUSeconds, want)
		}
	}
}

// TestAggregateTrims checks that a trim workload's trims are its I/Os:
// Result.IOPS counts them, Result.BytesPerSec (data moved) does not.
func TestAggregateTrims(t *testing.T) {
	jobs := []JobResult{
		{Name: "a", Write: Direction{TotalIOs: 1000, IOBytes: 4096000, RuntimeMs: 1000},
			Trim: Direction{TotalIOs: 3000, IOBytes: 3000 * 4096, RuntimeMs: 1000}},
		{Name: "b", Trim: Direction{TotalIOs: 1000, IOBytes: 1000 * 4096, RuntimeMs: 2000}},
	}
	r := Aggregate(jobs)
	if r.Trim.TotalIOs != 4000 || r.Trim.IOPS != 2000 {
		t.Errorf("Aggregate().Trim = %d I/Os at %v IOPS, want 4000 at 2000", r.Trim.TotalIOs, r.Trim.IOPS)
	}
	if r.IOPS != 3000 || r.BytesPerSec != 4096000 {
		t.Errorf("Aggregate() = %v IOPS, %v B/s; want 3000 (1000 writes + 2000 trims), 4096000 (writes only)", r.IOPS, r.BytesPerSec)
	}
	if r.Runtime.Seconds() != 2 {
		t.Errorf("Aggregate().Runtime = %v, want 2s (the trims' longest)", r.Runtime)
	}
}
