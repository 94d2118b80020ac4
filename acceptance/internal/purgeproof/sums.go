package purgeproof

import "hash/maphash"

// block is the bytes one hash of Sums covers: the unchanged check of a
// crypto erase is per 4 KiB block, keyed by its byte offset.
const block = 4096

var seed = maphash.MakeSeed()

// Sums are the hashes of every 4 KiB block of extents (sorted, each
// starting at a multiple of 4 KiB) as read before the purge, kept by
// offset so that a read-back in chunks of any alignment finds them. A
// block.s hash is 32 bits: 5 bytes a block with its flag, 50 MB for a
// sample of 40 GB.
type Sums struct {
	ext []Extent
	h   [][]uint32
	set [][]bool
}

// NewSums holds the hashes of extents' blocks, none set yet.
func NewSums(extents []Extent) *Sums {
	s := &Sums{ext: extents}
	for _, e := range extents {
		n := (e.Len + block - 1) / block
		s.h = append(s.h, make([]uint32, n))
		s.set = append(s.set, make([]bool, n))
	}
	return s
}

// slot is the extent and block index of the block at off, if held.
func (s *Sums) slot(off int64) (int, int64, bool) {
	if s == nil || off%block != 0 {
		return 0, 0, false
	}
	lo, hi := 0, len(s.ext)
	for lo < hi {
		m := (lo + hi) / 2
		if s.ext[m].Off+s.ext[m].Len <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(s.ext) || off < s.ext[lo].Off {
		return 0, 0, false
	}
	return lo, (off - s.ext[lo].Off) / block, true
}

func sum(b []byte) uint32 { return uint32(maphash.Bytes(seed, b)) }

// Put keeps the hashes of b's blocks, read at off (a multiple of 4 KiB).
// Calls for different blocks may run at once.
func (s *Sums) Put(off int64, b []byte) {
	for g := int64(0); g < int64(len(b)); g += block {
		if e, i, ok := s.slot(off + g); ok {
			s.h[e][i], s.set[e][i] = sum(b[g:min(g+block, int64(len(b)))]), true
		}
	}
}

// Same reports whether the block b read at off held the same bytes before
// the purge; false for a block not read then.
func (s *Sums) Same(off int64, b []byte) bool {
	e, i, ok := s.slot(off)
	if !ok || !s.set[e][i] {
		return false
	}
	end := s.ext[e].Off + s.ext[e].Len
	if off+int64(len(b)) > end { // a block cut by the extent's end
		b = b[:end-off]
	}
	return s.h[e][i] == sum(b)
}
