package specs

import (
	"fmt"
	"github.com/drivequal/drivequal/specs/internal/keylines"
	"math"
	pathpkg "path"
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

// str returns a string value; def when unset. It reports a wrong type.
func (t table) str(v value, def string) (string, bool) {
	if !v.set {
		return def, true
	}
	s, ok := v.v.(string)
	if !ok {
		t.errorf(v.key, "%s must be a string, got %s", v.key, typeName(v.v))
	}
	return s, ok
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

// integer returns an integer value in [lo, hi]; def when unset.
func (t table) integer(v value, def, lo, hi int64) (int64, bool) {
	if !v.set {
		return def, true
	}
	n, ok := v.v.(int64)
	if !ok {
		t.errorf(v.key, "%s must be an integer, got %s", v.key, typeName(v.v))
		return 0, false
	}
	switch {
	case n < lo && (hi == math.MaxInt32 || hi == math.MaxInt64):
		t.errorf(v.key, "%s must be >= %d, got %d", v.key, lo, n)
	case n < lo || n > hi:
		t.errorf(v.key, "%s must be between %d and %d, got %d", v.key, lo, hi, n)
	default:
		return n, true
	}
	return n, false
}

// limit returns an integer ≥ 0, or nil when unset or wrong.
func (t table) limit(v value) *uint64 {
	if !v.set {
		return nil
	}
	n, ok := t.integer(v, 0, 0, math.MaxInt64)
	if !ok {
		return nil
	}
	u := uint64(n)
	return &u
}

// byteUnits are the decimal units bytes reads, largest first.
var byteUnits = []struct {
	suffix string
	mult   float64
}{{"PB", 1e15}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}

// bytes returns a size in bytes, given as an integer of bytes or as a
// string with a decimal unit ("1TB", "1.5 TB", "500GB"); nil when unset
// or wrong.
func (t table) bytes(v value) *uint64 {
	if !v.set {
		return nil
	}
	if _, ok := v.v.(int64); ok {
		return t.limit(v)
	}
	str, ok := v.v.(string)
	if !ok {
		t.errorf(v.key, "%s must be a number of bytes or a size such as \"1TB\" (10^12 bytes), got %s", v.key, typeName(v.v))
		return nil
	}
	s := strings.ToUpper(strings.TrimSpace(str))
	for _, u := range byteUnits {
		num, found := strings.CutSuffix(s, u.suffix)
		if !found {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || f*u.mult >= math.MaxInt64 {
			break
		}
		n := uint64(math.Round(f * u.mult))
		return &n
	}
	t.errorf(v.key, "%s %q is not a size: write a number and a decimal unit, such as \"1TB\" (10^12 bytes) or \"500GB\"", v.key, str)
	return nil
}

// number returns an integer or float value as a float64; def when unset.
func (t table) number(v value, def float64) (float64, bool) {
	if !v.set {
		return def, true
	}
	switch n := v.v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	t.errorf(v.key, "%s must be a number, got %s", v.key, typeName(v.v))
	return 0, false
}

// tolerance returns a fraction in [0, 1); def when unset.
func (t table) tolerance(v value, def float64) (float64, bool) {
	f, ok := t.number(v, def)
	if ok && !(f >= 0 && f < 1) {
		hint := ""
		if f > 1 && f < 100 {
			hint = fmt.Sprintf("; for %v %% write %v", f, f/100)
		}
		t.errorf(v.key, "%s must be a fraction in [0, 1) (0.05 is 5 %%), got %v%s", v.key, f, hint)
		return 0, false
	}
	return f, ok
}

// openFraction returns a share in (0, 1), such as a coverage or a
// confidence (0.95 is 95 %).
func (t table) openFraction(v value) (float64, bool) {
	f, ok := t.number(v, 0)
	if ok && !(f > 0 && f < 1) {
		t.errorf(v.key, "%s must be in (0, 1) (0.95 is 95 %%), got %v", v.key, f)
		return 0, false
	}
	return f, ok
}

// fraction returns a fraction of a mean, > 0 (0.20 is 20 %; above 1 is
// allowed, for targets whose figures swing, such as loop devices); def
// when unset.
func (t table) fraction(v value, def float64) (float64, bool) {
	f, ok := t.number(v, def)
	if ok && !(f > 0) || math.IsInf(f, 0) {
		t.errorf(v.key, "%s must be a fraction of the window mean > 0 (0.20 is 20 %%), got %v", v.key, f)
		return 0, false
	}
	return f, ok
}

// boolean returns a boolean value; def when unset.
func (t table) boolean(v value, def bool) (bool, bool) {
	if !v.set {
		return def, true
	}
	b, ok := v.v.(bool)
	if !ok {
		t.errorf(v.key, "%s must be true or false, got %s", v.key, typeName(v.v))
	}
	return b, ok
}

// duration returns a duration written as a Go duration string ("60s",
// "30m", "1m30s"); def when unset. A duration must be > 0, or >= 0 when
// zeroOK.
func (t table) duration(v value, def time.Duration, zeroOK bool) (time.Duration, bool) {
	if !v.set {
		return def, true
	}
	s, ok := v.v.(string)
	if !ok {
		t.errorf(v.key, `%s must be a duration string like "60s", got %s`, v.key, typeName(v.v))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		t.errorf(v.key, `%s %q is not a duration (want e.g. "60s", "30m")`, v.key, s)
	case d < 0 || d == 0 && !zeroOK:
		want := "> 0"
		if zeroOK {
			want = ">= 0"
		}
		t.errorf(v.key, "%s must be %s, got %q", v.key, want, s)
	default:
		return d, true
	}
	return 0, false
}

// oneOf returns a string value that must be one of allowed; def when unset.
func (t table) oneOf(v value, def string, allowed ...string) (string, bool) {
	s, ok := t.str(v, def)
	if !ok {
		return "", false
	}
	if contains(allowed, s) {
		return s, true
	}
	t.errorf(v.key, "%s %q is not one of %s", v.key, s, strings.Join(allowed, ", "))
	return "", false
}

// firmware returns a list of firmware revisions as id-ctrl reports them
// ("fr": at most 8 characters, trimmed); nil for an empty list.
func (t table) firmware(v value) ([]string, bool) {
	key := v.key
	arr, ok := v.v.([]any)
	if !ok {
		t.errorf(key, `%s must be an array of firmware revisions like ["GDC7102Q"], got %s`, key, typeName(v.v))
		return nil, false
	}
	var out []string
	ok = true
	for _, e := range arr {
		fw, isStr := e.(string)
		switch {
		case !isStr:
			t.errorf(key, "%s must hold strings, got %s", key, typeName(e))
		case fw == "":
			t.errorf(key, "%s: a firmware revision must not be empty", key)
		case strings.TrimSpace(fw) != fw:
			t.errorf(key, "%s: firmware revision %q has leading or trailing spaces, which id-ctrl's trimmed revision never has", key, fw)
		case len(fw) > 8:
			t.errorf(key, "%s: firmware revision %q is longer than the 8 characters of id-ctrl's fr field", key, fw)
		default:
			out = append(out, fw)
			continue
		}
		ok = false
	}
	if !ok {
		return nil, false
	}
	return out, true
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

// driveCounts returns a non-empty, strictly ascending list of drive counts.
func (t table) driveCounts(v value) ([]int, bool) {
	key := v.key
	arr, ok := v.v.([]any)
	if !ok {
		t.errorf(key, "%s must be an array of drive counts like [1, 2, 4], got %s", key, typeName(v.v))
		return nil, false
	}
	if len(arr) == 0 {
		t.errorf(key, "%s must list at least one drive count", key)
		return nil, false
	}
	if len(arr) > MaxScalingSteps {
		t.errorf(key, "%s lists %d drive counts, more than the %d a spec may hold", key, len(arr), MaxScalingSteps)
		return nil, false
	}
	out := make([]int, 0, len(arr))
	for _, e := range arr {
		n, isInt := e.(int64)
		switch {
		case !isInt:
			t.errorf(key, "%s must hold integers, got %s", key, typeName(e))
			return nil, false
		case n < 1:
			t.errorf(key, "%s: drive count %d must be >= 1", key, n)
			return nil, false
		case n > MaxStepDrives:
			t.errorf(key, "%s: drive count %d is more than %d, the most drives one step may measure", key, n, MaxStepDrives)
			return nil, false
		case len(out) > 0 && int(n) <= out[len(out)-1]:
			t.errorf(key, "%s must be strictly ascending, got %d after %d", key, n, out[len(out)-1])
			return nil, false
		}
		out = append(out, int(n))
	}
	return out, true
}

// blockSize returns a block size in bytes, written as an integer or a
// string with an optional binary suffix: "4096", "4k", "4K", "4KiB", "4KB",
// "1m", "1MiB". k, K, KB and KiB all mean 1024 bytes, as in fio. The size
// must be > 0 and a multiple of 512.
func (t table) blockSize(v value) (int64, bool) {
	key := v.key
	var n int64
	switch b := v.v.(type) {
	case int64:
		n = b
	case string:
		var err error
		if n, err = ParseBlockSize(b); err != nil {
			t.errorf(key, "%s %q: %v", key, b, err)
			return 0, false
		}
	default:
		t.errorf(key, `%s must be a size like "4k" or a number of bytes, got %s`, key, typeName(v.v))
		return 0, false
	}
	if n <= 0 || n%512 != 0 {
		t.errorf(key, "%s must be > 0 and a multiple of 512 bytes, got %d", key, n)
		return 0, false
	}
	return n, true
}

var sizeSuffixes = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
}

// ParseBlockSize parses a block size as fio writes it: a decimal integer
// with an optional suffix k/K/KB/KiB (1024 bytes), m/M/MB/MiB (1024²) or
// g/G/GB/GiB (1024³); suffixes ignore case. It returns bytes. It does not
// check the value (see the spec's rule: > 0, a multiple of 512).
func ParseBlockSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("not a size: want digits with an optional suffix like 4k, 128KiB")
	}
	mult, ok := sizeSuffixes[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, fmt.Errorf("unknown size suffix %q (want k, KiB, m, MiB, g, GiB)", s[i:])
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size out of range")
	}
	return n * mult, nil
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

// modelPatterns returns a list of model-number globs (modelglob.Match),
// each checked to be a valid pattern no longer than id-ctrl's 40
// characters of mn.
func (t table) modelPatterns(v value) []string {
	key := v.key
	arr, ok := v.v.([]any)
	if !ok {
		t.errorf(key, `%s must be an array of model-number patterns like ["SOLIDIGM SB5PH27X*"], got %s`, key, typeName(v.v))
		return nil
	}
	if len(arr) > MaxModels {
		t.errorf(key, "%s lists %d patterns, more than the %d a spec may hold", key, len(arr), MaxModels)
		return nil
	}
	var out []string
	for _, e := range arr {
		m, isStr := e.(string)
		switch {
		case isStr && len(m) > MaxPatternLen:
			t.errorf(key, "%s: a pattern of %d characters is longer than %d", key, len(m), MaxPatternLen)
		case !isStr:
			t.errorf(key, "%s must hold strings, got %s", key, typeName(e))
		case m == "" || strings.TrimSpace(m) != m:
			t.errorf(key, "%s: pattern %q is empty or has leading or trailing spaces, which id-ctrl's trimmed model number never has", key, m)
		case len(m) > 40 && !strings.ContainsAny(m, "*?["):
			t.errorf(key, "%s: %q is longer than the 40 characters of id-ctrl's mn field", key, m)
		default:
			if _, err := pathpkg.Match(m, ""); err != nil {
				t.errorf(key, "%s: %q is not a valid pattern (%v): * matches any characters, ? one, [abc] a set", key, m, err)
				continue
			}
			out = append(out, m)
		}
	}
	if len(arr) == 0 {
		t.errorf(key, "%s is empty: leave the key out to accept any model", key)
	}
	return out
}
