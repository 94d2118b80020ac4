package cycle

import (
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
)

// A counter read before the cut that does not read after it is named:
// its evidence is missing, not a counter the drive keeps none of.
func TestPairNamesDroppedCounter(t *testing.T) {
	before := []powerloss.Counter{{Name: "unsafe shutdowns", Before: 4}, {Name: "PLP start count", Before: 9}}
	got, lost := pair(before, []powerloss.Counter{{Name: "unsafe shutdowns", Before: 5}}, "")
	if len(got) != 1 || got[0] != (powerloss.Counter{Name: "unsafe shutdowns", Before: 4, After: 5}) {
		t.Errorf("pair = %+v", got)
	}
	if lost != "PLP start count read before the cut but not after" {
		t.Errorf("lost = %q", lost)
	}
	if v := powerloss.Judge(powerloss.Cycle{Acknowledged: 3, Counters: got, CountersLost: lost}); v.Verdict != powerloss.Inconclusive {
		t.Errorf("Judge = %s: %s", v.Verdict, v.Message)
	}
}
