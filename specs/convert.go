package specs

import (
	"fmt"
	"github.com/drivequal/drivequal/specs/internal/keylines"
	"github.com/drivequal/drivequal/specs/internal/tomlval"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// fio's rw patterns a workload may use.
var rwPatterns = []string{"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw",
	"trim", "randtrim", "trimwrite", "randtrimwrite"}

// Purge methods.
var purgeMethods = []string{"format", "sanitize", "discard", "none"}

// steadyStateRE is fio's steadystate criterion: a metric, a colon and a
// limit, in percent with a trailing "%".
var steadyStateRE = regexp.MustCompile(`^(iops|iops_slope|bw|bw_slope):([0-9]+(\.[0-9]*)?|\.[0-9]+)%?$`)

// table is one TOML table being converted: its keys as decoded, and where
// its problems go, each at its key's line (or the table's, for a missing
// key) under one Where.
type table struct {
	p     *parser
	where string
	path  []string       // keylines.Lines path of the table
	raw   map[string]any // nil when the table is absent
}

// value is one key of a table as decoded; set is false when it is absent.
type value struct {
	key string
	v   any
	set bool
}

func (t table) get(key string) value {
	v, set := t.raw[key]
	return value{key: key, v: v, set: set}
}

// sub returns the table in key v of t, its problems under where.
func (t table) sub(v value, where string) table {
	m, _ := v.v.(map[string]any)
	return table{p: t.p, where: where, path: append(t.path[:len(t.path):len(t.path)], v.key), raw: m}
}

// named returns table name of v, a table of tables named by the spec.
func (t table) named(v value, name, where string) table {
	m, _ := v.v.(map[string]any)
	e, _ := m[name].(map[string]any)
	return table{p: t.p, where: where, path: append(t.path[:len(t.path):len(t.path)], v.key, name), raw: e}
}

func (t table) line(key string) int {
	if key != "" {
		if l := t.p.lines[keylines.Path(append(t.path[:len(t.path):len(t.path)], key)...)]; l > 0 {
			return l
		}
	}
	if len(t.path) > 0 {
		return t.p.lines[keylines.Path(t.path...)]
	}
	return 0
}

func (t table) errorf(key, format string, args ...any) {
	t.p.addf(t.line(key), t.where, format, args...)
}

func (t table) missing(key string) {
	t.errorf("", "missing required key %q", key)
}

// nonEmpty is str for a key that may not be empty.
func (t table) nonEmpty(v value) (string, bool) {
	s, ok := t.str(v, "")
	if ok && s == "" {
		t.errorf(v.key, "%s must not be empty", v.key)
		return "", false
	}
	return s, ok
}

// checkWorkloads checks what relates workloads to each other: unique names
// and subtest names, and precondition references. Each workload's chain of
// preconditions is walked once in all (linear in the workloads): a chain
// must end at a write-only workload or one using the default rule, and a
// loop is reported at each of its workloads.
func (p *parser) checkWorkloads(ws []Workload) {
	p.checkUnique("workload", len(ws), func(i int) (string, int) { return ws[i].Name, ws[i].Line })
	byName := map[string]int{}
	for i, w := range ws {
		if _, dup := byName[w.Name]; !dup && w.Name != "" {
			byName[w.Name] = i
		}
	}
	// next[i] is the workload i's precondition names, followed while
	// checking chains; -1 where the chain ends (or i is reported).
	next := make([]int, len(ws))
	for i, w := range ws {
		next[i] = -1
		if w.Precondition == "" {
			continue
		}
		t := table{p: p, where: p.elemWhere("workload", i), path: []string{"workload", keylines.Index(i)}}
		if w.RW != "" && w.IsWriteOnly() {
			t.errorf("precondition", "precondition is only for read and mixed workloads; a write-only workload preconditions itself")
			continue
		}
		j, ok := byName[w.Precondition]
		if !ok {
			t.errorf("precondition", "precondition names %s", unknownWorkload(ws, w.Precondition))
			continue
		}
		if !ws[j].IsWriteOnly() {
			next[i] = j
		}
	}
	// Walk each chain from its start, colouring as it goes: a walk that
	// meets its own colour has found a loop; one that meets an earlier
	// walk's stops there.
	const unseen = 0
	state := make([]int, len(ws)) // unseen, or the walk (1-based) that reached it
	for start := range ws {
		if state[start] != unseen {
			continue
		}
		walk := start + 1
		i := start
		for i >= 0 && state[i] == unseen {
			state[i] = walk
			i = next[i]
		}
		if i < 0 || state[i] != walk {
			continue
		}
		// i is on a loop: report it at each of its workloads, in file order.
		var loop []int
		for j := i; ; {
			loop = append(loop, j)
			if j = next[j]; j == i {
				break
			}
		}
		slices.Sort(loop)
		for _, j := range loop {
			chain := []string{ws[j].Name}
			for k := next[j]; ; k = next[k] {
				chain = append(chain, ws[k].Name)
				if k == j {
					break
				}
			}
			t := table{p: p, where: p.elemWhere("workload", j), path: []string{"workload", keylines.Index(j)}}
			t.errorf("precondition", "precondition loops: %s", strings.Join(quoteAll(chain), " -> "))
		}
	}
}

// checkUnique reports names that repeat, or that give the same subtest name.
func (p *parser) checkUnique(kind string, n int, at func(int) (name string, line int)) {
	names := map[string]string{} // subtest name -> first name
	first := map[string]int{}    // name -> its line
	for i := 0; i < n; i++ {
		name, line := at(i)
		if name == "" {
			continue
		}
		where := fmt.Sprintf("%s %q", kind, name)
		sub := SubtestName(name)
		if l, dup := first[name]; dup {
			p.addf(line, where, "duplicate %s name (first at line %d)", kind, l)
			continue
		}
		if other, dup := names[sub]; dup {
			p.addf(line, where, "name gives the same subtest name %q as %s %q", sub, kind, other)
			continue
		}
		first[name], names[sub] = line, name
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func quoteAll(names []string) []string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return q
}

func capacityNames(s *Spec) []string {
	names := make([]string, len(s.Capacities))
	for i, c := range s.Capacities {
		names[i] = c.Name
	}
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// val is v read by package tomlval, its problems at v's key.
func (t table) val(v value) tomlval.Value {
	return tomlval.Value{Key: v.key, V: v.v, Set: v.set, Errorf: func(format string, args ...any) { t.errorf(v.key, format, args...) }}
}

// The readers of a value (package tomlval), their problems at its key.
func (t table) str(v value, def string) (string, bool) { return t.val(v).Str(def) }
func (t table) integer(v value, def, lo, hi int64) (int64, bool) {
	return t.val(v).Integer(def, lo, hi)
}
func (t table) limit(v value) *uint64                          { return t.val(v).Limit() }
func (t table) bytes(v value) *uint64                          { return t.val(v).Bytes() }
func (t table) number(v value, def float64) (float64, bool)    { return t.val(v).Number(def) }
func (t table) tolerance(v value, def float64) (float64, bool) { return t.val(v).Tolerance(def) }
func (t table) openFraction(v value) (float64, bool)           { return t.val(v).OpenFraction() }
func (t table) fraction(v value, def float64) (float64, bool)  { return t.val(v).Fraction(def) }
func (t table) boolean(v value, def bool) (bool, bool)         { return t.val(v).Boolean(def) }
func (t table) duration(v value, def time.Duration, zeroOK bool) (time.Duration, bool) {
	return t.val(v).Duration(def, zeroOK)
}
func (t table) oneOf(v value, def string, allowed ...string) (string, bool) {
	return t.val(v).OneOf(def, allowed...)
}
func (t table) firmware(v value) ([]string, bool) { return t.val(v).Firmware() }
func (t table) driveCounts(v value) ([]int, bool) {
	return t.val(v).DriveCounts(MaxScalingSteps, MaxStepDrives)
}
func (t table) blockSize(v value) (int64, bool) { return t.val(v).BlockSize() }
func (t table) modelPatterns(v value) []string {
	return t.val(v).ModelPatterns(MaxModels, MaxPatternLen)
}

// ParseBlockSize parses a block size as fio writes it: a decimal integer
// with an optional suffix k/K/KB/KiB (1024 bytes), m/M/MB/MiB (1024²) or
// g/G/GB/GiB (1024³); suffixes ignore case. It returns bytes. It does not
// check the value (see the spec's rule: > 0, a multiple of 512).
func ParseBlockSize(s string) (int64, error) { return tomlval.ParseBlockSize(s) }
