package device

import (
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
)

// Info describes one target as Inspect found it.
type Info struct {
	Path     string // as given
	Resolved string // after following symlinks (/dev/disk/by-id/... -> /dev/nvme0n1)
	Name     string // kernel name ("nvme0n1", "loop3"); "" for regular files

	Major, Minor uint32 // device number of a block device; 0 for regular files

	Block bool  // block device (else regular file)
	Size  int64 // bytes

	// LogicalBlockSize is the device's logical block size in bytes; 0 for
	// regular files.
	LogicalBlockSize int

	Rotational, ReadOnly bool

	Model, Serial, Firmware string // trimmed (sysfs pads them)

	BackingFile string // loop devices: /sys/block/loopN/loop/backing_file
	// File is the identity of the file a loop device reads and writes
	// (its backing file, as stat finds it at BackingFile) or of a
	// regular file target: the device it is on and its inode. Zero when
	// unknown (a backing file deleted or replaced since it was attached).
	File identity.FileID

	NUMANode  int   // -1 unknown
	LocalCPUs []int // CPUs local to the drive; nil unknown

	// Controller is the NVMe controller ("nvme3") a namespace is reached
	// through (the first one under native multipath); "" for other devices.
	Controller string
	// Siblings are the block devices of the other namespaces of the same
	// NVM subsystem ("nvme0n2"), through any of its controllers, and of
	// this namespace through other controllers (native multipath off): a
	// sanitize, or a format of all namespaces, erases them too.
	Siblings []string

	// Subsystem is the NVM subsystem's NQN (subsysnqn) of an NVMe
	// namespace; "" for other devices.
	Subsystem string
	// NSID is the NVMe namespace ID; 0 for other devices.
	NSID int
	// Reach maps every namespace block device of the subsystem, this one
	// included, to its namespace ID, from /sys/class/nvme-subsystem; nil
	// when sysfs does not say (then Siblings is all there is).
	Reach map[string]int
	// WWID, NGUID and EUI64 identify an NVMe namespace whatever the path
	// to it (sysfs wwid, nguid, eui); "" when not reported. WWID is a
	// SCSI or SATA disk's too (sysfs device/wwid).
	WWID, NGUID, EUI64 string
	// WWN is a SCSI or SATA disk's NAA designator from its Device
	// Identification page (device/vpd_pg83), "naa.5000c500a1b2c3d4"; its
	// EUI-64 designator, if any, is in EUI64, and its unit serial
	// (device/vpd_pg80; for SATA, libata's copy of the ATA serial) in
	// Serial. "" when not reported.
	WWN string
	// UUID is the namespace's UUID (sysfs uuid, from its namespace
	// identification descriptors); "" when not reported.
	UUID string
	// Transport is how the host reaches the NVMe controller ("pcie",
	// "tcp", "rdma", "fc", "loop"; sysfs transport) and Address where
	// (sysfs address: "0000:00:07.0", "traddr=127.0.0.1,trsvcid=4420"); ""
	// for other devices.
	Transport, Address string
	// Paths are the controllers a namespace under native multipath is
	// reached through (the head's hidden per-path devices, nvme0c1n1),
	// in controller order; nil without native multipath.
	Paths []Path
	// Zoned is the queue's zoned model of a zoned device ("host-aware",
	// "host-managed"); "" for a conventional one.
	Zoned string
}

// Path is one path to a namespace under native multipath: its hidden
// per-path block device (which has no device node and is never written)
// and the controller behind it.
type Path struct {
	Name       string // "nvme0c1n1"
	Controller string // "nvme1"
	Transport  string // "pcie", "tcp", ...
	Address    string
	State      string // the controller's state ("live", "connecting")
}

// String is "nvme0c1n1 (nvme1, pcie 0000:00:08.0, live)".
func (p Path) String() string {
	var parts []string
	for _, s := range []string{p.Controller, strings.TrimSpace(p.Transport + " " + p.Address), p.State} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return p.Name + " (" + strings.Join(parts, ", ") + ")"
}

// Fabric says whether the namespace is reached over an NVMe over Fabrics
// transport (TCP, RDMA, FC, loop): not attached by PCIe.
func (i Info) Fabric() bool { return i.Transport != "" && i.Transport != "pcie" }

// PurgeGroup is what a controller-wide purge of the target reaches: its
// NVM subsystem, or its controller when the subsystem is not known; ""
// for devices that are not NVMe.
func (i Info) PurgeGroup() string {
	if i.Subsystem != "" {
		return "subsystem " + i.Subsystem
	}
	if i.Controller != "" {
		return "controller " + i.Controller
	}
	return ""
}

// Nothing reports whether nothing is at path: no file, or a broken
// symlink.
func (s System) Nothing(path string) bool {
	_, err := os.Stat(s.p(path))
	return errors.Is(err, fs.ErrNotExist)
}

// Inspect describes the target at path: a block device (by any name,
// including /dev/disk/by-id links) or a regular file. It only reads sysfs and
// stats the path. A target that does not exist, or is neither a block device
// nor a regular file, is an error naming the path and saying what to give
// instead.
func (s System) Inspect(path string) (Info, error) {
	info := Info{Path: path, NUMANode: -1}
	if path == "" {
		return info, errors.New("empty path: give a block device (/dev/nvme0n1) or a regular file")
	}
	local := s.p(path)
	fi, err := os.Stat(local)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(local); lerr == nil {
				return info, fmt.Errorf("%s: is a broken symlink; give the device it should point to", path)
			}
			if inDev(path) {
				// A file made in /dev would be lost at the next boot and is no drive.
				return info, fmt.Errorf("%s: no such device; `nvme list` or `lsblk -d -o NAME,MODEL,SIZE` lists this machine's drives: give one as /dev/nvme0n1 or /dev/disk/by-id/...", path)
			}
			return info, fmt.Errorf("%s: does not exist; give a block device (/dev/nvme0n1) or an existing regular file (create one with truncate -s SIZE %s)", path, path)
		}
		return info, fmt.Errorf("%s: %w", path, err)
	}
	resolved, err := filepath.EvalSymlinks(local)
	if err != nil {
		return info, fmt.Errorf("%s: resolving symlinks: %w", path, err)
	}
	if abs, err := filepath.Abs(resolved); err == nil {
		resolved = abs
	}
	info.Resolved = s.unroot(resolved)

	mode := fi.Mode()
	switch {
	case mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0:
		if s.Root == "" && !haveSysfs {
			return info, fmt.Errorf("%s: inspecting a block device needs Linux: its size and identity come from sysfs", path)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return info, fmt.Errorf("%s: cannot read the device number", path)
		}
		info.Block = true
		info.Major, info.Minor = unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
		name, err := s.nameOf(info.Major, info.Minor)
		if err != nil {
			return info, fmt.Errorf("%s: %w", path, err)
		}
		info.Name = name
	case mode.IsRegular() && s.fakeBlock(info.Resolved):
		info.Block = true
		info.Name = filepath.Base(info.Resolved)
	case mode.IsRegular():
		info.Size = fi.Size()
		info.File = identity.Of(local, fi)
		return info, nil
	case mode&fs.ModeCharDevice != 0 && nvmeGenericName.MatchString(filepath.Base(info.Resolved)):
		m := nvmeGenericName.FindStringSubmatch(filepath.Base(info.Resolved))
		return info, fmt.Errorf("%s: is the generic character device (ng) of NVMe namespace nvme%s, not a block device; give its block device, /dev/nvme%s", path, m[1], m[1])
	case mode&fs.ModeCharDevice != 0 && strings.HasPrefix(filepath.Base(info.Resolved), "nvme"):
		return info, fmt.Errorf("%s: is a character device (an NVMe controller or generic node), not a block device or regular file; give the namespace's block device, such as /dev/nvme0n1", path)
	default:
		return info, fmt.Errorf("%s: is a %s, not a block device or regular file; give a block device (/dev/nvme0n1) or a regular file", path, kindOf(mode))
	}

	if err := (inspection{sys: s, info: &info}).block(); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	return info, nil
}

func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "directory"
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeNamedPipe != 0:
		return "named pipe"
	case mode&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// inspection fills in what sysfs says about one block device, info, whose
// Name is set: its size and queue, its identity and NUMA placement and,
// for an NVMe namespace, what a purge of it reaches.
type inspection struct {
	sys  System
	info *Info
}

// block fills the sysfs-derived fields.
func (r inspection) block() error {
	info := r.info
	dir, err := r.sys.classDir(info.Name)
	if err != nil {
		return fmt.Errorf("block device %s is not in sysfs: %w", info.Name, err)
	}
	if info.Major == 0 && info.Minor == 0 {
		maj, min, err := readDev(filepath.Join(dir, "dev"))
		if err != nil {
			return err
		}
		info.Major, info.Minor = maj, min
	}
	sectors, err := readInt(filepath.Join(dir, "size"))
	if err != nil {
		return err
	}
	info.Size = sectors * 512
	// A partition has no queue of its own: its disk's applies.
	queue := filepath.Join(dir, "queue")
	if exists(filepath.Join(dir, "partition")) {
		queue = filepath.Join(filepath.Dir(dir), "queue")
	}
	if n, err := readInt(filepath.Join(queue, "logical_block_size")); err == nil {
		info.LogicalBlockSize = int(n)
	}
	if n, err := readInt(filepath.Join(queue, "rotational")); err == nil {
		info.Rotational = n != 0
	}
	if n, err := readInt(filepath.Join(dir, "ro")); err == nil {
		info.ReadOnly = n != 0
	}
	if z, err := readString(filepath.Join(queue, "zoned")); err == nil && z != "none" {
		info.Zoned = z
	}

	if bf, err := readString(filepath.Join(dir, "loop", "backing_file")); err == nil {
		info.Model = "loop"
		info.BackingFile = bf
		info.File = r.loop(bf)
		return nil
	}
	r.identity(dir)
	return nil
}

// loop is the identity of the file the kernel has open for the loop
// device info names: its device and inode as the kernel records them
// (LOOP_GET_STATUS64), with the generation, birth time and size read at
// backing, the path sysfs shows, only when that path is still that file
// (not deleted, not a bind mount or overmount of another file). Zero in
// a fake tree, where there is no kernel to ask, and when the kernel does
// not answer.
func (r inspection) loop(backing string) identity.FileID {
	if r.sys.Root != "" {
		return identity.FileID{}
	}
	id, err := loopFile(r.info.Resolved)
	if err != nil {
		return identity.FileID{}
	}
	path := strings.TrimSuffix(backing, " (deleted)")
	if fi, err := os.Stat(path); err == nil {
		if at := identity.Of(path, fi); at.Dev == id.Dev && at.Inode == id.Inode {
			at.Size = fi.Size()
			return at
		}
	}
	return id
}

var nvmeCtrlName = regexp.MustCompile(`^nvme[0-9]+$`)

// identity fills model, serial, firmware and NUMA placement from the
// device the block device hangs off. For NVMe that is the controller: with
// native multipath the namespace hangs off nvme-subsysN, whose first
// controller (lowest number) is used.
func (r inspection) identity(dir string) {
	info := r.info
	if exists(filepath.Join(dir, "partition")) {
		dir = filepath.Dir(dir)
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(dir, "device"))
	if err != nil {
		return
	}
	ctrl := dev
	if strings.HasPrefix(filepath.Base(dev), "nvme-subsys") {
		if c := firstController(dev); c != "" {
			ctrl = c
		} else if c := firstController(r.sys.p("/sys/class/nvme-subsystem/" + filepath.Base(dev))); c != "" {
			ctrl = c
		}
	}
	pick := func(names ...string) string {
		for _, d := range []string{ctrl, dev, dir} {
			for _, n := range names {
				if v, err := readString(filepath.Join(d, n)); err == nil && v != "" {
					return v
				}
			}
		}
		return ""
	}
	if b := filepath.Base(ctrl); nvmeCtrlName.MatchString(b) {
		info.Controller = b
		info.Transport, _ = readString(filepath.Join(ctrl, "transport"))
		info.Address, _ = readString(filepath.Join(ctrl, "address"))
		r.namespace(dir, ctrl)
		if strings.HasPrefix(filepath.Base(dev), "nvme-subsys") {
			info.Paths = r.paths(dev)
		}
	}
	info.Model = pick("model")
	info.Serial = pick("serial")
	info.Firmware = pick("firmware_rev", "rev")
	if info.Controller == "" {
		r.scsi(dev)
	}

	// numa_node and local_cpulist live on the bus device (PCI function):
	// for an NVMe controller that is its "device" link; otherwise walk up.
	start := ctrl
	if d, err := filepath.EvalSymlinks(filepath.Join(ctrl, "device")); err == nil {
		start = d
	}
	sysDevices := r.sys.p("/sys/devices")
	for d := start; strings.HasPrefix(d, sysDevices) && len(d) > len(sysDevices); d = filepath.Dir(d) {
		node, err := readInt(filepath.Join(d, "numa_node"))
		if err != nil {
			continue
		}
		info.NUMANode = int(node)
		if l, err := readString(filepath.Join(d, "local_cpulist")); err == nil {
			if cpus, err := cpulist.Parse(l); err == nil {
				info.LocalCPUs = cpus
			}
		}
		if info.LocalCPUs == nil && node >= 0 {
			if l, err := readString(r.sys.p(fmt.Sprintf("/sys/devices/system/node/node%d/cpulist", node))); err == nil {
				if cpus, err := cpulist.Parse(l); err == nil {
					info.LocalCPUs = cpus
				}
			}
		}
		break
	}
}

var nvmeNamespaceName = regexp.MustCompile(`^(nvme[0-9]+)n[0-9]+$`)

// nvmeGenericName is the generic character device of a namespace
// (/dev/ng0n1 for /dev/nvme0n1); the submatch is "0n1".
var nvmeGenericName = regexp.MustCompile(`^ng([0-9]+n[0-9]+)$`)

// namespace fills the namespace's identity (nsid, wwid, nguid, eui,
// its subsystem) and its reach: every namespace block device of its NVM
// subsystem, through every controller of it. A namespace's name says
// which controller (or, under native multipath, which subsystem) it was
// reached through, not what else a subsystem-wide purge erases.
func (r inspection) namespace(dir, ctrl string) {
	info := r.info
	if n, err := readInt(filepath.Join(dir, "nsid")); err == nil {
		info.NSID = int(n)
	}
	info.WWID, _ = readString(filepath.Join(dir, "wwid"))
	if v, err := readString(filepath.Join(dir, "nguid")); err == nil && strings.Trim(v, "0-") != "" {
		info.NGUID = v
	}
	if v, err := readString(filepath.Join(dir, "eui")); err == nil && strings.Trim(v, "0-") != "" {
		info.EUI64 = v
	}
	if v, err := readString(filepath.Join(dir, "uuid")); err == nil && strings.Trim(v, "0-") != "" {
		info.UUID = v
	}
	info.Subsystem, _ = readString(filepath.Join(ctrl, "subsysnqn"))
	reach := r.subsystem(info.Subsystem)
	if len(reach) == 0 {
		info.Siblings = r.siblings(info.Name)
		return
	}
	info.Reach = reach
	for n := range reach {
		if n != info.Name {
			info.Siblings = append(info.Siblings, n)
		}
	}
	sort.Strings(info.Siblings)
}

// subsystem returns every namespace block device of the NVM
// subsystem nqn with its namespace ID: the subsystem's own (native
// multipath) and those of each of its controllers (multipath off); nil
// when /sys/class/nvme-subsystem does not list it.
func (r inspection) subsystem(nqn string) map[string]int {
	if nqn == "" {
		return nil
	}
	subs, _ := filepath.Glob(r.sys.p("/sys/class/nvme-subsystem/*"))
	for _, sub := range subs {
		if v, err := readString(filepath.Join(sub, "subsysnqn")); err != nil || v != nqn {
			continue
		}
		out := map[string]int{}
		add := func(d string) {
			ents, err := os.ReadDir(d)
			if err != nil {
				return
			}
			for _, e := range ents {
				if !nvmeNamespaceName.MatchString(e.Name()) {
					continue
				}
				if _, err := os.Stat(r.sys.p("/sys/class/block/" + e.Name())); err != nil {
					continue // a hidden path (nvme0c0n1) or gone
				}
				n, err := readInt(filepath.Join(d, e.Name(), "nsid"))
				if err != nil {
					n, _ = readInt(r.sys.p("/sys/class/block/" + e.Name() + "/nsid"))
				}
				out[e.Name()] = int(n)
			}
		}
		add(sub)
		ents, _ := os.ReadDir(sub)
		for _, e := range ents {
			if nvmeCtrlName.MatchString(e.Name()) {
				add(filepath.Join(sub, e.Name()))
			}
		}
		return out
	}
	return nil
}

// nvmeHeadName is a native multipath head, nvme<subsystem>n<namespace>.
var nvmeHeadName = regexp.MustCompile(`^nvme([0-9]+)n([0-9]+)$`)

// paths lists the paths of the multipath head info.Name in the NVM
// subsystem directory subsys: for each of its controllers nvmeC, the
// hidden per-path device nvme<S>c<C>n<N> it has.
func (r inspection) paths(subsys string) []Path {
	m := nvmeHeadName.FindStringSubmatch(r.info.Name)
	if m == nil {
		return nil
	}
	ents, err := os.ReadDir(subsys)
	if err != nil {
		return nil
	}
	var out []Path
	for _, e := range ents {
		if !nvmeCtrlName.MatchString(e.Name()) {
			continue
		}
		c := strings.TrimPrefix(e.Name(), "nvme")
		name := "nvme" + m[1] + "c" + c + "n" + m[2]
		ctrl := filepath.Join(subsys, e.Name())
		if !exists(filepath.Join(ctrl, name)) {
			continue
		}
		p := Path{Name: name, Controller: e.Name()}
		p.Transport, _ = readString(filepath.Join(ctrl, "transport"))
		p.Address, _ = readString(filepath.Join(ctrl, "address"))
		p.State, _ = readString(filepath.Join(ctrl, "state"))
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(out[i].Controller, "nvme"))
		b, _ := strconv.Atoi(strings.TrimPrefix(out[j].Controller, "nvme"))
		return a < b
	})
	return out
}

// siblings lists the other namespaces nvmeXn* of the namespace
// named name (nvmeXnY), whose X is its controller or, under native
// multipath, its subsystem.
func (r inspection) siblings(name string) []string {
	m := nvmeNamespaceName.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	ents, err := os.ReadDir(r.sys.p("/sys/block"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if n := nvmeNamespaceName.FindStringSubmatch(e.Name()); n != nil && n[1] == m[1] && e.Name() != name {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// firstController returns the resolved directory of the lowest-numbered nvmeN
// entry in an nvme-subsystem directory, or "".
func firstController(subsys string) string {
	ents, err := os.ReadDir(subsys)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		if nvmeCtrlName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(names[i], "nvme"))
		b, _ := strconv.Atoi(strings.TrimPrefix(names[j], "nvme"))
		return a < b
	})
	for _, n := range names {
		if d, err := filepath.EvalSymlinks(filepath.Join(subsys, n)); err == nil {
			return d
		}
	}
	return ""
}

// scsi fills a SCSI or SATA disk's identity from what it reports, its
// VPD pages as the kernel read them at probe (sysfs device/vpd_pg80,
// device/vpd_pg83, device/wwid, in dev): its unit serial, WWN and
// EUI-64. A page that is absent or does not parse says nothing.
func (r inspection) scsi(dev string) {
	info := r.info
	if page, err := os.ReadFile(filepath.Join(dev, "vpd_pg80")); err == nil {
		if serial, err := identity.ParseVPD80(page); err == nil && serial != "" {
			info.Serial = serial
		}
	}
	if page, err := os.ReadFile(filepath.Join(dev, "vpd_pg83")); err == nil {
		if v, err := identity.ParseVPD83(page); err == nil {
			info.WWN, info.EUI64 = v.WWN, v.EUI64
			// SAT's designator: "ATA" padded to 8 bytes, the 40-byte
			// model, the 20-byte serial.
			const at = len("t10.ATA     ") + 40
			if info.Serial == "" && strings.HasPrefix(v.T10, "t10.ATA ") && len(v.T10) > at {
				info.Serial = strings.TrimSpace(v.T10[at:])
			}
		}
	}
	if w, err := readString(filepath.Join(dev, "wwid")); err == nil {
		info.WWID = w
	}
}

// inDev reports whether path is under /dev, where only devices belong.
func inDev(path string) bool {
	return strings.HasPrefix(filepath.Clean(path), "/dev/")
}
