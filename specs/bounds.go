package specs

import (
	"fmt"
	"github.com/drivequal/drivequal/specs/internal/keylines"
	"time"
	"unicode"
)

// The most a spec may ask for. A spec is also read back from every
// recording a replay or a fleet judges (run.json holds its text), so the
// numbers that size what the suite allocates before it judges anything
// (placeholder drives for each scaling count, cells, steps, rounds) are
// bounded at load, far above any real qualification: the brief's spec has
// 8 workloads, 4 capacities, 8 scaling steps of up to 24 drives.
const (
	// MaxSpecBytes is the largest spec file, in bytes (the brief's is
	// about 4 KB).
	MaxSpecBytes = 1 << 20
	// MaxWorkloads is the most [[workload]] tables.
	MaxWorkloads = 256
	// MaxCapacities is the most [[capacity]] tables.
	MaxCapacities = 64
	// MaxStepDrives is the most drives one scaling step measures at once.
	MaxStepDrives = 1024
	// MaxCells is the most cells a spec plans: its workloads times its
	// capacities and scaling steps (the brief's spec plans 96). Each
	// cell's result rewrites the reports, so a run's report writing
	// grows with the square of its cells.
	MaxCells = 1024
	// MaxScalingSteps is the most drive counts [scaling] drives lists.
	MaxScalingSteps = 64
	// MaxNumJobs is fio's own limit on jobs (FIO_MAX_JOBS).
	MaxNumJobs = 4096
	// MaxIODepth is the deepest NVMe I/O queue (64 Ki entries).
	MaxIODepth = 65536
	// MaxFillPasses is the most sequential fill passes.
	MaxFillPasses = 100
	// MaxRounds is the most steady-state rounds one random-write
	// preconditioning step or top-up may run (its bound over
	// steady_round).
	MaxRounds = 100_000
	// MaxModels is the most model patterns, MaxPatternLen the longest.
	MaxModels     = 256
	MaxPatternLen = 256
	// MaxCapacityBytes is the largest capacity, 2^53 bytes (9 PB): every
	// byte count up to it is exact as a float64.
	MaxCapacityBytes = 1 << 53
)

// atMost reports an integer value above max, why naming the bound.
func (t table) atMost(v value, n, max int64, why string) bool {
	if !v.set || n <= max {
		return true
	}
	t.errorf(v.key, "%s %d is more than %d, %s", v.key, n, max, why)
	return false
}

// waitAtMost reports a duration above max.
func (t table) waitAtMost(v value, d, max time.Duration) {
	if v.set && d > max {
		t.errorf(v.key, "%s %s is longer than %s, the longest a spec may give", v.key, d, max)
	}
}

// rounds reports a preconditioning bound (random_runtime, topup_runtime)
// that holds more than MaxRounds steady-state rounds.
func rounds(t table, key string, bound, round time.Duration) {
	if round <= 0 || bound <= 0 {
		return
	}
	if n := bound / round; n > MaxRounds {
		t.errorf(key, "%s %s is %d rounds of steady_round %s, more than %d: raise steady_round or lower %s",
			key, bound, int64(n), round, MaxRounds, key)
	}
}

// printable reports a name holding a control character (a newline, an
// escape), which would reach the test log, junit.xml and the reports, or
// a format character (a bidi override U+202E, which shows the text after
// it backwards on the page; a zero-width space), which would make the
// reports show what the spec does not say.
func printable(t table, v value, s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			t.errorf(v.key, "%s %q holds the control character %U: names are printed in the test log and reports", v.key, s, r)
			return false
		}
		if unicode.Is(unicode.Cf, r) {
			t.errorf(v.key, "%s %q holds the invisible format character %U (a bidi override reverses the text after it): remove it, names are printed in the reports", v.key, s, r)
			return false
		}
	}
	return true
}

// tooMany reports an array of tables with more than max elements, at the
// first one past it.
func tooMany(t table, v value, max int, what string) bool {
	n := len(rawElems(v.v))
	if n <= max {
		return false
	}
	line := t.p.lines[keylines.Path(v.key, keylines.Index(max))]
	t.p.addf(line, "", "%d %s, more than the %d a spec may hold", n, what, max)
	return true
}

// sizeError is the problem of a spec text over MaxSpecBytes.
func sizeError(file string, n int) *Error {
	return &Error{File: file, Msg: fmt.Sprintf("the spec is %d bytes, more than the %d a spec may be", n, MaxSpecBytes)}
}
