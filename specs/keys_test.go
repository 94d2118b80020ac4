package specs

import (
	"slices"
	"testing"
)

// TestKeys checks Keys against keys the parser is known to accept and
// refuse, so that the documentation check built on it checks real keys.
func TestKeys(t *testing.T) {
	keys := Keys()
	for _, k := range []string{"model", "method.runtime", "precondition.fill_passes", "workload.name",
		"capacity.spec.*", "capacity.qos.*.read_p99_us", "scaling.override.*.iodepth", "lot.coverage"} {
		if !slices.Contains(keys, k) {
			t.Errorf("Keys() lacks %q: %q", k, keys)
		}
	}
	for _, k := range []string{"method", "capacity.qos", "scaling.override.*"} {
		if slices.Contains(keys, k) {
			t.Errorf("Keys() lists the table %q, not only its keys", k)
		}
	}
}
