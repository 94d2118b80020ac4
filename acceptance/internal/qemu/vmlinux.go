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
// returned unchanged, with an error that says why. The kernel is written
// as it is decompressed, never held whole in memory (66 MB, which under
// -race cost its test binary 16 CPU-seconds of shadow memory).
func (k Kernel) Unpacked(ctx context.Context, dir string) (Kernel, error) {
	image, err := os.ReadFile(k.Image)
	if err != nil {
		return k, err
	}
	path := filepath.Join(dir, "vmlinux-"+k.Version)
	f, err := os.Create(path)
	if err != nil {
		return k, err
	}
	err = unpack(ctx, image, f)
	if err == nil {
		err = pvhEntry(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return k, fmt.Errorf("%s: %w", k.Image, err)
	}
	k.Image = path
	return k, nil
}

// unpack writes to w the kernel a bzImage carries: its payload
// (payload_offset and payload_length of the x86 boot protocol, 2.08 and
// later, from the start of the protected-mode code), decompressed. The
// payload's last 4 bytes, little-endian, are the kernel's size (the
// build appends it to an xz or zstd payload; gzip's ISIZE is it), which
// what it decompresses to must match, and at most maxKernel.
func unpack(ctx context.Context, image []byte, w io.Writer) error {
	if len(image) < 0x250 || string(image[0x202:0x206]) != "HdrS" || binary.LittleEndian.Uint16(image[0x206:]) < 0x0208 {
		return errors.New("not a bzImage of boot protocol 2.08 or later")
	}
	setup := int(image[0x1f1])
	if setup == 0 {
		setup = 4
	}
	start := (setup+1)*512 + int(binary.LittleEndian.Uint32(image[0x248:]))
	end := start + int(binary.LittleEndian.Uint32(image[0x24c:]))
	if start < 0 || end < start+4 || end > len(image) {
		return errors.New("its payload lies outside the file")
	}
	payload := image[start:end]
	xz, zst, gz := bytes.HasPrefix(payload, []byte("\xfd7zXZ\x00")), bytes.HasPrefix(payload, []byte("\x28\xb5\x2f\xfd")), bytes.HasPrefix(payload, []byte("\x1f\x8b"))
	if !xz && !zst && !gz {
		return fmt.Errorf("its payload's compression (% x) is not xz, zstd or gzip", payload[:4])
	}
	want := binary.LittleEndian.Uint32(payload[len(payload)-4:])
	if want > maxKernel {
		return fmt.Errorf("its payload's trailer gives the kernel %d bytes, more than the %d read", want, maxKernel)
	}
	// Read up to one byte past the size, which what is read must be.
	limit := int64(want) + 1
	var n int64
	var err error
	switch {
	case xz:
		// The kernel's xz streams use the x86 BCJ filter, which xz(1)
		// reads and Go's xz package does not.
		cmd := exec.CommandContext(ctx, "xz", "--decompress", "--stdout", "--single-stream")
		cmd.Stdin = bytes.NewReader(payload)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var r io.ReadCloser
		if r, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				n, err = io.Copy(w, io.LimitReader(r, limit))
				r.Close() // an xz with more to write than limit gets SIGPIPE
				if werr := cmd.Wait(); err == nil && werr != nil && n < limit {
					err = fmt.Errorf("xz: %w: %s", werr, bytes.TrimSpace(stderr.Bytes()))
				}
			}
		}
	case zst:
		var d *zstd.Decoder
		// The kernel's zstd (-22 --ultra) has a 128 MiB window.
		if d, err = zstd.NewReader(bytes.NewReader(payload[:len(payload)-4]), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(256<<20)); err == nil {
			n, err = io.Copy(w, io.LimitReader(d, limit))
			d.Close()
		}
	default:
		var r *gzip.Reader
		if r, err = gzip.NewReader(bytes.NewReader(payload)); err == nil {
			r.Multistream(false)
			n, err = io.Copy(w, io.LimitReader(r, limit))
		}
	}
	if err != nil {
		return fmt.Errorf("decompressing its payload: %w", err)
	}
	if n != int64(want) {
		return fmt.Errorf("its payload decompressed to %d bytes or more, its trailer says %d", n, want)
	}
	return nil
}

// maxKernel bounds the kernel unpack reads: Debian's 6.1 is 66 MB.
const maxKernel = 512 << 20

// pvhEntry checks that the ELF kernel vmlinux has a PVH entry point (a
// "Xen" note of type XEN_ELFNOTE_PHYS32_ENTRY, 18), which QEMU boots an
// ELF kernel through.
func pvhEntry(vmlinux io.ReaderAt) error {
	f, err := elf.NewFile(vmlinux)
	if err != nil {
		return fmt.Errorf("its payload is no ELF kernel: %w", err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		notes, err := io.ReadAll(io.LimitReader(p.Open(), 1<<20)) // a kernel's are some hundred bytes
		if err != nil {
			return err
		}
		for len(notes) >= 12 {
			name, desc, typ := binary.LittleEndian.Uint32(notes), binary.LittleEndian.Uint32(notes[4:]), binary.LittleEndian.Uint32(notes[8:])
			if name > 1<<20 || desc > 1<<20 {
				break
			}
			n, d := (int(name)+3)&^3, (int(desc)+3)&^3
			if 12+n+d > len(notes) {
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
