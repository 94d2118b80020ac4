package qemu

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestUnpackedInstalledKernel unpacks the kernel the guests boot, where
// one is installed: an ELF with a PVH entry point, in dir, the version
// and modules kept. (The guests' boots boot it.) A kernel that cannot be
// unpacked (no xz, another compression, no PVH entry point), which the
// guests boot as a bzImage, skips it, and fails it with
// DRIVEQUAL_REQUIRE_LOOP=1 (as .ci/run sets), so that CI's boots are
// known to take the fast way.
func TestUnpackedInstalledKernel(t *testing.T) {
	k, err := FindKernel()
	if err != nil {
		t.Skipf("no guest kernel installed: %v", err)
	}
	dir := t.TempDir()
	u, err := k.Unpacked(t.Context(), dir)
	if err != nil {
		if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
			t.Fatalf("%v (DRIVEQUAL_REQUIRE_LOOP=1; xz: apt-get install xz-utils)", err)
		}
		t.Skipf("the guests boot the bzImage: %v", err)
	}
	if u.Image != filepath.Join(dir, "vmlinux-"+k.Version) || u.Version != k.Version || u.Modules != k.Modules {
		t.Errorf("Unpacked = %+v, want %+v with its image in %s", u, k, dir)
	}
	f, err := os.Open(u.Image)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pvhEntry(f); err != nil {
		t.Error(err)
	}
}

// TestUnpack unpacks bzImages made here, of each compression a kernel's
// payload may have that Unpacked reads, and refuses the rest, saying why.
func TestUnpack(t *testing.T) {
	kernel, noPVH := elfKernel(t, true), elfKernel(t, false)
	// sized is a copy of b with the size trailer n.
	sized := func(b []byte, n int) []byte {
		return binary.LittleEndian.AppendUint32(append([]byte(nil), b...), uint32(n))
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(kernel)
	w.Close()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zst := enc.EncodeAll(kernel, nil)
	payloads := map[string][]byte{
		"gzip": gz.Bytes(),
		"zstd": sized(zst, len(kernel)),
	}
	var xzShort []byte // the kernel, its trailer 10 bytes short
	if xz, err := exec.Command("sh", "-c", "xz --format=xz --check=crc32 --x86 --lzma2 < \"$0\"", writeTemp(t, kernel)).Output(); err == nil {
		payloads["xz"] = sized(xz, len(kernel))
		xzShort = sized(xz, len(kernel)-10)
	} else if os.Getenv("DRIVEQUAL_REQUIRE_LOOP") == "1" {
		t.Errorf("no xz to pack a kernel with: %v (apt-get install xz-utils)", err)
	} else {
		t.Logf("no xz: %v", err)
	}
	for name, p := range payloads {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := unpack(t.Context(), bzImage(p), &got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), kernel) {
				t.Errorf("unpacked %d bytes, not the %d packed", got.Len(), len(kernel))
			}
			if err := pvhEntry(bytes.NewReader(got.Bytes())); err != nil {
				t.Error(err)
			}
		})
	}

	for _, tt := range []struct {
		name, want string
		image      []byte
	}{
		{"lz4", "compression (02 21 4c 18) is not xz, zstd or gzip", bzImage([]byte("\x02\x21\x4c\x18 an lz4 frame"))},
		{"size trailer", "decompressed to 2", bzImage(sized(enc.EncodeAll([]byte("ab"), nil), 3))},
		{"not a bzImage", "not a bzImage", kernel},
		{"no HdrS", "not a bzImage", bytes.Replace(bzImage(zst), []byte("HdrS"), []byte("HdrZ"), 1)},
		{"boot protocol 2.07", "not a bzImage", oldProtocol(bzImage(zst))},
		{"payload past the end", "outside the file", bzImage(zst)[:1024+len(zst)-1]},
		{"over maxKernel", "more than the 536870912 read", bzImage(sized(zst, maxKernel+1))},
		{"xz longer than its trailer", "decompressed to " + strconv.Itoa(len(kernel)-9) + " bytes or more", bzImage(xzShort)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.image == nil || len(tt.image) == 1024 {
				t.Skip("no xz")
			}
			if err := unpack(t.Context(), tt.image, io.Discard); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("unpack: %v, want an error with %q", err, tt.want)
			}
		})
	}
	if err := pvhEntry(bytes.NewReader(noPVH)); err == nil || !strings.Contains(err.Error(), "no PVH entry point") {
		t.Errorf("pvhEntry of a kernel without the note: %v", err)
	}
	if err := pvhEntry(strings.NewReader("no ELF")); err == nil || !strings.Contains(err.Error(), "no ELF kernel") {
		t.Errorf("pvhEntry of no ELF: %v", err)
	}
}

// elfKernel is a minimal x86-64 ELF with one note segment: a Xen note of
// type 18, XEN_ELFNOTE_PHYS32_ENTRY (the PVH entry point), after one of
// another type, or that one alone when pvh is false.
func elfKernel(t *testing.T, pvh bool) []byte {
	note := func(owner string, typ uint32, desc []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(owner)+1))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = append(b, owner...)
		for len(b)%4 != 0 || len(b) < 12+len(owner)+1 {
			b = append(b, 0)
		}
		return append(b, desc...)
	}
	notes := note("Xen", 6, []byte("linux\x00\x00\x00"))
	if pvh {
		notes = append(notes, note("Xen", 18, []byte{0, 0, 0, 1, 0, 0, 0, 0})...)
	}
	var b bytes.Buffer
	hdr := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: 1, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1}
	copy(hdr.Ident[:], "\x7fELF\x02\x01\x01")
	prog := elf.Prog64{Type: uint32(elf.PT_NOTE), Flags: uint32(elf.PF_R), Off: 120, Filesz: uint64(len(notes)), Memsz: uint64(len(notes)), Align: 4}
	if err := binary.Write(&b, binary.LittleEndian, hdr); err != nil {
		t.Fatal(err)
	}
	if err := binary.Write(&b, binary.LittleEndian, prog); err != nil {
		t.Fatal(err)
	}
	b.Write(notes)
	return b.Bytes()
}

// bzImage is a bzImage header (boot protocol 2.15, one setup sector)
// whose payload is payload.
func bzImage(payload []byte) []byte {
	img := make([]byte, 1024)
	img[0x1f1] = 1
	copy(img[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(img[0x206:], 0x020f)
	binary.LittleEndian.PutUint32(img[0x24c:], uint32(len(payload)))
	return append(img, payload...)
}

// oldProtocol is img with boot protocol 2.07, which has no payload fields.
func oldProtocol(img []byte) []byte {
	binary.LittleEndian.PutUint16(img[0x206:], 0x0207)
	return img
}

func writeTemp(t *testing.T, data []byte) string {
	p := filepath.Join(t.TempDir(), "vmlinux")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
