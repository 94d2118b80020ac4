// Package firmware is a firmware activation under load: the image
// downloaded and committed with nvme-cli while fio runs a 4 KiB random
// read/write load that checks what it wrote, and the step judged: the
// I/O stall fio measured against the spec's max_stall, the new revision
// running (id-ctrl's fr and the slot log's active slot), the identity
// kept, every acknowledged write read back, and the [health] allow-list.
package firmware

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Verdicts of a step.
const (
	Pass = "pass"
	Fail = "fail"
)

// Steps of TestFirmware/<drive>/<step>.
const (
	StepActivate = "activate" // -firmware's image
	StepBack     = "back"     // -firmware-back's image, back to the first revision
)

// CommitAction is the NVMe Firmware Commit action of the spec's action:
// 3 (replace and activate now, no reset) or 1 (replace, activate at the
// next reset).
func CommitAction(action string) int {
	if action == "replace-at-reset" {
		return 1
	}
	return 3
}

// Result is one drive's step, as results.json and the recording keep it.
type Result struct {
	Drive string `json:"drive"`
	Step  string `json:"step"`
	Image string `json:"image"`
	// ImageBytes is the image's size.
	ImageBytes int64  `json:"image_bytes"`
	Action     string `json:"action"`
	Slot       int    `json:"slot"`
	// Commands are the nvme-cli commands sent, in order.
	Commands []string `json:"commands"`
	// Before and After are the revisions running (id-ctrl fr) before and
	// after; SlotRevision the slot log's revision of the slot written
	// after the commit, ActiveSlot its active slot.
	Before       string `json:"before"`
	After        string `json:"after"`
	SlotRevision string `json:"slot_revision"`
	ActiveSlot   int    `json:"active_slot"`
	// StallMS is the stall: the longer of GapMS, the longest window with
	// no I/O completed, and MaxLatencyMS, the longest completion latency,
	// both from fio's logs; MaxStallMS the spec's bound.
	StallMS      float64 `json:"stall_ms"`
	GapMS        float64 `json:"gap_ms"`
	MaxLatencyMS float64 `json:"max_latency_ms"`
	MaxStallMS   float64 `json:"max_stall_ms"`
	// IOs is how many of fio's 10 ms latency-log windows completed I/O
	// (log_avg_msec: a window with completions is one line, whatever
	// their number), the jobs' together; Verified says fio read back
	// every write it checked without an error, and the known region
	// written before the download read back whole after the commit.
	IOs      int64 `json:"ios"`
	Verified bool  `json:"verified"`
	// Remeasured is the cell measured just before the download and again
	// just after the commit, in the same drive state (the last cell the
	// run measured on the drive alone).
	Remeasured []Remeasure `json:"remeasured,omitempty"`
	Verdict    string      `json:"verdict"`
	Message    string      `json:"message"`
}

// Name is the step's test name under TestFirmware/<drive>.
func (r Result) Name() string { return r.Step }

// Stall is what fio's latency logs say of the I/O: the longest window
// with no completion and the longest completion latency.
type Stall struct {
	Gap, MaxLatency time.Duration
	IOs             int64 // latency-log lines read: 10 ms windows that completed I/O
}

// Of is the stall: the longer of the two.
func (s Stall) Of() time.Duration { return max(s.Gap, s.MaxLatency) }

// ReadLogs reads fio's completion latency logs (write_lat_log's _clat
// files: "msec, nsec, dir, bs, offset[, prio]" a line; per I/O, or the
// highest of each log_avg_msec window with log_max_value), all the jobs'
// together: the completion times of every log are merged before the
// longest gap between two is taken.
func ReadLogs(logs ...io.Reader) (Stall, error) {
	var times []int64
	var st Stall
	for i, r := range logs {
		sc := bufio.NewScanner(r)
		n := 0
		for sc.Scan() {
			n++
			f := strings.Split(sc.Text(), ",")
			if len(f) < 2 {
				continue
			}
			ms, err1 := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
			ns, err2 := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
			if err1 != nil || err2 != nil {
				return Stall{}, fmt.Errorf("latency log %d, line %d: %q is not fio's \"msec, nsec, ...\"", i+1, n, sc.Text())
			}
			times = append(times, ms)
			st.MaxLatency = max(st.MaxLatency, time.Duration(ns))
		}
		if err := sc.Err(); err != nil {
			return Stall{}, err
		}
	}
	if len(times) == 0 {
		return Stall{}, fmt.Errorf("fio's latency logs hold no completion: the load completed no I/O")
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	for i := 1; i < len(times); i++ {
		st.Gap = max(st.Gap, time.Duration(times[i]-times[i-1])*time.Millisecond)
	}
	st.IOs = int64(len(times))
	return st, nil
}

// SlotLog is the firmware slot log (nvme fw-log -o json).
type SlotLog struct {
	Active int            // the slot the running revision was loaded from (AFI bits 2:0)
	Slots  map[int]string // each slot's revision
}

var slotKey = regexp.MustCompile(`(?i)slot (\d)$`)
var revInParens = regexp.MustCompile(`\(([^()]*)\)\s*$`)

// slotRevision is a revision as nvme-cli prints it in the slot log, its
// padding taken off: nvme-cli prints each byte of the 8-byte field outside
// '!'..'~' as '.', so a revision shorter than 8 characters, padded with
// spaces as the specification asks (QEMU's "1.0"), reads "1.0....." there
// while id-ctrl's fr, trimmed, reads "1.0". A revision that itself ends in
// '.' loses it on both sides alike (see sameRevision).
func slotRevision(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".") }

// sameRevision says the slot log's revision slot (as slotRevision gives
// it) is id-ctrl's fr.
func sameRevision(slot, fr string) bool { return slot == slotRevision(fr) }

// ParseSlotLog parses nvme-cli's fw-log JSON: {"<dev>": {"Active Firmware
// Slot (afi)": N, "Firmware Rev Slot K": "<u64> (<revision>)"}}.
func ParseSlotLog(out []byte) (SlotLog, error) {
	var root map[string]map[string]any
	if err := json.Unmarshal(out, &root); err != nil {
		return SlotLog{}, fmt.Errorf("the firmware slot log is not nvme-cli's JSON: %w", err)
	}
	for _, m := range root {
		l := SlotLog{Slots: map[int]string{}}
		found := false
		for k, v := range m {
			if strings.Contains(k, "(afi)") {
				n, ok := v.(float64)
				if !ok {
					return SlotLog{}, fmt.Errorf("the firmware slot log's %q is %v, not a number", k, v)
				}
				l.Active, found = int(n)&7, true
				continue
			}
			if s := slotKey.FindStringSubmatch(k); s != nil {
				n, _ := strconv.Atoi(s[1])
				rev, _ := v.(string)
				if p := revInParens.FindStringSubmatch(rev); p != nil {
					rev = p[1]
				}
				l.Slots[n] = slotRevision(rev)
			}
		}
		if found {
			return l, nil
		}
	}
	return SlotLog{}, fmt.Errorf("the firmware slot log has no active slot (afi)")
}

// Observed is what a step saw, judged by Judge.
type Observed struct {
	Before, After       string // id-ctrl fr
	LogBefore, LogAfter SlotLog
	// Want is the revision the step must end on when known (the step
	// back's: the first revision); "" wants one other than Before.
	Want string
	// IdentityBefore and IdentityAfter are the model and serial.
	IdentityBefore, IdentityAfter string
	Stall                         Stall
	StallErr                      error
	// FioErr is fio's error (a verify mismatch, an I/O error), CmdErr the
	// first nvme-cli command that failed.
	FioErr, CmdErr error
	// Known is how many bytes were written before the download and read
	// back after the commit (0: none); KnownErr the read-back's error.
	Known    int64
	KnownErr error
	MaxStall time.Duration
	// Allowed is the spec's [health] firmware allow-list (empty: any).
	Allowed []string
	Slot    int
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Judge fills r's verdict and figures from o: the first failure found is
// the message, the stall figures are always given.
func Judge(r *Result, o Observed) {
	r.Before, r.After = o.Before, o.After
	r.ActiveSlot = o.LogAfter.Active
	slot := o.Slot
	if slot == 0 {
		// The controller chose: the slot whose revision the commit changed
		// (the active one among several, else the lowest), else the active
		// one.
		slot = o.LogAfter.Active
		var changed []int
		for k, v := range o.LogAfter.Slots {
			if o.LogBefore.Slots[k] != v {
				changed = append(changed, k)
			}
		}
		slices.Sort(changed)
		if len(changed) > 0 && !slices.Contains(changed, o.LogAfter.Active) {
			slot = changed[0]
		}
	}
	r.SlotRevision = o.LogAfter.Slots[slot]
	r.GapMS, r.MaxLatencyMS, r.StallMS, r.IOs = ms(o.Stall.Gap), ms(o.Stall.MaxLatency), ms(o.Stall.Of()), o.Stall.IOs
	r.MaxStallMS = ms(o.MaxStall)
	r.Verified = o.FioErr == nil && o.StallErr == nil && o.KnownErr == nil
	active := o.LogAfter.Slots[o.LogAfter.Active]
	var why []string
	switch {
	case o.CmdErr != nil:
		why = append(why, fmt.Sprintf("the activation failed: %v", o.CmdErr))
	case o.Want != "" && o.After != o.Want:
		why = append(why, fmt.Sprintf("running %s after the step, not %s, the revision it must go back to", o.After, o.Want))
	case o.After == o.Before:
		why = append(why, fmt.Sprintf("still running %s (id-ctrl fr) after the commit; the slot log's slot %d holds %s, the revision that should run", o.Before, slot, r.SlotRevision))
	case !sameRevision(active, o.After):
		why = append(why, fmt.Sprintf("id-ctrl reports %s running, but the slot log's active slot %d holds %s (before: %s)", o.After, o.LogAfter.Active, active, o.Before))
	}
	if o.StallErr != nil {
		why = append(why, fmt.Sprintf("the stall could not be measured: %v", o.StallErr))
	} else if o.Stall.Of() > o.MaxStall {
		why = append(why, fmt.Sprintf("I/O stalled %.0f ms (fio: longest completion latency %.0f ms, longest window without a completion %.0f ms), over max_stall %s", r.StallMS, r.MaxLatencyMS, r.GapMS, o.MaxStall))
	}
	if o.FioErr != nil {
		why = append(why, fmt.Sprintf("the load's writes did not all read back: %v", o.FioErr))
	}
	if o.KnownErr != nil {
		why = append(why, fmt.Sprintf("the %d MiB written before the download did not all read back after the commit: %v", o.Known>>20, o.KnownErr))
	}
	if o.IdentityAfter != o.IdentityBefore {
		why = append(why, fmt.Sprintf("the drive's identity changed: %s before, %s after", o.IdentityBefore, o.IdentityAfter))
	}
	if len(o.Allowed) > 0 && o.After != "" && !slices.Contains(o.Allowed, o.After) {
		why = append(why, fmt.Sprintf("firmware %s is not in the spec's [health] firmware %v", o.After, o.Allowed))
	}
	if len(why) > 0 {
		r.Verdict = Fail
		r.Message = fmt.Sprintf("%s: %s", r.Drive, strings.Join(why, "; "))
		return
	}
	r.Verdict = Pass
	r.Message = fmt.Sprintf("%s: %s to %s (%s, slot %d) under load: I/O stalled %.0f ms (max_stall %s), every write read back", r.Drive, o.Before, o.After, r.Action, slot, r.StallMS, o.MaxStall)
	if o.Known > 0 {
		r.Message += fmt.Sprintf(", the %d MiB written before the download included", o.Known>>20)
	}
}
