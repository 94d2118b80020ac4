package qemu

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// fakeBusybox writes the smallest file Initramfs takes for a static
// busybox: an ELF header with no program headers (so no interpreter).
// Nothing runs it; the tests here read the archive.
func fakeBusybox(t *testing.T) string {
	t.Helper()
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01")
	h[16], h[18], h[20] = 2, 62, 1 // ET_EXEC, EM_X86_64, EV_CURRENT
	h[52] = 64                     // e_ehsize
	p := filepath.Join(t.TempDir(), "busybox")
	if err := os.WriteFile(p, h, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// compressor writes data compressed to a file path.
type compressor func(t *testing.T, path string, data []byte)

func libXZ(t *testing.T, path string, data []byte) {
	var b bytes.Buffer
	w, err := xz.WriterConfig{CheckSum: xz.CRC32}.NewWriter(&b)
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = os.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func libZstd(t *testing.T, path string, data []byte) {
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(path, w.EncodeAll(data, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

func libGzip(t *testing.T, path string, data []byte) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tool compresses with a command on PATH (the xz or zstd a kernel's
// modules_install runs), given its flags, into path from path without its
// suffix; the test skips when the command is missing.
func tool(name string, flags ...string) compressor {
	return func(t *testing.T, path string, data []byte) {
		t.Helper()
		bin, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s on PATH to compress with", name)
		}
		plain := strings.TrimSuffix(path, filepath.Ext(path))
		if err := os.WriteFile(plain, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, append(flags, plain)...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v: %s", name, strings.Join(flags, " "), err, out)
		}
		os.Remove(plain)
	}
}

// moduleTree writes a kernel's module directory as distributions ship it:
// nvme.ko.zst and 9pnet_virtio.ko.xz compressed (Ubuntu 24.04 ships zstd,
// Debian 13 xz), nvme-core.ko.gz, 9pnet.ko and 9p.ko plain, and virtio_pci
// built in (modules.builtin), as Ubuntu builds it. Each module's content
// is a line naming it.
func moduleTree(t *testing.T, xzc, zstdc compressor) Kernel {
	t.Helper()
	dir := t.TempDir()
	write := func(rel string, c compressor) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte("module " + modName(rel) + "\n")
		if c == nil {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		c(t, p, data)
	}
	write("kernel/drivers/nvme/host/nvme.ko.zst", zstdc)
	write("kernel/drivers/nvme/host/nvme-core.ko.gz", libGzip)
	write("kernel/net/9p/9pnet.ko", nil)
	write("kernel/net/9p/9pnet_virtio.ko.xz", xzc)
	write("kernel/fs/9p/9p.ko", nil)
	dep := `kernel/drivers/nvme/host/nvme.ko.zst: kernel/drivers/nvme/host/nvme-core.ko.gz
kernel/drivers/nvme/host/nvme-core.ko.gz:
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko.xz: kernel/net/9p/9pnet.ko
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko
`
	builtin := "kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio_ring.ko\nkernel/drivers/virtio/virtio_pci.ko\n"
	for name, data := range map[string]string{"modules.dep": dep, "modules.builtin": builtin} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Kernel{Version: "6.8.0-45-generic", Image: "/boot/vmlinuz-6.8.0-45-generic", Modules: dir}
}

// readCPIO returns the files of a newc archive, by name.
func readCPIO(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	pad := func(n int) int { return (n + 3) &^ 3 }
	for off := 0; off < len(b); {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			t.Fatalf("cpio: no newc header at %d", off)
		}
		field := func(i int) int {
			n, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatalf("cpio header at %d: %v", off, err)
			}
			return int(n)
		}
		size, nameLen := field(6), field(11)
		name := string(b[off+110 : off+110+nameLen-1])
		data := pad(off + 110 + nameLen)
		if name == "TRAILER!!!" {
			break
		}
		out[name] = b[data : data+size]
		off = pad(data + size)
	}
	return out
}

// TestInitramfsDistributionKernels builds the initramfs from module trees
// as distributions ship them: a built-in module is not loaded, compressed
// ones are stored decompressed, each after what it depends on.
func TestInitramfsDistributionKernels(t *testing.T) {
	for _, tc := range []struct {
		name      string
		xz, zstdc compressor
	}{
		{"library", libXZ, libZstd},
		// The flags Linux's scripts/Makefile.modinst gives them.
		{"xz and zstd commands", tool("xz", "--check=crc32", "--lzma2=dict=1MiB", "-f"), tool("zstd", "-T0", "--rm", "-f", "-q")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := moduleTree(t, tc.xz, tc.zstdc)
			img, err := Initramfs(k, fakeBusybox(t))
			if err != nil {
				t.Fatal(err)
			}
			files := readCPIO(t, img)
			order := strings.Fields(string(files["lib/modules/order"]))
			want := []string{"nvme-core.ko", "nvme.ko", "9pnet.ko", "9pnet_virtio.ko", "9p.ko"}
			if !slices.Equal(order, want) {
				t.Errorf("modules loaded = %q, want %q (virtio_pci is built in)", order, want)
			}
			for _, m := range want {
				if got, want := string(files["lib/modules/"+m]), "module "+modName(m)+"\n"; got != want {
					t.Errorf("lib/modules/%s = %q, want %q, decompressed", m, got, want)
				}
			}
			for name := range files {
				if strings.Contains(name, "virtio_pci") || strings.HasSuffix(name, ".xz") || strings.HasSuffix(name, ".zst") || strings.HasSuffix(name, ".gz") {
					t.Errorf("initramfs holds %s", name)
				}
			}
			if !strings.HasPrefix(string(files["init"]), "#!/bin/busybox sh\n") {
				t.Errorf("init = %.40q, want the init script", files["init"])
			}
		})
	}
}

// TestInitramfsUnfitKernel: a kernel the guest cannot boot with is refused
// with ErrKernel, naming the module, so that the tests skip saying so.
func TestInitramfsUnfitKernel(t *testing.T) {
	t.Run("module missing", func(t *testing.T) {
		k := moduleTree(t, libXZ, libZstd)
		if err := os.WriteFile(filepath.Join(k.Modules, "modules.builtin"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Initramfs(k, fakeBusybox(t))
		if !errors.Is(err, ErrKernel) || !strings.Contains(err.Error(), "module virtio_pci is neither built in") || !strings.Contains(err.Error(), k.Version) {
			t.Errorf("Initramfs error = %v, want ErrKernel naming virtio_pci and the kernel", err)
		}
	})
	t.Run("unknown compression", func(t *testing.T) {
		k := moduleTree(t, libXZ, libZstd)
		dep := filepath.Join(k.Modules, "modules.dep")
		data, _ := os.ReadFile(dep)
		if err := os.WriteFile(dep, bytes.ReplaceAll(data, []byte("9p.ko:"), []byte("9p.ko.lz4:")), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(k.Modules, "kernel/fs/9p/9p.ko.lz4"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Initramfs(k, fakeBusybox(t))
		if !errors.Is(err, ErrKernel) || !strings.Contains(err.Error(), `9p.ko.lz4: compression ".lz4" unknown`) {
			t.Errorf("Initramfs error = %v, want ErrKernel naming the .lz4 module", err)
		}
	})
	t.Run("corrupt xz", func(t *testing.T) {
		k := moduleTree(t, libXZ, libZstd)
		if err := os.WriteFile(filepath.Join(k.Modules, "kernel/net/9p/9pnet_virtio.ko.xz"), []byte("not xz"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Initramfs(k, fakeBusybox(t))
		if !errors.Is(err, ErrKernel) || !strings.Contains(err.Error(), "9pnet_virtio.ko.xz: decompressing") {
			t.Errorf("Initramfs error = %v, want ErrKernel naming the module it could not decompress", err)
		}
	})
}

func TestCompareVersions(t *testing.T) {
	// Ascending, as sort -V orders them.
	asc := []string{"5.10.0-35-amd64", "6.1.0-9-amd64", "6.1.0-10-amd64", "6.1.0-57-amd64", "6.8.0-45-generic", "6.8.0-100-generic", "6.12.38+deb13-amd64", "6.12.41+deb13-amd64"}
	for i, a := range asc {
		for j, b := range asc {
			want := cmpInt(i, j)
			if got := compareVersions(a, b); got != want {
				t.Errorf("compareVersions(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	// A release candidate before its release, after the release before:
	// as make kernelrelease and as Debian's experimental kernels name them.
	for _, asc := range [][]string{
		{"6.12.9", "6.13.0-rc3", "6.13.0-rc10", "6.13.0", "6.13.0-1"},
		{"6.12.9-amd64", "6.13-rc7-amd64", "6.13-amd64", "6.13.2-amd64"},
	} {
		for i := 1; i < len(asc); i++ {
			if got := compareVersions(asc[i-1], asc[i]); got != -1 {
				t.Errorf("compareVersions(%q, %q) = %d, want -1", asc[i-1], asc[i], got)
			}
			if got := compareVersions(asc[i], asc[i-1]); got != 1 {
				t.Errorf("compareVersions(%q, %q) = %d, want 1", asc[i], asc[i-1], got)
			}
		}
	}
	if got := compareVersions("6.1.0-010-amd64", "6.1.0-10-amd64"); got != 0 {
		t.Errorf("leading zeros: compareVersions = %d, want 0", got)
	}
}

// TestFindKernelNewest: the newest kernel by version, among those whose
// modules are installed, is the guest's.
func TestFindKernelNewest(t *testing.T) {
	boot, mods := t.TempDir(), t.TempDir()
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-10-amd64", "6.1.0-11-amd64", "5.10.0-35-amd64"} {
		if err := os.WriteFile(filepath.Join(boot, "vmlinuz-"+v), []byte("kernel"), 0o644); err != nil {
			t.Fatal(err)
		}
		if v == "6.1.0-11-amd64" {
			continue // its modules were removed: not bootable here
		}
		if err := os.MkdirAll(filepath.Join(mods, v), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mods, v, "modules.dep"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mods, v, "modules.builtin"), []byte(allBuiltin), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := findKernel(boot, mods)
	if err != nil {
		t.Fatal(err)
	}
	if k.Version != "6.1.0-10-amd64" || k.Image != filepath.Join(boot, "vmlinuz-6.1.0-10-amd64") || k.Modules != filepath.Join(mods, "6.1.0-10-amd64") {
		t.Errorf("findKernel = %+v, want 6.1.0-10-amd64 (6.1.0-11 has no modules)", k)
	}
	if _, err := findKernel(t.TempDir(), mods); err == nil || !strings.Contains(err.Error(), "install linux-image-amd64") {
		t.Errorf("findKernel with no kernel: error = %v, want one saying what to install", err)
	}
}

// allBuiltin is the modules.builtin of a kernel with all of Modules built in.
const allBuiltin = "kernel/drivers/nvme/host/nvme.ko\nkernel/drivers/virtio/virtio_pci.ko\nkernel/net/9p/9pnet_virtio.ko\nkernel/fs/9p/9p.ko\n"

// TestFindKernelUsable: a newer kernel that lacks a module the guest loads
// is passed over for an older one that has them all. Debian installs its
// cloud flavour beside the generic one at the same ABI, where it sorts
// last ("cloud" after "amd64"), and builds it without 9p.
func TestFindKernelUsable(t *testing.T) {
	boot, mods := t.TempDir(), t.TempDir()
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(mods, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kernel := func(v, dep, builtin string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(boot, "vmlinuz-"+v), []byte("kernel"), 0o644); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(v, "modules.dep"), dep)
		write(filepath.Join(v, "modules.builtin"), builtin)
	}
	// As Debian 12's linux-image-6.1.0-57-cloud-amd64 has them: nvme and
	// virtio built in, CONFIG_NET_9P unset.
	kernel("6.1.0-57-cloud-amd64", "kernel/fs/ext4/ext4.ko:\n", "kernel/drivers/nvme/host/nvme.ko\nkernel/drivers/virtio/virtio_pci.ko\n")
	if _, err := findKernel(boot, mods); !errors.Is(err, ErrKernel) || !strings.Contains(err.Error(), "kernel 6.1.0-57-cloud-amd64: module 9pnet_virtio is neither built in") || !strings.Contains(err.Error(), "install linux-image-amd64") {
		t.Errorf("findKernel with the cloud kernel alone: error = %v, want ErrKernel naming its missing 9pnet_virtio and what to install", err)
	}
	kernel("6.1.0-57-amd64", `kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko
kernel/drivers/nvme/host/nvme-core.ko:
kernel/drivers/virtio/virtio_pci.ko:
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko
`, "")
	k, err := findKernel(boot, mods)
	if err != nil || k.Version != "6.1.0-57-amd64" {
		t.Errorf("findKernel = %+v, %v; want 6.1.0-57-amd64, the newest kernel with 9p", k, err)
	}
}

// The guest's udev loads no module by alias: the rule file that would is
// blanked in the guest's /run before udevd starts, so that a boot loads
// only the modules it was given.
func TestInitBlanksUdevModuleLoading(t *testing.T) {
	blank := strings.Index(initScript, ": >/newroot/run/udev/rules.d/80-drivers.rules")
	udevd := strings.Index(initScript, "systemd-udevd --daemon")
	if blank < 0 || udevd < 0 || blank > udevd {
		t.Errorf("the init script does not blank 80-drivers.rules in /run before starting udevd (at %d, udevd at %d):\n%s", blank, udevd, initScript)
	}
}
