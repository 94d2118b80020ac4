package qemu

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
)

// A drive's failures, made on demand: media errors at chosen sectors
// (QEMU's blkdebug driver under a namespace), a SMART critical warning
// raised while the guest runs (QMP), and the controllers in another PCI
// order for a second boot of the same namespaces, as after a reboot that
// enumerates them otherwise.

// MediaError is one rule of QEMU's blkdebug driver ([inject-error]): every
// read (the raw format's read_aio event) that covers Sector, in 512-byte
// sectors of the image, fails with Errno (5, EIO, when 0). QEMU's NVMe
// controller completes such a read with Unrecovered Read Error (status
// 0x281), as a drive whose media cannot return the block does.
type MediaError struct {
	Sector int64
	Errno  int
	// UntilFlush ends the error at the namespace's first Flush command
	// (nvme flush): the block reads again afterwards, as a marginal block
	// that a second try reads. The rule then holds in blkdebug's state 1
	// only, which the first flush_to_disk event leaves for state 2.
	UntilFlush bool
}

// WriteBlkdebug writes the blkdebug rules file path (Namespace.Blkdebug)
// that fails every read of each rule's sector, again at every try
// (once = "off"): the kernel's retries see it too. Writes, write-zeroes
// (Format NVM) and discards of the sector succeed (iotype = "read":
// without it an active rule fails every kind of request).
func WriteBlkdebug(path string, rules []MediaError) error {
	if len(rules) == 0 {
		return fmt.Errorf("blkdebug rules %s: no media error given", path)
	}
	var b strings.Builder
	flush := false
	for _, r := range rules {
		errno := r.Errno
		if errno == 0 {
			errno = 5
		}
		if r.Sector < 0 {
			return fmt.Errorf("blkdebug rules %s: sector %d is negative", path, r.Sector)
		}
		fmt.Fprintf(&b, "[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"%d\"\nsector = \"%d\"\nonce = \"off\"\n", errno, r.Sector)
		if r.UntilFlush {
			b.WriteString("state = \"1\"\n")
			flush = true
		}
		b.WriteString("\n")
	}
	if flush {
		// blkdebug keeps the inject-error rules a read_aio event activated
		// until another inject-error rule is activated: state 2 activates
		// one at a sector past any image (2^50), which never matches.
		b.WriteString("[set-state]\nevent = \"flush_to_disk\"\nstate = \"1\"\nnew_state = \"2\"\n\n")
		b.WriteString("[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"5\"\nsector = \"1125899906842624\"\nonce = \"off\"\nstate = \"2\"\n\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Critical warning bits of the SMART / Health log QEMU 7.2's controller
// lets a test raise (NVMe Base 2.0, Figure 207; QEMU's
// smart_critical_warning property refuses any other).
const (
	WarnSpare       = 0x01 // available spare below its threshold
	WarnTemperature = 0x02 // temperature outside its thresholds
	WarnReliability = 0x04 // NVM subsystem reliability degraded
	WarnReadOnly    = 0x08 // media placed in read-only mode
	WarnVolatile    = 0x10 // volatile memory backup failed
)

// SetCriticalWarning sets the critical warning byte controller id (a
// Controller.ID) reports in its SMART / Health log from now on, through
// the QMP socket of the running guest (Machine.QMP). QEMU raises a SMART
// asynchronous event for each new bit only when the host enabled it in
// the Asynchronous Event Configuration feature; Linux's nvme driver
// enables notices, not SMART events, so the guest learns of the warning
// when it reads the log, as a host polling a drive does.
func SetCriticalWarning(ctx context.Context, socket, id string, warning uint8) error {
	_, err := QMP(ctx, socket, "qom-set", map[string]any{
		"path": "/machine/peripheral/" + id, "property": "smart_critical_warning", "value": warning})
	if err != nil {
		return fmt.Errorf("controller %s: setting critical warning 0x%02x: %w", id, warning, err)
	}
	return nil
}

// Swapped returns m with controllers a and b (Controller.IDs) in each
// other's place, and so on each other's PCI slot: booted with the same
// namespace images, the guest's kernel numbers them the other way round
// (nvme0 and nvme1 exchanged), while each keeps its serial and its
// namespaces their EUI-64 and UUID, so /dev/disk/by-id names the same
// drives. The Machine's slices are copied, not shared.
func (m Machine) Swapped(a, b string) (Machine, error) {
	cs := slices.Clone(m.Controllers)
	i := slices.IndexFunc(cs, func(c Controller) bool { return c.ID == a })
	j := slices.IndexFunc(cs, func(c Controller) bool { return c.ID == b })
	if i < 0 || j < 0 || i == j {
		return Machine{}, fmt.Errorf("swapping controllers %q and %q: want two controllers of the machine", a, b)
	}
	cs[i], cs[j] = cs[j], cs[i]
	m.Controllers = cs
	m.Namespaces = slices.Clone(m.Namespaces)
	return m, nil
}
