package nvmevm

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// -run naming a reboot as if it were a configuration would select no
// subtest and pass: TestQEMU fails instead, saying what to run.
func TestRebootRun(t *testing.T) {
	cs := []config{
		{name: "one", tests: []string{"TestGuestA"}, reboot: &config{name: "one-again", tests: []string{"TestGuestC", "TestGuestD"}}},
		{name: "two", tests: []string{"TestGuestE"}},
	}
	for run, want := range map[string]string{
		"":                         "",
		"TestQEMU":                 "",
		"TestQEMU/one":             "",
		"TestQEMU/one/TestGuestC":  "",
		"TestQEMU/two":             "",
		"TestQEMU/(":               "",
		"TestQEMU/one-again":       "one-again is a later boot of one, in its subtest: -run 'TestQEMU/one/TestGuestC|TestGuestD' runs it after the boot before it",
		"TestQEMU/again/TestGuest": "one-again is a later boot of one, in its subtest: -run 'TestQEMU/one/TestGuestC|TestGuestD' runs it after the boot before it",
	} {
		if got := rebootRun(run, cs); got != want {
			t.Errorf("rebootRun(%q) = %q, want %q", run, got, want)
		}
	}
	if got := rebootRun("TestQEMU/interrupted-rebooted", configs); !strings.Contains(got, "-run 'TestQEMU/interrupted/TestGuestSwappedRebootResumed'") {
		t.Errorf("rebootRun of the interrupted configuration's reboot = %q", got)
	}
}

// A boot before the last one -run selects runs whole, even when -run
// selects some of its own tests: the reboot needs the state that one of
// the others leaves.
func TestBootTests(t *testing.T) {
	boots := []config{
		{name: "one", tests: []string{"TestGuestA", "TestGuestB", "TestGuestC"}},
		{name: "one-again", tests: []string{"TestGuestCResumed"}},
	}
	whole := []string{"TestGuestA", "TestGuestB", "TestGuestC"}
	for only, want := range map[string][][]string{
		"":                              {whole, {"TestGuestCResumed"}},
		"TestGuestB":                    {{"TestGuestB"}},
		"TestGuestC$":                   {{"TestGuestC"}},
		"TestGuestCResumed":             {whole, {"TestGuestCResumed"}},
		"TestGuestC":                    {whole, {"TestGuestCResumed"}},
		"TestGuest(A|CResumed)":         {whole, {"TestGuestCResumed"}},
		"TestGuestNone":                 nil,
		"TestGuestA|TestGuestCResumed$": {whole, {"TestGuestCResumed"}},
	} {
		if diff := cmp.Diff(want, bootTests(t, boots, only)); diff != "" {
			t.Errorf("-run .../%s (-want +got):\n%s", only, diff)
		}
	}
}

// TestLongestFirst: every configuration has its time alone (a new one is
// measured before it is added), and the guests start longest first.
func TestLongestFirst(t *testing.T) {
	if inGuest() {
		t.Skip("the guest's own run")
	}
	for _, c := range configs {
		if alone[c.name] == 0 {
			t.Errorf("configuration %s has no time alone in alone: boot it alone (-run 'TestQEMU/%s') and add it", c.name, c.name)
		}
	}
	got := longestFirst([]config{{name: "multipath-off"}, {name: "new"}, {name: "powerloss"}, {name: "interrupted"}})
	var names []string
	for _, c := range got {
		names = append(names, c.name)
	}
	if want := "powerloss interrupted multipath-off new"; strings.Join(names, " ") != want {
		t.Errorf("longestFirst = %q, want %q", strings.Join(names, " "), want)
	}
}

// TestRunGuests: the guests start in the order given (longest first), at
// most n at once, and one that fails or skips frees its slot.
func TestRunGuests(t *testing.T) {
	if inGuest() {
		t.Skip("the guest's own run")
	}
	cs := []config{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}, {name: "e"}}
	for _, n := range []int{1, 2} {
		var mu sync.Mutex
		var started []string
		now, most := 0, 0
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			runGuests(t, cs, n, func(t *testing.T, c config) {
				mu.Lock()
				started = append(started, c.name)
				now++
				most = max(most, now)
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				now--
				mu.Unlock()
				if c.name == "b" {
					t.Skip("a guest that skips")
				}
			})
		})
		if len(started) != len(cs) || most > n {
			t.Errorf("%d slots: guests %v started, at most %d at once", n, started, most)
		}
		// One slot: each starts once the one before has ended.
		if want := []string{"a", "b", "c", "d", "e"}; n == 1 && !slices.Equal(started, want) {
			t.Errorf("one slot: guests started in the order %v, want %v", started, want)
		}
	}
}
