// Package e2e runs the acceptance suite's real entry point (its compiled
// test binary, with the flags an operator gives) against real fio on real
// loop devices.
//
// It needs root, fio and losetup; without them its tests skip, and with
// DRIVEQUAL_REQUIRE_LOOP=1 (as .ci/run sets) they fail instead.
package e2e
