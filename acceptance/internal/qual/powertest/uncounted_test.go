package powertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// nvmeSmart is an nvme-cli whose every drive reports PCI vendor vid and
// model mn, a volatile write cache, and unsafe shutdowns unsafe.
func nvmeSmart(t *testing.T, vid int, mn string, unsafe int) nvme.CLI {
	bin := filepath.Join(t.TempDir(), "nvme")
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in
id-ctrl) echo '{"vid": %d, "sn": "S1", "mn": "%s", "fr": "F", "vwc": 7}' ;;
smart-log) echo '{"critical_warning": 0, "temperature": 300, "avail_spare": 100, "spare_thresh": 10, "percent_used": 0, "data_units_read": 0, "data_units_written": 0, "power_on_hours": 0, "media_errors": 0, "unsafe_shutdowns": %d}' ;;
*) exit 1 ;;
esac
`, vid, mn, unsafe)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return nvme.CLI{Binary: bin}
}

// QEMU's emulated controller keeps no count of power losses (its SMART
// log's unsafe shutdowns stay 0 through any cut): its cycle has no
// counters, and says why, so that it is judged on its data; a drive of
// another vendor reading 0 keeps its counter, whose staying at 0 makes
// the cycle inconclusive. A drive that reports QEMU's vendor and model
// but whose PCI vendor in sysfs is another's, or whose SMART log counts
// unsafe shutdowns, is held to its count.
func TestQEMUControllerKeepsNoCount(t *testing.T) {
	for _, tt := range []struct {
		vid      int
		mn       string
		sysfs    string
		unsafe   int
		counters int
		why      string
	}{
		{0x1b36, "QEMU NVMe Ctrl", "0x1b36\n", 0, 0, "QEMU NVMe Ctrl (PCI vendor 1b36, in sysfs too) is QEMU's emulated controller, which keeps no count of power losses"},
		{0x1b36, "QEMU NVMe Ctrl", "0x144d\n", 0, 1, ""},
		{0x1b36, "QEMU NVMe Ctrl", "", 0, 1, ""},
		{0x1b36, "QEMU NVMe Ctrl", "0x1b36\n", 41, 1, ""},
		{0x144d, "SAMSUNG MZQL2960HCJR-00A07", "0x144d\n", 0, 1, ""},
		{0x1b36, "Another Red Hat device", "0x1b36\n", 0, 1, ""},
	} {
		tst := cmdTest(t, "cut", "restore", nvmeSmart(t, tt.vid, tt.mn, tt.unsafe), ns("nvme0n1", "nvme0"))
		tst.Sysfs = t.TempDir()
		if tt.sysfs != "" {
			dir := filepath.Join(tst.Sysfs, "class", "nvme", "nvme0", "device")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "vendor"), []byte(tt.sysfs), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cd := tst.target(context.Background(), tst.Drives[0])
		if !cd.Promise.VWC || !cd.Promise.VWCKnown {
			t.Errorf("%s: promise %+v, want its volatile write cache known", tt.mn, cd.Promise)
		}
		got, why := cd.Counters(context.Background())
		if len(got) != tt.counters || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
			t.Errorf("%s (vendor %04x, sysfs %q, unsafe %d): counters %+v, why %q; want %d counters, why %q", tt.mn, tt.vid, tt.sysfs, tt.unsafe, got, why, tt.counters, tt.why)
		}
		if tt.unsafe > 0 && len(got) > 0 && got[0].Before != uint64(tt.unsafe) {
			t.Errorf("%s: unsafe shutdowns %+v, want %d", tt.mn, got, tt.unsafe)
		}
	}
}

// A cut QEMU controller comes back under another name (nvme0 is nvme3
// after device_add): its sysfs entry at the name recorded at the start is
// gone, and its later cycles are judged as its first was, on data alone,
// not inconclusive for a count that "stayed at 0" (seen under QEMU).
func TestQEMUControllerDecidedOnce(t *testing.T) {
	tst := cmdTest(t, "cut", "restore", nvmeSmart(t, 0x1b36, "QEMU NVMe Ctrl", 0), ns("nvme0n1", "nvme0"))
	tst.Sysfs = t.TempDir()
	dir := filepath.Join(tst.Sysfs, "class", "nvme", "nvme0", "device")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vendor"), []byte("0x1b36\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for cycle := 1; cycle <= 3; cycle++ {
		got, why := tst.target(context.Background(), tst.Drives[0]).Counters(context.Background())
		if len(got) != 0 || !strings.Contains(why, "is QEMU's emulated controller") {
			t.Errorf("cycle %d: counters %+v, why %q; want none, QEMU's controller", cycle, got, why)
		}
		if err := os.RemoveAll(filepath.Join(tst.Sysfs, "class", "nvme", "nvme0")); err != nil {
			t.Fatal(err)
		}
	}
}
