// Package identity says what a drive is, whatever the path to it: an NVMe
// namespace by its NGUID, EUI-64 or UUID, a SCSI or SATA disk by its WWN
// and unit serial (its VPD pages), a loop device by the file the kernel
// has open, a file by its inode.
package identity

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// FileID is a file as the kernel knows it, whatever its path: the device
// its file system is on ("8:1") and its inode, with what tells this file
// from a later one given the same inode number (ext4 and XFS hand a
// deleted file's inode to the next file created): its inode generation
// (FS_IOC_GETVERSION, where the file system keeps one) and its birth time
// (statx btime, RFC 3339 to the nanosecond, where it keeps one).
type FileID struct {
	Dev        string `json:"dev,omitempty"`
	Inode      uint64 `json:"inode,omitempty"`
	Generation uint32 `json:"generation,omitempty"`
	Born       string `json:"born,omitempty"`
	// Size is a loop device's backing file's size in bytes, where it
	// could be read (not when the file was deleted); 0 unknown.
	Size int64 `json:"size,omitempty"`
}

// Recreated says how f, at the inode a recorded file was, is another file
// than was (deleted, and a new one created that was given its inode): ""
// when it is the same file, or when neither says (a file system without
// generations or birth times, a recording that kept neither).
func (f FileID) Recreated(was FileID) string {
	var diff []string
	if f.Generation != 0 && was.Generation != 0 && f.Generation != was.Generation {
		diff = append(diff, fmt.Sprintf("inode generation %d, was %d", f.Generation, was.Generation))
	}
	if f.Born != "" && was.Born != "" && f.Born != was.Born {
		diff = append(diff, fmt.Sprintf("created %s, was %s", f.Born, was.Born))
	}
	return strings.Join(diff, "; ")
}

// TellsRecreated reports whether f and was, a file now and the file
// recorded at its device and inode, carry what tells a file from the
// next one given the same inode: both an inode generation, or both a
// birth time. When they do not (a deleted file, whose generation and
// birth time can no longer be read at a path; a file system that keeps
// neither, such as NFSv3), the device and inode alone say only which
// inode it is, not which file: a file deleted and created again may have
// been given it.
func (f FileID) TellsRecreated(was FileID) bool {
	return f.Generation != 0 && was.Generation != 0 || f.Born != "" && was.Born != ""
}

// IsZero reports whether the file is unknown.
func (f FileID) IsZero() bool { return f.Dev == "" && f.Inode == 0 }

func (f FileID) String() string { return fmt.Sprintf("inode %d on device %s", f.Inode, f.Dev) }

// Of is the identity of the file at path, which fi describes.
func Of(path string, fi fs.FileInfo) FileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}
	}
	id := FileID{Dev: fmt.Sprintf("%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))), Inode: st.Ino}
	id.Generation, id.Born = fileBirth(path, st.Ino)
	return id
}

// Identity is what a drive is, whatever the path to it or its device
// number (which a reboot, or namespaces registering in another order,
// changes): for an NVMe namespace its NGUID, EUI-64 or UUID (what it
// reports), namespace ID and its controller's serial, model and
// firmware; for a SCSI or SATA disk its WWN and unit serial; for a loop
// device the file it reads and writes; for a regular file the file
// itself. Size and LBASize (the logical block size
// of its LBA format, bytes) belong to every kind.
type Identity struct {
	// Kind is "nvme" (an NVMe namespace), "loop", "block" (another block
	// device) or "file".
	Kind  string `json:"kind"`
	NGUID string `json:"nguid,omitempty"`
	EUI64 string `json:"eui64,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	// WWID is the kernel's world wide identifier of the device (sysfs
	// wwid): for a SCSI or SATA disk, derived from its Device
	// Identification page ("naa.…", "t10.ATA …").
	WWID string `json:"wwid,omitempty"`
	// WWN is a SCSI or SATA disk's NAA designator from its Device
	// Identification page (VPD 0x83), "naa.5000c500a1b2c3d4"; its EUI-64
	// designator, if any, is in EUI64.
	WWN  string `json:"wwn,omitempty"`
	NSID int    `json:"nsid,omitempty"`
	// Subsystem is an NVMe namespace's subsystem NQN.
	Subsystem string `json:"subsystem,omitempty"`
	Serial    string `json:"serial,omitempty"`
	Model     string `json:"model,omitempty"`
	Firmware  string `json:"firmware,omitempty"`
	Bytes     int64  `json:"bytes"`
	LBASize   int    `json:"lba_size,omitempty"`
	// Backing is a loop device's backing file as sysfs names it, shown to
	// a person and never trusted: a bind mount or another mount namespace
	// makes that path name another file. File is the identity of the file
	// the kernel has open for it (LOOP_GET_STATUS64's device and inode;
	// its generation, birth time and size read at Backing only when that
	// path is still that file), or of a regular file target.
	Backing string `json:"backing_file,omitempty"`
	File    FileID `json:"file,omitzero"`
}

// Key is what tells the drive from every other, "" when nothing does
// (Anonymous): its first identifier (Identifiers) as "nguid …", "eui64
// …", "uuid …", "serial S namespace N", "wwn …", "wwid …", "serial …",
// "loop inode …", "file inode …".
func (id Identity) Key() string {
	ids := id.Identifiers()
	if len(ids) == 0 {
		return ""
	}
	return ids[0].key()
}

// Identifier is one thing a drive reports about itself that tells it
// from other drives.
type Identifier struct {
	// Name says what it is: "NGUID", "EUI-64", "UUID", "WWN", "WWID",
	// "serial and namespace", "serial", "file".
	Name  string
	Value string
	// Unique is whether it is meant to be unique worldwide (NGUID,
	// EUI-64, UUID, an NAA or EUI WWN, a file's device and inode); a
	// serial, and a serial with a namespace ID, are only what a vendor
	// wrote, and some write the same on every drive.
	Unique bool
}

func (i Identifier) key() string {
	switch i.Name {
	case "serial and namespace", "file":
		return i.Value
	}
	return strings.ToLower(strings.ReplaceAll(i.Name, "-", "")) + " " + i.Value
}

// Identifiers is what the drive reports that tells it from others,
// the most telling first, leaving out what is empty or all zeros (an
// NVMe NGUID of zeros says nothing): an NVMe namespace's NGUID, EUI-64,
// UUID, and its controller's serial with the namespace ID; a SCSI or
// SATA disk's WWN, EUI-64, the kernel's WWID and its unit serial; a loop
// device's or a file's device and inode. NVMe's WWID is left out: the
// kernel derives it from the others, so it changes when a drive reports
// an NGUID it did not.
func (id Identity) Identifiers() []Identifier {
	var out []Identifier
	add := func(name, v string, unique bool) {
		if !blank(v) {
			out = append(out, Identifier{Name: name, Value: v, Unique: unique})
		}
	}
	switch id.Kind {
	case "nvme":
		add("NGUID", strings.ToLower(id.NGUID), true)
		add("EUI-64", strings.ToLower(id.EUI64), true)
		add("UUID", strings.ToLower(id.UUID), true)
		if !blank(id.Serial) {
			add("serial and namespace", fmt.Sprintf("serial %s namespace %d", id.Serial, id.NSID), false)
		}
	case "loop", "file":
		if !id.File.IsZero() {
			add("file", id.Kind+" "+id.File.String(), true)
		}
	default:
		add("WWN", strings.ToLower(id.WWN), true)
		add("EUI-64", strings.ToLower(id.EUI64), true)
		add("WWID", id.WWID, strings.HasPrefix(id.WWID, "naa.") || strings.HasPrefix(id.WWID, "eui."))
		add("serial", id.Serial, false)
	}
	return out
}

// Anonymous reports whether the drive reports nothing that tells it from
// another: every identifier empty or all zeros (an NVMe namespace with
// no NGUID, EUI-64 or UUID and a blank serial; a disk without VPD pages
// or serial; a loop device whose file the kernel would not name).
func (id Identity) Anonymous() bool { return len(id.Identifiers()) == 0 }

// blank: empty, or all zeros ("00000000000000000000000000000000",
// "eui.0000000000000000", "0000-0000"), as drives without one report it.
func blank(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(v)), "naa."), "eui.")
	return strings.Trim(v, "0-:. ") == ""
}

// String names the drive by its identity, for a person: "NVMe namespace
// 1 NGUID … of SOLIDIGM SB5PH27X038T serial PHAX…, firmware G70YG030",
// "loop device over /tmp/a.img (inode 12 on device 8:1)".
func (id Identity) String() string {
	size := fmt.Sprintf("%d bytes", id.Bytes)
	if id.LBASize > 0 {
		size += fmt.Sprintf(", %d-byte blocks", id.LBASize)
	}
	switch id.Kind {
	case "nvme":
		var ids []string
		for _, f := range [][2]string{{"NGUID", id.NGUID}, {"EUI-64", id.EUI64}, {"UUID", id.UUID}} {
			if !blank(f[1]) {
				ids = append(ids, f[0]+" "+f[1])
			}
		}
		if len(ids) == 0 {
			ids = []string{"no NGUID, EUI-64 or UUID"}
		}
		return fmt.Sprintf("NVMe namespace %d (%s) of %s serial %s, firmware %s, %s", id.NSID, strings.Join(ids, ", "), orUnknown(id.Model), orUnknown(id.Serial), orUnknown(id.Firmware), size)
	case "loop":
		file := "unknown: not found at that path"
		if !id.File.IsZero() {
			file = id.File.String()
		}
		return fmt.Sprintf("loop device over %s (%s), %s", orUnknown(id.Backing), file, size)
	case "file":
		return fmt.Sprintf("file (%s), %s", id.File, size)
	}
	name := orUnknown(id.Model)
	switch {
	case !blank(id.WWN):
		name += " WWN " + id.WWN
	case !blank(id.WWID):
		name += " WWID " + id.WWID
	}
	return fmt.Sprintf("%s serial %s, firmware %s, %s", name, orUnknown(id.Serial), orUnknown(id.Firmware), size)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
