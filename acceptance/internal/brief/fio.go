package brief

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// fioRun describes one reconstructed fio process: a workload on one or more
// drives, each drive its own job section ("drive<i>") and reporting group.
type fioRun struct {
	RW        string // fio rw
	BS        int64  // block size in bytes
	IODepth   int    // per job
	NumJobs   int    // clones per drive
	RWMixRead int    // read percentage for mixed patterns; -1 unset
	IOEngine  string
	Direct    bool
	Runtime   time.Duration // time_based runtime of every job
	RampTime  time.Duration // 0 for none
	Drives    []string      // filename= of each drive, in section order
	// DriveIOs is the number of I/Os (reads + writes) each drive completes
	// over Runtime; len(DriveIOs) == len(Drives).
	DriveIOs []int64
	// Timestamp is when fio printed its output (the end of the run).
	Timestamp time.Time
	// Seed fixes the run's pseudo-random variation (per-job shares of the
	// I/Os, latency spread, CPU use).
	Seed uint64
}

// fioPercentiles are the completion latency percentiles fio prints by default.
var fioPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// readPercent is the percentage of a job's I/Os that are reads.
func (r fioRun) readPercent() int64 {
	switch r.RW {
	case "read", "randread":
		return 100
	case "write", "randwrite":
		return 0
	}
	if r.RWMixRead < 0 {
		return 50 // fio's default rwmixread
	}
	return int64(r.RWMixRead)
}

func (r fioRun) random() bool {
	return r.RW == "randread" || r.RW == "randwrite" || r.RW == "randrw"
}

// sizeString writes a byte count the way a job file would ("4k", "128k").
func sizeString(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%dm", n>>20)
	}
	if n%1024 == 0 {
		return fmt.Sprintf("%dk", n>>10)
	}
	return fmt.Sprint(n)
}

func boolString(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// durationString writes a duration in seconds, fio's default unit for runtime.
func durationString(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprint(int64(d / time.Second))
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// output builds fio's --output-format=json document for the run.
func (r fioRun) output(version string) ([]byte, error) {
	if len(r.Drives) == 0 || len(r.Drives) != len(r.DriveIOs) {
		return nil, fmt.Errorf("%d drives with %d I/O counts", len(r.Drives), len(r.DriveIOs))
	}
	if r.NumJobs < 1 || r.IODepth < 1 || r.BS <= 0 || r.Runtime < time.Millisecond {
		return nil, fmt.Errorf("numjobs %d, iodepth %d, bs %d, runtime %v: out of range", r.NumJobs, r.IODepth, r.BS, r.Runtime)
	}
	rng := rand.New(rand.NewPCG(r.Seed, 0x9e3779b97f4a7c15))

	global := newObject().
		str("ioengine", r.IOEngine).
		str("direct", boolString(r.Direct)).
		str("time_based", "1").
		str("runtime", durationString(r.Runtime))
	if r.RampTime > 0 {
		global.str("ramp_time", durationString(r.RampTime))
	}

	var jobs []*object
	for d, ios := range r.DriveIOs {
		if ios < int64(r.NumJobs) {
			return nil, fmt.Errorf("drive %s: %d I/Os for %d jobs", r.Drives[d], ios, r.NumJobs)
		}
		jobs = append(jobs, r.driveJobs(d, ios, rng)...)
	}

	ts := r.Timestamp.UTC()
	root := newObject().
		str("fio version", version).
		int("timestamp", ts.Unix()).
		int("timestamp_ms", ts.UnixMilli()).
		str("time", ts.Format("Mon Jan _2 15:04:05 2006")).
		obj("global options", global).
		array("jobs", jobs).
		array("disk_util", nil)
	return root.marshal(), nil
}

// split divides total into n integer shares that sum to total exactly: each
// share is proportional to a weight within ±spread/2 of 1, and the remainder
// of the rounding down goes one by one to the first shares.
func split(total int64, n int, spread float64, rng *rand.Rand) []int64 {
	w := make([]float64, n)
	var sum float64
	for i := range w {
		w[i] = 1 + spread*(rng.Float64()-0.5)
		sum += w[i]
	}
	shares := make([]int64, n)
	var got int64
	for i := range shares {
		shares[i] = int64(math.Floor(float64(total) * w[i] / sum))
		got += shares[i]
	}
	for i := 0; got < total; i = (i + 1) % n {
		shares[i]++
		got++
	}
	return shares
}

// dirCounts is one job's I/O count in one direction.
type dirCounts struct {
	ios     int64
	latNs   float64 // mean total latency, ns
	sigma   float64 // log-normal shape of the latency
	present bool
}

// driveJobs builds the job entries of drive d (section "drive<d>", group d).
func (r fioRun) driveJobs(d int, ios int64, rng *rand.Rand) []*object {
	runtimeMs := r.Runtime.Milliseconds()
	shares := split(ios, r.NumJobs, 0.03, rng)
	pct := r.readPercent()

	type jobPlan struct{ read, write dirCounts }
	plans := make([]jobPlan, r.NumJobs)
	var groupKiB [2]float64 // Σ bw of the group in KiB/s, read and write
	for j, n := range shares {
		reads := (n*pct + 50) / 100 // rounded half up
		writes := n - reads
		// Little's law: iodepth I/Os in flight at the job's rate give the mean
		// latency; in a mix, reads wait less than writes.
		lat := float64(r.IODepth) * float64(runtimeMs) * 1e6 / float64(n)
		readLat, writeLat := lat, lat
		if reads > 0 && writes > 0 {
			readLat = lat * 0.9
			writeLat = (lat*float64(n) - readLat*float64(reads)) / float64(writes)
		}
		sigRead, sigWrite := 0.30, 0.45
		if !r.random() {
			sigRead, sigWrite = 0.12, 0.15
		}
		plans[j] = jobPlan{
			read:  dirCounts{reads, readLat, sigRead * (0.9 + 0.2*rng.Float64()), reads > 0},
			write: dirCounts{writes, writeLat, sigWrite * (0.9 + 0.2*rng.Float64()), writes > 0},
		}
		groupKiB[0] += float64(reads*r.BS*1000/runtimeMs) / 1024
		groupKiB[1] += float64(writes*r.BS*1000/runtimeMs) / 1024
	}

	name := fmt.Sprintf("drive%d", d)
	var out []*object
	for _, p := range plans {
		opts := newObject().str("rw", r.RW)
		if r.RWMixRead >= 0 && pct > 0 && pct < 100 {
			opts.str("rwmixread", fmt.Sprint(r.RWMixRead))
		}
		opts.str("bs", sizeString(r.BS)).
			str("iodepth", fmt.Sprint(r.IODepth)).
			str("numjobs", fmt.Sprint(r.NumJobs)).
			str("filename", r.Drives[d])

		total := p.read.ios + p.write.ios
		job := newObject().
			str("jobname", name).
			int("groupid", int64(d)).
			int("error", 0).
			int("eta", 0).
			int("elapsed", int64((r.Runtime+r.RampTime)/time.Second)+1).
			obj("job options", opts).
			obj("read", r.direction(p.read, groupKiB[0], rng)).
			obj("write", r.direction(p.write, groupKiB[1], rng)).
			obj("trim", r.direction(dirCounts{}, 0, rng)).
			obj("sync", newObject().int("total_ios", 0).obj("lat_ns", zeroLat())).
			int("job_runtime", runtimeMs)
		usr, sys := 10+6*rng.Float64(), 38+14*rng.Float64()
		if !r.random() {
			usr, sys = 2+2*rng.Float64(), 8+4*rng.Float64()
		}
		job.float("usr_cpu", usr).
			float("sys_cpu", sys).
			int("ctx", total/400+rng.Int64N(200)).
			int("majf", 0).
			int("minf", r.BS*int64(r.IODepth)/4096+10+rng.Int64N(4)).
			obj("iodepth_level", r.iodepthLevel(rng)).
			obj("iodepth_submit", depthBuckets([]string{"0", "4", "8", "16", "32", "64", ">=64"}, map[string]float64{"4": 100})).
			obj("iodepth_complete", r.iodepthComplete(rng)).
			obj("latency_ns", latencyBuckets(p.read, p.write, 1, []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"}, "")).
			obj("latency_us", latencyBuckets(p.read, p.write, 1e3, []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"}, "")).
			obj("latency_ms", latencyBuckets(p.read, p.write, 1e6, []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000"}, ">=2000")).
			int("latency_depth", int64(r.IODepth)).
			int("latency_target", 0).
			float("latency_percentile", 100).
			int("latency_window", 0)
		out = append(out, job)
	}
	return out
}

func zeroLat() *object {
	return newObject().int("min", 0).int("max", 0).float("mean", 0).float("stddev", 0).int("N", 0)
}

// direction builds one "read", "write" or "trim" object of a job. groupKiB is
// the reporting group's total bandwidth in this direction in KiB/s, which
// bw_agg is a percentage of.
func (r fioRun) direction(c dirCounts, groupKiB float64, rng *rand.Rand) *object {
	o := newObject()
	if !c.present {
		return o.int("io_bytes", 0).int("io_kbytes", 0).int("bw_bytes", 0).int("bw", 0).
			float("iops", 0).int("runtime", 0).int("total_ios", 0).int("short_ios", 0).int("drop_ios", 0).
			obj("slat_ns", zeroLat()).obj("clat_ns", zeroLat()).obj("lat_ns", zeroLat()).
			int("bw_min", 0).int("bw_max", 0).float("bw_agg", 0).float("bw_mean", 0).float("bw_dev", 0).int("bw_samples", 0).
			int("iops_min", 0).int("iops_max", 0).float("iops_mean", 0).float("iops_stddev", 0).int("iops_samples", 0)
	}
	runtimeMs := r.Runtime.Milliseconds()
	ioBytes := c.ios * r.BS
	bwBytes := ioBytes * 1000 / runtimeMs
	bwKiB := bwBytes / 1024
	o.int("io_bytes", ioBytes).
		int("io_kbytes", ioBytes/1024).
		int("bw_bytes", bwBytes).
		int("bw", bwKiB).
		float("iops", float64(c.ios)*1000/float64(runtimeMs)).
		int("runtime", runtimeMs).
		int("total_ios", c.ios).
		int("short_ios", 0).
		int("drop_ios", 0)

	// Submission latency of libaio: a few microseconds, a long thin tail.
	slat := 1500 + 1500*rng.Float64()
	slatMin := int64(slat * (0.35 + 0.1*rng.Float64()))
	slatMax := int64(slat * (40 + 60*rng.Float64()))
	slatDev := slat * (0.6 + 0.8*rng.Float64())
	o.obj("slat_ns", newObject().int("min", slatMin).int("max", slatMax).
		float("mean", slat).float("stddev", slatDev).int("N", c.ios))

	// Completion latency: log-normal with the mean Little's law gives.
	clat := c.latNs - slat
	median := clat / math.Exp(c.sigma*c.sigma/2)
	clatDev := clat * math.Sqrt(math.Exp(c.sigma*c.sigma)-1)
	clatMin := int64(median * math.Exp(-4*c.sigma) * (0.9 + 0.1*rng.Float64()))
	clatMax := int64(median * math.Exp(5.5*c.sigma) * (1 + 0.5*rng.Float64()))
	pct := newObject()
	for _, p := range fioPercentiles {
		v := median * math.Exp(c.sigma*normalQuantile(p/100))
		pct.int(fmt.Sprintf("%f", p), platBucket(int64(v)))
	}
	o.obj("clat_ns", newObject().int("min", clatMin).int("max", clatMax).
		float("mean", clat).float("stddev", clatDev).int("N", c.ios).obj("percentile", pct))
	o.obj("lat_ns", newObject().int("min", clatMin+slatMin).int("max", clatMax+slatMax/4).
		float("mean", c.latNs).float("stddev", math.Hypot(clatDev, slatDev)).int("N", c.ios))

	// Bandwidth and IOPS samples, one per 500 ms (fio's bw_avg_time).
	mean := float64(bwKiB) * (0.998 + 0.004*rng.Float64())
	lo, hi, dev := 0.94+0.03*rng.Float64(), 1.02+0.03*rng.Float64(), 0.008+0.01*rng.Float64()
	samples := int64(r.Runtime/(500*time.Millisecond)) - rng.Int64N(2)
	agg := 0.0
	if groupKiB > 0 {
		agg = mean / groupKiB * 100
	}
	iopsMean := mean * 1024 / float64(r.BS)
	o.int("bw_min", int64(mean*lo)).
		int("bw_max", int64(mean*hi)).
		float("bw_agg", agg).
		float("bw_mean", mean).
		float("bw_dev", mean*dev).
		int("bw_samples", samples).
		int("iops_min", int64(iopsMean*lo)).
		int("iops_max", int64(iopsMean*hi)).
		float("iops_mean", iopsMean).
		float("iops_stddev", iopsMean*dev).
		int("iops_samples", samples)
	return o
}

// depthBucket is the key of fio's iodepth_level bucket holding depth d.
func depthBucket(d int) string {
	switch {
	case d >= 64:
		return ">=64"
	case d >= 32:
		return "32"
	case d >= 16:
		return "16"
	case d >= 8:
		return "8"
	case d >= 4:
		return "4"
	case d >= 2:
		return "2"
	}
	return "1"
}

func depthBuckets(keys []string, v map[string]float64) *object {
	o := newObject()
	for _, k := range keys {
		o.float(k, v[k])
	}
	return o
}

// iodepthLevel: nearly all the time at the full depth; the ramp up passes
// through every lower bucket, which fio floors at 0.1 %.
func (r fioRun) iodepthLevel(rng *rand.Rand) *object {
	keys := []string{"1", "2", "4", "8", "16", "32", ">=64"}
	top := depthBucket(r.IODepth)
	v := map[string]float64{}
	for _, k := range keys {
		if k == top {
			v[k] = 100 - (0.01 + 0.05*rng.Float64())
			break
		}
		v[k] = 0.1
	}
	return depthBuckets(keys, v)
}

// iodepthComplete: completions reaped in batches of up to 4, a few at the
// full depth.
func (r fioRun) iodepthComplete(rng *rand.Rand) *object {
	top := ">=64"
	if r.IODepth <= 64 {
		top = depthBucket(r.IODepth)
	}
	return depthBuckets([]string{"0", "4", "8", "16", "32", "64", ">=64"},
		map[string]float64{"4": 100 - 0.01*rng.Float64(), top: 0.1})
}

// latencyBuckets is fio's latency_ns/us/ms: the percentage of the job's I/Os
// whose total latency falls in each bucket, edges in the given unit (ns per
// unit). fio floors a non-empty bucket at 0.01 %. rest, if not empty, names a
// last bucket for everything above the last edge.
func latencyBuckets(rd, wr dirCounts, unit float64, edges []string, rest string) *object {
	total := rd.ios + wr.ios
	cdf := func(ns float64) float64 {
		var n float64
		for _, c := range []dirCounts{rd, wr} {
			if !c.present {
				continue
			}
			median := c.latNs / math.Exp(c.sigma*c.sigma/2)
			n += float64(c.ios) * 0.5 * math.Erfc(-math.Log(ns/median)/(c.sigma*math.Sqrt2))
		}
		return n
	}
	pct := func(count float64) float64 {
		n := math.Round(count)
		if n < 1 {
			return 0
		}
		p := n / float64(total) * 100
		return max(p, 0.01)
	}
	o := newObject()
	prev := 0.0
	// latency_us starts where latency_ns ends (1000 ns), latency_ms where
	// latency_us ends.
	lowest := 0.0
	if unit > 1 {
		lowest = cdf(unit)
	}
	for i, k := range edges {
		var edge float64
		fmt.Sscan(k, &edge)
		f := cdf(edge * unit)
		if i == 0 {
			prev = lowest
		}
		o.float(k, pct(f-prev))
		prev = f
	}
	if rest != "" {
		o.float(rest, pct(float64(total)-prev))
	}
	return o
}

// normalQuantile is the inverse of the standard normal distribution function.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// platBucket rounds a latency to the value fio prints for the histogram bucket
// holding it (fio's plat_val_to_idx then plat_idx_to_val, 6 bits of precision).
func platBucket(v int64) int64 {
	const bits = 6
	if v < 1<<(bits+1) {
		return v
	}
	msb := 63
	for v>>msb == 0 {
		msb--
	}
	errBits := msb - bits
	k := (v >> errBits) & (1<<bits - 1)
	base := int64(1) << (errBits + bits)
	return base + int64((float64(k)+0.5)*float64(int64(1)<<errBits))
}
