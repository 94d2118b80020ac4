// Package plain says a verdict's cause, a latency limit and a missing
// figure in the words summary.md gives them, for a reader who was not at
// the server.
package plain

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// causes says in plain words why a cell is not a pass, by its cause (the
// report's Cause constants); a cause short of its figure ("below spec")
// has none: the row's percentage says it.
var causes = map[string]string{
	"not preconditioned":  "not preconditioned: a fresh drive runs above its steady state",
	"not steady":          "a drive did not reach steady state",
	"host-bound":          "the host's CPUs, not the drive, were the limit",
	"thermal throttle":    "a drive throttled on heat",
	"pcie link degraded":  "a PCIe link ran below what the cell needs",
	"pcie bound":          "a PCIe link the drives share was full",
	"transport bound":     "the network, not the drive, was the limit",
	"interrupted":         "the run was stopped",
	"not recorded":        "nothing recorded",
	"bad recording":       "fio's output does not read",
	"fio failed":          "fio failed",
	"latency above limit": "latency above the spec's limit",
	"preparation failed":  "a preparation step failed",
	"drive changed":       "a drive changed",
	"no baseline":         "no baseline measured",
}

// Cause is cause in plain words; "" when it has none.
func Cause(cause string) string { return causes[cause] }

// Verdict is a verdict cell: the verdict in capitals with its cause in
// plain words ("INCONCLUSIVE: not preconditioned: …"), "NOT REACHED: the
// run was stopped" for a cell the run never reached, "-" for none.
func Verdict(verdict, cause string, neverReached bool) string {
	v := strings.ToUpper(verdict)
	switch {
	case v == "":
		return "-"
	case verdict == "pass":
	case neverReached:
		return "NOT REACHED: " + causes["interrupted"]
	case causes[cause] != "":
		return v + ": " + causes[cause]
	}
	return v
}

// Limit is one latency limit of a cell, judged: results.json's "qos".
type Limit struct {
	Key     string  `json:"key"` // the spec's key, "read_p99_99_us"
	LimitUs float64 `json:"limit_us"`
	Actual  float64 `json:"actual_us"`
	Verdict string  `json:"verdict"`
}

// Limits is a cell's latency limits with their figures and verdicts:
// "read p99 212 µs ≤ 250 µs PASS; read p99.99 1,310 µs > 1,000 µs FAIL";
// "-" when there are none.
func Limits(ls []Limit) string {
	var parts []string
	for _, q := range ls {
		rel := "≤"
		if q.Verdict == "fail" {
			rel = ">"
		}
		actual := units.Thousands(q.Actual) + " µs"
		if q.Actual == 0 {
			actual, rel = "-", "limit"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s %s µs %s", name(q.Key), actual, rel, units.Thousands(q.LimitUs), strings.ToUpper(q.Verdict)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

// name is a latency key as a reader says it: "read_p99_9_us" is "read
// p99.9", "write_max_us" "write max".
func name(key string) string {
	dir, p, _ := strings.Cut(strings.TrimSuffix(key, "_us"), "_")
	p = strings.Replace(p, "_", ".", 1)
	return dir + " " + strings.ReplaceAll(p, "_", "")
}

// Figure is a measured figure with thousands separators, or "-" for 0,
// which stands for a figure that is missing.
func Figure(v float64) string {
	if v == 0 {
		return "-"
	}
	return units.Thousands(v)
}

// Missing is v, or "-" when missing says there is no such figure (a mean
// of no drives), never 0.
func Missing(missing bool, v string) string {
	if missing {
		return "-"
	}
	return v
}
