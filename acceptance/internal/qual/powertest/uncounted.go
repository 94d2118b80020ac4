package powertest

import (
	"fmt"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// qemuVendor is the PCI vendor ID QEMU's emulated NVMe controller
// reports (1b36, Red Hat), and qemuModel its model number.
const (
	qemuVendor = 0x1b36
	qemuModel  = "QEMU NVMe Ctrl"
)

// uncounted says why c's SMART log is no evidence a cut happened, for a
// controller known to keep no count of power losses ("" for any other):
// QEMU's emulated controller fills only the data units, commands,
// temperature, critical warning and power-on hours of its SMART log
// (hw/nvme/ctrl.c, nvme_smart_info), so its unsafe shutdowns read 0
// after every cut, and holding it to them would make every cycle
// inconclusive. A drive is taken for it only when its controller's PCI
// vendor in sysfs (vendor, read from sysfs at the controller's device)
// is 1b36 too, and its SMART log counts no unsafe shutdown (unsafe: the
// count, -1 when it does not read): a drive that reports QEMU's identity
// and counts them is held to its count.
func uncounted(c nvme.Controller, vendor string, unsafe int64) string {
	if c.VID != qemuVendor || c.Model != qemuModel || strings.TrimSpace(vendor) != fmt.Sprintf("0x%04x", qemuVendor) || unsafe > 0 {
		return ""
	}
	return fmt.Sprintf("%s (PCI vendor %04x, in sysfs too) is QEMU's emulated controller, which keeps no count of power losses (its SMART log's unsafe shutdowns stay 0)", c.Model, c.VID)
}
