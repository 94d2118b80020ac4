// Package powerloss judges a power-loss cycle: which of fio's completed
// writes the drive acknowledged by its promise (the ledger), what came
// back where an acknowledged write was read, and the cycle's verdict
// from that and the drive's own count of power losses.
//
// The pattern fio writes is fio's verify_pattern "0xTTTTTTTT%o": a
// four-byte tag unique to the run and cycle followed by the write's byte
// offset (eight bytes, little-endian), repeated through the block. A
// write's content is a function of the tag and its offset alone, so a
// block written twice holds the same bytes, and a block that holds
// another offset's bytes was written to the wrong place.
package powerloss

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/drivequal/drivequal/fiojob"
)

// Write is one write fio completed: its byte offset and length.
type Write struct {
	Offset, Len int64
}

// ParseLatLog reads fio's per-I/O latency log (write_lat_log with
// log_avg_msec=0 and log_offset=1: "time, latency, direction, length,
// offset, priority" a line) and returns its writes in completion order.
// fio logs an I/O only when it completed without error, so a write that
// failed (the cut) is never in it.
func ParseLatLog(r io.Reader) ([]Write, error) {
	var out []Write
	err := fiojob.EachLogLine(r, 5, "time, latency, direction, length, offset: give fio log_offset=1", func(f []string) error {
		var n [5]int64
		for i := range n {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("field %d %q is not a count", i+1, f[i])
			}
			n[i] = v
		}
		if n[2] != 1 { // 0 read, 1 write, 2 trim
			return nil
		}
		if n[3] == 0 {
			return errors.New("a write of 0 bytes")
		}
		out = append(out, Write{Offset: n[4], Len: n[3]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Rule is what a drive promises to keep through a power loss.
type Rule int

const (
	// Completed: every completed write (power-loss protection promised,
	// or no volatile write cache).
	Completed Rule = iota
	// Flushed: every write completed before the last completed flush.
	Flushed
)

func (r Rule) String() string {
	if r == Completed {
		return "every completed write"
	}
	return "every write completed before the last completed flush"
}

// Promise is what a drive promises: plp from the spec, and whether its
// controller reports a volatile write cache (identify controller vwc;
// VWCKnown false when it could not be read).
type Promise struct {
	PLP      bool
	VWC      bool
	VWCKnown bool
}

// Rule is the promise's rule, and why.
func (p Promise) Rule() (Rule, string) {
	switch {
	case p.PLP:
		return Completed, "the spec promises power-loss protection (plp = true)"
	case p.VWCKnown && !p.VWC:
		return Completed, "the controller reports no volatile write cache (vwc 0)"
	case p.VWCKnown:
		return Flushed, "the controller reports a volatile write cache and the spec promises no power-loss protection"
	default:
		return Flushed, "the drive reports no write cache (not NVMe) and the spec promises no power-loss protection"
	}
}

// Job is one fio job's completed writes in completion order. fio ran it
// with one I/O in flight and a flush (fsync) after every FlushEvery
// writes, so a flush completed exactly when a later write completed;
// Finished says fio's job ended normally, its final flush (end_fsync)
// included.
type Job struct {
	Writes     []Write
	FlushEvery int
	Finished   bool
}

// Acknowledged are the writes of j the rule holds the drive to.
func (j Job) Acknowledged(r Rule) []Write {
	if r == Completed || j.Finished {
		return j.Writes
	}
	m := len(j.Writes)
	if m == 0 || j.FlushEvery <= 0 {
		return nil
	}
	// The flush after write k·N was issued only once write k·N completed,
	// and write k·N+1 only once that flush completed.
	flushed := (m - 1) / j.FlushEvery * j.FlushEvery
	return j.Writes[:flushed]
}

// Blocks counts the offsets of writes, each once: how many writes a
// read-back judges, which counts a lost block once.
func Blocks(writes []Write) int {
	at := map[int64]bool{}
	for _, w := range writes {
		at[w.Offset] = true
	}
	return len(at)
}

// AtRisk counts the writes of jobs completed after their job's last
// completed flush (all of a job's writes when it flushed none), and how
// many of them are to an offset written before in the cycle: earlier in
// their job, or by another job at all (the order of two jobs' writes is
// not known). A job that finished (its final flush completed) has none.
func AtRisk(jobs []Job) (atRisk, rewritten int) {
	owner := map[int64]int{} // offset: the job that wrote it, -1 for two or more
	for i, j := range jobs {
		for _, w := range j.Writes {
			if o, ok := owner[w.Offset]; ok && o != i {
				owner[w.Offset] = -1
			} else if !ok {
				owner[w.Offset] = i
			}
		}
	}
	for i, j := range jobs {
		if j.Finished {
			continue
		}
		seen := map[int64]bool{}
		flushed := len(j.Acknowledged(Flushed))
		for k, w := range j.Writes {
			if k >= flushed {
				atRisk++
				if seen[w.Offset] || owner[w.Offset] != i {
					rewritten++
				}
			}
			seen[w.Offset] = true
		}
	}
	return atRisk, rewritten
}

// FlushedAmong counts the writes of lost whose block a write of flushed
// was to (the writes a flush completed after): the same tag and offset
// are the same bytes, so such a block read back otherwise only if the
// drive lost what it had flushed.
func FlushedAmong(lost []Lost, flushed []Write) int {
	at := map[int64]bool{}
	for _, w := range flushed {
		at[w.Offset] = true
	}
	n := 0
	for _, l := range lost {
		if at[l.Offset] {
			n++
		}
	}
	return n
}

// Pattern is fio's verify_pattern string for tag.
func Pattern(tag uint32) string { return fmt.Sprintf("0x%08x%%o", tag) }

// Expected is the content fio writes at offset, n bytes long, with tag.
func Expected(tag uint32, offset int64, n int) []byte {
	var unit [12]byte
	binary.BigEndian.PutUint32(unit[:4], tag)
	binary.LittleEndian.PutUint64(unit[4:], uint64(offset))
	out := make([]byte, n)
	for i := 0; i < n; i += len(unit) {
		copy(out[i:], unit[:])
	}
	return out
}

// Found is what came back where an acknowledged write was expected.
type Found string

const (
	Intact Found = ""
	Zeros  Found = "zeros"
	// Old is what the block held before the cycle (an earlier cycle's
	// write or the drive's earlier content).
	Old Found = "old data"
	// Misplaced is this run's pattern for another offset: another
	// write's data.
	Misplaced Found = "another write's data"
	Other     Found = "other data"
)

// Check says what got holds, where w was written with tag; before says
// whether bytes are what the range held before the cycle (nil: not
// known). On Misplaced, from is the offset whose write came back.
func Check(got []byte, w Write, tag uint32, before func([]byte) bool) (f Found, from int64) {
	want := Expected(tag, w.Offset, len(got))
	switch {
	case bytes.Equal(got, want):
		return Intact, 0
	case allZero(got):
		return Zeros, 0
	case before != nil && before(got):
		return Old, 0
	}
	if len(got) >= 12 && binary.BigEndian.Uint32(got[:4]) == tag {
		off := int64(binary.LittleEndian.Uint64(got[4:12]))
		if bytes.Equal(got, Expected(tag, off, len(got))) {
			return Misplaced, off
		}
	}
	if len(got) >= 12 {
		// An earlier cycle of the run: its tag differs, its offset is this.
		off := int64(binary.LittleEndian.Uint64(got[4:12]))
		if off == w.Offset && bytes.Equal(got, Expected(binary.BigEndian.Uint32(got[:4]), off, len(got))) {
			return Old, 0
		}
	}
	return Other, 0
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
