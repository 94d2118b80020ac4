package device

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/device/signature"
)

// Options are what the operator allowed on the command line.
type Options struct {
	// Destructive is -destructive: targets may be overwritten.
	Destructive bool
	// WipeSignatures is -wipe-signatures: a partition table or file-system
	// signature is no reason to refuse (the caller wipes it).
	WipeSignatures bool
}

// Refusal is one reason not to write one target.
type Refusal struct {
	Path   string // the target as given
	Reason string // what is wrong
	Fix    string // what the operator can do about it
}

// Error returns "PATH: REASON; FIX".
func (r Refusal) Error() string {
	return r.Path + ": " + r.Reason + "; " + r.Fix
}

// Check lists every reason not to write the targets, all at once, before
// anything is written; nil means all may be written. It reads sysfs,
// /proc/self/mountinfo, /proc/swaps and the targets' first and last MiB
// (see signature.Find), and writes nothing.
//
// A target is refused when -destructive is not given (a block device, or a
// non-empty regular file); when it is read-only; when it or one of its
// partitions is mounted; when it has partitions; when it carries a partition
// table or a file-system, RAID, LVM or swap signature (unless
// WipeSignatures); when it is itself a partition (a purge of it would erase
// its whole disk); when it has holders (device-mapper, md, LVM); when it or a
// partition of it is active swap; when it backs "/" or "/boot"; when it was
// already given under another name; and when it is neither a block device
// nor a regular file.
func (s System) Check(infos []Info, opt Options) []Refusal {
	c := &check{sys: s, opt: opt, seen: map[string]string{}}
	c.mounts, c.mountErr = s.mounts("self")
	c.swaps, c.swapErr = s.swaps()
	c.system = c.mounts.systemDevices()
	for _, in := range infos {
		c.target(in)
	}
	return c.out
}

// check is one Check of a run's targets: what it read once for all of
// them, what it has seen so far, and the refusals.
type check struct {
	sys System
	opt Options

	mounts   mountTable
	mountErr error
	swaps    swapTable
	swapErr  error
	// system are the devices that back the running system (see
	// mountTable.systemDevices).
	system map[devnum]string
	// seen maps each identity to the path of the first target with it.
	seen map[string]string

	out []Refusal
}

func (c *check) refuse(in Info, reason, fix string) {
	c.out = append(c.out, Refusal{Path: in.Path, Reason: reason, Fix: fix})
}

// target checks one target, after those before it.
func (c *check) target(in Info) {
	name := in.Resolved
	if name == "" {
		name = in.Path
	}
	if !c.stillSame(in) {
		return
	}

	// Duplicates: same device number, same file (path or inode), or a
	// loop device together with its backing file.
	ids := c.identities(in)
	for _, id := range ids {
		if first, ok := c.seen[id]; ok {
			if strings.HasPrefix(id, "dev:") || !in.Block || in.NSID == 0 {
				c.refuse(in, fmt.Sprintf("is the same target as %s, given earlier", first),
					"remove the duplicate from -drives")
			} else {
				c.refuse(in, fmt.Sprintf("is the same NVMe namespace as %s, given earlier, through another controller (%s)", first, namespaceID(in, id)),
					"give each namespace once: remove "+in.Path+" from -drives")
			}
			break
		}
	}
	for _, id := range ids {
		if _, ok := c.seen[id]; !ok {
			c.seen[id] = in.Path
		}
	}

	if !c.opt.Destructive && (in.Block || in.Size > 0) {
		what := "block device"
		if !in.Block {
			what = fmt.Sprintf("non-empty file (%d bytes)", in.Size)
		}
		c.refuse(in, "-destructive not given: writing would destroy the data on this "+what,
			"add -destructive if everything on "+name+" may be destroyed")
	}
	if in.ReadOnly {
		c.refuse(in, "is read-only", "choose a writable device (or make it writable: blockdev --setrw "+shellQuote(name)+")")
	}
	if in.Block && in.Zoned != "" {
		c.refuse(in, "is a zoned device (queue/zoned: "+in.Zoned+"): it takes writes only at each zone's write pointer, so the fill and random writes would fail",
			"give a conventional namespace (zoned \"none\"); a zoned namespace cannot be qualified against a conventional drive's spec")
	}
	d := disk{sys: c.sys, name: in.Name}
	if in.Block {
		if whole, n, ok := d.partitionOf(); ok {
			c.refuse(in, fmt.Sprintf("is partition %d of /dev/%s; a purge erases the whole disk", n, whole),
				"give /dev/"+whole+" (and nothing else on it) instead")
		}
	}

	var parts []string
	devs := map[devnum]string{}
	if in.Block {
		parts = d.partitions()
		devs = d.devices(devnum{in.Major, in.Minor}, parts)
	}

	if in.Block {
		if c.mountErr != nil {
			c.refuse(in, "cannot tell whether it is mounted: "+c.mountErr.Error(), "make /proc/self/mountinfo readable (run on Linux with /proc mounted)")
		} else if where, points := c.mounts.at(devs); len(where) > 0 {
			fix := "unmount it (umount " + shellQuote(points[0]) + ") or choose another device"
			if _, ok := c.system[devnum{in.Major, in.Minor}]; ok {
				fix = "choose another device"
			}
			c.refuse(in, "is mounted: "+strings.Join(where, ", "), fix)
		}
		if len(parts) > 0 {
			c.refuse(in, "has partitions: "+strings.Join(parts, ", "),
				"choose another device, or delete the partitions (after checking with `wipefs "+shellQuote(name)+"` that nothing on them is needed)")
		}
		if holders := d.holders(parts); len(holders) > 0 {
			c.refuse(in, "is in use by "+strings.Join(holders, ", "),
				"stop what holds it (dmsetup remove, mdadm --stop, vgchange -an) or choose another device")
		}
		if exp := c.sys.nvmetExports(in); len(exp) > 0 {
			c.refuse(in, "is exported by this host's NVMe target (nvmet) as "+strings.Join(exp, ", ")+
				": nvmet does not hold it exclusively, and writing it changes what the target's hosts read",
				"disable the export (echo 0 > its namespace's enable) or qualify the fabric namespace from the host that connects to it")
		}
		if via, ok := c.system[devnum{in.Major, in.Minor}]; ok {
			c.refuse(in, "backs the running system: "+via,
				"choose another device; this one holds the root or boot file system")
		}
	}

	if c.swapErr != nil {
		c.refuse(in, "cannot tell whether it is active swap: "+c.swapErr.Error(), "make /proc/swaps readable")
	} else if on := c.swaps.on(in, devs); len(on) > 0 {
		c.refuse(in, "is active swap: "+strings.Join(on, ", "),
			"turn the swap off (swapoff "+shellQuote(on[0])+") or choose another device")
	}

	if in.Block || in.Size > 0 {
		sigs, err := signature.Find(c.sys.p(name))
		switch {
		case err != nil:
			c.refuse(in, "cannot read it to look for partition tables and file systems: "+err.Error(),
				"run as root, or check that "+name+" is readable")
		case len(sigs) > 0 && !c.opt.WipeSignatures:
			c.refuse(in, "has a partition table or file-system signature: "+strings.Join(sigs, ", "),
				"-wipe-signatures, after checking with `wipefs "+shellQuote(name)+"` that nothing on it is needed")
		}
	}
}

// stillSame refuses a target that is not (or no longer) what Inspect saw: a
// path that vanished, a regular file that became something else, a block
// device whose number changed. It reports whether checking may go on.
func (c *check) stillSame(in Info) bool {
	name := in.Resolved
	if name == "" {
		name = in.Path
	}
	fi, err := os.Stat(c.sys.p(name))
	if err != nil {
		c.refuse(in, "cannot be inspected: "+err.Error(), "give an existing block device (/dev/nvme0n1) or regular file")
		return false
	}
	mode := fi.Mode()
	isBlock := mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0
	switch {
	case in.Block && isBlock:
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && (unix.Major(uint64(st.Rdev)) != in.Major || unix.Minor(uint64(st.Rdev)) != in.Minor) {
			c.refuse(in, fmt.Sprintf("changed since it was inspected (was %d:%d)", in.Major, in.Minor), "run again")
			return false
		}
		return true
	case in.Block && mode.IsRegular() && c.sys.fakeBlock(name):
		return true
	case !in.Block && mode.IsRegular():
		return true
	}
	c.refuse(in, "is a "+kindOf(mode)+", not a block device or regular file",
		"give a block device (/dev/nvme0n1) or a regular file")
	return false
}

// identities returns the keys under which a target counts as given twice:
// for a block device its device number and, for an NVMe namespace, what
// names the namespace whatever the path to it (with native multipath off,
// each controller of a subsystem has its own block device for a shared
// namespace).
func (c *check) identities(in Info) []string {
	var ids []string
	if in.Block {
		ids = append(ids, "dev:"+devnum{in.Major, in.Minor}.String())
		if in.Subsystem != "" && in.NSID > 0 {
			ids = append(ids, fmt.Sprintf("nsid:%d:%s", in.NSID, in.Subsystem))
		}
		for _, id := range []struct{ kind, v string }{{"wwid", in.WWID}, {"nguid", in.NGUID}, {"eui64", in.EUI64}} {
			if id.v != "" {
				ids = append(ids, id.kind+":"+id.v)
			}
		}
		if in.BackingFile != "" {
			ids = append(ids, c.fileIDs(in.BackingFile)...)
		}
		return ids
	}
	name := in.Resolved
	if name == "" {
		name = in.Path
	}
	return append(ids, c.fileIDs(name)...)
}

// namespaceID says which identity of in made it a duplicate.
func namespaceID(in Info, id string) string {
	kind, v, _ := strings.Cut(id, ":")
	if kind == "nsid" {
		return fmt.Sprintf("namespace %d of %s", in.NSID, in.Subsystem)
	}
	return "same " + kind + " " + v
}

func (c *check) fileIDs(path string) []string {
	ids := []string{"file:" + filepath.Clean(path)}
	if fi, err := os.Stat(c.sys.p(path)); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ids = append(ids, fmt.Sprintf("inode:%d:%d", st.Dev, st.Ino))
		}
	}
	return ids
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
