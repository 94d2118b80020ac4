package testenv

import "testing"

// SkipUnderRace skips t in a test binary built with -race. It is for a
// test that runs one goroutine over data at a real shape (24 drives'
// logs of 30 minutes, thousands of reads compared byte by byte), where
// the race detector has nothing to find and costs several times the
// test's own CPU. make test runs each such test without -race
// (NORACE_TESTS in the Makefile, which a layout test keeps equal to the
// tests that call this).
func SkipUnderRace(t testing.TB) {
	t.Helper()
	if Race {
		t.Skip("one goroutine at a real shape: make test runs it without -race (NORACE_TESTS)")
	}
}
