package powerloss

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Verdicts of a cycle, as the report spells them.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// Lost is a run of acknowledged writes, adjacent on the drive, that did
// not read back: its byte offset and length, what came back, and for
// Misplaced the offset whose write came back.
type Lost struct {
	Offset int64 `json:"offset"`
	Len    int64 `json:"length"`
	Found  Found `json:"found"`
	From   int64 `json:"from,omitempty"`
}

// Counter is one of the drive's counts of power losses (SMART unsafe
// shutdowns, the OCP C0 log's PLP start count) before and
// after the cycle.
type Counter struct {
	Name   string `json:"name"`
	Before uint64 `json:"before"`
	After  uint64 `json:"after"`
}

// Cycle is what a power-loss cycle observed: everything its verdict is
// judged from, recorded as is for a replay to judge again.
type Cycle struct {
	Drive string `json:"drive"`
	Cycle int    `json:"cycle"`
	// Tag is the cycle's pattern tag (eight hex digits).
	Tag string `json:"tag"`
	// Method is how power was cut ("command: ...", "slot 3").
	Method string `json:"method"`
	// NotReturned, when set, says how the drive did not come back: not
	// within ready_within, or as another drive.
	NotReturned string `json:"not_returned,omitempty"`
	// Renamed, when set, says the drive came back within ready_within as
	// itself, but at another path (a kernel name given, the controller
	// named anew): its data is not read there, nor its later cycles run.
	Renamed string `json:"renamed,omitempty"`
	// Rule is what the drive was held to, and RuleWhy why.
	Rule    string `json:"rule"`
	RuleWhy string `json:"rule_why"`
	// Completed counts the writes fio completed, Acknowledged those the
	// rule holds the drive to, LostWrites those of them that did not
	// read back.
	Completed    int `json:"completed"`
	Acknowledged int `json:"acknowledged"`
	LostWrites   int `json:"lost_writes"`
	// Lost are the first ranges lost, by offset (at most MaxRanges).
	Lost []Lost `json:"lost,omitempty"`
	// LostFlushed, when the drive is held to every completed write,
	// counts the lost writes a flush of their job completed after (nil:
	// not counted): a volatile cache without power-loss protection loses
	// only the others.
	LostFlushed *int `json:"lost_flushed,omitempty"`
	// AtRisk counts the writes a loss could show: each job's writes
	// completed after its last completed flush. Rewritten counts those of
	// them to an offset the cycle had written before: the same tag and
	// offset are the same bytes, so losing such a write cannot be seen.
	AtRisk    int `json:"at_risk"`
	Rewritten int `json:"at_risk_rewritten"`
	// Unstopped names the fio jobs that ended without an error after the
	// cut command started: their final flush completed, nothing of them
	// was in flight at the cut.
	Unstopped []string `json:"unstopped,omitempty"`
	// CutGap, for a cut of the whole host, is how long after the drive's
	// last write the cut command started ("" where not measured), and
	// MaxCutGap the longest that still tests the drive's cache.
	CutGap    string `json:"cut_gap,omitempty"`
	MaxCutGap string `json:"max_cut_gap,omitempty"`
	// LBA is the drive's logical block size in bytes.
	LBA int64 `json:"lba_bytes"`
	// Counters are the drive's counts of power losses it could be read
	// (none: a loop device, or a controller that keeps none).
	Counters []Counter `json:"counters,omitempty"`
	// NoCounters says why there are none. CountersLost names the counters
	// read before the cut that did not read after it (and why): the
	// evidence the cut happened is missing.
	NoCounters   string `json:"no_counters,omitempty"`
	CountersLost string `json:"counters_lost,omitempty"`
	// NotRun, when set, says what kept the cycle from testing the drive
	// (fio or the cut command failing, the run stopped): nothing is
	// judged. Error says why the drive's data did not read back after it
	// returned.
	NotRun string `json:"not_run,omitempty"`
	Error  string `json:"error,omitempty"`
}

// MaxRanges is how many lost ranges a cycle keeps.
const MaxRanges = 16

// Verdict is a cycle judged.
type Verdict struct {
	Verdict string
	Message string
}

// Judge judges c: a drive that did not return, whose data did not read,
// or that lost an acknowledged write, fails; a cycle that did not run is
// inconclusive; one that kept them all passes when its counters rose (or
// it has none, which is said), and is inconclusive when one did not
// (the cut may not have happened) or when nothing was acknowledged.
func Judge(c Cycle) Verdict {
	switch {
	case c.NotReturned != "":
		return Verdict{Fail, "did not return after the power cut: " + c.NotReturned}
	case c.Renamed != "":
		return Verdict{Inconclusive, "not judged: " + c.Renamed + ": give the drives by /dev/disk/by-id paths, which follow a drive the kernel names anew; its later cycles were not run"}
	case c.NotRun != "":
		return Verdict{Inconclusive, "not judged: " + c.NotRun}
	case c.Error != "":
		return Verdict{Fail, c.Error}
	case (c.LostWrites > 0) != (len(c.Lost) > 0) || len(c.Lost) > c.LostWrites:
		return Verdict{Fail, fmt.Sprintf("the cycle's record disagrees with itself: %d lost writes, %d lost ranges; the recording was altered", c.LostWrites, len(c.Lost))}
	case c.LostFlushed != nil && (*c.LostFlushed < 0 || *c.LostFlushed > c.LostWrites):
		return Verdict{Fail, fmt.Sprintf("the cycle's record disagrees with itself: %d lost writes, %d of them flushed; the recording was altered", c.LostWrites, *c.LostFlushed)}
	case c.LostWrites > 0:
		first := c.Lost[0]
		return Verdict{Fail, fmt.Sprintf("%d of %d acknowledged writes lost (%s: %s); first lost range: %s%s",
			c.LostWrites, c.Acknowledged, c.Rule, c.RuleWhy, first.describe(c.LBA), flushedNote(c.LostFlushed))}
	case c.Acknowledged == 0:
		return Verdict{Inconclusive, fmt.Sprintf("no write was acknowledged before the cut (%s, %d completed): nothing to verify; cut later (cut_after) or flush more often (flush_every)", c.Rule, c.Completed)}
	}
	kept := fmt.Sprintf("all %d acknowledged writes read back intact (%s: %s)", c.Acknowledged, c.Rule, c.RuleWhy)
	gap, _ := time.ParseDuration(c.CutGap)
	bound, _ := time.ParseDuration(c.MaxCutGap)
	if c.CutGap != "" {
		kept += "; the cut came " + c.CutGap + " after the drive's last write"
	}
	if c.CountersLost != "" {
		return Verdict{Inconclusive, "no evidence the cut happened: " + c.CountersLost + "; " + kept}
	}
	var rose, still []string
	for _, k := range c.Counters {
		if k.After > k.Before {
			rose = append(rose, fmt.Sprintf("%s %d → %d", k.Name, k.Before, k.After))
		} else {
			still = append(still, fmt.Sprintf("%s stayed at %d", k.Name, k.After))
		}
	}
	switch {
	case len(still) > 0:
		return Verdict{Inconclusive, "the drive did not see a power loss: check the cut command (" + strings.Join(still, ", ") + "); " + kept}
	case len(c.Unstopped) > 0:
		return Verdict{Inconclusive, fmt.Sprintf("not judged: fio's job %s ended without error after the cut started (its final flush completed: nothing of it was in flight at the cut): the cut did not stop its writes, or it wrote its whole region first (raise size), or the cut came too late for fio's runtime (a cut command slow to take effect); %s", strings.Join(c.Unstopped, " and "), kept)}
	case c.MaxCutGap != "" && c.CutGap == "":
		return Verdict{Inconclusive, fmt.Sprintf("not judged: the gap between the drive's last write and the host's cut was not measured (no I/O counters of the drive, or the cut's times not saved), so the cut may have come long after its writes; %s", kept)}
	case c.CutGap != "" && bound > 0 && gap > bound:
		return Verdict{Inconclusive, fmt.Sprintf("not judged: the cut came %s after the drive's last write, more than %s: a drive writes out its cache's few unflushed writes in less; %s", c.CutGap, c.MaxCutGap, kept)}
	case c.AtRisk > 0 && c.Rewritten >= c.AtRisk:
		return Verdict{Inconclusive, fmt.Sprintf("not judged: each of the %d writes completed after its job's last flush rewrote a block the cycle had written before with the same bytes, so a lost one cannot be seen: raise size; %s", c.AtRisk, kept)}
	case len(c.Counters) == 0:
		why := c.NoCounters
		if why == "" {
			why = "the drive keeps no count of power losses"
		}
		return Verdict{Pass, kept + "; no evidence the cut happened: " + why + ", judged on its data alone"}
	}
	return Verdict{Pass, kept + "; the drive saw the power loss (" + strings.Join(rose, ", ") + ")"}
}

// flushedNote says how many lost writes a flush had completed after,
// when counted.
func flushedNote(n *int) string {
	switch {
	case n == nil:
		return ""
	case *n == 0:
		return "; none of them before a completed flush: each was completed and not yet flushed, what a volatile write cache without power-loss protection loses"
	}
	return fmt.Sprintf("; %d of them before a completed flush, which a drive must keep whatever it promises", *n)
}

func (l Lost) describe(lba int64) string {
	if lba <= 0 {
		lba = 512
	}
	s := fmt.Sprintf("LBA %d, %d blocks (%d bytes at offset %d), came back as %s", l.Offset/lba, l.Len/lba, l.Len, l.Offset, l.Found)
	if l.Found == Misplaced {
		s += fmt.Sprintf(" (the write to LBA %d)", l.From/lba)
	}
	return s
}

// Ranges merges lost writes, each with what came back, into ranges of
// adjacent writes that came back as the same thing, by offset, the first
// MaxRanges of them.
func Ranges(lost []Lost) []Lost {
	sorted := append([]Lost(nil), lost...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	var out []Lost
	for _, l := range sorted {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if l.Offset <= last.Offset+last.Len && l.Found == last.Found && l.Found != Misplaced {
				if end := l.Offset + l.Len; end > last.Offset+last.Len {
					last.Len = end - last.Offset
				}
				continue
			}
		}
		if len(out) == MaxRanges {
			break
		}
		out = append(out, l)
	}
	return out
}
