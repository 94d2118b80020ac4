// Package longstep runs the suite on a loop device with one 3-minute
// measurement.
//
// It is apart from package e2e so that go test runs the two side by side:
// the step's progress lines show on the terminal, and a replay of the
// recording gives the same verdicts. The suite runs from this package's
// directory, so that package e2e, which looks for fio left running from
// the acceptance directory, never counts this test's fio.
package longstep
