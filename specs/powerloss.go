package specs

import (
	"math"
	"time"
)

// PowerLoss is the [power_loss] table: how a drive's promise to keep
// acknowledged writes through a power cut is tested
// (TestPowerLoss/<drive>/cycle_<k>). nil without the table.
type PowerLoss struct {
	// Cycles is how many times power is cut, each its own test.
	Cycles int
	// PLP says the drive promises power-loss protection: every completed
	// write survives, cached or not.
	PLP bool
	// ReadyWithin is how long the drive may take, after power is
	// restored, to come back with the same identity.
	ReadyWithin time.Duration
	// CutAfter is how long after fio starts writing power is cut.
	CutAfter time.Duration
	// Size is the bytes written at the start of the drive (the data at
	// risk): the first half sequentially, the second half at random.
	Size int64
	// BS is the block size of the writes, in bytes.
	BS int64
	// FlushEvery is how many writes each fio job issues between flushes.
	FlushEvery int
	// MaxCutGap is, for the whole host's cut (-power-cut-host), the
	// longest the cut may come after a drive's last write for its cycle
	// to be judged.
	MaxCutGap time.Duration
	// Line is the table's line in the spec.
	Line int
}

// The [power_loss] defaults.
const (
	DefaultPowerLossCycles      = 1
	DefaultPowerLossReadyWithin = 60 * time.Second
	DefaultPowerLossCutAfter    = 5 * time.Second
	DefaultPowerLossSize        = 16 << 30
	DefaultPowerLossBS          = 4096
	DefaultPowerLossFlushEvery  = 32
	DefaultPowerLossMaxCutGap   = 5 * time.Second
	// MaxPowerLossCycles is the most cycles a spec may ask for.
	MaxPowerLossCycles = 1000
	// MaxPowerLossWait is the longest cut_after or ready_within: a
	// cycle's waits add several of each, and a bound keeps their sum, and
	// the run's estimate, far from overflowing.
	MaxPowerLossWait = time.Hour
)

var powerLossKeys = fields[PowerLoss]{
	{key: "cycles", conv: func(t table, v value, p *PowerLoss) {
		setInt(t, v, &p.Cycles, DefaultPowerLossCycles, 1, math.MaxInt32)
		t.atMost(v, int64(p.Cycles), MaxPowerLossCycles, "the most a spec may ask for")
	}},
	{key: "plp", conv: func(t table, v value, p *PowerLoss) { p.PLP, _ = t.boolean(v, false) }},
	{key: "ready_within", conv: func(t table, v value, p *PowerLoss) {
		p.ReadyWithin, _ = t.duration(v, DefaultPowerLossReadyWithin, false)
		t.waitAtMost(v, p.ReadyWithin, MaxPowerLossWait)
	}},
	{key: "cut_after", conv: func(t table, v value, p *PowerLoss) {
		p.CutAfter, _ = t.duration(v, DefaultPowerLossCutAfter, false)
		t.waitAtMost(v, p.CutAfter, MaxPowerLossWait)
	}},
	{key: "bs", conv: func(t table, v value, p *PowerLoss) {
		p.BS = DefaultPowerLossBS
		if v.set {
			p.BS, _ = t.blockSize(v)
		}
	}},
	{key: "size", conv: func(t table, v value, p *PowerLoss) {
		p.Size = DefaultPowerLossSize
		if !v.set {
			return
		}
		n, ok := t.blockSize(v)
		if ok && p.BS > 0 && n < 2*p.BS {
			t.errorf(v.key, "size must hold at least two blocks of bs (%d bytes), got %d", 2*p.BS, n)
			return
		}
		p.Size = n
	}},
	{key: "max_cut_gap", conv: func(t table, v value, p *PowerLoss) {
		p.MaxCutGap, _ = t.duration(v, DefaultPowerLossMaxCutGap, false)
	}},
	{key: "flush_every", conv: func(t table, v value, p *PowerLoss) {
		setInt(t, v, &p.FlushEvery, DefaultPowerLossFlushEvery, 1, math.MaxInt32)
	}},
}
