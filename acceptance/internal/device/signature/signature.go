// Package signature finds the partition tables and file-system, RAID, LVM
// and swap signatures on a target, the way blkid -p and wipefs look for
// them.
//
// It only reads; wiping a signature is the caller's to do.
package signature

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sort"
)

// probeSpan is how much of each end of a target Find reads: 1 MiB.
const probeSpan = 1 << 20

// Find reports the partition tables and file-system, RAID, LVM and
// swap signatures on the target at path, the way blkid -p and wipefs look for
// them, as "NAME at offset N" (N in bytes from the start of the target), in
// offset order. It reads only the first and last MiB, opened read-only.
//
// Detected: dos (MBR 0x55AA at 510 with a non-empty partition entry), PMBR
// (the protective MBR of a GPT disk), gpt ("EFI PART" at LBA 1 for 512- and
// 4096-byte sectors) and its backup at the last LBA, ext2/3/4 (0xEF53 at
// 1080 with a plausible block size), xfs, btrfs, swap (page sizes 4, 8, 16
// and 64 KiB), LVM2_member (LABELONE in sectors 0-3), linux_raid_member (md
// 0.90, 1.0, 1.1 and 1.2 superblocks), vfat, ntfs and iso9660.
func Find(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading signatures: %w", err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("reading signatures: %s: %w", path, err)
	}
	p := &probe{size: size}
	headLen := min(size, probeSpan)
	p.head = make([]byte, headLen)
	if _, err := f.ReadAt(p.head, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading signatures: %s: %w", path, err)
	}
	tailLen := min(size, probeSpan)
	p.tailStart = size - tailLen
	p.tail = make([]byte, tailLen)
	if _, err := f.ReadAt(p.tail, p.tailStart); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading signatures: %s: %w", path, err)
	}
	return p.find(), nil
}

// probe holds the two ends of a target.
type probe struct {
	size      int64
	head      []byte // bytes [0, len(head))
	tail      []byte // bytes [tailStart, size)
	tailStart int64
}

// at returns n bytes at off, or nil when they were not read.
func (p *probe) at(off int64, n int) []byte {
	if off < 0 || off+int64(n) > p.size {
		return nil
	}
	if off+int64(n) <= int64(len(p.head)) {
		return p.head[off : off+int64(n)]
	}
	if off >= p.tailStart {
		return p.tail[off-p.tailStart : off-p.tailStart+int64(n)]
	}
	return nil
}

func (p *probe) is(off int64, magic string) bool {
	b := p.at(off, len(magic))
	return b != nil && string(b) == magic
}

type found struct {
	name string
	off  int64
}

func (p *probe) find() []string {
	var fs []found
	add := func(name string, off int64) { fs = append(fs, found{name, off}) }

	// MBR: boot signature plus at least one used partition entry. A GPT
	// disk's protective MBR has a single entry of type 0xEE.
	if b := p.at(510, 2); b != nil && b[0] == 0x55 && b[1] == 0xAA {
		used, protective := 0, false
		for i := int64(0); i < 4; i++ {
			e := p.at(446+16*i, 16)
			if e[4] != 0 { // partition type
				used++
				protective = protective || e[4] == 0xEE
			}
		}
		switch {
		case protective:
			add("PMBR", 510)
		case used > 0 && !p.is(3, "NTFS    ") && !p.isFAT():
			add("dos", 510)
		}
	}
	for _, lba := range []int64{512, 4096} {
		if p.is(lba, "EFI PART") {
			add("gpt", lba)
		}
		if last := p.size - lba; last > lba && p.is(last, "EFI PART") {
			add("gpt-backup", last)
		}
	}
	if b := p.at(1080, 2); b != nil && binary.LittleEndian.Uint16(b) == 0xEF53 {
		// s_log_block_size: block size is 1024 << n, at most 64 KiB.
		if lb := p.at(1024+24, 4); binary.LittleEndian.Uint32(lb) <= 6 {
			add("ext2/3/4", 1080)
		}
	}
	if p.is(0, "XFSB") {
		add("xfs", 0)
	}
	if p.is(65600, "_BHRfS_M") {
		add("btrfs", 65600)
	}
	for _, page := range []int64{4096, 8192, 16384, 65536} {
		if p.is(page-10, "SWAPSPACE2") || p.is(page-10, "SWAP-SPACE") {
			add("swap", page-10)
		}
	}
	for sector := int64(0); sector < 4; sector++ {
		if off := sector * 512; p.is(off, "LABELONE") && p.is(off+24, "LVM2 001") {
			add("LVM2_member", off)
		}
	}
	mdOffsets := []int64{4096, 0} // 1.2, 1.1
	if p.size >= 128<<10 {
		mdOffsets = append(mdOffsets, p.size&^(64<<10-1)-64<<10) // 0.90
	}
	if p.size >= 12<<10 {
		mdOffsets = append(mdOffsets, (p.size-8<<10)&^(4<<10-1)) // 1.0
	}
	seenMD := map[int64]bool{}
	for _, off := range mdOffsets {
		if b := p.at(off, 4); !seenMD[off] && b != nil && binary.LittleEndian.Uint32(b) == 0xa92b4efc {
			add("linux_raid_member", off)
		}
		seenMD[off] = true
	}
	if p.isFAT() {
		add("vfat", 54)
	}
	if p.is(3, "NTFS    ") {
		add("ntfs", 3)
	}
	if p.is(32769, "CD001") {
		add("iso9660", 32769)
	}

	sort.SliceStable(fs, func(i, j int) bool { return fs[i].off < fs[j].off })
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s at offset %d", f.name, f.off))
	}
	return out
}

// isFAT reports a FAT boot sector: the file-system type string of FAT12/16
// (at 54) or FAT32 (at 82) together with the boot signature.
func (p *probe) isFAT() bool {
	if b := p.at(510, 2); b == nil || b[0] != 0x55 || b[1] != 0xAA {
		return false
	}
	for _, off := range []int64{54, 82} {
		if b := p.at(off, 5); b != nil && bytes.HasPrefix(b, []byte("FAT")) && (b[3] == '1' || b[3] == '3') {
			return true
		}
	}
	return false
}
