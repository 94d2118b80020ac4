package report

import (
	"fmt"
	"strings"
)

// Resumption is one resumption of an interrupted run (-resume): when it
// started, the cells it kept from the recording and judged again without
// measuring them, the cells it measured again and why, and the steps of
// the plan it ran.
type Resumption struct {
	At     string   `json:"at"`
	Kept   []string `json:"kept,omitempty"`
	Redone []Redone `json:"redone,omitempty"`
	Steps  []string `json:"steps,omitempty"`
	// EstimatedSeconds is the resumed plan's estimate; FreshSeconds, that
	// of the same cells run again from nothing.
	EstimatedSeconds float64 `json:"estimated_seconds"`
	FreshSeconds     float64 `json:"fresh_seconds"`
	// Drives says which path each recorded drive was given under ("drive
	// 2 (recorded at /dev/nvme1n1) is /dev/nvme0n1"): drives are matched
	// by identity, not by path or order.
	Drives []string `json:"drives,omitempty"`
}

// Redone is a cell a resumption measured again, and why.
type Redone struct {
	Test string `json:"test"`
	Why  string `json:"why"`
}

// resumedLine is summary.md's line saying the run was resumed; "" when
// it was not.
func resumedLine(zs []Resumption) string {
	if len(zs) == 0 {
		return ""
	}
	var parts []string
	for _, z := range zs {
		parts = append(parts, fmt.Sprintf("at %s (%d cells kept from the recording, %d measured again, %d steps run)",
			orDash(z.At), len(z.Kept), len(z.Redone), len(z.Steps)))
	}
	times := "once"
	if n := len(zs); n > 1 {
		times = fmt.Sprintf("%d times", n)
	}
	return fmt.Sprintf("Resumed %s after an interruption: %s. The verdicts cover every cell as one run.\n", times, strings.Join(parts, "; "))
}
