// Package nvmevm runs the acceptance suite on real NVMe controllers, QEMU's
// emulated ones under the guest kernel's own nvme driver.
//
// The suite runs with the host's nvme-cli and fio (see package qemu).
// TestQEMU boots one guest for each configuration (configs: its machine,
// kernel command line, modules, and the TestGuest* tests it runs) and runs
// that configuration's tests inside it, in one boot; each of those runs the
// suite's compiled test binary with the flags an operator gives. A guest
// test changes its machine mid-run (device_del, qom-set) through QEMU's
// QMP monitor, which the host reaches for it (hostQMP). It needs
// qemu-system-x86, linux-image-amd64, busybox-static, fio and nvme-cli (and
// nbdkit, whose NBD exports back the controllers the powerloss boot cuts);
// without them, or with a kernel whose modules the guest cannot load,
// TestQEMU (or the one configuration that needs the module) skips, and
// with DRIVEQUAL_REQUIRE_LOOP=1 (as .ci/run sets) it fails instead. The
// guest runs under KVM, or under TCG when KVM cannot start it (see
// qemu.Machine.Run).
package nvmevm
