package fiojob

// QoS is the completion-latency (fio clat) quality of service of one
// direction: the percentiles a drive acceptance gate checks and the
// maximum, all in nanoseconds and 0 when the direction has no json+ bins.
//
// Every figure is the value of a json+ bin, never an average of
// percentiles: for an aggregate (Aggregate, Output.Groups, Output.Total)
// the bins are first merged across its jobs. Pn is fio's n-th percentile
// (calc_clat_percentiles in fio's stat.c): the smallest bin value at which
// the running count reaches n/100 × the sample count, without
// interpolation; see Percentiles. With fewer than 100 000 samples the
// count needed for P99999Ns is the whole count, so it is the highest bin,
// MaxNs (likewise P9999Ns below 10 000 samples).
//
// Precision (fio's stat.h, FIO_IO_U_PLAT_BITS = 6, and plat_idx_to_val in
// stat.c): latencies below 128 ns have bins 1 ns wide and are exact. From
// 128 ns on, every power of two [2^n, 2^(n+1)) is split into 64 bins of
// width 2^(n-6), so a bin spans between 1/128 and 1/64 of the values in
// it, and a bin's value (its json+ key) is the midpoint of its range. The
// value fio reports for a sample therefore differs from the sample by at
// most half a bin, 2^(n-7), which is at most 1/2^7 = 1/128 = 0.78125% of
// the sample (stat.h: "Error bound is 1/2^(6+1) = 0.0078125"). The error
// can go either way: a bin's value can exceed the largest sample counted
// in it, so a percentile can exceed fio's exact clat_ns "max" by up to
// that bound. fio tracks 29 such groups: samples of 2^34 ns (about 17.2 s)
// or more all land in the last bin, whose value is 17 112 760 320 ns, so
// there the figures are only a lower bound.
type QoS struct {
	P50Ns    float64 // median
	P99Ns    float64 // 99th percentile
	P999Ns   float64 // 99.9th percentile
	P9999Ns  float64 // 99.99th percentile
	P99999Ns float64 // 99.999th percentile
	// MaxNs is the value of the highest non-empty bin: the longest
	// completion latency to within the precision above.
	MaxNs float64
}

// qosList is the percentiles of QoS, in the order of its fields.
var qosList = []float64{50, 99, 99.9, 99.99, 99.999}

// QoS returns d's completion-latency percentiles and maximum computed from
// d.Bins, which for a Result's Read and Write are the bins merged across
// the jobs aggregated. For a Direction from Parse or Aggregate, P50Ns
// through P9999Ns equal its fields of the same names.
func (d Direction) QoS() QoS {
	var top int64
	found := false
	for ns, c := range d.Bins {
		if c > 0 && (!found || ns > top) {
			top, found = ns, true
		}
	}
	if !found {
		return QoS{}
	}
	p := Percentiles(d.Bins, qosList...)
	return QoS{
		P50Ns:    p[0],
		P99Ns:    p[1],
		P999Ns:   p[2],
		P9999Ns:  p[3],
		P99999Ns: p[4],
		MaxNs:    float64(top),
	}
}
