// Package nvmevm runs the acceptance suite on real NVMe controllers, QEMU's
// emulated ones under the guest kernel's own nvme driver.
//
// The suite runs with the host's nvme-cli and fio (see package qemu).
// TestQEMU boots one guest and runs this package's TestGuest* tests inside
// it; each of those runs the suite's compiled test binary with the flags
// an operator gives. It needs qemu-system-x86, linux-image-amd64,
// busybox-static, fio and nvme-cli; without them, or with a kernel whose
// modules the guest cannot load, TestQEMU skips, and with
// DRIVEQUAL_REQUIRE_LOOP=1 (as .ci/run sets) it fails instead. The guest
// runs under KVM, or under TCG when KVM cannot start it (see
// qemu.Machine.Run).
package nvmevm
