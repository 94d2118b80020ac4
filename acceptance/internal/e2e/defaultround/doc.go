// Package defaultround runs a live random preconditioning on a loop device
// at the built-in method's own steady-state round, 1 minute, with the loop
// device's writes throttled (testenv.WriteThrottle) so that its rounds are
// flat, as a drive's are in steady state, whatever runs beside it.
//
// It runs for the 5 whole rounds the PTS window needs: about 5½ minutes,
// so it is a package of its own, which go test runs beside the others. The
// suite runs from this package's directory, so that package e2e, which
// looks for fio left running from the acceptance directory, never counts
// this test's fio.
package defaultround
