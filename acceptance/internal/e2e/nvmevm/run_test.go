package nvmevm

import (
	"flag"
	"strconv"
	"strings"
	"testing"

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
		"TestQEMU/one-again":       "one-again is the second boot of one, in its subtest: -run 'TestQEMU/one/TestGuestC|TestGuestD' runs it after the boot before it",
		"TestQEMU/again/TestGuest": "one-again is the second boot of one, in its subtest: -run 'TestQEMU/one/TestGuestC|TestGuestD' runs it after the boot before it",
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

// Every configuration boots at once unless DRIVEQUAL_QEMU_GUESTS says
// how many, and go test gives their subtests as many parallel slots
// (go test's default, GOMAXPROCS, is 2 on 2 CPUs).
func TestGuestsAtOnce(t *testing.T) {
	t.Setenv("DRIVEQUAL_QEMU_GUESTS", "")
	if got := guests(3); got != 3 {
		t.Errorf("guests(3) = %d, want 3: every configuration at once", got)
	}
	t.Setenv("DRIVEQUAL_QEMU_GUESTS", "1")
	if got := guests(3); got != 1 {
		t.Errorf("guests(3) with DRIVEQUAL_QEMU_GUESTS=1 = %d, want 1", got)
	}
	for _, c := range []struct{ procs, guests, want int }{{2, 3, 3}, {2, 5, 5}, {8, 3, 8}, {1, 1, 1}} {
		if got := testParallel(c.procs, c.guests); got != c.want {
			t.Errorf("testParallel(%d, %d) = %d, want %d", c.procs, c.guests, got, c.want)
		}
	}
	if f := flag.Lookup("test.parallel"); f == nil || f.Value.String() == "" {
		t.Fatal("no -test.parallel flag")
	} else if n, _ := strconv.Atoi(f.Value.String()); n < len(configs) && !flagGiven("test.parallel") {
		t.Errorf("-test.parallel is %d, fewer than the %d configurations that boot at once", n, len(configs))
	}
}
