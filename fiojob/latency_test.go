package fiojob

import (
	"math"
	"math/bits"
	"path/filepath"
	"strconv"
	"testing"
)

type qosTest struct {
	name        string
	jobs        []JobResult
	read, write QoS // of Aggregate(jobs)
}

func bins(b map[int64]int64) Direction { return Direction{Bins: b} }

var qosTests = []qosTest{
	{"no bins", []JobResult{{}}, QoS{}, QoS{}},
	{"one bin", []JobResult{{Read: bins(map[int64]int64{4000: 7})}},
		QoS{4000, 4000, 4000, 4000, 4000, 4000}, QoS{}},
	// A bin with no samples is not the maximum.
	{"empty top bin", []JobResult{{Write: bins(map[int64]int64{100: 1, 200: 1, 5000: 0})}},
		QoS{}, QoS{100, 200, 200, 200, 200, 200}},
	// Fewer than 100 000 samples: p99.999 needs them all, so it is the maximum.
	{"few samples", []JobResult{{Read: bins(map[int64]int64{100: 99000, 300: 998, 7000: 1})}},
		QoS{100, 100, 300, 300, 7000, 7000}, QoS{}},
	// Two jobs of 100 000 reads each, merged (200 000 samples):
	//   latency  job A  job B  merged  running count
	//   100      70000  30000  100000  100000  ≥ 100000 = 50%:     p50
	//   1000     25000  65000   90000  190000
	//   2000      4700   5000    9700  199700  ≥ 198000 = 99%:     p99
	//   50000      277             277  199977  ≥ 199801 (99.9%):   p99.9
	//   70000       20              20  199997  ≥ 199980 (99.99%):  p99.99
	//   5000000      2               2  199999  ≥ 199998 (99.999%): p99.999
	//   9000000      1               1  200000                      max
	// The float64 99.9 is just above 99.9 (199800.0000… rounds up to 199801),
	// 99.99 and 99.999 just below (199979.99… → 199980, 199997.99… →
	// 199998). Job A alone has p50 100 and p99.999 9000000; job B p50 1000:
	// no average of the jobs' percentiles gives the merged figures. The
	// writes are job B's only.
	{"two jobs merged", []JobResult{
		{Name: "a", Read: bins(map[int64]int64{100: 70000, 1000: 25000, 2000: 4700, 50000: 277, 70000: 20, 5000000: 2, 9000000: 1})},
		{Name: "b", Read: bins(map[int64]int64{100: 30000, 1000: 65000, 2000: 5000}), Write: bins(map[int64]int64{300: 3, 400: 1})},
	}, QoS{100, 2000, 50000, 70000, 5000000, 9000000}, QoS{300, 400, 400, 400, 400, 400}},
}

func TestQoS(t *testing.T) {
	for _, tt := range qosTests {
		r := Aggregate(tt.jobs)
		if got := r.Read.QoS(); got != tt.read {
			t.Errorf("%s: Aggregate().Read.QoS() = %+v, want %+v", tt.name, got, tt.read)
		}
		if got := r.Write.QoS(); got != tt.write {
			t.Errorf("%s: Aggregate().Write.QoS() = %+v, want %+v", tt.name, got, tt.write)
		}
	}
}

// halfBin is half the width of the json+ bin whose value (midpoint) is ns:
// 0 below 128 ns, where bins are exact, else 2^(n-7) for ns in [2^n, 2^(n+1)).
func halfBin(ns int64) int64 {
	if ns < 128 {
		return 0
	}
	return 1 << (bits.Len64(uint64(ns)) - 1 - 7)
}

// TestQoSFixtures checks, for every direction with samples of every job,
// group and total of every recorded fixture, that the QoS figures are
// present and ordered, that they agree with the Direction's percentiles,
// and that MaxNs is within the documented precision of fio's exact clat_ns
// max (the longest of the jobs' for an aggregate): inside the highest bin,
// at most 1/128 of it away.
// lastBinNs is the value of fio's last json+ latency bin (QoS's doc).
const lastBinNs = 17_112_760_320

func TestQoSFixtures(t *testing.T) {
	for _, f := range fixtures(t) {
		name := filepath.Base(f)
		if name == "nan.json" {
			continue // the same latencies as randread-8jobs-group.json
		}
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			out, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			type maxes struct{ read, write int64 }
			var jobMax []maxes
			groupMax := map[int]*maxes{}
			var totalMax maxes
			for _, j := range lastObject(t, data).jobs() {
				if j.str("jobname") == "All clients" {
					continue
				}
				m := maxes{j.obj("read").obj("clat_ns").int("max"), j.obj("write").obj("clat_ns").int("max")}
				jobMax = append(jobMax, m)
				g := groupMax[int(j.int("groupid"))]
				if g == nil {
					g = &maxes{}
					groupMax[int(j.int("groupid"))] = g
				}
				for _, a := range []*maxes{g, &totalMax} {
					a.read, a.write = max(a.read, m.read), max(a.write, m.write)
				}
			}
			if len(jobMax) != len(out.Jobs) {
				t.Fatalf("%d jobs, fio printed %d", len(out.Jobs), len(jobMax))
			}
			checked := 0
			check := func(where string, r, w Direction, m maxes) {
				t.Helper()
				checked += checkQoS(t, where+" read", r, m.read)
				checked += checkQoS(t, where+" write", w, m.write)
			}
			for i, j := range out.Jobs {
				check("job "+strconv.Itoa(i), j.Read, j.Write, jobMax[i])
			}
			for _, g := range out.Groups() {
				check("group "+strconv.Itoa(g.GroupID), g.Read, g.Write, *groupMax[g.GroupID])
			}
			total := out.Total()
			check("Total()", total.Read, total.Write, totalMax)
			if checked == 0 && len(total.Errors) == 0 {
				t.Error("no direction with samples, and no job failed")
			}
		})
	}
}

// checkQoS checks d.QoS() against fio's exact clat max (ns) and returns 1
// when d has samples, 0 otherwise.
func checkQoS(t *testing.T, where string, d Direction, fioMax int64) int {
	t.Helper()
	q := d.QoS()
	var n int64
	for _, c := range d.Bins {
		n += c
	}
	if n == 0 {
		if q != (QoS{}) || fioMax != 0 {
			t.Errorf("%s: no samples, but QoS() = %+v and fio's max is %d", where, q, fioMax)
		}
		return 0
	}
	fields := []float64{q.P50Ns, q.P99Ns, q.P999Ns, q.P9999Ns, q.P99999Ns, q.MaxNs}
	for i, v := range fields {
		if v <= 0 || i > 0 && v < fields[i-1] {
			t.Errorf("%s: QoS() = %+v, want 0 < p50 ≤ p99 ≤ p99.9 ≤ p99.99 ≤ p99.999 ≤ max", where, q)
			break
		}
	}
	if q.P50Ns != d.P50Ns || q.P99Ns != d.P99Ns || q.P999Ns != d.P999Ns || q.P9999Ns != d.P9999Ns {
		t.Errorf("%s: QoS() = %+v, Direction has p50 %v p99 %v p99.9 %v p99.99 %v",
			where, q, d.P50Ns, d.P99Ns, d.P999Ns, d.P9999Ns)
	}
	if n < 100000 && q.P99999Ns != q.MaxNs {
		t.Errorf("%s: %d samples: p99.999 = %v, want the maximum %v", where, n, q.P99999Ns, q.MaxNs)
	}
	top := int64(q.MaxNs)
	if top == lastBinNs {
		// Every sample of 2^34 ns or more lands in the last bin: MaxNs is
		// a lower bound there (fixtures/fio/precondition-1m-starved.json,
		// whose starved jobs waited up to 121 s).
		if fioMax < lastBinNs-halfBin(lastBinNs) {
			t.Errorf("%s: MaxNs is the last bin, %d, but fio's max is %d", where, top, fioMax)
		}
		return 1
	}
	h := halfBin(top)
	if fioMax < top-h || fioMax >= top+h && h > 0 || h == 0 && fioMax != top {
		t.Errorf("%s: MaxNs = %d, fio's max %d is outside its bin [%d, %d)", where, top, fioMax, top-h, top+h)
	}
	if diff := math.Abs(q.MaxNs - float64(fioMax)); diff > float64(fioMax)/128 {
		t.Errorf("%s: MaxNs = %d is %.0f ns from fio's max %d, more than 1/128 of it", where, top, diff, fioMax)
	}
	return 1
}

// TestQoSMixed: in a randrw run, reads and writes have their own bins, so
// their QoS figures are separate and each agrees with what fio printed for
// that direction alone.
func TestQoSMixed(t *testing.T) {
	data := readFixture(t, "randrw-70-30.json")
	out, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	fioJob := lastObject(t, data).jobs()[0] // group_reporting: one entry
	total := out.Total()
	for _, tt := range []struct {
		dir string
		got Direction
	}{{"read", total.Read}, {"write", total.Write}} {
		clat := fioJob.obj(tt.dir).obj("clat_ns")
		pct := clat.obj("percentile")
		q := tt.got.QoS()
		for _, p := range []struct {
			key string
			got float64
		}{{"50.000000", q.P50Ns}, {"99.000000", q.P99Ns}, {"99.900000", q.P999Ns}, {"99.990000", q.P9999Ns}} {
			if want := pct.num(p.key); p.got != want {
				t.Errorf("Total().%s: p%s = %v, fio printed %v for %s", tt.dir, p.key, p.got, want, tt.dir)
			}
		}
		if q.P99999Ns == 0 || q.MaxNs == 0 {
			t.Errorf("Total().%s.QoS() = %+v, want p99.999 and max", tt.dir, q)
		}
		if m := float64(clat.int("max")); math.Abs(q.MaxNs-m) > m/128 {
			t.Errorf("Total().%s: MaxNs = %v, fio's %s max is %v", tt.dir, q.MaxNs, tt.dir, m)
		}
	}
	r, w := total.Read.QoS(), total.Write.QoS()
	if r == w {
		t.Errorf("read and write QoS are the same, %+v: directions mixed", r)
	}
	if total.Read.TotalIOs == 0 || total.Write.TotalIOs == 0 {
		t.Fatalf("fixture has %d reads and %d writes, want both", total.Read.TotalIOs, total.Write.TotalIOs)
	}
}
