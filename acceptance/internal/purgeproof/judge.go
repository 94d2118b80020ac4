package purgeproof

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

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
// namespace's DLFEAT bits 2:0: 0xff for 2, zeros otherwise (1 says zeros,
// 0 says nothing, and the purge is then held to zeros).
func dealloc(dlfeat int) Promise {
	if dlfeat&7 == 2 {
		return Promise{Byte: 0xff}
	}
	return Promise{}
}

// PromiseOf is what the purge step s promises: a deallocated file or a
// discarded loop device reads zeros (a hole); a format with secure erase
// settings 1, a sanitize block erase or overwrite (nvme-cli's pattern,
// 0) the deallocated-read value dlfeat gives; a crypto erase anything but
// the old data; a discard of another block device the deallocated-read
// value when dlfeat gives one (bits 2:0 of 1 or 2), else anything but the
// old data.
func PromiseOf(s purge.Step, dlfeat int, loop bool) Promise {
	switch s.Kind {
	case purge.PunchHole:
		return Promise{}
	case purge.DiscardBlocks:
		if loop {
			return Promise{}
		}
		if d := dlfeat & 7; d == 1 || d == 2 {
			return dealloc(dlfeat)
		}
		return Promise{Changed: true}
	case purge.SanitizeNVM:
		if s.SanAct == purge.SanActCryptoErase {
			return Promise{Changed: true}
		}
	}
	return dealloc(dlfeat)
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

// Add tallies the sectors of b, read at byte offset off, against p; before
// is true when b held the same bytes before the purge (compared by the
// caller over the extent), which a crypto erase must not leave. fills
// tells this run's fill from another's.
func (t *Tally) Add(off int64, b []byte, p Promise, fills Fills, unchanged bool) {
	allZero := true
	for _, c := range b {
		if c != 0 {
			allZero = false
			break
		}
	}
	for i := int64(0); i+t.Sector <= int64(len(b)); i += t.Sector {
		s := b[i : i+t.Sector]
		t.Sectors++
		bad := true
		if id, ok := FillID(s); ok {
			if fills.Ours(id) {
				t.Ours++
			} else {
				t.Fill++
			}
		} else if p.Changed {
			if unchanged && !allZero {
				t.Unchanged++
			} else {
				bad = false
			}
		} else if !all(s, p.Byte) {
			t.Other++
		} else {
			bad = false
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

// Merge adds u's counts to t.
func (t *Tally) Merge(u Tally) {
	t.Sectors += u.Sectors
	t.Ours += u.Ours
	t.Fill += u.Fill
	t.Other += u.Other
	t.Unchanged += u.Unchanged
	t.bad = append(t.bad, u.bad[:min(len(u.bad), maxBad-min(len(t.bad), maxBad))]...)
}

func all(b []byte, v byte) bool {
	for _, c := range b {
		if c != v {
			return false
		}
	}
	return true
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
