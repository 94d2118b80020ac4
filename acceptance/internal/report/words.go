package report

import (
	"fmt"
	"strings"
)

// causeWords says in plain words why a cell is not a pass, for its row's
// verdict cell, so that a figure far above spec beside INCONCLUSIVE reads
// with its reason in the same row; "" for a cell short of its figure
// (the row's % says so) and for a cause with no words here (its footnote
// says it).
var causeWords = map[string]string{
	CausePrecondition:   "not preconditioned: a fresh drive runs above its steady state",
	CauseNotSteady:      "a drive did not reach steady state",
	CauseHostBound:      "the host's CPUs, not the drive, were the limit",
	CauseThrottled:      "a drive throttled on heat",
	CausePCIeLink:       "a PCIe link ran below what the cell needs",
	CausePCIeBound:      "a PCIe link the drives share was full",
	CauseTransportBound: "the network, not the drive, was the limit",
	CauseInterrupted:    "the run was stopped",
	CauseNotRecorded:    "nothing recorded",
	CauseBadRecording:   "fio's output does not read",
	CauseFioFailed:      "fio failed",
	CauseLatency:        "latency above the spec's limit",
	CausePreparation:    "a preparation step failed",
	CauseDriveChanged:   "a drive changed",
	CauseNoBaseline:     "no baseline measured",
}

// verdictWords is a result's verdict with its cause in plain words:
// "INCONCLUSIVE: not preconditioned: …"; a cell never reached reads
// "NOT REACHED".
func verdictWords(res Result) string {
	v := strings.ToUpper(cell(res.Verdict))
	if v == "" {
		return "-"
	}
	if res.Verdict == Pass {
		return v
	}
	if neverReached(res) {
		return "NOT REACHED: " + causeWords[CauseInterrupted]
	}
	if w := causeWords[res.Cause]; w != "" {
		return v + ": " + w
	}
	return v
}

// neverReached says res is a cell the run was stopped before.
func neverReached(res Result) bool {
	return res.Cause == CauseInterrupted && strings.Contains(res.Error, "never reached")
}

// qosCell is a cell's latency limits with their figures and verdicts:
// "read p99 212 µs ≤ 250 µs PASS; read p99.99 1,310 µs > 1,000 µs FAIL";
// "-" when the spec sets none.
func qosCell(res Result) string {
	var parts []string
	for _, q := range res.QoS {
		rel := "≤"
		if q.Verdict == Fail {
			rel = ">"
		}
		actual := Thousands(q.Actual) + " µs"
		if q.Actual == 0 {
			actual, rel = "-", "limit"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s %s µs %s", qosName(q.Key), actual, rel, Thousands(q.LimitUs), strings.ToUpper(q.Verdict)))
	}
	return orDash(strings.Join(parts, "; "))
}

// qosName is a latency key as a reader says it: "read_p99_9_us" is
// "read p99.9", "write_max_us" "write max".
func qosName(key string) string {
	k := strings.TrimSuffix(key, "_us")
	dir, p, _ := strings.Cut(k, "_")
	p = strings.Replace(p, "_", ".", 1)
	return dir + " " + strings.ReplaceAll(p, "_", "")
}

func hasQoS(rows []Result) bool {
	for _, r := range rows {
		if len(r.QoS) > 0 {
			return true
		}
	}
	return false
}
