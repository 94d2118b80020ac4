package device

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// disk is a block device as sysfs relates it to others, for the safety
// checks: the disk it is a partition of, its own partitions and what holds
// them (device-mapper, md).
type disk struct {
	sys  System
	name string // kernel name
}

// partitionOf reports whether the device is a partition (its sysfs
// directory holds a "partition" file), and if so the kernel name of its
// whole disk and its partition number.
func (d disk) partitionOf() (whole string, number int, ok bool) {
	if d.name == "" {
		return "", 0, false
	}
	dir, err := d.sys.classDir(d.name)
	if err != nil || !exists(filepath.Join(dir, "partition")) {
		return "", 0, false
	}
	n, _ := readInt(filepath.Join(dir, "partition"))
	return filepath.Base(filepath.Dir(dir)), int(n), true
}

// partDir returns the sysfs directory of partition part of the disk.
func (d disk) partDir(part string) string {
	if dir, err := d.sys.classDir(d.name); err == nil {
		return filepath.Join(dir, part)
	}
	return d.sys.p("/sys/class/block/" + part)
}

// partitions lists the partitions of the disk: the subdirectories of its
// sysfs directory that hold a "partition" file.
func (d disk) partitions() []string {
	dir, err := d.sys.classDir(d.name)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var parts []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), d.name) && exists(filepath.Join(dir, e.Name(), "partition")) {
			parts = append(parts, e.Name())
		}
	}
	sort.Strings(parts)
	return parts
}

// devices maps the device number of the disk, self, and of each of its
// partitions parts to its kernel name.
func (d disk) devices(self devnum, parts []string) map[devnum]string {
	devs := map[devnum]string{self: d.name}
	for _, p := range parts {
		if maj, min, err := readDev(filepath.Join(d.partDir(p), "dev")); err == nil {
			devs[devnum{maj, min}] = p
		}
	}
	return devs
}

// holders names what holds the disk or its partitions parts: "dm-0
// (vg-data)", "md0".
func (d disk) holders(parts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append([]string{d.name}, parts...) {
		dir := d.sys.p("/sys/class/block/" + d.name + "/holders")
		if n != d.name {
			dir = filepath.Join(d.partDir(n), "holders")
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			h := e.Name()
			if seen[h] {
				continue
			}
			seen[h] = true
			label := h
			if dm, err := readString(d.sys.p("/sys/class/block/" + h + "/dm/name")); err == nil && dm != "" {
				label += " (" + dm + ")"
			}
			if n != d.name {
				label += " on " + n
			}
			out = append(out, label)
		}
	}
	return out
}

// diskName is a block device whose identity is only what it reports:
// an NVMe namespace, a SCSI, SATA or virtio disk.
var diskName = regexp.MustCompile(`^(nvme[0-9]+n[0-9]+|sd[a-z]+|vd[a-z]+|xvd[a-z]+)$`)

// Disks lists the device paths (/dev/NAME) of the whole disks of the
// system that identify themselves by what they report (NVMe
// namespaces, SCSI, SATA and virtio disks), for telling a drive from
// others like it; hidden per-path devices of NVMe multipath are left
// out. It only reads sysfs.
func (s System) Disks() []string {
	ents, err := os.ReadDir(s.p("/sys/block"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !diskName.MatchString(e.Name()) {
			continue
		}
		if h, err := readInt(s.p("/sys/block/" + e.Name() + "/hidden")); err == nil && h != 0 {
			continue
		}
		out = append(out, "/dev/"+e.Name())
	}
	return out
}
