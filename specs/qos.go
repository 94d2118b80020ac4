package specs

import (
	"fmt"
	"math"
	"time"

	"github.com/drivequal/drivequal/fiojob"
)

// qosWhere names workload's limits in the capacity named by capWhere.
func qosWhere(capWhere, workload string) string {
	return fmt.Sprintf("%s: qos.%q", capWhere, workload)
}

// latencyKeys are the keys of a [capacity.qos."NAME"] table, read before
// write and lowest percentile first: the order in which limits must not
// fall.
var latencyKeys = []LatencyLimit{
	{Dir: "read", Percentile: 50, Key: "read_p50_us"},
	{Dir: "read", Percentile: 99, Key: "read_p99_us"},
	{Dir: "read", Percentile: 99.9, Key: "read_p99_9_us"},
	{Dir: "read", Percentile: 99.99, Key: "read_p99_99_us"},
	{Dir: "read", Percentile: 99.999, Key: "read_p99_999_us"},
	{Dir: "read", Percentile: 100, Key: "read_max_us"},
	{Dir: "write", Percentile: 50, Key: "write_p50_us"},
	{Dir: "write", Percentile: 99, Key: "write_p99_us"},
	{Dir: "write", Percentile: 99.9, Key: "write_p99_9_us"},
	{Dir: "write", Percentile: 99.99, Key: "write_p99_99_us"},
	{Dir: "write", Percentile: 99.999, Key: "write_p99_999_us"},
	{Dir: "write", Percentile: 100, Key: "write_max_us"},
}

// latencySchema is the shape of a [capacity.qos."NAME"] table.
var latencySchema = func() *schema {
	s := newSchema("limits must be a table ([capacity.qos.%q])")
	for _, k := range latencyKeys {
		s.add(k.Key, nil)
	}
	return s
}()

// qos converts v, the [capacity.qos] tables of capacity ct. listed is the
// capacity's [capacity.spec] as written: a workload must be measured at
// the capacity to have limits there.
func qos(ct table, v value, listed map[string]any) map[string][]LatencyLimit {
	var out map[string][]LatencyLimit
	q, _ := v.v.(map[string]any)
	for _, name := range sortedKeys(q) {
		t := ct.named(v, name, qosWhere(ct.where, name))
		w, found := t.p.spec.Workload(name)
		if !found {
			t.errorf("", "%s", unknownWorkload(t.p.spec.Workloads, name))
			continue
		}
		if _, ok := listed[name]; !ok {
			t.errorf("", "workload %q has no spec value at this capacity, so it is not measured here; add it to [capacity.spec] or remove these limits", name)
			continue
		}
		var limits []LatencyLimit
		var prev *LatencyLimit
		set := false
		for _, k := range latencyKeys {
			v := t.get(k.Key)
			if !v.set {
				continue
			}
			set = true
			if why := noDirection(w, k.Dir); why != "" {
				t.errorf(k.Key, "%s: %s", k.Key, why)
				continue
			}
			f, ok := t.number(v, 0)
			if !ok {
				continue
			}
			d := time.Duration(math.Round(f * 1e3))
			if !(f > 0) || !(f*1e3 < math.MaxInt64) || d <= 0 {
				t.errorf(k.Key, "%s must be a latency in microseconds > 0, got %v", k.Key, f)
				continue
			}
			l := k
			l.Limit = d
			if prev != nil && prev.Dir == l.Dir && l.Limit < prev.Limit {
				t.errorf(k.Key, "%s = %v µs is below %s = %v µs: a higher percentile's limit cannot be lower",
					k.Key, f, prev.Key, float64(prev.Limit)/1e3)
				continue
			}
			limits = append(limits, l)
			prev = &limits[len(limits)-1]
		}
		if !set {
			t.errorf("", "no limits: set at least one key like read_p99_us or write_p99_99_us")
			continue
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

// noDirection says why w can have no latency limits for dir ("read" or
// "write"); "" when it can.
func noDirection(w Workload, dir string) string {
	if w.RW == "" || dir == "read" && w.Reads() || dir == "write" && w.WritesData() {
		return "" // an invalid rw is reported on its own
	}
	other := map[string]string{"read": "write", "write": "read"}[dir]
	if fiojob.IsMixed(w.RW) {
		return fmt.Sprintf("workload %q does not %s (rwmixread = %d); only %s_ limits apply", w.Name, dir, w.RWMixRead, other)
	}
	return fmt.Sprintf("workload %q does not %s (rw %q); only %s_ limits apply", w.Name, dir, w.RW, other)
}
