package identity

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// What a SCSI disk (SAS, or SATA behind libata, which emulates the pages
// from the ATA IDENTIFY data) says it is, from the Vital Product Data
// pages sysfs exposes as bytes (device/vpd_pg80, device/vpd_pg83): SPC-5
// 7.7.18 (Unit Serial Number) and 7.7.6 (Device Identification).

// VPD is what a disk's Unit Serial Number and Device Identification
// pages say of its logical unit: "" where a page says nothing.
type VPD struct {
	// Serial is the unit serial number (page 0x80), spaces trimmed; for
	// a SATA disk, libata copies the ATA serial there.
	Serial string
	// WWN is the logical unit's NAA designator (page 0x83, association
	// logical unit, type 3) as the kernel writes it in wwid:
	// "naa.5000c500a1b2c3d4".
	WWN string
	// EUI64 is its EUI-64 designator (type 2), lower-case hex.
	EUI64 string
	// T10 is its T10 vendor ID designator (type 1), as the kernel writes
	// it ("t10.ATA     QEMU HARDDISK ... QM00001", spaces kept): for a
	// SATA disk, "ATA", its model and its serial.
	T10 string
}

// ParseVPD80 reads a Unit Serial Number page (0x80): the serial, with
// the spaces and NULs it is padded with trimmed.
func ParseVPD80(page []byte) (string, error) {
	if len(page) < 4 || page[1] != 0x80 {
		return "", errors.New("not a Unit Serial Number VPD page (0x80)")
	}
	n := int(page[2])<<8 | int(page[3])
	if 4+n > len(page) {
		return "", fmt.Errorf("Unit Serial Number page of %d bytes says it holds %d", len(page), 4+n)
	}
	return strings.Trim(string(page[4:4+n]), " \x00"), nil
}

// ParseVPD83 reads a Device Identification page (0x83): the
// designators of the logical unit itself (association 0), not of the
// port or target device it is reached through.
func ParseVPD83(page []byte) (VPD, error) {
	var v VPD
	if len(page) < 4 || page[1] != 0x83 {
		return v, errors.New("not a Device Identification VPD page (0x83)")
	}
	end := 4 + (int(page[2])<<8 | int(page[3]))
	if end > len(page) {
		return v, fmt.Errorf("Device Identification page of %d bytes says it holds %d", len(page), end)
	}
	for off := 4; off+4 <= end; {
		codeSet, assoc, typ, n := page[off]&0x0f, (page[off+1]>>4)&0x3, page[off+1]&0x0f, int(page[off+3])
		if off+4+n > end {
			return v, fmt.Errorf("Device Identification page: designator at byte %d of %d bytes runs past the page's %d", off, n, end)
		}
		d := page[off+4 : off+4+n]
		off += 4 + n
		if assoc != 0 {
			continue
		}
		switch {
		case typ == 3 && codeSet == 1 && v.WWN == "" && len(d) > 0:
			v.WWN = "naa." + hex.EncodeToString(d)
		case typ == 2 && codeSet == 1 && v.EUI64 == "" && len(d) > 0:
			v.EUI64 = hex.EncodeToString(d)
		case typ == 1 && (codeSet == 2 || codeSet == 3) && v.T10 == "":
			v.T10 = "t10." + strings.TrimRight(string(d), " \x00")
		}
	}
	return v, nil
}
