package purgeproof

import (
	"testing"
	"time"
)

// extentsCase is a drive's size and read-back mode.
type extentsCase struct {
	name  string
	size  int64
	mode  string
	whole bool
}

var extentsCases = []extentsCase{
	// IDEMA capacities, which end 90,112 bytes past a 128 KiB boundary.
	{"1.92TB sample", 1_920_383_410_176, Sample, false},
	{"15.36TB sample", 15_362_991_415_296, Sample, false},
	{"1.92TB full", 1_920_383_410_176, Full, true},
	// Too small to hold the GiB at each end and the extents apart.
	{"64MiB sample", 64 << 20, Sample, true},
	{"2GiB sample", 2 << 30, Sample, true},
	{"3GiB+512 sample", 3<<30 + 512, Sample, false},
}

func TestExtents(t *testing.T) {
	for _, c := range extentsCases {
		t.Run(c.name, func(t *testing.T) {
			e := Extents(c.size, c.mode)
			if c.whole {
				if len(e) != 1 || e[0] != (Extent{0, c.size}) {
					t.Fatalf("Extents(%d, %s) = %v, want the whole drive", c.size, c.mode, e)
				}
				return
			}
			if e[0] != (Extent{0, GiB}) {
				t.Errorf("Extents(%d) first = %v, want the first GiB", c.size, e[0])
			}
			last := e[len(e)-1]
			if last.Off+last.Len != c.size || last.Len < GiB || last.Len >= GiB+align {
				t.Errorf("Extents(%d) last = %v, want the last GiB to the end", c.size, last)
			}
			var mid int64
			for i, x := range e {
				if x.Off%align != 0 {
					t.Errorf("extent %d at %d: not a multiple of 4 KiB", i, x.Off)
				}
				if i > 0 && x.Off < e[i-1].Off+e[i-1].Len {
					t.Errorf("extent %d at %d overlaps the one before (%v)", i, x.Off, e[i-1])
				}
				if i > 0 && i < len(e)-1 {
					if x.Len != MiB {
						t.Errorf("extent %d is %d bytes, want 1 MiB", i, x.Len)
					}
					mid += x.Len
				}
			}
			if float64(mid) < Share*float64(c.size) {
				t.Errorf("Extents(%d): the spaced extents add to %d bytes, less than 1 %% of the capacity", c.size, mid)
			}
			// Evenly spaced: gaps differ by at most one alignment step.
			gap := e[2].Off - e[1].Off
			for i := 2; i < len(e)-1; i++ {
				if g := e[i].Off - e[i-1].Off; g < gap-align || g > gap+align {
					t.Errorf("gap before extent %d = %d, want %d ± 4 KiB", i, g, gap)
					break
				}
			}
		})
	}
}

// TestReadTime states the read-back's time on the built-in spec's
// 1.92 TB drive: its sequential-read figure (14,500 MB/s) is faster than
// the host judges the bytes read, so the sample before the purge and after
// it are read at JudgeRate; a slower drive at its own rate.
func TestReadTime(t *testing.T) {
	var size, rate int64 = 1_920_383_410_176, 14_500_000_000
	got := ReadTime(size, Sample, float64(rate))
	want := time.Duration(float64(2*Bytes(Extents(size, Sample))) / JudgeRate * float64(time.Second))
	if got != want {
		t.Errorf("ReadTime(1.92TB, sample) = %s, want %s (at the judge's 4 GB/s)", got, want)
	}
	if got, want := ReadTime(size, Sample, 1e9), time.Duration(float64(2*Bytes(Extents(size, Sample)))/1e9*float64(time.Second)); got != want {
		t.Errorf("ReadTime(1.92TB, sample, 1 GB/s) = %s, want %s", got, want)
	}
	t.Logf("the 1.92 TB sample, read before and after the purge: %s", got)
	if b := Bytes(Extents(size, Sample)); b < 2*GiB+size/100 || b > 2*GiB+size/100+2*MiB {
		t.Errorf("the sample of 1.92TB reads %d bytes, want 2 GiB + 1 %% of the capacity", b)
	}
	if full := ReadTime(size, Full, float64(rate)); full < time.Duration(float64(size)/float64(rate)*float64(time.Second)) {
		t.Errorf("ReadTime(1.92TB, full) = %s, less than reading every byte", full)
	}
}

func TestMode(t *testing.T) {
	for _, c := range []struct {
		flag   bool
		verify string
		want   string
	}{{false, "none", ""}, {false, "", ""}, {true, "none", Sample}, {true, Full, Full}, {false, Sample, Sample}} {
		if got := Mode(c.flag, c.verify); got != c.want {
			t.Errorf("Mode(%v, %q) = %q, want %q", c.flag, c.verify, got, c.want)
		}
	}
}
