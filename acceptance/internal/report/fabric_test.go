package report

import (
	"strings"
	"testing"
)

// The drives table says how each NVMe drive is reached: a fabric drive's
// transport, target and subsystem, not PCIe-attached; a multipath head's
// paths.
func TestSummaryDrivesTransportAndPaths(t *testing.T) {
	r := &Run{Spec: "x", Mode: "live", Drives: []Drive{
		{Path: "/dev/nvme5n1", Model: "Linux", NUMANode: -1, Transport: "tcp", Address: "traddr=127.0.0.1,trsvcid=4420",
			Subsystem: "nqn.2014-08.org.drivequal:tcp", Paths: []string{"nvme5c5n1 (nvme5, tcp traddr=127.0.0.1,trsvcid=4420, live)"}},
		{Path: "/dev/nvme0n1", Model: "QEMU NVMe Ctrl", NUMANode: -1, Transport: "pcie", Address: "0000:00:07.0", PCI: "0000:00:07.0", Link: "8.0 GT/s x4 (of 8.0 GT/s x4)",
			Subsystem: "nqn.2019-08.org.qemu:drivequal-mp", Paths: []string{"nvme0c0n1 (nvme0, pcie 0000:00:07.0, live)", "nvme0c1n1 (nvme1, pcie 0000:00:08.0, live)"}},
	}}
	s := string(r.Summary())
	for _, want := range []string{
		"- /dev/nvme5n1: NVMe over tcp, target traddr=127.0.0.1,trsvcid=4420, subsystem nqn.2014-08.org.drivequal:tcp: not PCIe-attached (tcp); the network carries its figures as well as the drive\n",
		"- /dev/nvme5n1: native multipath, subsystem nqn.2014-08.org.drivequal:tcp, 1 path: nvme5c5n1 (nvme5, tcp traddr=127.0.0.1,trsvcid=4420, live)\n",
		"- /dev/nvme0n1: PCIe 0000:00:07.0, link 8.0 GT/s x4 (of 8.0 GT/s x4)\n",
		"- /dev/nvme0n1: native multipath, subsystem nqn.2019-08.org.qemu:drivequal-mp, 2 paths: nvme0c0n1 (nvme0, pcie 0000:00:07.0, live); nvme0c1n1 (nvme1, pcie 0000:00:08.0, live)\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
