package testenv

import (
	"os"
	"testing"
)

// envNoRaceRun is set by make test on its go test of NORACE_TESTS, the
// run without -race.
const envNoRaceRun = "DRIVEQUAL_NORACE_RUN"

// SkipUnderRace skips t in a test binary built with -race. It is for a
// test that runs one goroutine over data at a real shape (24 drives'
// logs of 30 minutes, thousands of reads compared byte by byte), where
// the race detector has nothing to find and costs several times the
// test's own CPU. make test runs each such test without -race
// (NORACE_TESTS in the Makefile, which a layout test keeps equal to the
// tests that call this); built with -race there all the same (GOFLAGS),
// the test fails rather than skip, so that it is never left unrun.
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if !race {
		return
	}
	if os.Getenv(envNoRaceRun) == "1" {
		t.Fatalf("%s=1, the run of NORACE_TESTS without -race, but this binary was built with -race (GOFLAGS?): it would skip, and run nowhere", envNoRaceRun)
	}
	t.Skip("one goroutine at a real shape: make test runs it without -race (NORACE_TESTS)")
}
