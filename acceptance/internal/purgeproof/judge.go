package purgeproof

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/fiojob"
)

// Promise is what a purge promises a read returns.
type Promise struct {
	// Changed: anything but the old data (a crypto erase); otherwise every
	// byte is Byte.
	Changed bool
	Byte    byte
}

func (p Promise) String() string {
	switch {
	case p.Changed:
		return "anything but the old data"
	case p.Byte == 0:
		return "zeros"
	}
	return fmt.Sprintf("0x%02x in every byte", p.Byte)
}

// dealloc is what a read of a deallocated block returns by the
// namespace's DLFEAT bits 2:0: 001b zeros, 010b 0xff in every byte; 000b
// (the value read is not reported) or an unread DLFEAT promises no value,
// only that the old data is gone (no fill, and no block as it was).
func dealloc(dlfeat int) Promise {
	switch dlfeat & 7 {
	case 1:
		return Promise{}
	case 2:
		return Promise{Byte: 0xff}
	}
	return Promise{Changed: true}
}

// PromiseOf is what the purge step s promises: a deallocated file or a
// discarded loop device reads zeros (a hole); a format with secure erase
// settings 1, a sanitize block erase or a discard of another block device
// the deallocated-read value dlfeat gives (with none, no fill and no block
// as it was); a crypto erase anything but the old data; a sanitize
// overwrite, see Overwrite (here with its status unknown).
func PromiseOf(s purge.Step, dlfeat int, loop bool) Promise {
	switch s.Kind {
	case purge.PunchHole:
		return Promise{}
	case purge.DiscardBlocks:
		if loop {
			return Promise{}
		}
	case purge.SanitizeNVM:
		switch s.SanAct {
		case purge.SanActCryptoErase:
			return Promise{Changed: true}
		case purge.SanActOverwrite:
			return Overwrite(dlfeat, 0)
		}
	}
	return dealloc(dlfeat)
}

// OverwritePattern is the pattern a sanitize overwrite writes: nvme-cli's
// --ovrpat default, 0, which drivequal does not change.
const OverwritePattern = 0

// Overwrite is what a sanitize overwrite promises, by the sanitize log's
// status once it ended. drivequal never asks No-Deallocate After Sanitize
// (--nodas), and with it clear the controller should (not shall)
// deallocate the blocks after the overwrite: a block reads either the
// overwrite pattern or the deallocated-read value. Status 4 says the
// controller deallocated though No-Deallocate was asked (NVMe Sanitize
// Status log, SSTAT 100b): the deallocated-read value. Status 1 (or
// unknown): the pattern when DLFEAT says deallocated blocks read the same
// bytes (zeros), else no value is promised, only that the old data is gone.
func Overwrite(dlfeat int, status nvme.SanitizeStatus) Promise {
	d := dealloc(dlfeat)
	if status == nvme.SanitizeCompletedNoDealloc || d == (Promise{Byte: OverwritePattern}) {
		return d
	}
	return Promise{Changed: true}
}

// magic is the first bytes of every repetition of the fill's pattern
// ("DQFILL01"), followed by the fill's id.
var magic = func() []byte {
	b, err := hex.DecodeString(fiojob.PatternMagic)
	if err != nil {
		panic(err)
	}
	return b
}()

// FillID is the fill id a sector holds, and whether it holds the fill's
// pattern at all: the magic followed by 8 bytes of id, anywhere in it (the
// pattern repeats every 24 bytes, so every sector of 512 bytes or more
// holds it whole).
func FillID(sector []byte) (uint64, bool) {
	i := bytes.Index(sector, magic)
	if i < 0 || i+len(magic)+fiojob.PatternIDBytes > len(sector) {
		return 0, false
	}
	return binary.BigEndian.Uint64(sector[i+len(magic):]), true
}

// Fills are the ids of the run's fills: a sector holding one of them holds
// this run's fill (the pass number in its last two bytes aside).
type Fills []uint64

// Ours reports whether id is one of the run's fills'.
func (f Fills) Ours(id uint64) bool {
	for _, x := range f {
		if x&^0xffff == id&^0xffff {
			return true
		}
	}
	return false
}

// Tally is what a read-back of a drive found, sector by sector.
type Tally struct {
	Sector int64 // bytes a sector (the logical block)
	// Sectors is the sectors read; Ours those holding this run's fill,
	// Fill those holding another fill's pattern; Other those holding
	// neither and not what the purge promised; Unchanged those of a
	// crypto erase holding what they held before the purge.
	Sectors, Ours, Fill, Other, Unchanged int64
	// bad are the first runs of bad sectors' LBAs, first and last.
	bad [][2]int64
}

// maxBad is how many runs of bad LBAs a tally keeps to name.
const maxBad = 64

// Add tallies the sectors of b, read at byte offset off, against p. With
// a promise of anything but the old data (a crypto erase), before holds
// the hashes the sample's blocks had before the purge: a sector of a block
// read the same (zeros aside) is left unchanged. fills tells this run's
// fill from another's.
func (t *Tally) Add(off int64, b []byte, p Promise, fills Fills, before *Sums) {
	want := preset(p.Byte, t.Sector)
	zero := preset(0, t.Sector)
	// same reports whether every 4 KiB block the sector at b[i:] lies in
	// read as before the purge, hashing each block once.
	lastG, lastSame := int64(-1), false
	same := func(i int64) bool {
		ok := true
		for g := i &^ (block - 1); g < i+t.Sector; g += block {
			if g != lastG {
				lastG, lastSame = g, before.Same(off+g, b[g:min(g+block, int64(len(b)))])
			}
			ok = ok && lastSame
		}
		return ok
	}
	for i := int64(0); i+t.Sector <= int64(len(b)); i += t.Sector {
		s := b[i : i+t.Sector]
		t.Sectors++
		bad := true
		switch {
		case !p.Changed && bytes.Equal(s, want):
			bad = false // as promised; a repeated byte holds no fill
		case !p.Changed:
			if id, ok := FillID(s); ok && fills.Ours(id) {
				t.Ours++
			} else if ok {
				t.Fill++
			} else {
				t.Other++
			}
		default:
			if id, ok := FillID(s); ok && fills.Ours(id) {
				t.Ours++
			} else if ok {
				t.Fill++
			} else if !bytes.Equal(s, zero) && same(i) {
				t.Unchanged++
			} else {
				bad = false
			}
		}
		if lba := (off + i) / t.Sector; bad {
			if n := len(t.bad); n > 0 && t.bad[n-1][1]+1 == lba {
				t.bad[n-1][1] = lba
			} else if n < maxBad {
				t.bad = append(t.bad, [2]int64{lba, lba})
			}
		}
	}
}

// presets are sectors of one repeated byte, by byte and size.
var presets sync.Map

// preset is a sector of n bytes, each v (shared: never written).
func preset(v byte, n int64) []byte {
	k := [2]int64{int64(v), n}
	if b, ok := presets.Load(k); ok {
		return b.([]byte)
	}
	b := bytes.Repeat([]byte{v}, int(n))
	presets.Store(k, b)
	return b
}

// Merge adds u's counts to t.
func (t *Tally) Merge(u Tally) {
	t.Sectors += u.Sectors
	t.Ours += u.Ours
	t.Fill += u.Fill
	t.Other += u.Other
	t.Unchanged += u.Unchanged
	t.bad = append(t.bad, u.bad[:min(len(u.bad), maxBad-min(len(t.bad), maxBad))]...)
}

// Bad is the number of sectors that fail the purge.
func (t Tally) Bad() int64 { return t.Ours + t.Fill + t.Other + t.Unchanged }

// LBAs names the bad sectors found first as runs of LBAs ("2048-2303"),
// in order, at most n runs.
func (t Tally) LBAs(n int) []string {
	runs := append([][2]int64(nil), t.bad...)
	sort.Slice(runs, func(i, j int) bool { return runs[i][0] < runs[j][0] })
	var merged [][2]int64
	for _, r := range runs {
		if m := len(merged); m > 0 && merged[m-1][1]+1 >= r[0] {
			merged[m-1][1] = max(merged[m-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	var out []string
	for _, r := range merged[:min(n, len(merged))] {
		if r[0] == r[1] {
			out = append(out, fmt.Sprint(r[0]))
		} else {
			out = append(out, fmt.Sprintf("%d-%d", r[0], r[1]))
		}
	}
	return out
}

// Found says what the bad sectors hold, largest share first.
func (t Tally) Found() string {
	var parts []string
	for _, k := range []struct {
		n    int64
		what string
	}{{t.Ours, "this run's fill"}, {t.Fill, "another fill's pattern"}, {t.Unchanged, "what they held before the purge"}, {t.Other, "data that is not what the purge promises"}} {
		if k.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.n, k.what))
		}
	}
	return strings.Join(parts, ", ")
}
