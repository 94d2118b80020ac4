package device

import "testing"

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

func TestLink(t *testing.T) {
	sys := buildTree(t, "pcie.tree")
	for _, tt := range linkTests {
		l, ok, err := sys.Link(tt.ctrl)
		if err != nil || ok != tt.ok || l != tt.want {
			t.Errorf("Link(%q) = %+v, %v, %v; want %+v, %v", tt.ctrl, l, ok, err, tt.want, tt.ok)
			continue
		}
		if got := l.Degraded(tt.wantSpeed, tt.wantWidth); got != tt.degraded {
			t.Errorf("Link(%q).Degraded(%v, %d) = %q, want %q", tt.ctrl, tt.wantSpeed, tt.wantWidth, got, tt.degraded)
		}
	}
	l, _, _ := sys.Link("nvme1")
	if got, want := l.String(), "16.0 GT/s x2 (of 32.0 GT/s x4)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
