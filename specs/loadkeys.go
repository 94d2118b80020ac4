package specs

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/drivequal/drivequal/specs/bssplit"
)

// AtLatency is a [capacity.at_latency."NAME"] target: the highest IOPS
// among workload NAME's sweep points whose latency percentile is within
// Limit must reach MinIOPS.
type AtLatency struct {
	Limit   LatencyLimit
	MinIOPS float64
	Line    int // the table's line in File, for messages
}

// MaxSweepPoints is the most points one sweep list may hold.
const MaxSweepPoints = 32

// Sweeps reports whether w has sweep points.
func (w Workload) Sweeps() bool { return len(w.SweepIODepth)+len(w.SweepRateIOPS) > 0 }

// loadKeys are the [[workload]] keys of application-like load: fio's own
// keys, each checked here and written to the job file as fio names it,
// and the sweeps of the workload's load (latency at load).
var loadKeys = fields[Workload]{
	{key: "bssplit", conv: bssplitKey},
	{key: "rate_iops", conv: func(t table, v value, w *Workload) {
		setInt(t, v, &w.RateIOPS, 0, 1, math.MaxInt32)
		// Checked here, once rw and numjobs are read: the run holds its
		// drives exclusively (O_EXCL), so the kernel cannot claim one to
		// trim it and invalidates each trimmed range's page cache instead,
		// which fails with EBUSY when two jobs trim at once.
		if strings.Contains(w.RW, "trim") && w.NumJobs > 1 {
			t.errorf("numjobs", "numjobs = %d: rw %q trims, and trims from more than one job fail (EBUSY) on a drive the run holds exclusively; use numjobs = 1 and a deeper iodepth", w.NumJobs, w.RW)
		}
		// The same collision fails a trim-and-write mix now and then even
		// in one job: the host's problem, which would be blamed on the drive.
		if w.RW == "trimwrite" || w.RW == "randtrimwrite" {
			t.errorf("rw", "rw %q mixes trims and writes, which fail now and then (EBUSY) on a drive the run holds exclusively; use rw = \"randtrim\" and a separate write workload", w.RW)
		}
	}},
	{key: "thinktime", conv: func(t table, v value, w *Workload) {
		if d, ok := t.duration(v, 0, false); ok && v.set {
			if d%time.Microsecond != 0 || d > time.Hour {
				t.errorf(v.key, "thinktime %q must be whole microseconds (fio's unit), at most 1h", v.v)
				return
			}
			w.ThinkTime = d
		}
	}},
	{key: "buffer_compress_percentage", conv: func(t table, v value, w *Workload) {
		setInt(t, v, &w.BufferCompressPercentage, 0, 0, 100)
		if w.BufferCompressPercentage > 0 && w.RW != "" && !w.WritesData() {
			t.errorf(v.key, "buffer_compress_percentage is the written data's compressibility; workload rw %q writes no data: remove it", w.RW)
		}
	}},
	{key: "sweep_iodepth", conv: func(t table, v value, w *Workload) {
		for _, n := range sweepList(t, v, MaxIODepth, "an iodepth per job") {
			w.SweepIODepth = append(w.SweepIODepth, int(n))
		}
	}},
	{key: "sweep_rate_iops", conv: func(t table, v value, w *Workload) {
		rates := sweepList(t, v, math.MaxInt32, "a total IOPS over the workload's jobs")
		switch {
		case len(rates) > 0 && w.RateIOPS > 0:
			t.errorf(v.key, "sweep_rate_iops sets each point's rate itself: remove rate_iops from this workload")
		case len(rates) > 0 && w.NumJobs > 0:
			for _, r := range rates {
				if r%int64(w.NumJobs) != 0 {
					t.errorf(v.key, "sweep_rate_iops %d is not a multiple of numjobs = %d: fio paces each job at rate ÷ numjobs; use e.g. %d", r, w.NumJobs, (r/int64(w.NumJobs)+1)*int64(w.NumJobs))
					return
				}
			}
			w.SweepRateIOPS = rates
		}
	}},
}

// bssplitKey converts fio's bssplit (package bssplit).
func bssplitKey(t table, v value, w *Workload) {
	if s, ok := t.str(v, ""); ok && v.set {
		shares, err := bssplit.Parse(s, ParseBlockSize)
		if err != nil {
			t.errorf(v.key, "bssplit %q: %v; write it like \"4k/60:16k/30:128k/10\" (sizes a multiple of 512, shares adding up to 100)", s, err)
		}
		w.BSSplit = shares
	}
}

// sweepList is a sweep's points: a non-empty, strictly ascending list of
// at most MaxSweepPoints integers in 1..max.
func sweepList(t table, v value, max int64, what string) []int64 {
	if !v.set {
		return nil
	}
	arr, ok := v.v.([]any)
	if !ok || len(arr) == 0 || len(arr) > MaxSweepPoints {
		t.errorf(v.key, "%s must be a list of 1 to %d points, each %s, like [1, 2, 4, 8]", v.key, MaxSweepPoints, what)
		return nil
	}
	var out []int64
	for _, e := range arr {
		n, isInt := e.(int64)
		switch {
		case !isInt || n < 1 || n > max:
			t.errorf(v.key, "%s: %v is not %s in 1..%d", v.key, e, what, max)
		case len(out) > 0 && n <= out[len(out)-1]:
			t.errorf(v.key, "%s must be strictly ascending, got %d after %d", v.key, n, out[len(out)-1])
		default:
			out = append(out, n)
			continue
		}
		return nil
	}
	return out
}

// atLatencySchema is the shape of a [capacity.at_latency."NAME"] table.
var atLatencySchema = func() *schema {
	s := newSchema("target must be a table ([capacity.at_latency.%q])")
	for _, k := range latencyKeys {
		s.add(k.Key, nil)
	}
	return s.add("min_iops", nil)
}()

// atLatency converts the [capacity.at_latency] tables of capacity ct.
func atLatency(ct table, v value) map[string]AtLatency {
	out := map[string]AtLatency{}
	q, _ := v.v.(map[string]any)
	for _, name := range sortedKeys(q) {
		t := ct.named(v, name, fmt.Sprintf("%s: at_latency.%q", ct.where, name))
		w, found := t.p.spec.Workload(name)
		if !found {
			t.errorf("", "unknown workload %q", name)
			continue
		}
		if !w.Sweeps() {
			t.errorf("", "workload %q has no sweep_iodepth or sweep_rate_iops: add one, the points its IOPS at the bound is read from", name)
			continue
		}
		a := AtLatency{Line: t.line("")}
		var keys []string
		for _, k := range latencyKeys {
			lv := t.get(k.Key)
			if !lv.set {
				continue
			}
			keys = append(keys, k.Key)
			f, ok := t.number(lv, 0)
			if why := noDirection(w, k.Dir); why != "" {
				t.errorf(k.Key, "%s: %s", k.Key, why)
			} else if ok && (!(f > 0) || !(f*1e3 < math.MaxInt64)) {
				t.errorf(k.Key, "%s must be a latency in microseconds > 0, got %v", k.Key, f)
			} else if ok {
				a.Limit = k
				a.Limit.Limit = time.Duration(math.Round(f * 1e3))
			}
		}
		if len(keys) != 1 {
			t.errorf("", "set exactly one latency bound (like read_p99_99_us = 2000), got %d (%s)", len(keys), strings.Join(keys, ", "))
			continue
		}
		mv := t.get("min_iops")
		f, ok := t.number(mv, 0)
		switch {
		case !mv.set:
			t.missing("min_iops")
		case ok && (!(f > 0) || math.IsInf(f, 0)):
			t.errorf("min_iops", "min_iops must be an IOPS > 0, got %v", f)
		case ok && a.Limit.Key != "":
			a.MinIOPS = f
			out[name] = a
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
