// Package device finds out what each target of a run is and whether it
// may be written, and owns it for the run.
//
// Inspect describes a block device or regular file from sysfs: its size,
// identity, NVMe namespace and what a purge of it reaches, and the CPUs
// local to it (Place spreads the drives over CPUs for cpus_allowed;
// MatchCapacity names the spec capacity a size is). Check lists every
// reason not to write the targets at once: mounted, active swap,
// partitioned, held by device-mapper or md, carrying a partition table or
// signature (package signature), backing the running system, given twice.
// Hold owns the targets for a run (O_EXCL opens and flocks, so that nothing
// mounts, formats or claims them meanwhile) and says who has one it cannot
// have; Holds.Discard discards them through the held descriptors; Recheck
// and Gone check before each destructive step that a target is still the
// one that was checked. PCIePath reads an NVMe controller's PCIe links
// (package pcie).
//
// Inspect, Check and Recheck only read. Hold opens targets for writing but
// writes nothing; Discard is the only call that changes a target's
// contents. The package never wipes a signature and never prints; callers
// decide what a person sees.
//
// Sizes are in bytes throughout; GB means 10^9 bytes and MiB 2^20 bytes.
package device

import (
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/device/cpulist"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
)

// System is the machine whose devices are inspected.
//
// Root is "" for the running system. Otherwise it is the root of a fake tree
// holding Root+"/sys", Root+"/proc" and Root+"/dev", and every absolute path
// (given to Inspect, or found in mountinfo and /proc/swaps) is looked up
// below Root. Because a fake tree cannot hold device nodes without root, a
// regular file Root+"/dev/NAME" stands for a block device when
// Root+"/sys/class/block/NAME" exists; on the running system only a real
// block device node is ever taken for one.
type System struct {
	Root string
}

// p maps an absolute path of the inspected system to a path of this machine.
func (s System) p(path string) string {
	if s.Root == "" || !filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(s.Root, path)
}

// unroot maps a path of this machine back to the inspected system.
func (s System) unroot(path string) string {
	if s.Root == "" {
		return path
	}
	root := filepath.Clean(s.Root)
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return "/" + filepath.ToSlash(rel)
	}
	return path
}

// fakeBlock reports whether resolved, a regular file in a fake tree, stands
// for a block device.
func (s System) fakeBlock(resolved string) bool {
	if s.Root == "" || !strings.HasPrefix(resolved, "/dev/") {
		return false
	}
	_, err := os.Stat(s.p("/sys/class/block/" + filepath.Base(resolved)))
	return err == nil
}

// devnum is a block device number.
type devnum struct{ major, minor uint32 }

func (d devnum) String() string { return fmt.Sprintf("%d:%d", d.major, d.minor) }

// nameOf returns the kernel name of block device major:minor.
func (s System) nameOf(major, minor uint32) (string, error) {
	link := s.p(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor))
	dir, err := filepath.EvalSymlinks(link)
	if err != nil {
		return "", fmt.Errorf("block device %d:%d is not in sysfs: %w", major, minor, err)
	}
	return filepath.Base(dir), nil
}

// classDir returns the sysfs directory of block device name (whole disk or
// partition), with symlinks resolved.
func (s System) classDir(name string) (string, error) {
	return filepath.EvalSymlinks(s.p("/sys/class/block/" + name))
}

// devOf returns the device number of the block device at path (of the
// inspected system).
func (s System) devOf(path string) (devnum, bool) {
	fi, err := os.Stat(s.p(path))
	if err != nil {
		return devnum{}, false
	}
	if mode := fi.Mode(); mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return devnum{unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))}, true
		}
		return devnum{}, false
	}
	resolved, err := filepath.EvalSymlinks(s.p(path))
	if err != nil || !s.fakeBlock(s.unroot(resolved)) {
		return devnum{}, false
	}
	maj, min, err := readDev(s.p("/sys/class/block/" + filepath.Base(resolved) + "/dev"))
	if err != nil {
		return devnum{}, false
	}
	return devnum{maj, min}, true
}

// OnlineCPUs returns the online CPUs, from /sys/devices/system/cpu/online.
func (s System) OnlineCPUs() ([]int, error) {
	path := s.p("/sys/devices/system/cpu/online")
	l, err := readString(path)
	if err != nil {
		return nil, fmt.Errorf("reading online CPUs: %w", err)
	}
	cpus, err := cpulist.Parse(l)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

// PCIePath reads the PCIe links from NVMe controller ctrl ("nvme0") up to
// its root port (see pcie.Read); ok is false for a controller that is not
// on PCIe or reports no link.
func (s System) PCIePath(ctrl string) (p pcie.Path, ok bool, err error) {
	return pcie.Read(s.p("/sys"), ctrl)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int64, error) {
	v, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// readDev reads a sysfs "dev" file ("259:0").
func readDev(path string) (major, minor uint32, err error) {
	v, err := readString(path)
	if err != nil {
		return 0, 0, err
	}
	return parseDev(v)
}

func parseDev(v string) (major, minor uint32, err error) {
	a, b, ok := strings.Cut(v, ":")
	if !ok {
		return 0, 0, fmt.Errorf("device number %q is not MAJOR:MINOR", v)
	}
	ma, err1 := strconv.ParseUint(a, 10, 32)
	mi, err2 := strconv.ParseUint(b, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("device number %q is not MAJOR:MINOR", v)
	}
	return uint32(ma), uint32(mi), nil
}

// Path maps an absolute path of the inspected system ("/sys") to a path
// of this machine, for a package that reads it itself.
func (s System) Path(path string) string { return s.p(path) }
