package nvmevm

import (
	"os"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// TestGuestIdentity: what a resume matches NVMe drives by, read from the
// kernel's sysfs for real emulated namespaces: the IDs the kernel kept
// (its wwid says which), else the controller's serial and the namespace
// ID; the same namespace reached through two controllers (native
// multipath off) is one identity, so giving both is refused as one
// drive twice; and drives recorded by kernel name are matched when given
// by their by-id links in another order.
func TestGuestIdentity(t *testing.T) {
	guest(t)
	inspect := func(path string) plan.Drive {
		t.Helper()
		info, err := device.System{}.Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		return plan.Drive{Info: info}
	}
	fmtNS := inspect(mustNamespace(t, controllers(t, serialFormat)[0], 1))
	// What the kernel read of the namespace's IDs is in its wwid: "eui."
	// or "uuid." with one, "nvme.<vid>-<serial>-<model>-<nsid>" without.
	// Debian 12's kernel drops the IDs QEMU's controllers report
	// (NVME_QUIRK_BOGUS_NID, as for some real drives): the namespace is
	// then known by its controller's serial and namespace ID.
	for _, d := range []plan.Drive{fmtNS, inspect(mustNamespace(t, controllers(t, serialZoned)[0], 1))} {
		wwid, _ := os.ReadFile("/sys/class/block/" + d.Name + "/wwid")
		k := d.Identity().Key()
		switch w := strings.TrimSpace(string(wwid)); {
		case strings.HasPrefix(w, "eui."):
			if !strings.HasPrefix(k, "eui64 ") {
				t.Errorf("%s: wwid %s, identity key %q, want its EUI-64", d.Path, w, k)
			}
		case strings.HasPrefix(w, "uuid."):
			if !strings.HasPrefix(k, "uuid ") {
				t.Errorf("%s: wwid %s, identity key %q, want its UUID", d.Path, w, k)
			}
		default:
			if want := "serial " + d.Serial + " namespace 1"; k != want {
				t.Errorf("%s: wwid %s (no namespace IDs), identity key %q, want %q", d.Path, w, k, want)
			}
		}
		t.Logf("%s: wwid %s: %s", d.Path, strings.TrimSpace(string(wwid)), d.Identity())
	}
	a, b := subsystem(t)
	viaA, viaB := inspect(mustNamespace(t, a, 1)), inspect(mustNamespace(t, b, 1))
	if ka, kb := viaA.Identity().Key(), viaB.Identity().Key(); ka != kb || ka == "" {
		t.Errorf("namespace 1 through %s and %s: keys %q and %q, want one", a, b, ka, kb)
	}
	private := inspect(mustNamespace(t, b, 2))

	drives := []plan.Drive{fmtNS, viaA, private}
	prior := record.Run{Format: record.Format, BootID: "an earlier boot", Identities: match.Identities(drives)}
	for _, d := range drives {
		prior.Drives = append(prior.Drives, report.Drive{Path: d.Path, Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Bytes: d.Size})
		prior.Devices = append(prior.Devices, match.DevNumber(d))
	}
	_, errs := match.Drives([]plan.Drive{fmtNS, viaA, viaB, private}, prior, match.BootID(), "raw", "FIX")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), " are the same drive of the interrupted run in raw") {
		t.Errorf("namespace 1 given through both controllers: %v, want one refusal as the same drive", errs)
	}

	// A by-id link (udev's nvme-MODEL_SERIAL_NSID), in reverse order.
	var given []plan.Drive
	for i := len(drives) - 1; i >= 0; i-- {
		given = append(given, drives[i])
	}
	given[len(given)-1] = inspect("/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_" + serialFormat + "_1")
	if given[len(given)-1].Resolved != fmtNS.Path {
		t.Fatalf("/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_%s_1 is %s, not %s", serialFormat, given[len(given)-1].Resolved, fmtNS.Path)
	}
	m, errs := match.Drives(given, prior, match.BootID(), "raw", "FIX")
	if len(errs) > 0 {
		t.Fatalf("matching %v: %v", given, errs)
	}
	for i, j := range m.Order {
		if given[j].Resolved != drives[i].Resolved {
			t.Errorf("recorded drive %d (%s) matched %s (%s)", i+1, drives[i].Path, given[j].Path, given[j].Resolved)
		}
	}
	t.Logf("%s", strings.Join(m.Lines, "\n"))
}
