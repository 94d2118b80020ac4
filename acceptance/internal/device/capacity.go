package device

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// Capacity is one capacity of a spec.
type Capacity struct {
	Name  string // as in the spec, e.g. "1.92TB"
	Bytes int64  // user capacity in bytes
}

// CapacityTolerance is how far, as a fraction of the capacity's bytes, a
// drive's size may be from a capacity and still be that capacity: 0.5 %.
//
// Drives of one nominal capacity report the same IDEMA size to the byte
// (1.92 TB is 1,920,383,410,176 bytes) whatever their sector format, so 0.5 %
// only absorbs vendors that round differently; neighbouring capacities of a
// family are a factor of two apart. There is no absolute floor (such as
// 1 GB): it would let a small test spec match anything near it, and a
// namespace resized for over-provisioning should be named with -capacity.
const CapacityTolerance = 0.005

// Comparable reports whether a drive of size bytes is within
// CapacityTolerance of capBytes.
func Comparable(size, capBytes int64) bool {
	if capBytes <= 0 || size <= 0 {
		return false
	}
	diff := float64(size - capBytes)
	if diff < 0 {
		diff = -diff
	}
	return diff <= CapacityTolerance*float64(capBytes)
}

// MatchCapacity returns the name of the capacity a drive of size bytes is:
// the nearest one within CapacityTolerance. When none is that close, or two
// are equally close, the error lists every capacity with its bytes and
// suggests -capacity=NAME.
func MatchCapacity(size int64, caps []Capacity) (string, error) {
	best, bestDiff, tie := -1, int64(0), false
	for i, c := range caps {
		if !Comparable(size, c.Bytes) {
			continue
		}
		d := size - c.Bytes
		if d < 0 {
			d = -d
		}
		switch {
		case best < 0 || d < bestDiff:
			best, bestDiff, tie = i, d, false
		case d == bestDiff:
			tie = true
		}
	}
	if best >= 0 && !tie {
		return caps[best].Name, nil
	}
	list := make([]string, len(caps))
	for i, c := range caps {
		list[i] = fmt.Sprintf("%s (%d bytes)", c.Name, c.Bytes)
	}
	what := "matches no capacity within 0.5 %"
	if tie {
		what = "is equally close to more than one capacity"
	}
	if len(caps) == 0 {
		return "", fmt.Errorf("size %d bytes (%.2f GB): the spec has no capacities", size, float64(size)/1e9)
	}
	return "", fmt.Errorf("size %d bytes (%.2f GB) %s of %s; give -capacity=NAME to say which it is",
		size, float64(size)/1e9, what, strings.Join(list, ", "))
}

// CheckForced says whether a drive of size bytes may be judged as
// capacity c, which the user named (-capacity), of a spec with the
// capacities caps. A drive smaller than c beyond CapacityTolerance is
// refused: its cells and preconditioning, sized for c, would run past its
// end, and its figures are another drive's. The error gives its size, c's
// bytes and the fix: the spec's capacity of its size (or one no larger),
// or a spec with a capacity of this size. A larger drive may be judged as
// a smaller capacity (a namespace kept small on purpose, a test of
// another size): warn says its figures are not comparable with the spec's.
func CheckForced(size int64, c Capacity, caps []Capacity) (warn string, err error) {
	switch {
	case Comparable(size, c.Bytes):
		return "", nil
	case size > c.Bytes:
		return fmt.Sprintf("holds %s bytes, not the %s bytes of %s: its figures are not comparable with the spec's",
			units.Thousands(float64(size)), units.Thousands(float64(c.Bytes)), c.Name), nil
	}
	fix := fmt.Sprintf("give a spec with a capacity of %s bytes", units.Thousands(float64(size)))
	if name, err := MatchCapacity(size, caps); err == nil {
		fix = fmt.Sprintf("give -capacity=%s, the spec's capacity of this size, or leave -capacity out", name)
	} else {
		var smaller []string
		for _, o := range caps {
			if o.Bytes < size {
				smaller = append(smaller, "-capacity="+o.Name)
			}
		}
		if len(smaller) > 0 {
			fix += fmt.Sprintf(", or judge it as a smaller capacity (%s; its figures are then not comparable with the spec's)", strings.Join(smaller, ", "))
		}
	}
	return "", fmt.Errorf("holds %s bytes (%.2f GB), fewer than the %s bytes of %s it is to be judged as: a drive smaller than its capacity is refused, as its cells would reach past its end; %s",
		units.Thousands(float64(size)), float64(size)/1e9, units.Thousands(float64(c.Bytes)), c.Name, fix)
}
