package purgeproof

import (
	"encoding/binary"
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/purge"
	"github.com/drivequal/drivequal/fiojob"
)

// fillBlock is a 128 KiB block as the fill writes it at off: fio's
// verify_pattern (magic, id, offset) repeated from the block's start.
func fillBlock(id uint64, off int64) []byte {
	rep, _ := hex.DecodeString(fiojob.PatternMagic)
	rep = binary.BigEndian.AppendUint64(rep, id)
	rep = binary.LittleEndian.AppendUint64(rep, uint64(off))
	b := make([]byte, 128<<10)
	for i := 0; i < len(b); i += len(rep) {
		copy(b[i:], rep)
	}
	return b
}

type promiseCase struct {
	name   string
	step   purge.Step
	dlfeat int
	loop   bool
	want   Promise
}

var promiseCases = []promiseCase{
	{"format, DLFEAT not reported", purge.Step{Kind: purge.FormatNVM}, 0, false, Promise{Changed: true}},
	{"format, DLFEAT unread (0)", purge.Step{Kind: purge.FormatNVM}, 0, false, Promise{Changed: true}},
	{"sanitize block erase, DLFEAT not reported", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActBlockErase}, 0, false, Promise{Changed: true}},
	{"sanitize overwrite, DLFEAT zeros", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActOverwrite}, 1, false, Promise{}},
	{"sanitize overwrite, DLFEAT 0xff: either value", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActOverwrite}, 2, false, Promise{Changed: true}},
	{"sanitize overwrite, DLFEAT not reported", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActOverwrite}, 0, false, Promise{Changed: true}},
	{"format, DLFEAT reads 0xff", purge.Step{Kind: purge.FormatNVM}, 0x0a, false, Promise{Byte: 0xff}},
	{"format, DLFEAT reads zeros", purge.Step{Kind: purge.FormatNVM}, 0x09, false, Promise{}},
	{"sanitize block erase", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActBlockErase}, 2, false, Promise{Byte: 0xff}},
	{"sanitize crypto erase", purge.Step{Kind: purge.SanitizeNVM, SanAct: purge.SanActCryptoErase}, 1, false, Promise{Changed: true}},
	{"discard of a loop device", purge.Step{Kind: purge.DiscardBlocks}, 0, true, Promise{}},
	{"discard, DLFEAT silent", purge.Step{Kind: purge.DiscardBlocks}, 0, false, Promise{Changed: true}},
	{"discard, DLFEAT reads zeros", purge.Step{Kind: purge.DiscardBlocks}, 1, false, Promise{}},
	{"punch hole", purge.Step{Kind: purge.PunchHole}, 0, false, Promise{}},
}

func TestPromiseOf(t *testing.T) {
	for _, c := range promiseCases {
		if got := PromiseOf(c.step, c.dlfeat, c.loop); got != c.want {
			t.Errorf("%s: PromiseOf = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestTally reads 2 × 128 KiB at byte offset 1 MiB in sectors of 512
// bytes: what each holds against each promise.
// A sanitize overwrite by the sanitize log's status: 4 (deallocated
// though No-Deallocate was asked) reads the deallocated value; 1 the
// pattern (0) or the deallocated value, one promise only when they agree.
func TestOverwrite(t *testing.T) {
	for _, c := range []struct {
		dlfeat int
		status nvme.SanitizeStatus
		want   Promise
	}{
		{1, nvme.SanitizeCompleted, Promise{}},
		{2, nvme.SanitizeCompleted, Promise{Changed: true}},
		{0, nvme.SanitizeCompleted, Promise{Changed: true}},
		{2, nvme.SanitizeCompletedNoDealloc, Promise{Byte: 0xff}},
		{1, nvme.SanitizeCompletedNoDealloc, Promise{}},
		{0, nvme.SanitizeCompletedNoDealloc, Promise{Changed: true}},
	} {
		if got := Overwrite(c.dlfeat, c.status); got != c.want {
			t.Errorf("Overwrite(DLFEAT %d, status %d) = %v, want %v", c.dlfeat, c.status, got, c.want)
		}
	}
}

func TestTally(t *testing.T) {
	const off, id = 1 << 20, 0x1122334455660002
	fills := Fills{0x1122334455660001}
	zeros := make([]byte, 256<<10)
	ones := make([]byte, 256<<10)
	for i := range ones {
		ones[i] = 0xff
	}
	ours := append(fillBlock(id, off), fillBlock(id, off+128<<10)...)
	other := append(fillBlock(0x99, off), fillBlock(0x99, off+128<<10)...)
	half := append(make([]byte, 128<<10), fillBlock(id, off+128<<10)...)
	for _, c := range []struct {
		name      string
		b         []byte
		p         Promise
		unchanged bool
		want      Tally
		lbas      []string
	}{
		{"zeros, promised", zeros, Promise{}, false, Tally{Sectors: 512}, nil},
		{"0xff, promised zeros", ones, Promise{}, false, Tally{Sectors: 512, Other: 512}, []string{"2048-2559"}},
		{"0xff, promised", ones, Promise{Byte: 0xff}, false, Tally{Sectors: 512}, nil},
		{"this run's fill", ours, Promise{}, false, Tally{Sectors: 512, Ours: 512}, []string{"2048-2559"}},
		{"another fill", other, Promise{Changed: true}, false, Tally{Sectors: 512, Fill: 512}, []string{"2048-2559"}},
		{"half left", half, Promise{}, false, Tally{Sectors: 512, Ours: 256}, []string{"2304-2559"}},
		{"crypto erase, new data", ones, Promise{Changed: true}, false, Tally{Sectors: 512}, nil},
		{"crypto erase, unchanged", ones, Promise{Changed: true}, true, Tally{Sectors: 512, Unchanged: 512}, []string{"2048-2559"}},
		{"crypto erase, zeros unchanged", zeros, Promise{Changed: true}, true, Tally{Sectors: 512}, nil},
		{"sectors of 8 KiB, 0xff unchanged", ones, Promise{Changed: true}, true, Tally{Sectors: 32, Unchanged: 32}, []string{"128-159"}},
	} {
		var before *Sums
		if c.unchanged {
			before = NewSums([]Extent{{off, int64(len(c.b))}})
			before.Put(off, c.b)
		}
		got := Tally{Sector: 512}
		if c.want.Sectors == 32 {
			got.Sector = 8 << 10
		}
		got.Add(off, c.b, c.p, fills, before)
		lbas := got.LBAs(8)
		got.bad, got.Sector = nil, 0
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Tally = %+v, want %+v", c.name, got, c.want)
		}
		if !reflect.DeepEqual(lbas, c.lbas) {
			t.Errorf("%s: LBAs = %q, want %q", c.name, lbas, c.lbas)
		}
	}
}
