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

// mounts reads /proc/self/mountinfo.
func (s System) mounts() ([]mount, error) {
	return s.mountinfo(s.p("/proc/self/mountinfo"))
}

// mountinfo reads a mountinfo file (a path of this machine).
func (s System) mountinfo(path string) ([]mount, error) {
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

// mountDev returns the block device a mount is on: its device number, or
// for file systems with anonymous numbers (btrfs) its source.
func (s System) mountDev(m mount) (devnum, bool) {
	if m.dev.major != 0 {
		return m.dev, true
	}
	if strings.HasPrefix(m.source, "/dev/") {
		return s.devOf(m.source)
	}
	return devnum{}, false
}

// mountedAt lists "NAME at MOUNTPOINT" for every mount of a device in devs,
// and the mount points alone.
func mountedAt(s System, mounts []mount, devs map[devnum]string) (where, points []string) {
	seen := map[string]bool{}
	for _, m := range mounts {
		name, ok := devs[m.dev]
		if !ok && strings.HasPrefix(m.source, "/dev/") {
			if d, ok2 := s.devOf(m.source); ok2 {
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
func (s System) systemDevices(mounts []mount) map[devnum]string {
	out := map[devnum]string{}
	var add func(d devnum, via string, depth int)
	add = func(d devnum, via string, depth int) {
		if _, ok := out[d]; ok || depth > 16 {
			return
		}
		out[d] = via
		name, err := s.nameOf(d.major, d.minor)
		if err != nil {
			return
		}
		dir, err := s.classDir(name)
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
	for _, m := range mounts {
		switch m.point {
		case "/", "/boot", "/boot/efi":
		default:
			continue
		}
		if d, ok := s.mountDev(m); ok {
			add(d, fmt.Sprintf("%q is mounted from %s", m.point, m.source), 0)
		}
	}
	return out
}

// swaps returns the file names of active swap areas, from /proc/swaps.
func (s System) swaps() ([]string, error) {
	b, err := os.ReadFile(s.p("/proc/swaps"))
	if err != nil {
		return nil, err
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) == 0 { // header
			continue
		}
		out = append(out, strings.TrimSuffix(unescapeOctal(f[0]), " (deleted)"))
	}
	return out, nil
}

// swapOn lists the active swap areas on the target or its partitions.
func (s System) swapOn(in Info, swaps []string, devs map[devnum]string) []string {
	var out []string
	for _, sw := range swaps {
		if in.Block {
			if d, ok := s.devOf(sw); ok {
				if _, on := devs[d]; on {
					out = append(out, sw)
				}
			}
			continue
		}
		a, errA := os.Stat(s.p(sw))
		b, errB := os.Stat(s.p(in.Resolved))
		if errA == nil && errB == nil && os.SameFile(a, b) {
			out = append(out, sw)
		}
	}
	return out
}
