package identity

import (
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pad is s padded with spaces to n bytes, as ATA and SCSI strings are.
func pad(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }

type vpd80Test struct {
	name string
	page string // hex, as sysfs device/vpd_pg80 holds it
	want string
}

var vpd80Tests = []vpd80Test{
	// A QEMU ide-hd behind libata (ahci), hexdump of vpd_pg80 in the
	// guest: libata copies the 20-byte ATA serial, space padded.
	{"QEMU SATA", "00 80 00 14 51 4d 30 30 30 30 31 20 20 20 20 20 20 20 20 20 20 20 20 20", "QM00001"},
	// A Samsung SATA SSD behind libata, hexdump of vpd_pg80.
	{"Samsung SATA", "00 80 00 14 53 32 50 57 4e 58 30 48 41 30 39 33 37 35 48 20 20 20 20 20", "S2PWNX0HA09375H"},
	// scsi_debug's unit serial, "2000", unpadded.
	{"scsi_debug", "00 80 00 04 32 30 30 30", "2000"},
	// A disk that reports an empty serial.
	{"blank", "00 80 00 00", ""},
}

func TestParseVPD80(t *testing.T) {
	for _, tt := range vpd80Tests {
		got, err := ParseVPD80(unhex(t, tt.page))
		if err != nil || got != tt.want {
			t.Errorf("%s: ParseVPD80 = %q, %v, want %q", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "00 83 00 00", "00 80 00 14 51 4d"} {
		if got, err := ParseVPD80(unhex(t, bad)); err == nil {
			t.Errorf("ParseVPD80(%q) = %q, nil, want an error", bad, got)
		}
	}
}

type vpd83Test struct {
	name string
	page []byte
	want VPD
}

func vpd83Tests(t *testing.T) []vpd83Test {
	// libata's page for an ATA disk without a WWN (drivers/ata/libata-scsi.c,
	// ata_scsiop_inq_83): a vendor-specific ASCII designator holding the
	// serial, then SAT's T10 vendor ID designator, "ATA" padded to 8, the
	// 40-byte model and the 20-byte serial; the bytes QEMU's ide-hd
	// (model "QEMU HARDDISK", serial "QM00001") gives, whose kernel wwid is
	// "t10.ATA     QEMU HARDDISK                           QM00001".
	sat := append(unhex(t, "00 83 00 60 02 00 00 14"), pad("QM00001", 20)...)
	sat = append(sat, unhex(t, "02 01 00 44")...)
	sat = append(sat, pad("ATA", 8)+pad("QEMU HARDDISK", 40)+pad("QM00001", 20)...)
	// QEMU's scsi-hd with serial=SCSI0001 and wwn=0x5000c500a1b2c3d4
	// (hw/scsi/scsi-disk.c): an ASCII vendor-specific designator of the
	// serial, then the NAA designator of the wwn.
	qemuSCSI := append(unhex(t, "00 83 00 18 02 00 00 08"), "SCSI0001"...)
	qemuSCSI = append(qemuSCSI, unhex(t, "01 03 00 08 50 00 c5 00 a1 b2 c3 d4")...)
	return []vpd83Test{
		// A SAN volume's page as sg_vpd --hex prints it: an NAA 6
		// designator of the logical unit, then the relative target port
		// and target port group (association: target port), which name
		// the path, not the volume.
		{"SAN volume", unhex(t, "00830024010300106000402001f45eb566d41cd10000000001140004000000010115000400000001"),
			VPD{WWN: "naa.6000402001f45eb566d41cd100000000"}},
		{"QEMU SATA", sat, VPD{T10: "t10.ATA     QEMU HARDDISK                           QM00001"}},
		{"QEMU scsi-hd", qemuSCSI, VPD{WWN: "naa.5000c500a1b2c3d4"}},
		{"an EUI-64 designator", unhex(t, "00 83 00 0c 01 02 00 08 00 25 38 8b 71 b0 a0 1e"), VPD{EUI64: "0025388b71b0a01e"}},
		{"no designators", unhex(t, "00 83 00 00"), VPD{}},
	}
}

func TestParseVPD83(t *testing.T) {
	for _, tt := range vpd83Tests(t) {
		got, err := ParseVPD83(tt.page)
		if err != nil || got != tt.want {
			t.Errorf("%s: ParseVPD83 = %+v, %v, want %+v", tt.name, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "00 80 00 00", "00 83 00 10 01 03 00 08", "00 83 00 08 01 03 00 10 50 00 c5 00"} {
		if got, err := ParseVPD83(unhex(t, bad)); err == nil {
			t.Errorf("ParseVPD83(%q) = %+v, nil, want an error", bad, got)
		}
	}
}

type anonymousTest struct {
	id   Identity
	key  string
	anon bool
}

var anonymousTests = []anonymousTest{
	// A QEMU NVMe namespace with serial= left blank and no NGUID, EUI-64 or
	// UUID: sysfs reads them as zeros.
	{Identity{Kind: "nvme", NSID: 1, NGUID: "00000000-0000-0000-0000-000000000000", EUI64: "0000000000000000", Serial: "    "}, "", true},
	{Identity{Kind: "nvme", NSID: 1, NGUID: "00000000000000000000000000000000", Serial: "S1"}, "serial S1 namespace 1", false},
	{Identity{Kind: "nvme", NSID: 1, NGUID: "5CD2E4", EUI64: "0000000000000000"}, "nguid 5cd2e4", false},
	{Identity{Kind: "block", WWN: "naa.0000000000000000", WWID: "naa.0000000000000000"}, "", true},
	{Identity{Kind: "block", WWN: "naa.5000c500a1b2c3d4", WWID: "naa.5000c500a1b2c3d4", Serial: "ZA1"}, "wwn naa.5000c500a1b2c3d4", false},
	{Identity{Kind: "block", WWID: "t10.ATA     QEMU HARDDISK                           QM00001", Serial: "QM00001"}, "wwid t10.ATA     QEMU HARDDISK                           QM00001", false},
	{Identity{Kind: "block", Serial: "QM00001"}, "serial QM00001", false},
	{Identity{Kind: "block"}, "", true},
	{Identity{Kind: "loop", Backing: "/t/a.img (deleted)"}, "", true},
	{Identity{Kind: "loop", File: FileID{Dev: "8:1", Inode: 12}}, "loop inode 12 on device 8:1", false},
}

// A drive is anonymous when every identifier is empty or all zeros, and
// its key ignores identifiers of zeros.
func TestAnonymous(t *testing.T) {
	for _, tt := range anonymousTests {
		if got := tt.id.Key(); got != tt.key {
			t.Errorf("%+v.Key() = %q, want %q", tt.id, got, tt.key)
		}
		if got := tt.id.Anonymous(); got != tt.anon {
			t.Errorf("%+v.Anonymous() = %v, want %v", tt.id, got, tt.anon)
		}
	}
}
