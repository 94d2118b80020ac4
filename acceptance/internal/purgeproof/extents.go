// Package purgeproof proves a purge erased: it reads a drive back after the
// purge at the end of a run (TestPurge) and judges what came back against
// what the purge promises, with no block of the run's fill pattern allowed
// to remain.
//
// Extents says what is read (a sample, or the whole drive), Tally what a
// read-back's sectors hold against the purge's Promise, and Prove purges
// and reads the drives (package kept keeps the verdicts in the
// recording). The package never prints; notes go to the caller's logf.
package purgeproof

import (
	"time"

	"github.com/drivequal/drivequal/specs"
)

// Read-backs ([purge] verify).
const (
	Sample = specs.PurgeVerifySample
	Full   = specs.PurgeVerifyFull
)

// Sizes of the sample, in bytes.
const (
	MiB = 1 << 20
	GiB = 1 << 30
	// Edge is the bytes read at each end of the drive: the first and the
	// last GiB.
	Edge = GiB
	// ExtentBytes is the size of each evenly spaced extent between them.
	ExtentBytes = MiB
	// align is the alignment of every offset read (O_DIRECT): a page, a
	// multiple of every logical block size.
	align = 4096
)

// Share is the least fraction of the capacity the evenly spaced extents
// add up to (1 %).
const Share = 0.01

// Mode is the read-back a run asks for: the spec's [purge] verify, or
// Sample when only -purge-after asks; "" when neither does.
func Mode(purgeAfter bool, verify string) string {
	switch verify {
	case Sample, Full:
		return verify
	}
	if purgeAfter {
		return Sample
	}
	return ""
}

// Extent is a byte range of a drive.
type Extent struct {
	Off, Len int64
}

// Sampling is what a sample reads: Edge bytes at each end, and between
// them evenly spaced extents of Extent bytes adding up to at least Share
// of the capacity. Sizes are multiples of 4 KiB.
type Sampling struct {
	Edge, Extent int64
	Share        float64
}

// DefaultSampling is the sample TestPurge reads: the first and last GiB,
// and 1 MiB extents adding up to 1 %.
var DefaultSampling = Sampling{Edge: Edge, Extent: ExtentBytes, Share: Share}

// Extents is what the read-back of a drive of size bytes reads with
// DefaultSampling (see Sampling.Extents).
func Extents(size int64, mode string) []Extent { return DefaultSampling.Extents(size, mode) }

// Extents is what the read-back of a drive of size bytes reads, in
// ascending order: the whole drive with Full; with Sample the first and
// last Edge bytes and, between them, evenly spaced extents adding up to at
// least Share of size. A drive too small to hold them apart is read whole.
// Offsets are multiples of 4 KiB; the last extent ends at size.
func (s Sampling) Extents(size int64, mode string) []Extent {
	if size <= 0 {
		return nil
	}
	whole := []Extent{{0, size}}
	if mode == Full {
		return whole
	}
	n := (int64(float64(size)*s.Share) + s.Extent - 1) / s.Extent
	lastStart := (size - s.Edge) &^ (align - 1)
	mid := lastStart - s.Edge
	if n <= 0 || mid < 2*n*s.Extent {
		return whole
	}
	out := []Extent{{0, s.Edge}}
	step := mid / n
	for i := int64(0); i < n; i++ {
		// Centred in each of n equal slices of the middle.
		off := (s.Edge + i*step + (step-s.Extent)/2) &^ (align - 1)
		out = append(out, Extent{off, s.Extent})
	}
	return append(out, Extent{lastStart, size - lastStart})
}

// Bytes is the bytes extents cover.
func Bytes(extents []Extent) int64 {
	var n int64
	for _, e := range extents {
		n += e.Len
	}
	return n
}

// JudgeRate is the bytes a second the read-back of one drive is taken to
// be judged at, whatever the drive reads at: a little under what one core
// hashes and tallies of random data (a crypto erase's read-back,
// BenchmarkTally/random: 5 to 6 GB/s on a shared 2-core machine; zeros
// about 47 GB/s), a core a drive when all drives are read at once.
const JudgeRate = 4e9

// ReadTime is how long reading extents takes at rate bytes per second
// (the drive's), at most JudgeRate: the sample is read before the purge
// too (what the drive held), so twice for Sample; for Full, the sample
// before and the whole drive after.
func ReadTime(size int64, mode string, rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	rate = min(rate, JudgeRate)
	b := Bytes(Extents(size, Sample)) + Bytes(Extents(size, mode))
	return time.Duration(float64(b) / rate * float64(time.Second))
}
