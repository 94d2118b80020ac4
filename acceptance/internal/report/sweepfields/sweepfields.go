// Package sweepfields holds the results.json fields of a latency-at-load
// sweep point, which report.Result carries inline.
package sweepfields

// Point is a sweep point's load and what it achieved (results.json
// "iodepth", "rate_iops", "mbps", "saturated"); zero for any other result.
type Point struct {
	// IODepth is a closed-loop point's iodepth per job.
	IODepth int `json:"iodepth,omitempty"`
	// RateIOPS is an open-loop point's asked rate: total IOPS over the
	// workload's jobs, Poisson arrivals.
	RateIOPS float64 `json:"rate_iops,omitempty"`
	// MBps is the point's read + write bandwidth in MB/s (10^6 bytes/s).
	MBps float64 `json:"mbps,omitempty"`
	// Saturated says an open-loop point achieved less than 99 % of its
	// asked rate: the drive's saturation, not a latency figure.
	Saturated bool `json:"saturated,omitempty"`
}
