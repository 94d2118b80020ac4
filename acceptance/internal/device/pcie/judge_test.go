package pcie

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/specs"
)

// backplane is ../testdata/backplane.tree, a 24-drive host: four switches
// of six drives, nvme0-5 below switch port 0000:01:00.0, nvme6-11 below
// 0000:09:00.0, nvme12-17 below 0000:81:00.0, nvme18-23 below
// 0000:89:00.0, every link at 16.0 GT/s, x4 to a drive and x16 up. It
// returns the tree's /sys.
func backplane(t testing.TB) string {
	t.Helper()
	return buildTree(t, "backplane.tree")
}

// drives reads the path of each of the backplane's 24 drives (nvmeN's
// drive named /dev/nvmeNn1), as a run reads them before and after a
// measurement.
func drives(t testing.TB, sys string) (paths []Path, names []string) {
	t.Helper()
	for i := 0; i < 24; i++ {
		p, ok, err := Read(sys, "nvme"+strconv.Itoa(i))
		if err != nil || !ok {
			t.Fatalf("Read(nvme%d) = %v, %v", i, ok, err)
		}
		paths = append(paths, p)
		names = append(names, "/dev/nvme"+strconv.Itoa(i)+"n1")
	}
	return paths, names
}

// uplink sets both ends of switch 1's uplink (its upstream port and the
// root port above it) to speed and width.
func uplink(t *testing.T, sys, speed string, width int) {
	setLink(t, sys, "0000:09:00.0", speed, width)
	setLink(t, sys, "0000:00:02.0", speed, width)
}

// atMost sets both ends of switch 1's uplink to speed and width, current
// and maximum alike: a link that trained to all it can, in a slot (or
// behind a root port) narrower or slower than the switch.
func atMost(t *testing.T, sys, speed string, width int) {
	t.Helper()
	uplink(t, sys, speed, width)
	for _, dir := range []string{"devices/pci0000:00/0000:00:02.0/0000:09:00.0", "devices/pci0000:00/0000:00:02.0"} {
		require.NoError(t, os.WriteFile(filepath.Join(sys, dir, "max_link_speed"), []byte(speed+" GT/s PCIe\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(sys, dir, "max_link_width"), []byte(strconv.Itoa(width)+"\n"), 0o644))
	}
}

func span(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

const shareMsg = "/dev/nvme6n1: PCIe link 8.0 GT/s x8 at switch port 0000:09:00.0 (upstream of 6 drives) of 16.0 GT/s x16: "

// A degraded switch uplink bounds a cell when its bandwidth, shared by
// the cell's drives below it, is short of what one drive's own link
// carries: a Gen3 x8 uplink carries one Gen4 x4 drive in full, so that
// drive's single-drive cell is judged, but not six, so a step of the
// switch's six drives (or of all 24) is not. A full-speed path changes
// nothing; a link that reads Unknown is named, not judged.
func TestDegradedLinksPath(t *testing.T) {
	for _, tt := range []struct {
		name     string
		setup    func(t *testing.T, sys string)
		drives   []int
		degraded string
		unknown  string
	}{
		{"full speed, one drive", nil, []int{7}, "", ""},
		{"full speed, one switch", nil, span(6, 11), "", ""},
		{"full speed, 24 drives", nil, span(0, 23), "", ""},
		{"x8 uplink, one drive", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 8) }, []int{7}, "", ""},
		{"x8 uplink, two drives", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 8) }, []int{7, 8},
			"/dev/nvme7n1: PCIe link 8.0 GT/s x8 at switch port 0000:09:00.0 (upstream of 6 drives) of 16.0 GT/s x16: " +
				"3.94 GB/s a drive for the 2 of this cell below it, short of the 7.88 GB/s of one drive's 16.0 GT/s x4", ""},
		{"x8 uplink, its six drives", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 8) }, span(6, 11),
			shareMsg + "1.31 GB/s a drive for the 6 of this cell below it, short of the 7.88 GB/s of one drive's 16.0 GT/s x4", ""},
		{"x8 uplink, 24 drives", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 8) }, span(0, 23),
			shareMsg + "1.31 GB/s a drive for the 6 of this cell below it, short of the 7.88 GB/s of one drive's 16.0 GT/s x4", ""},
		{"x8 uplink, another switch's drives", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 8) }, span(0, 5), "", ""},
		{"x2 uplink, one drive", func(t *testing.T, sys string) { uplink(t, sys, "8.0", 2) }, []int{7},
			"/dev/nvme7n1: PCIe link 8.0 GT/s x2 at switch port 0000:09:00.0 (upstream of 6 drives) of 16.0 GT/s x16: " +
				"1.97 GB/s a drive for the 1 of this cell below it, short of the 7.88 GB/s of one drive's 16.0 GT/s x4", ""},
		{"a drive's own link", func(t *testing.T, sys string) {
			setLink(t, sys, "0000:0c:00.0", "16.0", 2)
			setLink(t, sys, "0000:0a:05.0", "16.0", 2)
		}, span(6, 11), "/dev/nvme7n1: PCIe link 16.0 GT/s x2 of 16.0 GT/s x4 (0000:0c:00.0)", ""},
		{"unknown uplink", func(t *testing.T, sys string) {
			setLink(t, sys, "0000:81:00.0", "Unknown", 16)
			setLink(t, sys, "0000:80:01.0", "Unknown", 16)
		}, span(12, 17), "", `/dev/nvme12n1: PCIe link at switch port 0000:81:00.0 not checked: current_link_speed of 0000:81:00.0 reads "Unknown"`},
		{"unknown drive link", func(t *testing.T, sys string) {
			setLink(t, sys, "0000:83:00.0", "Unknown", 4)
			setLink(t, sys, "0000:82:04.0", "Unknown", 4)
		}, []int{12}, "", `/dev/nvme12n1: PCIe link not checked: current_link_speed of 0000:83:00.0 reads "Unknown"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys := backplane(t)
			if tt.setup != nil {
				tt.setup(t, sys)
			}
			paths, names := drives(t, sys)
			degraded, unknown := DegradedLinks(paths, names, tt.drives, 0, 0)
			assert.Equal(t, tt.degraded, degraded)
			assert.Equal(t, tt.unknown, unknown)
		})
	}
}

// An uplink at its maximum that cannot carry even one drive's full link
// (a Gen4 switch behind a Gen3 x4 slot) bounds every cell of the drives
// below it, as a slot slower than the drive does; an uplink at its
// maximum that carries one drive in full but not all of them at once is
// the platform's oversubscription by design, and is not flagged.
func TestDegradedLinksUplinkAtItsMaximum(t *testing.T) {
	for _, tt := range []struct {
		name     string
		speed    string
		width    int
		drives   []int
		degraded string
	}{
		{"Gen3 x4 slot, one drive", "8.0", 4, []int{7},
			"/dev/nvme7n1: PCIe link 8.0 GT/s x4 at switch port 0000:09:00.0 (upstream of 6 drives) of 8.0 GT/s x4: " +
				"at its maximum, 3.94 GB/s, short of the 7.88 GB/s of one drive's 16.0 GT/s x4"},
		{"Gen3 x4 slot, its six drives", "8.0", 4, span(6, 11),
			"/dev/nvme6n1: PCIe link 8.0 GT/s x4 at switch port 0000:09:00.0 (upstream of 6 drives) of 8.0 GT/s x4: " +
				"at its maximum, 3.94 GB/s, short of the 7.88 GB/s of one drive's 16.0 GT/s x4"},
		{"Gen3 x8 slot, one drive", "8.0", 8, []int{7}, ""},
		{"Gen3 x8 slot, its six drives", "8.0", 8, span(6, 11), ""},
		{"Gen4 x8 slot, 24 drives", "16.0", 8, span(0, 23), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sys := backplane(t)
			atMost(t, sys, tt.speed, tt.width)
			paths, names := drives(t, sys)
			degraded, unknown := DegradedLinks(paths, names, tt.drives, 0, 0)
			assert.Equal(t, tt.degraded, degraded)
			assert.Empty(t, unknown)
		})
	}
}

// A spec that states its link judges a drive's own link by it, not by the
// device's maximum; a drive with no PCIe path is never degraded.
func TestDegradedLinksSpecLink(t *testing.T) {
	paths, names := drives(t, backplane(t))
	degraded, _ := DegradedLinks(paths, names, []int{7}, 32, 4)
	assert.Equal(t, "/dev/nvme7n1: PCIe link 16.0 GT/s x4 of 32.0 GT/s x4 (0000:0c:00.0)", degraded,
		"the x16 uplink at its maximum carries one 32.0 GT/s x4 drive in full: not named")
	paths[7] = nil
	degraded, unknown := DegradedLinks(paths, names, []int{7}, 32, 4)
	assert.Empty(t, degraded)
	assert.Empty(t, unknown)
}

// BenchmarkDegradedLinks24 is what reading the PCIe paths of a 24-drive
// step and judging them costs, before and after each of its
// measurements: every drive's path is read, to count the drives below
// each port.
func BenchmarkDegradedLinks24(b *testing.B) {
	sys := backplane(b)
	cell := span(0, 23)
	for b.Loop() {
		paths, names := drives(b, sys)
		if d, u := DegradedLinks(paths, names, cell, 0, 0); d != "" || u != "" {
			b.Fatal(d, u)
		}
	}
}

// Before and after a measurement: the finding once when both agree,
// either alone, both when they differ.
func TestBeforeAndAfter(t *testing.T) {
	for _, tt := range []struct{ before, after, want string }{
		{"", "", ""},
		{"a", "a", "a"},
		{"a", "", "a"},
		{"", "b", "b"},
		{"a", "b", "a; after the measurement: b"},
	} {
		if got := BeforeAndAfter(tt.before, tt.after); got != tt.want {
			t.Errorf("BeforeAndAfter(%q, %q) = %q, want %q", tt.before, tt.after, got, tt.want)
		}
	}
}

// The rule's arithmetic, on the links two or more of a cell's drives
// share: a link bounds the cell when it carries less of data (90 % of its
// bandwidth after line coding) than the cell asks and its drives moved at
// least 80 % of that bandwidth through it; of several, the fullest is
// named and the others counted.
func TestBound(t *testing.T) {
	six := []string{"a", "b", "c", "d", "e", "f"}
	at := func(v float64, drives ...string) map[string]float64 {
		m := map[string]float64{}
		for _, d := range drives {
			m[d] = v
		}
		return m
	}
	both := func(a, b map[string]float64) map[string]float64 {
		maps.Copy(a, b)
		return a
	}
	up := func(where string, speed float64, width int, drives ...string) SharedLink {
		return SharedLink{Where: where, Speed: speed, Width: width, Drives: drives}
	}
	for _, tt := range []struct {
		name     string
		shared   []SharedLink
		perDrive float64
		moved    map[string]float64
		want     string
	}{
		{"Gen5 x16 over six at 14.5 GB/s, full", []SharedLink{up("switch port X", 32, 16, six...)}, 14.5e9, at(9.7e9, six...),
			"6 of this cell's drives share switch port X, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data at 90 %): 87.0 GB/s asked at the spec's 14.5 GB/s a drive, 58.2 GB/s moved"},
		{"not full: the drives are slow", []SharedLink{up("switch port X", 32, 16, six...)}, 14.5e9, at(8e9, six...), ""},
		{"asked within its data rate", []SharedLink{up("switch port X", 32, 16, six...)}, 9e9, at(9e9, six...), ""},
		{"4KB random at 1,000,000 IOPS", []SharedLink{up("switch port X", 32, 16, six...)}, 4.096e9, at(4.096e9, six...), ""},
		{"Gen4 x16 over six Gen4 drives at 7 GB/s", []SharedLink{up("switch port X", 16, 16, six...)}, 7e9, at(4.5e9, six...),
			"6 of this cell's drives share switch port X, 16.0 GT/s x16 (31.5 GB/s, 28.4 GB/s of data at 90 %): 42.0 GB/s asked at the spec's 7.0 GB/s a drive, 27.0 GB/s moved"},
		{"two switches, the fuller named", []SharedLink{up("switch port X", 32, 16, six[:3]...), up("switch port Y", 32, 8, six[3:]...)},
			14.5e9, at(10e9, six...),
			"3 of this cell's drives share switch port Y, 32.0 GT/s x8 (31.5 GB/s, 28.4 GB/s of data at 90 %): 43.5 GB/s asked at the spec's 14.5 GB/s a drive, 30.0 GB/s moved"},
		{"two switches, both bound", []SharedLink{up("switch port X", 32, 8, six[:3]...), up("switch port Y", 32, 4, six[3:]...)},
			14.5e9, both(at(9e9, six[:3]...), at(5.2e9, six[3:]...)),
			"3 of this cell's drives share switch port Y, 32.0 GT/s x4 (15.8 GB/s, 14.2 GB/s of data at 90 %): 43.5 GB/s asked at the spec's 14.5 GB/s a drive, 15.6 GB/s moved (and 1 more shared link alike: switch port X)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Bound(tt.shared, tt.perDrive, "the spec's", tt.moved))
		})
	}
}

// A scaling cell's drives are asked the spec's figure, or the 1-drive
// baseline's when it is higher, in the busier direction of a mix; a cell
// with no shared link, or no drives, is not bounded.
func TestScalingBound(t *testing.T) {
	six := []string{"a", "b", "c", "d", "e", "f"}
	shared := []SharedLink{{Where: "switch port X", Speed: 32, Width: 16, Drives: six}}
	measured := map[string]float64{}
	for _, d := range six {
		measured[d] = 9_700
	}
	read := specs.Workload{RW: "read", Metric: specs.MBps, RWMixRead: -1}
	assert.Equal(t, "6 of this cell's drives share switch port X, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data at 90 %): 87.0 GB/s asked at the spec's 14.5 GB/s a drive, 58.2 GB/s moved",
		ScalingBound(shared, read, 14_500, 6*14_000, 6, measured))
	assert.Equal(t, "6 of this cell's drives share switch port X, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data at 90 %): 90.0 GB/s asked at the 1-drive baseline's 15.0 GB/s a drive, 58.2 GB/s moved",
		ScalingBound(shared, read, 14_500, 6*15_000, 6, measured))
	mix := specs.Workload{RW: "rw", Metric: specs.MBps, RWMixRead: 70}
	for _, d := range six {
		measured[d] = 13_000
	}
	assert.Equal(t, "6 of this cell's drives share switch port X, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data at 90 %): 58.8 GB/s asked at the spec's (its 70 % in the busier direction) 9.8 GB/s a drive, 54.6 GB/s moved",
		ScalingBound(shared, mix, 14_000, 0, 6, measured))
	assert.Empty(t, ScalingBound(nil, read, 14_500, 0, 6, measured))
	assert.Empty(t, ScalingBound(shared, read, 14_500, 0, 0, measured))
}

// The bytes a second a cell asks of a drive: MB/s as 10^6 B/s, IOPS times
// the block size, the busier direction of a mix; nothing for a latency.
func TestDataRate(t *testing.T) {
	assert.InDelta(t, 14.5e9, DataRate(14_500, specs.Workload{RW: "read", Metric: specs.MBps, RWMixRead: -1}), 1)
	assert.InDelta(t, 4.096e9, DataRate(1_000_000, specs.Workload{RW: "randread", BS: 4096, Metric: specs.IOPS, RWMixRead: -1}), 1)
	assert.InDelta(t, 0.7*4.096e9, DataRate(1_000_000, specs.Workload{RW: "randrw", BS: 4096, Metric: specs.IOPS, RWMixRead: 70}), 1)
	assert.InDelta(t, 0.5*4.096e9, DataRate(1_000_000, specs.Workload{RW: "randrw", BS: 4096, Metric: specs.IOPS, RWMixRead: -1}), 1)
	assert.Zero(t, DataRate(80, specs.Workload{RW: "randread", BS: 4096, Metric: specs.LatUS}))
}

// The links a step's drives share, on the backplane: each switch's uplink
// over its six drives (four of them for all 24), none for a drive alone,
// and not one sysfs does not know.
func TestSharedLinks(t *testing.T) {
	sys := backplane(t)
	paths, names := drives(t, sys)
	uplinks := []SharedLink{
		{Where: "switch port 0000:01:00.0", Speed: 16, Width: 16, Drives: names[0:6]},
		{Where: "switch port 0000:09:00.0", Speed: 16, Width: 16, Drives: names[6:12]},
		{Where: "switch port 0000:81:00.0", Speed: 16, Width: 16, Drives: names[12:18]},
		{Where: "switch port 0000:89:00.0", Speed: 16, Width: 16, Drives: names[18:24]},
	}
	assert.Equal(t, uplinks, SharedLinks(paths, names, span(0, 23)))
	assert.Equal(t, uplinks[1:2], SharedLinks(paths, names, span(6, 11)))
	assert.Empty(t, SharedLinks(paths, names, []int{7}))
	assert.Equal(t, []SharedLink{{Where: "switch port 0000:09:00.0", Speed: 16, Width: 16, Drives: names[7:9]}},
		SharedLinks(paths, names, []int{7, 8, 12}), "one drive below another switch shares nothing")
	setLink(t, sys, "0000:09:00.0", "Unknown", 16)
	setLink(t, sys, "0000:00:02.0", "Unknown", 16)
	paths, _ = drives(t, sys)
	assert.Equal(t, []SharedLink{uplinks[0]}, SharedLinks(paths, names, span(0, 11)))

	// A link that trained up during the measurement is taken as it was
	// before.
	uplink(t, sys, "8.0", 8)
	paths, _ = drives(t, sys)
	before := SharedLinks(paths, names, span(6, 11))
	uplink(t, sys, "16.0", 16)
	paths, _ = drives(t, sys)
	after := SharedLinks(paths, names, span(6, 11))
	require.Len(t, after, 1)
	assert.Equal(t, [2]any{8.0, 8}, [2]any{Slower(before, after)[0].Speed, Slower(before, after)[0].Width})
}
