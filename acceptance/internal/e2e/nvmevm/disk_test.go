package nvmevm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// The guest's SCSI and SATA disks (see disks): a scsi-hd on virtio-scsi
// with serial= and wwn=, and an ide-hd on AHCI with serial= alone.
const (
	serialSCSI = "DQSCSI001"
	wwnSCSI    = "0x5000c500a1b2c3d4"
	serialSATA = "DQSATA001"
	diskBytes  = 8 << 20
)

// disks returns the QEMU arguments of the guest's SCSI and SATA disks,
// their images (diskBytes, sparse) created under img's directory.
func disks(img func(string) string) []string {
	for _, n := range []string{"scsi-1", "sata-1"} {
		if err := os.WriteFile(img(n), nil, 0o644); err != nil {
			panic(err)
		}
		if err := os.Truncate(img(n), diskBytes); err != nil {
			panic(err)
		}
	}
	return []string{
		"-device", "virtio-scsi-pci,id=scsi0",
		"-drive", "if=none,id=scsi1,format=raw,file=" + img("scsi-1"),
		"-device", "scsi-hd,bus=scsi0.0,drive=scsi1,serial=" + serialSCSI + ",wwn=" + wwnSCSI,
		"-device", "ahci,id=ahci0",
		"-drive", "if=none,id=sata1,format=raw,file=" + img("sata-1"),
		"-device", "ide-hd,bus=ahci0.0,drive=sata1,serial=" + serialSATA,
	}
}

// TestGuestDiskIdentity: a SCSI and a SATA disk are identified by what
// they report, as the guest kernel exposes it: the SCSI disk by the NAA
// WWN of its Device Identification page and the unit serial of its
// Unit Serial Number page; the SATA disk by the ATA serial libata copies
// into its emulated pages, and the kernel's t10 wwid of model and
// serial. Recorded under each other's kernel name (a reboot that swapped
// them), each is matched to its own recording.
func TestGuestDiskIdentity(t *testing.T) {
	guest(t)
	needModules(t, "sd_mod", "virtio_scsi", "ahci")
	var scsi, sata plan.Drive
	names, _ := filepath.Glob("/sys/block/sd*")
	for _, n := range names {
		real, _ := filepath.EvalSymlinks(n)
		info, err := device.System{}.Inspect("/dev/" + filepath.Base(n))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%s): %s", info.Path, real, info.Identity())
		switch {
		case strings.Contains(real, "/ata"):
			sata = plan.Drive{Info: info}
		case strings.Contains(real, "/virtio"):
			scsi = plan.Drive{Info: info}
		}
	}
	if scsi.Path == "" || sata.Path == "" {
		t.Fatalf("want a SCSI disk on virtio-scsi and a SATA disk on AHCI among %v", names)
	}
	for _, c := range []struct {
		d                  plan.Drive
		serial, wwn, key   string
		wwidPrefix, suffix string
	}{
		{scsi, serialSCSI, "naa.5000c500a1b2c3d4", "wwn naa.5000c500a1b2c3d4", "naa.5000c500a1b2c3d4", ""},
		{sata, serialSATA, "", "wwid t10.ATA     QEMU HARDDISK", "t10.ATA     QEMU HARDDISK", serialSATA},
	} {
		id := c.d.Identity()
		if id.Serial != c.serial || id.WWN != c.wwn || !strings.HasPrefix(id.WWID, c.wwidPrefix) || !strings.HasSuffix(id.WWID, c.suffix) || !strings.HasPrefix(id.Key(), c.key) {
			t.Errorf("%s: serial %q, WWN %q, WWID %q, key %q; want serial %q, WWN %q, WWID %s…%s, key %s…",
				c.d.Path, id.Serial, id.WWN, id.WWID, id.Key(), c.serial, c.wwn, c.wwidPrefix, c.suffix, c.key)
		}
		if id.Anonymous() {
			t.Errorf("%s: anonymous, though it reports %+v", c.d.Path, id)
		}
	}

	// Recorded each at the other's name, in another boot.
	atOther := func(d plan.Drive, path string) plan.Drive { d.Path = path; return d }
	prior := recordOf([]plan.Drive{atOther(scsi, sata.Path), atOther(sata, scsi.Path)}, "boot-before")
	m, errs := match.Drives([]plan.Drive{sata, scsi}, prior, "this-boot", "raw", "FIX")
	if len(errs) > 0 {
		t.Fatalf("match.Drives: %v", errs)
	}
	if m.Order[0] != 1 || m.Order[1] != 0 {
		t.Errorf("match.Drives: order %v, want the SCSI disk (given second) as recorded drive 1", m.Order)
	}
}

// recordOf is run.json's record of drives, in boot bootID.
func recordOf(drives []plan.Drive, bootID string) record.Run {
	r := record.Run{Format: record.Format, BootID: bootID, Identities: match.Identities(drives)}
	for _, d := range drives {
		r.Drives = append(r.Drives, report.Drive{Path: d.Path, Model: d.Model, Serial: d.Serial, Firmware: d.Firmware, Bytes: d.Size})
		r.Devices = append(r.Devices, match.DevNumber(d))
	}
	return r
}
