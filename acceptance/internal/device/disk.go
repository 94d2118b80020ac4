package device

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// partitionOf reports whether block device name is a partition (its sysfs
// directory holds a "partition" file), and if so the kernel name of its
// whole disk and its partition number.
func (s System) partitionOf(name string) (disk string, number int, ok bool) {
	if name == "" {
		return "", 0, false
	}
	dir, err := s.classDir(name)
	if err != nil || !exists(filepath.Join(dir, "partition")) {
		return "", 0, false
	}
	n, _ := readInt(filepath.Join(dir, "partition"))
	return filepath.Base(filepath.Dir(dir)), int(n), true
}

// partDir returns the sysfs directory of partition part of disk name.
func (s System) partDir(name, part string) string {
	if dir, err := s.classDir(name); err == nil {
		return filepath.Join(dir, part)
	}
	return s.p("/sys/class/block/" + part)
}

// partitions lists the partitions of disk name: the subdirectories of its
// sysfs directory that hold a "partition" file.
func (s System) partitions(name string) []string {
	dir, err := s.classDir(name)
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var parts []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), name) && exists(filepath.Join(dir, e.Name(), "partition")) {
			parts = append(parts, e.Name())
		}
	}
	sort.Strings(parts)
	return parts
}

// holders names what holds disk name or its partitions: "dm-0 (vg-data)",
// "md0".
func (s System) holders(name string, parts []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append([]string{name}, parts...) {
		dir := s.p("/sys/class/block/" + name + "/holders")
		if n != name {
			dir = filepath.Join(s.partDir(name, n), "holders")
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
			if dm, err := readString(s.p("/sys/class/block/" + h + "/dm/name")); err == nil && dm != "" {
				label += " (" + dm + ")"
			}
			if n != name {
				label += " on " + n
			}
			out = append(out, label)
		}
	}
	return out
}
