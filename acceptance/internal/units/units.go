// Package units writes drivequal's numbers the one way every message and
// report shows them.
//
// Numbers have thousands separated by commas, and a metric its unit (MB/s
// is always 10^6 bytes per second).
package units

import (
	"math"
	"strconv"
	"strings"
)

// Thousands writes v rounded to the nearest integer (halves away from
// zero) with a comma between each group of three digits; "n/a" for NaN or
// ±Inf.
func Thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	v = math.Round(v)
	if v == 0 {
		v = 0 // no "-0"
	}
	digits := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Unit is how a metric's values are named: "IOPS" for iops, "MB/s" (10^6
// bytes per second) for MBps; any other metric as it is.
func Unit(metric string) string {
	switch metric {
	case "iops":
		return "IOPS"
	case "MBps":
		return "MB/s"
	case "lat_us":
		return "µs"
	}
	return metric
}
