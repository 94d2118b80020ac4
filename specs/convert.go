package specs

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/fiojob"
)

// fio's rw patterns a workload may use; trim patterns are not measured.
var rwPatterns = []string{"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}

// Purge methods.
var purgeMethods = []string{"format", "sanitize", "discard", "none"}

// steadyStateRE is fio's steadystate criterion: a metric, a colon and a
// limit, in percent with a trailing "%".
var steadyStateRE = regexp.MustCompile(`^(iops|iops_slope|bw|bw_slope):([0-9]+(\.[0-9]*)?|\.[0-9]+)%?$`)

// convert checks t and turns it into a Spec, recording every problem.
func (p *parser) convert(t *tomlSpec) *Spec {
	s := &Spec{}
	top := table{p: p}
	s.Model, _ = top.requiredStr("model", t.Model)
	s.Source, _ = top.requiredStr("source", t.Source)
	s.Method = p.method(t.Method)
	s.Precondition = p.precondition(t.Precondition)
	s.Health = p.health(t.Health)

	if len(t.Workload) == 0 {
		p.addf(0, "", "no workloads: add at least one [[workload]]")
	}
	for i := range t.Workload {
		s.Workloads = append(s.Workloads, p.workload(i, &t.Workload[i]))
	}
	p.checkWorkloads(s.Workloads)

	if len(t.Capacity) == 0 {
		p.addf(0, "", "no capacities: add at least one [[capacity]]")
	}
	for i := range t.Capacity {
		s.Capacities = append(s.Capacities, p.capacity(i, &t.Capacity[i], s))
	}
	p.checkUnique("capacity", len(s.Capacities), func(i int) (string, int) {
		return s.Capacities[i].Name, s.Capacities[i].Line
	})

	if t.Scaling != nil {
		s.Scaling = p.scaling(t.Scaling, s)
	}
	return s
}

func (p *parser) method(m *tomlMethod) Method {
	t := table{p: p, where: "method", path: []string{"method"}}
	if m == nil {
		m = &tomlMethod{}
	}
	var out Method
	if !m.Runtime.set {
		t.missing("runtime")
	} else {
		out.Runtime, _ = t.duration("runtime", m.Runtime, 0, false)
	}
	out.RampTime, _ = t.duration("ramp_time", m.RampTime, 0, true)
	out.IOEngine, _ = t.str("ioengine", m.IOEngine, DefaultIOEngine)
	if out.IOEngine == "" && m.IOEngine.set {
		t.errorf("ioengine", "ioengine must not be empty")
	}
	out.Direct, _ = t.boolean("direct", m.Direct, true)
	out.Tolerance, _ = t.tolerance("tolerance", m.Tolerance, 0)
	return out
}

func (p *parser) precondition(c *tomlPrecondition) Precondition {
	t := table{p: p, where: "precondition", path: []string{"precondition"}}
	if c == nil {
		c = &tomlPrecondition{}
	}
	var out Precondition
	out.Purge, _ = t.oneOf("purge", c.Purge, DefaultPurge, purgeMethods...)
	if n, ok := t.integer("fill_passes", c.FillPasses, DefaultFillPasses, 0, math.MaxInt32); ok {
		out.FillPasses = int(n)
	}
	out.RandomRuntime, _ = t.duration("random_runtime", c.RandomRuntime, DefaultRandomRuntime, false)
	if ss, ok := t.str("steadystate", c.SteadyState, ""); ok && c.SteadyState.set {
		if steadyStateRE.MatchString(ss) {
			out.SteadyState = ss
		} else {
			t.errorf("steadystate", `steadystate %q is not a fio criterion like "iops_slope:0.3%%" (iops, iops_slope, bw or bw_slope, a colon, a number, optionally %%)`, ss)
		}
	}
	switch {
	case c.SteadyState.set:
		out.SteadyStateDuration, _ = t.duration("steadystate_duration", c.SteadyStateDuration, DefaultSteadyStateDuration, false)
	case c.SteadyStateDuration.set:
		t.errorf("steadystate_duration", "steadystate_duration has no effect without steadystate")
	}
	out.SteadyRound, _ = t.duration("steady_round", c.SteadyRound, DefaultSteadyRound, false)
	if n, ok := t.integer("steady_window", c.SteadyWindow, DefaultSteadyWindow, 2, 1000); ok {
		out.SteadyWindow = int(n)
	}
	out.SteadyRange, _ = t.fraction("steady_range", c.SteadyRange, DefaultSteadyRange)
	out.SteadySlope, _ = t.fraction("steady_slope", c.SteadySlope, DefaultSteadySlope)
	out.IdleLimit, _ = t.duration("idle_limit", c.IdleLimit, DefaultIdleLimit, false)
	out.TopUpRuntime, _ = t.duration("topup_runtime", c.TopUpRuntime, DefaultTopUpRuntime, false)
	return out
}

func (p *parser) health(h *tomlHealth) Health {
	t := table{p: p, where: "health", path: []string{"health"}}
	if h == nil {
		h = &tomlHealth{}
	}
	out := DefaultHealth()
	if n, ok := t.integer("percent_used_max", h.PercentUsedMax, DefaultPercentUsedMax, 0, 255); ok {
		out.PercentUsedMax = int(n)
	}
	if h.Firmware.set {
		out.Firmware, _ = t.firmware("firmware", h.Firmware)
	}
	if n, ok := t.integer("media_errors_max_increase", h.MediaErrorsMaxIncrease, 0, 0, math.MaxInt64); ok {
		out.MediaErrorsMaxIncrease = uint64(n)
	}
	if n, ok := t.integer("err_log_entries_max_increase", h.ErrLogEntriesMaxIncrease, 0, 0, math.MaxInt64); ok {
		out.ErrLogEntriesMaxIncrease = uint64(n)
	}
	if n, ok := t.integer("spare_margin", h.SpareMargin, 0, 0, 100); ok {
		out.SpareMargin = int(n)
	}
	if n, ok := t.integer("temperature_margin_c", h.TemperatureMarginC, 0, 0, 150); ok {
		out.TemperatureMarginC = int(n)
	}
	out.ThermalThrottle, _ = t.oneOf("thermal_throttle", h.ThermalThrottle, DefaultThermalThrottle,
		ThrottleInconclusive, ThrottleIgnore)
	return out
}

// firmware returns a list of firmware revisions as id-ctrl reports them
// ("fr": at most 8 characters, trimmed); nil for an empty list.
func (t table) firmware(key string, v value) ([]string, bool) {
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

func (p *parser) workload(i int, w *tomlWorkload) Workload {
	t := table{p: p, where: p.elemWhere("workload", i), path: []string{"workload", index(i)}}
	out := Workload{RWMixRead: -1, Line: t.line("")}
	out.Name, _ = t.requiredStr("name", w.Name)
	rwOK := false
	if !w.RW.set {
		t.missing("rw")
	} else if rw, ok := t.str("rw", w.RW, ""); ok {
		switch {
		case contains(rwPatterns, rw):
			out.RW, rwOK = rw, true
		case strings.Contains(rw, "trim"):
			t.errorf("rw", "rw %q: trim patterns are not supported; use one of %s", rw, strings.Join(rwPatterns, ", "))
		default:
			t.errorf("rw", "rw %q is not one of fio's patterns %s", rw, strings.Join(rwPatterns, ", "))
		}
	}
	if !w.BS.set {
		t.missing("bs")
	} else {
		out.BS, _ = t.blockSize("bs", w.BS)
	}
	if n, ok := t.requiredInt("iodepth", w.IODepth, 1, math.MaxInt32); ok {
		out.IODepth = int(n)
	}
	if n, ok := t.requiredInt("numjobs", w.NumJobs, 1, math.MaxInt32); ok {
		out.NumJobs = int(n)
	}
	if !w.Metric.set {
		t.missing("metric")
	} else if m, ok := t.oneOf("metric", w.Metric, "", string(IOPS), string(MBps), string(LatUS)); ok {
		out.Metric = Metric(m)
	}
	if w.RWMixRead.set {
		if n, ok := t.integer("rwmixread", w.RWMixRead, 0, 0, 100); ok {
			out.RWMixRead = int(n)
		}
		if rwOK && !fiojob.IsMixed(out.RW) {
			t.errorf("rwmixread", "rwmixread is only for mixed patterns (rw, readwrite, randrw), not %q", out.RW)
		}
	}
	if w.Precondition.set {
		if pre, ok := t.str("precondition", w.Precondition, ""); ok {
			out.Precondition = pre
			if pre == "" {
				t.errorf("precondition", "precondition must name a workload; leave it out for the default write twin")
			}
		}
	}
	if w.Runtime.set {
		out.Runtime, _ = t.duration("runtime", w.Runtime, 0, false)
	}
	return out
}

// checkWorkloads checks what relates workloads to each other: unique names
// and subtest names, and precondition references.
func (p *parser) checkWorkloads(ws []Workload) {
	p.checkUnique("workload", len(ws), func(i int) (string, int) { return ws[i].Name, ws[i].Line })
	byName := map[string]int{}
	for i, w := range ws {
		if _, dup := byName[w.Name]; !dup && w.Name != "" {
			byName[w.Name] = i
		}
	}
	for i, w := range ws {
		if w.Precondition == "" {
			continue
		}
		t := table{p: p, where: p.elemWhere("workload", i), path: []string{"workload", index(i)}}
		if w.RW != "" && w.IsWriteOnly() {
			t.errorf("precondition", "precondition is only for read and mixed workloads; a write-only workload preconditions itself")
			continue
		}
		if _, ok := byName[w.Precondition]; !ok {
			t.errorf("precondition", "precondition names unknown workload %q", w.Precondition)
			continue
		}
		// Follow the chain of read/mixed workloads; it must end at a
		// write-only workload or one using the default rule.
		chain := []string{w.Name}
		for j := byName[w.Precondition]; ; {
			x := ws[j]
			chain = append(chain, x.Name)
			if x.Name == w.Name {
				t.errorf("precondition", "precondition loops: %s", strings.Join(quoteAll(chain), " -> "))
				break
			}
			k, ok := byName[x.Precondition]
			if x.IsWriteOnly() || !ok || len(chain) > len(ws) {
				break
			}
			j = k
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

func (p *parser) capacity(i int, c *tomlCapacity, s *Spec) Capacity {
	t := table{p: p, where: p.elemWhere("capacity", i), path: []string{"capacity", index(i)}}
	out := Capacity{Line: t.line("")}
	out.Name, _ = t.requiredStr("name", c.Name)
	if !c.Bytes.set {
		t.missing("bytes")
	} else {
		out.Bytes, _ = t.integer("bytes", c.Bytes, 0, 1, math.MaxInt64)
	}
	switch {
	case c.Spec == nil:
		t.missing("spec")
		return out
	case len(c.Spec) == 0:
		t.errorf("spec", "spec table is empty: list at least one workload's spec value")
		return out
	}
	known := map[string]bool{}
	for _, w := range s.Workloads {
		known[w.Name] = true
	}
	out.Spec = map[string]float64{}
	st := table{p: p, where: t.where, path: append(t.path, "spec")}
	for _, name := range sortedKeys(c.Spec) {
		key := fmt.Sprintf("spec.%q", name)
		if !known[name] {
			st.errorf(name, "%s: unknown workload %q", key, name)
			continue
		}
		v, ok := st.number(key, c.Spec[name], 0)
		if !ok {
			continue
		}
		if !(v > 0) || math.IsInf(v, 0) {
			st.errorf(name, "%s must be > 0 and finite, got %v", key, v)
			continue
		}
		out.Spec[name] = v
	}
	out.QoS = p.qos(t, c.QoS, c.Spec, s)
	return out
}

func (p *parser) scaling(sc *tomlScaling, s *Spec) Scaling {
	t := table{p: p, where: "scaling", path: []string{"scaling"}}
	var out Scaling
	if name, ok := t.requiredStr("capacity", sc.Capacity); ok {
		out.Capacity = name
		if _, found := s.Capacity(name); !found {
			t.errorf("capacity", "capacity %q is not a capacity of this spec (%s)", name, strings.Join(quoteAll(capacityNames(s)), ", "))
		}
	}
	if !sc.Drives.set {
		t.missing("drives")
	} else {
		out.Drives, _ = t.driveCounts("drives", sc.Drives)
	}
	out.Baseline, _ = t.oneOf("baseline", sc.Baseline, DefaultScalingBaseline, "spec", "single")
	out.Tolerance, _ = t.tolerance("tolerance", sc.Tolerance, DefaultScalingTolerance)
	for _, name := range sortedKeys(sc.Override) {
		o := sc.Override[name]
		ot := table{p: p, where: fmt.Sprintf("scaling override %q", name), path: []string{"scaling", "override", name}}
		if _, found := s.Workload(name); !found {
			ot.errorf("", "override names unknown workload %q", name)
			continue
		}
		var ov Override
		if n, ok := ot.integer("iodepth", o.IODepth, 0, 1, math.MaxInt32); ok {
			ov.IODepth = int(n)
		}
		if n, ok := ot.integer("numjobs", o.NumJobs, 0, 1, math.MaxInt32); ok {
			ov.NumJobs = int(n)
		}
		if !o.IODepth.set && !o.NumJobs.set {
			ot.errorf("", "override sets neither iodepth nor numjobs")
			continue
		}
		if out.Override == nil {
			out.Override = map[string]Override{}
		}
		out.Override[name] = ov
	}
	return out
}

// driveCounts returns a non-empty, strictly ascending list of drive counts.
func (t table) driveCounts(key string, v value) ([]int, bool) {
	arr, ok := v.v.([]any)
	if !ok {
		t.errorf(key, "%s must be an array of drive counts like [1, 2, 4], got %s", key, typeName(v.v))
		return nil, false
	}
	if len(arr) == 0 {
		t.errorf(key, "%s must list at least one drive count", key)
		return nil, false
	}
	out := make([]int, 0, len(arr))
	for _, e := range arr {
		n, isInt := e.(int64)
		switch {
		case !isInt:
			t.errorf(key, "%s must hold integers, got %s", key, typeName(e))
			return nil, false
		case n < 1 || n > math.MaxInt32:
			t.errorf(key, "%s: drive count %d must be >= 1", key, n)
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
func (t table) blockSize(key string, v value) (int64, bool) {
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

// isMixed is fiojob.IsMixed: whether rw reads and writes in one job.
func isMixed(rw string) bool { return fiojob.IsMixed(rw) }

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
