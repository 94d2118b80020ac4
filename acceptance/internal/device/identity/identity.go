// Package identity says what a drive is, whatever the path to it: an NVMe
// namespace by its NGUID, EUI-64 or UUID, a loop device or a file by its
// inode.
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
// firmware; for a loop device the file it reads and writes; for a
// regular file the file itself. Size and LBASize (the logical block size
// of its LBA format, bytes) belong to every kind.
type Identity struct {
	// Kind is "nvme" (an NVMe namespace), "loop", "block" (another block
	// device) or "file".
	Kind  string `json:"kind"`
	NGUID string `json:"nguid,omitempty"`
	EUI64 string `json:"eui64,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	WWID  string `json:"wwid,omitempty"`
	NSID  int    `json:"nsid,omitempty"`
	// Subsystem is an NVMe namespace's subsystem NQN.
	Subsystem string `json:"subsystem,omitempty"`
	Serial    string `json:"serial,omitempty"`
	Model     string `json:"model,omitempty"`
	Firmware  string `json:"firmware,omitempty"`
	Bytes     int64  `json:"bytes"`
	LBASize   int    `json:"lba_size,omitempty"`
	// Backing is a loop device's backing file as sysfs names it; File, the
	// identity of that file (or of a regular file target).
	Backing string `json:"backing_file,omitempty"`
	File    FileID `json:"file,omitzero"`
}

// Key is what tells the drive from every other, "" when nothing does:
// an NVMe namespace's NGUID, else its EUI-64, else its UUID, else its
// controller's serial with its namespace ID; a loop device's or a file's
// device and inode; another block device's WWID, else its serial.
func (id Identity) Key() string {
	switch id.Kind {
	case "nvme":
		switch {
		case id.NGUID != "":
			return "nguid " + strings.ToLower(id.NGUID)
		case id.EUI64 != "":
			return "eui64 " + strings.ToLower(id.EUI64)
		case id.UUID != "":
			return "uuid " + strings.ToLower(id.UUID)
		case id.Serial != "":
			return fmt.Sprintf("serial %s namespace %d", id.Serial, id.NSID)
		}
	case "loop", "file":
		if !id.File.IsZero() {
			return id.Kind + " " + id.File.String()
		}
	default:
		switch {
		case id.WWID != "":
			return "wwid " + id.WWID
		case id.Serial != "":
			return "serial " + id.Serial
		}
	}
	return ""
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
			if f[1] != "" {
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
	return fmt.Sprintf("%s serial %s, firmware %s, %s", orUnknown(id.Model), orUnknown(id.Serial), orUnknown(id.Firmware), size)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
