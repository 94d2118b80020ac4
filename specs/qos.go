package specs

import (
	"fmt"
	"math"
	"time"
)

// qosWhere names workload's limits in the capacity named by capWhere.
func qosWhere(capWhere, workload string) string {
	return fmt.Sprintf("%s: qos.%q", capWhere, workload)
}

// latencyKey is one key of a [capacity.qos."NAME"] table.
type latencyKey struct {
	v          value
	dir        string
	percentile float64
	key        string
}

// keys returns q's keys, read before write and lowest percentile first:
// the order in which limits must not fall.
func (q *tomlQoS) keys() []latencyKey {
	return []latencyKey{
		{q.ReadP50, "read", 50, "read_p50_us"},
		{q.ReadP99, "read", 99, "read_p99_us"},
		{q.ReadP999, "read", 99.9, "read_p99_9_us"},
		{q.ReadP9999, "read", 99.99, "read_p99_99_us"},
		{q.ReadP99999, "read", 99.999, "read_p99_999_us"},
		{q.ReadMax, "read", 100, "read_max_us"},
		{q.WriteP50, "write", 50, "write_p50_us"},
		{q.WriteP99, "write", 99, "write_p99_us"},
		{q.WriteP999, "write", 99.9, "write_p99_9_us"},
		{q.WriteP9999, "write", 99.99, "write_p99_99_us"},
		{q.WriteP99999, "write", 99.999, "write_p99_999_us"},
		{q.WriteMax, "write", 100, "write_max_us"},
	}
}

// qos converts a capacity's [capacity.qos] tables. listed is the
// capacity's [capacity.spec] as written: a workload must be measured at
// the capacity to have limits there.
func (p *parser) qos(ct table, q map[string]tomlQoS, listed map[string]value, s *Spec) map[string][]LatencyLimit {
	var out map[string][]LatencyLimit
	for _, name := range sortedKeys(q) {
		t := table{p: p, where: qosWhere(ct.where, name), path: append(append([]string(nil), ct.path...), "qos", name)}
		w, found := s.Workload(name)
		if !found {
			t.errorf("", "unknown workload %q", name)
			continue
		}
		if _, ok := listed[name]; !ok {
			t.errorf("", "workload %q has no spec value at this capacity, so it is not measured here; add it to [capacity.spec] or remove these limits", name)
			continue
		}
		tq := q[name]
		keys := tq.keys()
		if !anySet(keys) {
			t.errorf("", "no limits: set at least one key like read_p99_us or write_p99_99_us")
			continue
		}
		var limits []LatencyLimit
		var prev *LatencyLimit
		for _, k := range keys {
			if !k.v.set {
				continue
			}
			if why := noDirection(w, k.dir); why != "" {
				t.errorf(k.key, "%s: %s", k.key, why)
				continue
			}
			f, ok := t.number(k.key, k.v, 0)
			if !ok {
				continue
			}
			d := time.Duration(math.Round(f * 1e3))
			if !(f > 0) || !(f*1e3 < math.MaxInt64) || d <= 0 {
				t.errorf(k.key, "%s must be a latency in microseconds > 0, got %v", k.key, f)
				continue
			}
			l := LatencyLimit{Dir: k.dir, Percentile: k.percentile, Limit: d, Key: k.key}
			if prev != nil && prev.Dir == l.Dir && l.Limit < prev.Limit {
				t.errorf(k.key, "%s = %v µs is below %s = %v µs: a higher percentile's limit cannot be lower",
					k.key, f, prev.Key, float64(prev.Limit)/1e3)
				continue
			}
			limits = append(limits, l)
			prev = &limits[len(limits)-1]
		}
		if len(limits) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]LatencyLimit{}
		}
		out[name] = limits
	}
	return out
}

func anySet(keys []latencyKey) bool {
	for _, k := range keys {
		if k.v.set {
			return true
		}
	}
	return false
}

// noDirection says why w can have no latency limits for dir ("read" or
// "write"); "" when it can.
func noDirection(w Workload, dir string) string {
	if w.RW == "" || dir == "read" && w.Reads() || dir == "write" && w.Writes() {
		return "" // an invalid rw is reported on its own
	}
	other := map[string]string{"read": "write", "write": "read"}[dir]
	if isMixed(w.RW) {
		return fmt.Sprintf("workload %q does not %s (rwmixread = %d); only %s_ limits apply", w.Name, dir, w.RWMixRead, other)
	}
	return fmt.Sprintf("workload %q does not %s (rw %q); only %s_ limits apply", w.Name, dir, w.RW, other)
}
