// Package sample fingerprints what a fixed sample of a drive's blocks
// holds: a few MiB spread over its capacity, its tail included, each
// region hashed (sha256), so that a resumed run can tell the drive a run
// left from another drive, or from the same drive changed since.
package sample

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

const (
	// RegionBytes is the bytes each region of a sample holds: one
	// 128 KiB block, the fill's block size, at an offset that is a
	// multiple of it.
	RegionBytes = 128 << 10
	// Regions is how many regions a drive's sample reads at most: 32 ×
	// 128 KiB, 4 MiB a drive.
	Regions = 32
	// align is the alignment of the buffer and of every offset read with
	// O_DIRECT: a page, a multiple of every logical block size.
	align = 4096
)

// zeroRegion is a region of zeros: what a purged, discarded or sparse
// region holds, and zeros its sha256 (hex).
var (
	zeroRegion = make([]byte, RegionBytes)
	zeros      = func() string {
		sum := sha256.Sum256(zeroRegion)
		return hex.EncodeToString(sum[:])
	}()
)

// Offsets is the byte offset of each region sampled on a drive of size
// bytes: Regions full 128 KiB blocks spread evenly from the first block
// to the last full one before the end (a drive's size is rarely a
// multiple of the block: 1,920,383,410,176 bytes end 90,112 bytes past a
// 128 KiB boundary), every block of a drive that has fewer; none on a
// drive smaller than one block. The same size always gives the same
// offsets.
func Offsets(size int64) []int64 {
	blocks := size / RegionBytes
	if blocks <= 0 {
		return nil
	}
	n := int64(Regions)
	if blocks < n {
		n = blocks
	}
	out := make([]int64, n)
	for i := range n {
		b := int64(0)
		if n > 1 {
			// Blocks i*(blocks-1)/(n-1) without overflow at any size a
			// drive has (blocks < 2^47 for 16 PiB).
			b = i * (blocks - 1) / (n - 1)
		}
		out[i] = b * RegionBytes
	}
	return out
}

// Print is what a drive's sample held: SHA256 (hex) of the region at
// each of Offsets, read on a drive of Size bytes.
type Print struct {
	Size    int64
	Offsets []int64
	SHA256  []string
}

// Bytes is how many bytes reading the sample reads.
func (p Print) Bytes() int64 { return int64(len(p.Offsets)) * RegionBytes }

// Zeros reports whether every region of p held zeros: a purged or blank
// drive, whose data cannot tell it from another blank one.
func (p Print) Zeros() bool {
	for _, h := range p.SHA256 {
		if h != zeros {
			return false
		}
	}
	return true
}

// Holds says what a region whose sha256 is sum holds: "zeros" or "other
// data".
func Holds(sum string) string {
	if sum == zeros {
		return "zeros"
	}
	return "other data"
}

// Diff is where a drive's sample now differs from the one recorded.
type Diff struct {
	// Region is the index of the first region that differs, Offset its
	// byte offset and Now what it holds now ("zeros", "other data");
	// Region is -1 when the samples cannot be compared region by region
	// (Why says why: another size, other offsets).
	Region int
	Offset int64
	Now    string
	// Was is what the region held when recorded ("zeros", "other data").
	Was string
	Why string
	// Of is how many regions the sample has.
	Of int
}

func (d Diff) String() string {
	if d.Region < 0 {
		return d.Why
	}
	return fmt.Sprintf("the 128 KiB block at byte offset %d (region %d of the %d sampled) holds %s now, was %s", d.Offset, d.Region+1, d.Of, d.Now, d.Was)
}

// Compare says where now, a drive's sample read now, differs from
// recorded: the first region whose sha256 differs, and what it holds
// now; nil when every region is as recorded.
func Compare(recorded, now Print) *Diff {
	switch {
	case recorded.Size != now.Size:
		return &Diff{Region: -1, Why: fmt.Sprintf("it holds %d bytes, the sample was read from %d", now.Size, recorded.Size)}
	case !equal(recorded.Offsets, now.Offsets) || len(recorded.SHA256) != len(recorded.Offsets) || len(now.SHA256) != len(now.Offsets):
		return &Diff{Region: -1, Why: fmt.Sprintf("the recorded sample reads %d regions at other offsets than the %d read now", len(recorded.Offsets), len(now.Offsets))}
	}
	for i, h := range recorded.SHA256 {
		if now.SHA256[i] != h {
			return &Diff{Region: i, Offset: now.Offsets[i], Now: Holds(now.SHA256[i]), Was: Holds(h), Of: len(now.Offsets)}
		}
	}
	return nil
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Read reads the sample of the drive at path, size bytes: a block
// device with direct I/O (O_DIRECT, an aligned buffer: what the drive
// holds, not what the kernel cached of it), a regular file plainly.
func Read(path string, size int64, block bool) (Print, error) {
	flags := os.O_RDONLY
	if block {
		flags |= oDirect
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return Print{}, fmt.Errorf("reading the data sample of %s: %w", path, err)
	}
	defer f.Close()
	p := Print{Size: size, Offsets: Offsets(size)}
	buf := aligned(RegionBytes)
	h := sha256.New()
	for _, off := range p.Offsets {
		n, err := f.ReadAt(buf, off)
		if n < len(buf) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%d bytes read of %d: the target ends before %d bytes", n, len(buf), off+RegionBytes)
			}
			return Print{}, fmt.Errorf("reading the data sample of %s at byte offset %d: %w", path, off, err)
		}
		if bytes.Equal(buf, zeroRegion) {
			// Its sha256 is known, and comparing costs a fraction of
			// hashing, which in a QEMU guest under TCG (no SHA
			// instructions) was a third of the suite's CPU.
			p.SHA256 = append(p.SHA256, zeros)
			continue
		}
		h.Reset()
		h.Write(buf)
		p.SHA256 = append(p.SHA256, hex.EncodeToString(h.Sum(nil)))
	}
	return p, nil
}

// aligned is a buffer of n bytes whose first byte is aligned for
// O_DIRECT.
func aligned(n int) []byte {
	b := make([]byte, n+align)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % align); r != 0 {
		skip = align - r
	}
	return b[skip : skip+n : skip+n]
}
