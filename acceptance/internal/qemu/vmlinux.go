package qemu

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// Unpacked is k with Image replaced by its kernel unpacked into dir: the
// ELF vmlinux inside the bzImage, which QEMU boots through the kernel's
// PVH entry point. A TCG guest otherwise spends the first seconds of
// every boot decompressing its kernel with the emulated CPU: Debian's
// xz-compressed 6.1 kernel took 5.5-6 CPU-seconds to reach a one-line
// init as a bzImage, 2.3-2.5 unpacked, and unpacking it on the host takes
// 0.7. When the kernel cannot be unpacked (a compression other than xz,
// zstd or gzip, no xz(1) for xz, no PVH entry point: CONFIG_PVH), k is
// returned unchanged, with an error that says why.
func (k Kernel) Unpacked(ctx context.Context, dir string) (Kernel, error) {
	image, err := os.ReadFile(k.Image)
	if err != nil {
		return k, err
	}
	vmlinux, err := unpack(ctx, image)
	if err == nil {
		err = pvhEntry(vmlinux)
	}
	if err != nil {
		return k, fmt.Errorf("%s: %w", k.Image, err)
	}
	path := filepath.Join(dir, "vmlinux-"+k.Version)
	if err := os.WriteFile(path, vmlinux, 0o644); err != nil {
		return k, err
	}
	k.Image = path
	return k, nil
}

// unpack returns the kernel a bzImage carries: its payload
// (payload_offset and payload_length of the x86 boot protocol, 2.08 and
// later, from the start of the protected-mode code), decompressed.
// The build appends the kernel's size to an xz or zstd payload, 4 bytes
// little-endian, which the result must match.
func unpack(ctx context.Context, image []byte) ([]byte, error) {
	if len(image) < 0x250 || string(image[0x202:0x206]) != "HdrS" || binary.LittleEndian.Uint16(image[0x206:]) < 0x0208 {
		return nil, errors.New("not a bzImage of boot protocol 2.08 or later")
	}
	setup := int(image[0x1f1])
	if setup == 0 {
		setup = 4
	}
	start := (setup+1)*512 + int(binary.LittleEndian.Uint32(image[0x248:]))
	end := start + int(binary.LittleEndian.Uint32(image[0x24c:]))
	if start < 0 || end < start+4 || end > len(image) {
		return nil, errors.New("its payload lies outside the file")
	}
	payload := image[start:end]
	var out []byte
	var err error
	sized := true
	switch {
	case bytes.HasPrefix(payload, []byte("\xfd7zXZ\x00")):
		// The kernel's xz streams use the x86 BCJ filter, which xz(1)
		// reads and Go's xz package does not.
		cmd := exec.CommandContext(ctx, "xz", "--decompress", "--stdout", "--single-stream")
		cmd.Stdin = bytes.NewReader(payload)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err != nil {
			err = fmt.Errorf("xz: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
		}
	case bytes.HasPrefix(payload, []byte("\x28\xb5\x2f\xfd")):
		var d *zstd.Decoder
		// The kernel's zstd (-22 --ultra) has a 128 MiB window.
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<30)); err == nil {
			out, err = d.DecodeAll(payload[:len(payload)-4], nil)
			d.Close()
		}
	case bytes.HasPrefix(payload, []byte("\x1f\x8b")):
		sized = false // gzip keeps the size in its own trailer
		var r *gzip.Reader
		if r, err = gzip.NewReader(bytes.NewReader(payload)); err == nil {
			r.Multistream(false)
			out, err = io.ReadAll(r)
		}
	default:
		return nil, fmt.Errorf("its payload's compression (% x) is not xz, zstd or gzip", payload[:4])
	}
	if err != nil {
		return nil, fmt.Errorf("decompressing its payload: %w", err)
	}
	if want := binary.LittleEndian.Uint32(payload[len(payload)-4:]); sized && uint64(len(out)) != uint64(want) {
		return nil, fmt.Errorf("its payload decompressed to %d bytes, its trailer says %d", len(out), want)
	}
	return out, nil
}

// pvhEntry checks that the ELF kernel vmlinux has a PVH entry point (a
// "Xen" note of type XEN_ELFNOTE_PHYS32_ENTRY, 18), which QEMU boots an
// ELF kernel through.
func pvhEntry(vmlinux []byte) error {
	f, err := elf.NewFile(bytes.NewReader(vmlinux))
	if err != nil {
		return fmt.Errorf("its payload is no ELF kernel: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(p.Open())
		if err != nil {
			return err
		}
		for len(notes) >= 12 {
			name, desc, typ := binary.LittleEndian.Uint32(notes), binary.LittleEndian.Uint32(notes[4:]), binary.LittleEndian.Uint32(notes[8:])
			n, d := (int(name)+3)&^3, (int(desc)+3)&^3
			if n < 0 || d < 0 || 12+n+d > len(notes) || n > 1<<20 || d > 1<<20 {
				break
			}
			if typ == 18 && string(notes[12:12+name]) == "Xen\x00" {
				return nil
			}
			notes = notes[12+n+d:]
		}
	}
	return errors.New("its kernel has no PVH entry point (CONFIG_PVH)")
}
