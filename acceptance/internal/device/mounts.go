package device

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mount is one line of mountinfo.
type mount struct {
	dev    devnum
	point  string
	source string
}

// mountTable is the mounts of one mount namespace of the inspected
// system, as its mountinfo lists them.
type mountTable struct {
	sys    System
	mounts []mount
}

// mounts reads the mount table of process proc ("self", or a pid):
// /proc/PROC/mountinfo.
func (s System) mounts(proc string) (mountTable, error) {
	ms, err := readMountinfo(s.p("/proc/" + proc + "/mountinfo"))
	return mountTable{sys: s, mounts: ms}, err
}

// readMountinfo reads a mountinfo file (a path of this machine).
func readMountinfo(path string) ([]mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		m, err := parseMountinfo(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// parseMountinfo parses one mountinfo line:
//
//	36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func parseMountinfo(line string) (mount, error) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 6 || sep < 0 || sep+2 >= len(f) {
		return mount{}, fmt.Errorf("malformed mountinfo line %q", line)
	}
	maj, min, err := parseDev(f[2])
	if err != nil {
		return mount{}, err
	}
	return mount{dev: devnum{maj, min}, point: unescapeOctal(f[4]), source: unescapeOctal(f[sep+2])}, nil
}

// unescapeOctal undoes the \040-style escapes of mountinfo and /proc/swaps.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dev returns the block device a mount is on: its device number, or for
// file systems with anonymous numbers (btrfs) its source.
func (t mountTable) dev(m mount) (devnum, bool) {
	if m.dev.major != 0 {
		return m.dev, true
	}
	if strings.HasPrefix(m.source, "/dev/") {
		return t.sys.devOf(m.source)
	}
	return devnum{}, false
}

// at lists "NAME at MOUNTPOINT" for every mount of a device in devs, and
// the mount points alone.
func (t mountTable) at(devs map[devnum]string) (where, points []string) {
	seen := map[string]bool{}
	for _, m := range t.mounts {
		name, ok := devs[m.dev]
		if !ok && strings.HasPrefix(m.source, "/dev/") {
			if d, ok2 := t.sys.devOf(m.source); ok2 {
				name, ok = devs[d]
			}
		}
		if !ok {
			continue
		}
		w := name + " at " + m.point
		if !seen[w] {
			seen[w] = true
			where = append(where, w)
			points = append(points, m.point)
		}
	}
	return where, points
}

// systemDevices returns the devices that back "/", "/boot" or "/boot/efi":
// the mounted device, the disk of a partition, and the slaves of dm and md
// devices, recursively. Each maps to a description of how.
func (t mountTable) systemDevices() map[devnum]string {
	out := map[devnum]string{}
	var add func(d devnum, via string, depth int)
	add = func(d devnum, via string, depth int) {
		if _, ok := out[d]; ok || depth > 16 {
			return
		}
		out[d] = via
		name, err := t.sys.nameOf(d.major, d.minor)
		if err != nil {
			return
		}
		dir, err := t.sys.classDir(name)
		if err != nil {
			return
		}
		if exists(filepath.Join(dir, "partition")) {
			if maj, min, err := readDev(filepath.Join(filepath.Dir(dir), "dev")); err == nil {
				add(devnum{maj, min}, via+" on partition "+name, depth+1)
			}
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "slaves"))
		for _, e := range ents {
			if maj, min, err := readDev(filepath.Join(dir, "slaves", e.Name(), "dev")); err == nil {
				add(devnum{maj, min}, via+" through "+name, depth+1)
			}
		}
	}
	for _, m := range t.mounts {
		switch m.point {
		case "/", "/boot", "/boot/efi":
		default:
			continue
		}
		if d, ok := t.dev(m); ok {
			add(d, fmt.Sprintf("%q is mounted from %s", m.point, m.source), 0)
		}
	}
	return out
}

// swapTable is the active swap areas of the inspected system, by file
// name, as /proc/swaps lists them.
type swapTable struct {
	sys   System
	files []string
}

// swaps reads /proc/swaps.
func (s System) swaps() (swapTable, error) {
	t := swapTable{sys: s}
	b, err := os.ReadFile(s.p("/proc/swaps"))
	if err != nil {
		return t, err
	}
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) == 0 { // header
			continue
		}
		t.files = append(t.files, strings.TrimSuffix(unescapeOctal(f[0]), " (deleted)"))
	}
	return t, nil
}

// on lists the active swap areas on the target or its partitions, devs.
func (t swapTable) on(in Info, devs map[devnum]string) []string {
	var out []string
	for _, sw := range t.files {
		if in.Block {
			if d, ok := t.sys.devOf(sw); ok {
				if _, on := devs[d]; on {
					out = append(out, sw)
				}
			}
			continue
		}
		a, errA := os.Stat(t.sys.p(sw))
		b, errB := os.Stat(t.sys.p(in.Resolved))
		if errA == nil && errB == nil && os.SameFile(a, b) {
			out = append(out, sw)
		}
	}
	return out
}
