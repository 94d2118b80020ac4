package device

import "github.com/drivequal/drivequal/acceptance/internal/device/identity"

// Identity is the identity of the target i describes.
func (i Info) Identity() identity.Identity {
	id := identity.Identity{Kind: "block", Serial: i.Serial, Model: i.Model, Firmware: i.Firmware, Bytes: i.Size, LBASize: i.LogicalBlockSize, WWID: i.WWID, WWN: i.WWN, EUI64: i.EUI64}
	switch {
	case !i.Block:
		id.Kind, id.File = "file", i.File
	case i.BackingFile != "":
		id.Kind, id.Backing, id.File = "loop", i.BackingFile, i.File
		id.Serial, id.Model, id.Firmware = "", "", ""
	case i.Controller != "" || i.NSID > 0:
		id.Kind = "nvme"
		id.NGUID, id.EUI64, id.UUID, id.NSID, id.Subsystem = i.NGUID, i.EUI64, i.UUID, i.NSID, i.Subsystem
	}
	return id
}
