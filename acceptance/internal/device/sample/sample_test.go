package sample

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The built-in spec's 1.92TB capacity: 90,112 bytes past a 128 KiB
// boundary, as IDEMA capacities are.
const idema192 = 1_920_383_410_176

type offsetsTest struct {
	size int64
	// n is the number of regions, first and last the first and last
	// offsets.
	n           int
	first, last int64
}

var offsetsTests = []offsetsTest{
	{0, 0, 0, 0},
	{RegionBytes - 512, 0, 0, 0},
	{RegionBytes, 1, 0, 0},
	{RegionBytes + 90_112, 1, 0, 0},
	{8 * RegionBytes, 8, 0, 7 * RegionBytes},
	{64 << 20, 32, 0, 64<<20 - RegionBytes},
	{idema192, 32, 0, idema192 - 90_112 - RegionBytes},
	{16 << 50, 32, 0, 16<<50 - RegionBytes},
}

func TestOffsets(t *testing.T) {
	for _, tt := range offsetsTests {
		got := Offsets(tt.size)
		if len(got) != tt.n {
			t.Errorf("len(Offsets(%d)) = %d, want %d", tt.size, len(got), tt.n)
			continue
		}
		if tt.n == 0 {
			continue
		}
		if got[0] != tt.first || got[len(got)-1] != tt.last {
			t.Errorf("Offsets(%d) = %d…%d, want %d…%d", tt.size, got[0], got[len(got)-1], tt.first, tt.last)
		}
		for i, off := range got {
			if off%RegionBytes != 0 || off+RegionBytes > tt.size || i > 0 && off <= got[i-1] {
				t.Errorf("Offsets(%d)[%d] = %d: not an increasing full block inside the drive", tt.size, i, off)
			}
		}
		if !slices.Equal(got, Offsets(tt.size)) {
			t.Errorf("Offsets(%d) differs from one call to the next", tt.size)
		}
	}
	// Spread over the capacity: no gap between two regions is more than
	// twice the mean.
	got := Offsets(idema192)
	mean := got[len(got)-1] / int64(len(got)-1)
	for i := 1; i < len(got); i++ {
		if gap := got[i] - got[i-1]; gap > 2*mean {
			t.Errorf("Offsets(%d): gap %d between regions %d and %d, mean %d", int64(idema192), gap, i, i+1, mean)
		}
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

var (
	a, b = sum("a"), sum("b")
	offs = []int64{0, RegionBytes, 2 * RegionBytes}
)

type compareTest struct {
	name          string
	recorded, now Print
	want          string // Diff.String(); "" for nil
}

var compareTests = []compareTest{
	{"same", Print{3 * RegionBytes, offs, []string{a, b, a}}, Print{3 * RegionBytes, offs, []string{a, b, a}}, ""},
	{"blank same", Print{3 * RegionBytes, offs, []string{zeros, zeros, zeros}}, Print{3 * RegionBytes, offs, []string{zeros, zeros, zeros}}, ""},
	{"tail zeros", Print{3 * RegionBytes, offs, []string{a, b, a}}, Print{3 * RegionBytes, offs, []string{a, b, zeros}},
		"the 128 KiB block at byte offset 262144 (region 3 of the 3 sampled) holds zeros now, was other data"},
	{"first differs", Print{3 * RegionBytes, offs, []string{a, b, a}}, Print{3 * RegionBytes, offs, []string{b, zeros, a}},
		"the 128 KiB block at byte offset 0 (region 1 of the 3 sampled) holds other data now, was other data"},
	{"filled since", Print{3 * RegionBytes, offs, []string{zeros, zeros, zeros}}, Print{3 * RegionBytes, offs, []string{zeros, a, zeros}},
		"the 128 KiB block at byte offset 131072 (region 2 of the 3 sampled) holds other data now, was zeros"},
	{"size", Print{3 * RegionBytes, offs, []string{a, b, a}}, Print{4 * RegionBytes, Offsets(4 * RegionBytes), []string{a, b, a, a}},
		"it holds 524288 bytes, the sample was read from 393216"},
	{"offsets", Print{3 * RegionBytes, offs[:2], []string{a, b}}, Print{3 * RegionBytes, offs, []string{a, b, a}},
		"the recorded sample reads 2 regions at other offsets than the 3 read now"},
	{"hashes short", Print{3 * RegionBytes, offs, []string{a, b}}, Print{3 * RegionBytes, offs, []string{a, b, a}},
		"the recorded sample reads 3 regions at other offsets than the 3 read now"},
}

func TestCompare(t *testing.T) {
	for _, tt := range compareTests {
		got := ""
		if d := Compare(tt.recorded, tt.now); d != nil {
			got = d.String()
		}
		if got != tt.want {
			t.Errorf("%s: Compare = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestZeros(t *testing.T) {
	for _, tt := range []struct {
		p    Print
		want bool
	}{
		{Print{SHA256: []string{zeros, zeros}}, true},
		{Print{SHA256: []string{zeros, a}}, false},
	} {
		if got := tt.p.Zeros(); got != tt.want {
			t.Errorf("%v.Zeros() = %v, want %v", tt.p.SHA256, got, tt.want)
		}
	}
	if Holds(zeros) != "zeros" || Holds(a) != "other data" {
		t.Errorf("Holds: %q, %q", Holds(zeros), Holds(a))
	}
}

// Every region's sha256 is the sha256 of what it holds: regions of zeros
// but for their last byte, their first or one in the middle, one of data,
// and regions of zeros, the last after one of data (a buffer read into
// before).
func TestReadHashesEachRegion(t *testing.T) {
	data := make([]byte, 7*RegionBytes)
	data[2*RegionBytes-1] = 1
	data[2*RegionBytes] = 1
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 3 * RegionBytes; i < 4*RegionBytes; i++ {
		data[i] = byte(rng.Uint32())
	}
	data[5*RegionBytes+RegionBytes/2+1] = 0x80
	path := filepath.Join(t.TempDir(), "drive.img")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Read(path, int64(len(data)), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SHA256) != 7 {
		t.Fatalf("Read = %d regions, want 7", len(p.SHA256))
	}
	holds := []string{"zeros", "other data", "other data", "other data", "zeros", "other data", "zeros"}
	for i, got := range p.SHA256 {
		sum := sha256.Sum256(data[i*RegionBytes : (i+1)*RegionBytes])
		if want := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("region %d: sha256 %s, want %s", i, got, want)
		}
		if Holds(got) != holds[i] {
			t.Errorf("region %d holds %s, want %s", i, Holds(got), holds[i])
		}
	}
	if !bytes.Equal(zeroRegion, make([]byte, RegionBytes)) {
		t.Error("reading changed the region of zeros it compares with")
	}
}

// A file of the size of an IDEMA drive in small (its size 90,112 bytes
// past a 128 KiB boundary), filled, then truncated to half and extended
// back: its sample names the first block past the cut, holding zeros; a
// block the cut went through holds other data.
func TestReadFileTruncatedAndExtended(t *testing.T) {
	size := int64(64*RegionBytes + 90_112)
	path := filepath.Join(t.TempDir(), "drive.img")
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	was, err := Read(path, size, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(was.SHA256) != Regions || was.Zeros() || was.Bytes() != Regions*RegionBytes {
		t.Fatalf("Read = %d regions (zeros %v, %d bytes), want %d of data", len(was.SHA256), was.Zeros(), was.Bytes(), Regions)
	}
	again, err := Read(path, size, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := Compare(was, again); d != nil {
		t.Fatalf("the same file read twice: %s", d)
	}
	for _, cut := range []struct {
		at   int64
		want string
	}{{size - 90_112 - RegionBytes, "zeros"}, {size / 2, "other data"}, {16 * RegionBytes, "zeros"}} {
		if err := os.Truncate(path, cut.at); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		now, err := Read(path, size, false)
		if err != nil {
			t.Fatal(err)
		}
		d := Compare(was, now)
		if d == nil {
			t.Fatalf("Compare of the file cut at %d and extended = nil, want the first block past the cut", cut.at)
		}
		first := slices.IndexFunc(was.Offsets, func(o int64) bool { return o+RegionBytes > cut.at })
		if d.Region != first || d.Now != cut.want || d.Was != "other data" {
			t.Errorf("cut at %d: Compare = %s, want region %d holding %s", cut.at, d, first+1, cut.want)
		}
	}
	// A target shorter than the size asked for does not read.
	if _, err := Read(path, size+RegionBytes*64, false); err == nil || !strings.Contains(err.Error(), "the target ends before") {
		t.Errorf("Read past the end: err = %v", err)
	}
}
