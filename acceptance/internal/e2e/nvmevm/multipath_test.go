package nvmevm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Serials of the multipath-on guest's controllers (see machineMultipath).
const (
	serialMP    = "DQMPATH01" // two controllers of one NVM subsystem
	serialPullA = "DQPULL001" // stays in
	serialPullB = "DQPULL002" // pulled mid-step
	serialTCP   = "DQTCP0001" // exported over NVMe/TCP by nvmet
	mpNQN       = "drivequal-mp"
	// pulledID is the QEMU id of the controller device_del removes.
	pulledID = "pullb"
)

func init() {
	configs = append(configs, config{
		name:     "multipath-on",
		machine:  machineMultipath,
		optional: []string{"nvmet", "nvmet_tcp", "nvme_tcp"},
		tests:    []string{"TestGuestPulledMidStep"},
	})
}

// machineMultipath is the guest with native multipath on
// (nvme_core.multipath=Y, most distributions' default):
//
//	nvme0 (DQMPATH01) ┐ namespace 1, shared: one head, nvme0n1, over
//	nvme1 (DQMPATH01) ┘ paths nvme0c0n1 and nvme0c1n1; namespace 2,
//	                    private to nvme1: nvme0n2 over nvme0c1n2
//	nvme2 (DQPULL001)   nvme2n1
//	nvme3 (DQPULL002)   nvme3n1, removed mid-step by device_del
//	nvme4 (DQTCP0001)   nvme4n1, exported by nvmet over TCP on 127.0.0.1
//
// The names are what Linux usually gives; the tests find each by serial.
func machineMultipath(images string) qemu.Machine {
	img := func(name string) string { return filepath.Join(images, name+".raw") }
	return qemu.Machine{
		Memory:     1024,
		CPUs:       2,
		Cmdline:    []string{"nvme_core.multipath=Y"},
		Udev:       true,
		Subsystems: []qemu.Subsystem{{ID: "mp", NQN: mpNQN}},
		Controllers: []qemu.Controller{
			{ID: "mpa", Serial: serialMP, Subsys: "mp"},
			{ID: "mpb", Serial: serialMP, Subsys: "mp"},
			{ID: "pulla", Serial: serialPullA},
			{ID: pulledID, Serial: serialPullB},
			{ID: "tcp", Serial: serialTCP},
		},
		Namespaces: []qemu.Namespace{
			{Controller: "mpa", NSID: 1, Image: img("mp-1"), EUI64: 0x0011223344560001},
			{Controller: "mpb", NSID: 2, Image: img("mp-2"), Private: true, EUI64: 0x0011223344560002},
			{Controller: "pulla", NSID: 1, Image: img("pull-a"), EUI64: 0x0011223344560003},
			{Controller: pulledID, NSID: 1, Image: img("pull-b"), EUI64: 0x0011223344560004},
			{Controller: "tcp", NSID: 1, Image: img("tcp-1"), EUI64: 0x0011223344560005},
		},
	}
}

// needModules skips t, naming the module, unless every one of names was
// loaded at boot (see config.optional).
func needModules(t *testing.T, names ...string) {
	t.Helper()
	for _, m := range strings.Split(os.Getenv(envMissing), ";") {
		name, why, _ := strings.Cut(m, "=")
		for _, n := range names {
			if n == name {
				testenv.Skipf(t, "needs kernel module %s, which the guest's kernel lacks: %s", n, why)
			}
		}
	}
	for _, n := range names {
		if _, err := os.Stat("/sys/module/" + n); err != nil {
			testenv.Skipf(t, "needs kernel module %s, which did not load in the guest (see the console's insmod lines)", n)
		}
	}
}
