package nvme

import (
	"errors"
	"strings"
)

// Controller is what drivequal uses of a controller's identify data
// (`nvme id-ctrl -o json`). nvme-cli has spelled these keys the same way
// from v1.0 to v3 (checked at every tag); "sanicap" came in v1.4. v1.x
// pads mn, sn and fr with spaces to their field widths.
type Controller struct {
	VID      uint16 // PCI vendor ID ("vid")
	Model    string // "mn", trimmed
	Serial   string // "sn", trimmed
	Firmware string // "fr", trimmed

	Version uint32 // NVMe version ("ver"): major<<16 | minor<<8 | tertiary

	// OACS is Optional Admin Command Support; bit 1: Format NVM.
	OACS uint16
	// FNA is the Format NVM Attributes byte; see the methods.
	FNA uint8
	// SANICAP is the Sanitize Capabilities word; see the methods.
	SANICAP uint32

	// WCTemp and CCTemp are the warning and critical composite temperature
	// thresholds in kelvin ("wctemp", "cctemp"); 0 means not reported. See
	// Celsius.
	WCTemp, CCTemp int

	// TNVMCap is the total NVM capacity in bytes (0 when not reported),
	// printed like the SMART counters (see Uint128).
	TNVMCap Uint128
	// NN is the maximum number of namespaces the controller supports.
	NN uint32
	// VWC is the Volatile Write Cache byte ("vwc"); bit 0: present.
	VWC uint8
	// FRMW is the Firmware Updates byte ("frmw"): bit 0, slot 1 is
	// read-only; bits 3:1, the number of firmware slots (0: not reported).
	FRMW uint8
}

// VolatileWriteCache reports VWC bit 0: the controller has a volatile
// write cache, whose writes a power loss may take unless flushed.
func (c Controller) VolatileWriteCache() bool { return c.VWC&1 != 0 }

// FormatSupported reports OACS bit 1: the controller does Format NVM.
func (c Controller) FormatSupported() bool { return c.OACS&(1<<1) != 0 }

// FormatAppliesToAll reports FNA bit 0: a format of any namespace formats
// every namespace of the NVM subsystem.
func (c Controller) FormatAppliesToAll() bool { return c.FNA&(1<<0) != 0 }

// SecureEraseAppliesToAll reports FNA bit 1: a secure erase done as part of
// a format (--ses) erases every namespace of the NVM subsystem.
func (c Controller) SecureEraseAppliesToAll() bool { return c.FNA&(1<<1) != 0 }

// CryptoEraseSupported reports FNA bit 2: a format can do a cryptographic
// erase (--ses=2).
func (c Controller) CryptoEraseSupported() bool { return c.FNA&(1<<2) != 0 }

// SanitizeCryptoErase reports SANICAP bit 0: sanitize action 4.
func (c Controller) SanitizeCryptoErase() bool { return c.SANICAP&(1<<0) != 0 }

// SanitizeBlockErase reports SANICAP bit 1: sanitize action 2.
func (c Controller) SanitizeBlockErase() bool { return c.SANICAP&(1<<1) != 0 }

// SanitizeOverwrite reports SANICAP bit 2: sanitize action 3.
func (c Controller) SanitizeOverwrite() bool { return c.SANICAP&(1<<2) != 0 }

// ParseIDCtrl parses `nvme id-ctrl -o json`. mn, sn and fr are required;
// other fields missing from the output stay zero.
func ParseIDCtrl(out []byte) (Controller, error) {
	m, err := decodeObject(out)
	if err != nil {
		return Controller{}, err
	}
	f := &fields{m: m}
	f.require("mn", "sn", "fr")
	c := Controller{
		VID:      uint16(f.int("vid", 0, 0xffff)),
		Model:    strings.TrimSpace(f.str("mn")),
		Serial:   strings.TrimSpace(f.str("sn")),
		Firmware: strings.TrimSpace(f.str("fr")),
		Version:  f.u32("ver"),
		OACS:     uint16(f.int("oacs", 0, 0xffff)),
		FNA:      uint8(f.int("fna", 0, 0xff)),
		SANICAP:  f.u32("sanicap"),
		WCTemp:   int(f.int("wctemp", 0, 0xffff)),
		CCTemp:   int(f.int("cctemp", 0, 0xffff)),
		TNVMCap:  f.u128("tnvmcap"),
		NN:       f.u32("nn"),
		VWC:      uint8(f.int("vwc", 0, 0xff)),
		FRMW:     uint8(f.int("frmw", 0, 0xff)),
	}
	if err := errors.Join(f.errs...); err != nil {
		return c, err
	}
	return c, nil
}
