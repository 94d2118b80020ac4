package qemu

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Modules are the kernel modules the guest loads, in this order, with
// their dependencies (from modules.dep) loaded before each: the NVMe
// driver, and virtio PCI with 9p for the shared root and work directory.
var Modules = []string{"nvme", "virtio_pci", "9pnet_virtio", "9p"}

// Kernel is an installed Linux kernel: its image and its modules.
type Kernel struct {
	Version string // "6.1.0-57-amd64"
	Image   string // /boot/vmlinuz-VERSION
	Modules string // /lib/modules/VERSION
}

// ErrKernel is wrapped by the errors of a kernel the guest cannot boot
// with: a module it needs is neither built in nor installed, or is
// compressed in a way Initramfs cannot read.
var ErrKernel = errors.New("kernel unfit for the guest")

// FindKernel returns the newest kernel under /boot whose modules are
// installed and hold what the guest loads (Modules), as Debian's
// linux-image-amd64 installs it.
func FindKernel() (Kernel, error) { return findKernel("/boot", "/lib/modules") }

// findKernel returns the kernel of boot/vmlinuz-VERSION with the highest
// VERSION (compared as versions: 6.1.0-10 after 6.1.0-9) that has
// modules/VERSION/modules.dep and every module of Modules built in or
// installed. A newer kernel without them is passed over: Debian's
// 6.1.0-57-cloud-amd64 sorts after 6.1.0-57-amd64 and has no 9p. When no
// kernel has them the error wraps ErrKernel and names what the newest
// lacks.
func findKernel(boot, modules string) (Kernel, error) {
	images, _ := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	slices.SortFunc(images, func(a, b string) int { return compareVersions(filepath.Base(b), filepath.Base(a)) })
	var unfit error
	for _, img := range images {
		v := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		mods := filepath.Join(modules, v)
		if _, err := os.Stat(filepath.Join(mods, "modules.dep")); err != nil {
			continue
		}
		k := Kernel{Version: v, Image: img, Modules: mods}
		if _, err := k.moduleFiles(Modules); errors.Is(err, ErrKernel) {
			if unfit == nil {
				unfit = err
			}
			continue
		}
		if f, err := os.Open(img); err != nil {
			return Kernel{}, fmt.Errorf("kernel %s: %w (the guest kernel must be readable)", img, err)
		} else {
			f.Close()
		}
		return k, nil
	}
	if unfit != nil {
		return Kernel{}, fmt.Errorf("no kernel in %s has what the guest loads (%s): %w: install linux-image-amd64", boot, strings.Join(Modules, ", "), unfit)
	}
	return Kernel{}, fmt.Errorf("no kernel in %s with its modules in %s: install linux-image-amd64", boot, modules)
}

// compareVersions compares two kernel releases as sort -V and dpkg do:
// runs of digits as numbers, the text between them character by
// character, with letters before other characters; and, as the kernel
// numbers its release candidates, "-rcN" before the release it leads to
// (6.13.0-rc3 before 6.13.0, 6.13-rc7-amd64 before 6.13-amd64), as dpkg
// reads "~rcN". It returns -1, 0 or +1.
func compareVersions(a, b string) int {
	a, b = rcTilde.ReplaceAllString(a, "~rc$1"), rcTilde.ReplaceAllString(b, "~rc$1")
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	// order ranks a text character; 0 is the end of the text run.
	order := func(s string, i int) int {
		switch c := s[i]; {
		case c == '~':
			return -1
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			return int(c)
		default:
			return int(c) + 256
		}
	}
	for a != "" || b != "" {
		i, j := 0, 0
		for (i < len(a) && !isDigit(a[i])) || (j < len(b) && !isDigit(b[j])) {
			oa, ob := 0, 0
			if i < len(a) && !isDigit(a[i]) {
				oa = order(a, i)
			}
			if j < len(b) && !isDigit(b[j]) {
				ob = order(b, j)
			}
			if oa != ob {
				return cmpInt(oa, ob)
			}
			i, j = i+1, j+1
		}
		a, b = a[i:], b[j:]
		i, j = 0, 0
		for i < len(a) && isDigit(a[i]) {
			i++
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		na, nb := strings.TrimLeft(a[:i], "0"), strings.TrimLeft(b[:j], "0")
		if len(na) != len(nb) {
			return cmpInt(len(na), len(nb))
		}
		if c := strings.Compare(na, nb); c != 0 {
			return c
		}
		a, b = a[i:], b[j:]
	}
	return 0
}

// rcTilde finds a release candidate's "-rcN".
var rcTilde = regexp.MustCompile(`-rc([0-9])`)

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// moduleFiles returns the module files (relative to k.Modules) to load for
// want, dependencies first, each once. A module built into the kernel
// (listed in modules.builtin) needs no file.
func (k Kernel) moduleFiles(want []string) ([]string, error) {
	f, err := os.Open(filepath.Join(k.Modules, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps, err := parseModulesDep(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	builtin := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(k.Modules, "modules.builtin")); err == nil {
		for _, l := range strings.Fields(string(data)) {
			builtin[modName(l)] = true
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	files, err := loadOrder(deps, builtin, want)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Version, err)
	}
	return files, nil
}

// parseModulesDep reads modules.dep: "kernel/a.ko: kernel/b.ko kernel/c.ko",
// keyed by module name (file name without .ko and compression suffix, with
// "-" read as "_", as modprobe does).
func parseModulesDep(r io.Reader) (map[string]depEntry, error) {
	out := map[string]depEntry{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		out[modName(file)] = depEntry{file: file, deps: strings.Fields(rest)}
	}
	return out, sc.Err()
}

type depEntry struct {
	file string
	deps []string // files, as modules.dep lists them
}

func modName(file string) string {
	b := filepath.Base(file)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// loadOrder returns the files of want and their dependencies, each module
// after everything it depends on; a module in builtin is in the kernel
// already and has no file.
func loadOrder(deps map[string]depEntry, builtin map[string]bool, want []string) ([]string, error) {
	var out []string
	done := map[string]bool{}
	var visit func(name string, depth int) error
	visit = func(name string, depth int) error {
		name = strings.ReplaceAll(name, "-", "_")
		if done[name] || builtin[name] {
			return nil
		}
		e, ok := deps[name]
		if !ok {
			return fmt.Errorf("module %s is neither built in (modules.builtin) nor installed (modules.dep): %w", name, ErrKernel)
		}
		if depth > 32 {
			return fmt.Errorf("module %s: dependency loop", name)
		}
		for _, d := range e.deps {
			if err := visit(modName(d), depth+1); err != nil {
				return err
			}
		}
		done[name] = true
		out = append(out, e.file)
		return nil
	}
	for _, w := range want {
		if err := visit(w, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Initramfs builds the guest's initramfs (an uncompressed newc cpio, which
// the kernel reads as it is) from installed packages: busybox (static) as
// every tool of /init, k's modules, and the init script. Nothing is
// downloaded. Modules built into k need no loading; modules shipped
// compressed (.ko.xz, .ko.zst, .ko.gz, as Debian 13 and Ubuntu 24.04 ship
// them) are stored decompressed, since busybox's insmod loads plain .ko
// files. An error of a kernel the guest cannot use wraps ErrKernel.
func Initramfs(k Kernel, busybox string) ([]byte, error) {
	return InitramfsWith(k, busybox, nil)
}

// InitramfsWith is Initramfs with more modules (nvmet, nvme_tcp), loaded
// at boot after Modules, each after its dependencies, with the parameters
// the kernel command line gives them. A module neither built in nor
// installed is an error wrapping ErrKernel that names it.
func InitramfsWith(k Kernel, busybox string, extra []string) ([]byte, error) {
	files, err := k.moduleFiles(append(slices.Clone(Modules), extra...))
	if err != nil {
		return nil, err
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return nil, fmt.Errorf("busybox: %w (install busybox-static)", err)
	}
	if ef, err := elf.NewFile(bytes.NewReader(bb)); err != nil {
		return nil, fmt.Errorf("%s: %w", busybox, err)
	} else {
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				return nil, fmt.Errorf("%s is linked dynamically and cannot run alone in the initramfs: install busybox-static", busybox)
			}
		}
	}
	var buf bytes.Buffer
	w := cpioWriter{w: &buf}
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot", "lib", "lib/modules"} {
		w.dir(d)
	}
	w.file("bin/busybox", 0o755, bb)
	var order []string
	for _, f := range files {
		data, name, err := readModule(filepath.Join(k.Modules, f))
		if err != nil {
			return nil, err
		}
		w.file("lib/modules/"+name, 0o644, data)
		order = append(order, name)
	}
	w.file("lib/modules/order", 0o644, []byte(strings.Join(order, "\n")+"\n"))
	w.file("init", 0o755, []byte(initScript))
	w.trailer()
	return buf.Bytes(), w.err
}

// readModule reads the module file path, decompressing .ko.xz, .ko.zst
// and .ko.gz, and returns it with the name it has uncompressed (nvme.ko).
func readModule(path string) (data []byte, name string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	base := filepath.Base(path)
	i := strings.LastIndex(base, ".ko")
	if i < 0 {
		return nil, "", fmt.Errorf("module %s: not a .ko file: %w", path, ErrKernel)
	}
	name, ext := base[:i+3], base[i+3:]
	var r io.Reader
	switch ext {
	case "":
		return raw, name, nil
	case ".xz":
		r, err = xz.NewReader(bytes.NewReader(raw))
	case ".zst":
		var d *zstd.Decoder
		if d, err = zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1)); err == nil {
			defer d.Close()
			r = d
		}
	case ".gz":
		r, err = gzip.NewReader(bytes.NewReader(raw))
	default:
		return nil, "", fmt.Errorf("module %s: compression %q unknown (.ko, .ko.xz, .ko.zst and .ko.gz are read): %w", path, ext, ErrKernel)
	}
	if err == nil {
		data, err = io.ReadAll(r)
	}
	if err != nil {
		return nil, "", fmt.Errorf("module %s: decompressing: %v: %w", path, err, ErrKernel)
	}
	return data, name, nil
}

// cpioWriter writes a "newc" cpio archive.
type cpioWriter struct {
	w   io.Writer
	ino int
	err error
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	var b bytes.Buffer
	b.WriteString(hdr)
	b.WriteString(name)
	b.WriteByte(0)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	b.Write(data)
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	_, c.err = c.w.Write(b.Bytes())
}

func (c *cpioWriter) dir(name string)                            { c.entry(name, 0o040755, nil) }
func (c *cpioWriter) file(name string, perm uint32, data []byte) { c.entry(name, 0o100000|perm, data) }
func (c *cpioWriter) trailer()                                   { c.entry("TRAILER!!!", 0, nil) }

// initScript is the guest's /init. It says it started, loads the modules, mounts the host's
// root (9p tag "root") read-only on /newroot with tmpfs over the
// directories a run writes to, the Machine's Shares (tags share0, ...)
// read-only and the work directory (tag "work") writable at the host's
// paths, starts udev when asked, and runs the work directory's
// run.sh in that root, writing its exit status beside it. The kernel
// command line carries the options (drivequal.work=PATH, drivequal.udev=1)
// and the modules' parameters (nvme_core.multipath=N), which insmod, unlike
// modprobe, does not read by itself.
const initScript = `#!/bin/busybox sh
# The first word on the console: the accelerator has run the kernel to
# init (Machine.Run falls back to the next one until this is seen).
echo "drivequal-init: started"
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
work=; udev=; shares=
for a in $(cat /proc/cmdline); do
  case "$a" in
  drivequal.work=*) work="${a#drivequal.work=}" ;;
  drivequal.share=*) shares="$shares ${a#drivequal.share=}" ;;
  drivequal.udev=1) udev=1 ;;
  esac
done
# insmod, unlike modprobe, does not read module parameters from the
# kernel command line (nvme_core.multipath=N): pass them on.
for m in $(cat /lib/modules/order); do
  n=$(echo "${m%.ko}" | tr - _)
  params=
  for a in $(cat /proc/cmdline); do
    case "$a" in "$n".*) params="$params ${a#"$n".}" ;; esac
  done
  insmod /lib/modules/$m $params || echo "drivequal-init: insmod $m$params failed"
done
fail() { echo "drivequal-init: $*"; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose root /newroot || fail "mounting the host's root failed"
for d in tmp run var/tmp var/lib/udev root; do
  [ -d /newroot/$d ] && mount -t tmpfs -o mode=0755 tmpfs /newroot/$d
done
chmod 1777 /newroot/tmp /newroot/var/tmp
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
i=0
for p in $shares; do
  mkdir -p "/newroot$p"
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 share$i "/newroot$p" || fail "mounting $p failed"
  i=$((i+1))
done
[ -n "$work" ] || fail "no drivequal.work= on the kernel command line"
mkdir -p "/newroot$work"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work "/newroot$work" || fail "mounting the work directory failed"
if [ -n "$udev" ]; then
  # udev loads no module by a device's alias: the modules the guest
  # needs are loaded above, and at coldplug udev would otherwise load a
  # dozen for the machine's other devices (floppy, speaker, kvm...), each
  # read over 9p and linked under emulation.
  mkdir -p /newroot/run/udev/rules.d
  : >/newroot/run/udev/rules.d/80-drivers.rules
  # systemd's tools ignore requests made in a chroot unless told not to.
  SYSTEMD_IGNORE_CHROOT=1 chroot /newroot /bin/sh -c '/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1 && udevadm trigger --action=add && udevadm settle --timeout=60' || echo "drivequal-init: udev failed"
fi
echo "drivequal-init: running $work/run.sh"
chroot /newroot /bin/sh "$work/run.sh" >"/newroot$work/output" 2>&1
echo $? >"/newroot$work/exit"
sync
poweroff -f
`

// CheckModules returns nil when every module of want is built into k or
// installed with its dependencies, else an error wrapping ErrKernel that
// names the first one missing.
func (k Kernel) CheckModules(want []string) error {
	_, err := k.moduleFiles(want)
	return err
}
