package qemu_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// TestGuestFaults boots a small guest twice with two emulated NVMe
// controllers, the second time in swapped PCI order, and checks each
// fault primitive alone under the guest kernel's nvme driver: a direct
// read of the blkdebug sector fails with an I/O error, again when read
// again, while the sectors around it read and it can be written, and reads
// after an nvme flush
// (MediaError.UntilFlush); nvme-cli's smart-log reports the critical warning the
// host set over QMP while the guest ran (and 0 before); and after the swap
// nvme0 is the controller that was nvme1, the by-id links naming the same
// namespaces.
func TestGuestFaults(t *testing.T) {
	kernel, busybox := testenv.MustHaveQEMU(t)
	t.Parallel()
	initrd := testenv.Initramfs(t, kernel, busybox)
	work := t.TempDir()
	const sector = 40960 // 20 MiB into the 32 MiB namespace
	rules := filepath.Join(work, "bad.rules")
	if err := qemu.WriteBlkdebug(rules, []qemu.MediaError{{Sector: sector, UntilFlush: true}}); err != nil {
		t.Fatal(err)
	}
	img := func(name string) string {
		p := filepath.Join(work, name+".raw")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 32<<20); err != nil {
			t.Fatal(err)
		}
		return p
	}
	qmp := filepath.Join(work, "qmp.sock")
	m := qemu.Machine{Memory: 512, CPUs: 1, QMP: qmp,
		Controllers: []qemu.Controller{{ID: "a", Serial: "DQFAULTA"}, {ID: "b", Serial: "DQFAULTB"}},
		Namespaces: []qemu.Namespace{
			{Controller: "a", NSID: 1, Image: img("a"), EUI64: 0x00aa000000000001, UUID: "6c1c2a2e-0d3b-4d7e-9a51-00000000000a", Blkdebug: rules},
			{Controller: "b", NSID: 1, Image: img("b"), EUI64: 0x00bb000000000001, UUID: "6c1c2a2e-0d3b-4d7e-9a51-00000000000b"},
		}}
	script := `for c in /sys/class/nvme/nvme*; do echo "$(basename $c) $(cat $c/serial)"; done
for d in /dev/nvme*n1; do echo "$d $(nvme id-ns $d -o json | grep -o '"eui64" *: *"[0-9a-f]*"')"; done
[ -e "$W/probe" ] || exit 0
dev=/dev/$(for c in /sys/class/nvme/nvme*; do [ "$(cat $c/serial)" = "DQFAULTA            " ] && basename $c; done)n1
dd if=$dev of=/dev/null bs=4096 skip=$((` + "40960" + `/8)) count=1 iflag=direct 2>&1 && echo "read-bad: ok" || echo "read-bad: failed"
dd if=$dev of=/dev/null bs=4096 skip=$((` + "40960" + `/8 - 1)) count=1 iflag=direct 2>/dev/null && echo "read-before: ok"
dd if=$dev of=/dev/null bs=4096 skip=$((` + "40960" + `/8 + 1)) count=1 iflag=direct 2>/dev/null && echo "read-after: ok"
dd if=$dev of=/dev/null bs=4096 skip=$((` + "40960" + `/8)) count=1 iflag=direct 2>/dev/null || echo "read-bad-again: failed"
# Writing the sector succeeds (and QEMU's block layer passes a flush on
# only after a write).
dd if=/dev/zero of=$dev bs=4096 seek=$((` + "40960" + `/8)) count=1 oflag=direct 2>/dev/null && echo "write-bad: ok"
nvme flush $dev -n 1
dd if=$dev of=/dev/null bs=4096 skip=$((` + "40960" + `/8)) count=1 iflag=direct 2>/dev/null && echo "read-bad-after-flush: ok"
echo "warning-before: $(nvme smart-log $dev -o json | grep -o '"critical_warning" *: *[0-9]*')"
touch "$W/ready"
i=0; while [ ! -e "$W/warned" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
echo "warning-after: $(nvme smart-log $dev -o json | grep -o '"critical_warning" *: *[0-9]*')"
`
	script = "W=" + work + "\n" + script
	if err := os.WriteFile(filepath.Join(work, "probe"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(work, "ready")); err == nil {
				if err := qemu.SetCriticalWarning(ctx, qmp, "a", qemu.WarnReadOnly); err != nil {
					t.Error(err)
				}
				os.WriteFile(filepath.Join(work, "warned"), nil, 0o644)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	res, err := m.Run(ctx, kernel, initrd, work, script)
	t.Logf("boot 1 (%s): %s wall, exit %d\n%s", res.Accel, res.Wall.Round(100*time.Millisecond), res.Exit, res.Output)
	if err != nil || res.Exit != 0 {
		t.Fatalf("guest: %v\nconsole:\n%s", err, res.Console)
	}
	for _, w := range []string{"nvme0 DQFAULTA", "nvme1 DQFAULTB", "read-bad: failed", "read-before: ok", "read-after: ok", "read-bad-again: failed", "write-bad: ok", "read-bad-after-flush: ok", `warning-before: "critical_warning":0`, `warning-after: "critical_warning":8`} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("boot 1: output lacks %q", w)
		}
	}

	swapped, err := m.Swapped("a", "b")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(work, "probe"))
	res, err = swapped.Run(ctx, kernel, initrd, work, script)
	t.Logf("boot 2, swapped (%s): %s wall, exit %d\n%s", res.Accel, res.Wall.Round(100*time.Millisecond), res.Exit, res.Output)
	if err != nil || res.Exit != 0 {
		t.Fatalf("guest: %v\nconsole:\n%s", err, res.Console)
	}
	// Each namespace keeps its EUI-64 (read with nvme-cli: the kernel
	// ignores the namespace IDs of QEMU's controller, NVME_QUIRK_BOGUS_NID).
	for _, w := range []string{"nvme0 DQFAULTB", "nvme1 DQFAULTA", `/dev/nvme0n1 "eui64":"00bb000000000001"`, `/dev/nvme1n1 "eui64":"00aa000000000001"`} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("boot 2: output lacks %q", w)
		}
	}
}
