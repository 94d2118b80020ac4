package specs

import (
	"strings"
	"time"
)

// Workload returns the workload called name.
func (s *Spec) Workload(name string) (Workload, bool) {
	for _, w := range s.Workloads {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// Capacity returns the capacity called name.
func (s *Spec) Capacity(name string) (Capacity, bool) {
	for _, c := range s.Capacities {
		if c.Name == name {
			return c, true
		}
	}
	return Capacity{}, false
}

// IsWriteOnly reports whether w only writes (rw is write or randwrite).
func (w Workload) IsWriteOnly() bool { return w.RW == "write" || w.RW == "randwrite" }

// IsRandom reports whether w's offsets are random (randread, randwrite,
// randrw, randtrim, randtrimwrite).
func (w Workload) IsRandom() bool { return strings.HasPrefix(w.RW, "rand") }

// RuntimeOr returns w.Runtime if it is set (> 0), else d.
func (w Workload) RuntimeOr(d time.Duration) time.Duration {
	if w.Runtime > 0 {
		return w.Runtime
	}
	return d
}

// WriteTwin returns the write-only workload that preconditions w:
//
//   - a write-only workload is its own twin;
//   - a read or mixed workload with Precondition "X" has X's twin (X itself
//     when X is write-only);
//   - otherwise, the first write-only workload of s (in file order) with
//     w's block size and randomness: randread and randrw pair with
//     randwrite, read and rw/readwrite with write;
//   - failing that, a workload made for the purpose: Name w.Name+" (write
//     twin)", RW randwrite or write, and w's BS, IODepth, NumJobs and Metric.
func (s *Spec) WriteTwin(w Workload) Workload {
	seen := map[string]bool{}
	for !w.IsWriteOnly() && w.Precondition != "" && !seen[w.Name] {
		seen[w.Name] = true
		x, ok := s.Workload(w.Precondition)
		if !ok {
			break
		}
		w = x
	}
	if w.IsWriteOnly() {
		return w
	}
	rw := "write"
	if w.IsRandom() {
		rw = "randwrite"
	}
	for _, x := range s.Workloads {
		if x.RW == rw && x.BS == w.BS {
			return x
		}
	}
	return Workload{
		Name:      w.Name + " (write twin)",
		RW:        rw,
		BS:        w.BS,
		IODepth:   w.IODepth,
		NumJobs:   w.NumJobs,
		Metric:    w.Metric,
		RWMixRead: -1,
	}
}

// ForScaling returns w as scaling runs it: with the spec's
// [scaling.override] for w applied (a zero field keeps w's value).
func (s *Spec) ForScaling(w Workload) Workload {
	o, ok := s.Scaling.Override[w.Name]
	if !ok {
		return w
	}
	if o.IODepth > 0 {
		w.IODepth = o.IODepth
	}
	if o.NumJobs > 0 {
		w.NumJobs = o.NumJobs
	}
	return w
}

// SubtestName turns a workload or capacity name into a subtest name:
// spaces become "_" and "/" becomes "-", so "4KB Random Read" is
// "4KB_Random_Read" and a name never adds a level to the test path.
func SubtestName(name string) string {
	return strings.NewReplacer(" ", "_", "/", "-").Replace(name)
}

// Reads reports whether measuring w reads from the drive: a read-only
// workload, or a mixed one with more than 0 % reads.
func (w Workload) Reads() bool {
	switch w.RW {
	case "read", "randread":
		return true
	case "rw", "readwrite", "randrw":
		return w.RWMixRead != 0
	}
	return false
}

// WritesData reports whether measuring w writes data (not only trims).
func (w Workload) WritesData() bool { return w.Writes() && w.RW != "trim" && w.RW != "randtrim" }

// Writes reports whether measuring w changes what the drive holds: a
// write-only or trim workload, or a mixed one with less than 100 % reads.
func (w Workload) Writes() bool {
	switch w.RW {
	case "write", "randwrite", "trim", "randtrim", "trimwrite", "randtrimwrite":
		return true
	case "rw", "readwrite", "randrw":
		return w.RWMixRead < 100
	}
	return false
}
