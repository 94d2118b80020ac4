package pcie

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

type linkTest struct {
	ctrl      string
	ok        bool
	want      Link
	wantSpeed float64
	wantWidth int
	degraded  string
}

var linkTests = []linkTest{
	{"nvme0", true, Link{PCI: "0000:01:00.0", Speed: 32, MaxSpeed: 32, Width: 4, MaxWidth: 4}, 0, 0, ""},
	{"nvme1", true, Link{PCI: "0000:02:00.0", Speed: 16, MaxSpeed: 32, Width: 2, MaxWidth: 4}, 0, 0,
		"PCIe link 16.0 GT/s x2 of 32.0 GT/s x4"},
	// A spec that expects a Gen4 x2 slot judges nvme1's link by that.
	{"nvme1", true, Link{PCI: "0000:02:00.0", Speed: 16, MaxSpeed: 32, Width: 2, MaxWidth: 4}, 16, 2, ""},
	{"nvme1", true, Link{PCI: "0000:02:00.0", Speed: 16, MaxSpeed: 32, Width: 2, MaxWidth: 4}, 16, 4,
		"PCIe link 16.0 GT/s x2 of 16.0 GT/s x4"},
	{"nvme2", false, Link{}, 0, 0, ""},
	{"nvme9", false, Link{}, 0, 0, ""},
	{"", false, Link{}, 0, 0, ""},
}

// buildTree builds the fake tree ../testdata/NAME (see the format at the
// top of ../testdata/two-sockets.tree) in a new temporary directory and
// returns its /sys.
func buildTree(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(testenv.BuildTree(t, filepath.Join("..", "testdata", name)), "sys")
}

// endpoint reads the link of NVMe controller ctrl's own PCI function, as
// that end of the link reports it; ok is false for a controller with none.
func endpoint(sys, ctrl string) (Link, bool, error) {
	if ctrl == "" {
		return Link{}, false, nil
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(sys, "class", "nvme", ctrl, "device"))
	if err != nil {
		return Link{}, false, nil
	}
	return readLink(dev)
}

func TestLink(t *testing.T) {
	sys := buildTree(t, "pcie.tree")
	for _, tt := range linkTests {
		l, ok, err := endpoint(sys, tt.ctrl)
		if err != nil || ok != tt.ok || l != tt.want {
			t.Errorf("endpoint(%q) = %+v, %v, %v; want %+v, %v", tt.ctrl, l, ok, err, tt.want, tt.ok)
			continue
		}
		if got := l.Degraded(tt.wantSpeed, tt.wantWidth); got != tt.degraded {
			t.Errorf("endpoint(%q).Degraded(%v, %d) = %q, want %q", tt.ctrl, tt.wantSpeed, tt.wantWidth, got, tt.degraded)
		}
	}
	l, _, _ := endpoint(sys, "nvme1")
	if got, want := l.String(), "16.0 GT/s x2 (of 32.0 GT/s x4)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// setLink rewrites the link files of PCI function fn ("0000:01:00.0")
// under sys/devices, wherever it is.
func setLink(t *testing.T, sys string, fn, speed string, width int) {
	t.Helper()
	var dir string
	err := filepath.WalkDir(filepath.Join(sys, "devices"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == fn {
			dir = path
			return filepath.SkipAll
		}
		return err
	})
	if err != nil || dir == "" {
		t.Fatalf("no function %s in the tree (%v)", fn, err)
	}
	if speed != "Unknown" {
		speed += " GT/s PCIe"
	}
	for name, v := range map[string]string{"current_link_speed": speed, "current_link_width": strconv.Itoa(width)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// On the 24-drive backplane every drive's path is its own x4 link to a
// switch's downstream port and the switch's x16 uplink to a root port; at
// full speed the drive's link is the narrowest and nothing is named.
func TestReadFullSpeed(t *testing.T) {
	sys := buildTree(t, "backplane.tree")
	for i := 0; i < 24; i++ {
		ctrl := "nvme" + strconv.Itoa(i)
		p, ok, err := Read(sys, ctrl)
		if err != nil || !ok || len(p) != 2 {
			t.Fatalf("Read(%s) = %+v, %v, %v; want two hops", ctrl, p, ok, err)
		}
		if p[0].Role != "endpoint" || p[1].Role != "switch port" || p[1].AboveRole != "root port" {
			t.Errorf("%s: roles %q above %q, %q above %q", ctrl, p[0].Role, p[0].AboveRole, p[1].Role, p[1].AboveRole)
		}
		if got := len(p.Functions()); got != 4 {
			t.Errorf("%s: %d functions on the path, want 4: %v", ctrl, got, p.Functions())
		}
		n, ok := p.Narrowest()
		if !ok || n.PCI != p[0].PCI {
			t.Errorf("%s: narrowest %+v, want the endpoint's link", ctrl, n)
		}
		for _, h := range p {
			if why := h.Degraded(0, 0); why != "" {
				t.Errorf("%s: %s: %s", ctrl, h.Where(), why)
			}
		}
		if got, want := p.String(), "16.0 GT/s x4 (of 16.0 GT/s x4)"; got != want {
			t.Errorf("%s: String() = %q, want %q", ctrl, got, want)
		}
		if l, _, _ := endpoint(sys, ctrl); l != p[0].Link {
			t.Errorf("%s: endpoint() = %+v, the path's first hop %+v", ctrl, l, p[0].Link)
		}
	}
	p, _, _ := Read(sys, "nvme7")
	if got, want := p[1].Where(), "switch port 0000:09:00.0"; got != want || p[1].Above != "0000:00:02.0" {
		t.Errorf("nvme7's uplink is at %q above %q, want %q above 0000:00:02.0", got, p[1].Above, want)
	}
}

// A switch uplink that trained at Gen3 x8 is named on the path of each
// drive below it, as the narrowest link, and no other drive's path
// changes.
func TestReadDegradedUplink(t *testing.T) {
	sys := buildTree(t, "backplane.tree")
	// Both ends of switch 1's uplink read the link.
	setLink(t, sys, "0000:09:00.0", "8.0", 8)
	setLink(t, sys, "0000:00:02.0", "8.0", 8)
	for i := 0; i < 24; i++ {
		ctrl := "nvme" + strconv.Itoa(i)
		p, _, err := Read(sys, ctrl)
		if err != nil {
			t.Fatal(err)
		}
		below := i >= 6 && i < 12
		if got := p[1].Degraded(0, 0) != ""; got != below {
			t.Errorf("%s: uplink degraded %v, want %v: %+v", ctrl, got, below, p[1])
		}
		if !below {
			continue
		}
		if got, want := p[1].Degraded(0, 0), "PCIe link 8.0 GT/s x8 of 16.0 GT/s x16"; got != want {
			t.Errorf("%s: %q, want %q", ctrl, got, want)
		}
		// Gen3 x8 carries what one Gen4 x4 drive does: the drive's own
		// link stays the narrowest of its path among equals.
		if n, _ := p.Narrowest(); n.PCI != p[0].PCI {
			t.Errorf("%s: narrowest at %s, want the endpoint (equal bandwidth, nearest first)", ctrl, n.Where())
		}
		if got, want := p.String(), "16.0 GT/s x4 (of 16.0 GT/s x4); switch port 0000:09:00.0: 8.0 GT/s x8 (of 16.0 GT/s x16)"; got != want {
			t.Errorf("%s: String() = %q, want %q", ctrl, got, want)
		}
	}
	// At Gen3 x2 it is the narrowest.
	setLink(t, sys, "0000:09:00.0", "8.0", 2)
	p, _, _ := Read(sys, "nvme9")
	if n, _ := p.Narrowest(); n.Where() != "switch port 0000:09:00.0" || n.Width != 2 {
		t.Errorf("narrowest %+v, want switch port 0000:09:00.0 at x2", n)
	}
}

// A root port whose speed reads Unknown leaves that hop unjudged and says
// so; the drive's own link is still read and judged.
func TestReadUnknown(t *testing.T) {
	sys := buildTree(t, "backplane.tree")
	setLink(t, sys, "0000:80:01.0", "Unknown", 16)
	setLink(t, sys, "0000:81:00.0", "Unknown", 16)
	p, ok, err := Read(sys, "nvme12")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got, want := p.Unknown(), `current_link_speed of 0000:81:00.0 reads "Unknown" (switch port)`; got != want {
		t.Errorf("Unknown() = %q, want %q", got, want)
	}
	if got, want := p.String(), `16.0 GT/s x4 (of 16.0 GT/s x4); switch port 0000:81:00.0: Unknown (current_link_speed of 0000:81:00.0 reads "Unknown")`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if p[1].Degraded(0, 0) != "" || p[1].Bandwidth() != 0 {
		t.Errorf("an unknown link is neither degraded nor measured: %+v", p[1])
	}
	// One end known is enough.
	setLink(t, sys, "0000:80:01.0", "16.0", 16)
	p, _, _ = Read(sys, "nvme12")
	if p.Unknown() != "" || p[1].Speed != 16 || p[1].PCI != "0000:81:00.0" {
		t.Errorf("with the root port's reading: %+v", p[1])
	}
	// The endpoint's own link unknown: readLink says so instead of hiding it.
	setLink(t, sys, "0000:83:00.0", "Unknown", 4)
	setLink(t, sys, "0000:82:04.0", "Unknown", 4)
	l, ok, err := endpoint(sys, "nvme12")
	if err != nil || !ok || l.Unknown == "" || l.Degraded(32, 4) != "" {
		t.Errorf("endpoint = %+v, %v, %v; want it known to be Unknown, not degraded", l, ok, err)
	}
	if got, want := l.String(), `Unknown (current_link_speed of 0000:83:00.0 reads "Unknown")`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestBandwidth(t *testing.T) {
	for _, tt := range []struct {
		speed float64
		width int
		want  float64 // bytes/s
	}{
		{2.5, 1, 250e6}, {5, 4, 2e9}, {8, 4, 8e9 * 4 / 130 * 128 / 8}, {16, 4, 16e9 * 4 * 128 / 130 / 8}, {64, 16, 64e9 * 16 * 242 / 256 / 8},
	} {
		if got := Bandwidth(tt.speed, tt.width); math.Abs(got-tt.want) > 1 {
			t.Errorf("Bandwidth(%v, %d) = %v, want %v", tt.speed, tt.width, got, tt.want)
		}
	}
}

// A controller on no PCI function (a fabrics controller, whose device
// link is nvme-fabrics' "ctl") has no PCIe path: ok is false, never an
// empty path that callers would index.
func TestReadNotPCI(t *testing.T) {
	sys := buildTree(t, "pcie.tree")
	for _, ctrl := range []string{"nvme2", "nvme9", ""} {
		p, ok, err := Read(sys, ctrl)
		if err != nil || ok || p != nil {
			t.Errorf("Read(%q) = %+v, %v, %v; want no path, not ok", ctrl, p, ok, err)
		}
	}
	p, ok, err := Read(sys, "nvme1")
	if err != nil || !ok || len(p) != 1 || p[0].AboveRole != "" {
		t.Errorf("Read(nvme1) = %+v, %v, %v; want the endpoint's link alone", p, ok, err)
	}
}

// A port above the drive whose link files cannot be read leaves that hop
// unknown, naming the failure; the drive's own degraded link is still
// read and judged, as it was when only the endpoint was read.
func TestReadUnreadablePort(t *testing.T) {
	sys := buildTree(t, "backplane.tree")
	setLink(t, sys, "0000:0c:00.0", "16.0", 2)
	setLink(t, sys, "0000:0a:05.0", "16.0", 2)
	// The root port's width reads as an error (a directory here; EINVAL
	// from a config read that fails on a real one).
	width := filepath.Join(sys, "devices/pci0000:00/0000:00:02.0/current_link_width")
	if err := os.Remove(width); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(width, 0o755); err != nil {
		t.Fatal(err)
	}
	p, ok, err := Read(sys, "nvme7")
	if err != nil || !ok || len(p) != 2 {
		t.Fatalf("Read(nvme7) = %+v, %v, %v; want two hops", p, ok, err)
	}
	if got, want := p[0].Degraded(0, 0), "PCIe link 16.0 GT/s x2 of 16.0 GT/s x4"; got != want {
		t.Errorf("the drive's own link: %q, want %q", got, want)
	}
	// The switch's upstream port still reads its end of the uplink.
	if p[1].Unknown != "" || p[1].Width != 16 {
		t.Errorf("uplink %+v, want the upstream port's reading", p[1])
	}
	// Both ends unreadable: the hop is unknown, and says why.
	width = filepath.Join(sys, "devices/pci0000:00/0000:00:02.0/0000:09:00.0/current_link_width")
	if err := os.Remove(width); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(width, 0o755); err != nil {
		t.Fatal(err)
	}
	p, ok, err = Read(sys, "nvme7")
	if err != nil || !ok || len(p) != 2 || p[0].Degraded(0, 0) == "" {
		t.Fatalf("Read(nvme7) = %+v, %v, %v; want two hops, the first degraded", p, ok, err)
	}
	if !strings.Contains(p[1].Unknown, "0000:09:00.0") || !strings.Contains(p.Unknown(), "is a directory") {
		t.Errorf("uplink %+v (%q), want it unknown naming 0000:09:00.0 and the error", p[1], p.Unknown())
	}
}
