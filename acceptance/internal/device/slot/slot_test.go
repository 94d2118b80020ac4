package slot

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

var slotTests = []struct {
	ctrl   string
	ok     bool
	name   string
	given  []string
	others []string
}{
	{"nvme0", true, "3", []string{"nvme0n1"}, []string{"namespace nvme0n2"}},
	{"nvme0", true, "3", []string{"nvme0n1", "nvme0n2"}, nil},
	// A switch in slot 5: its other port and the drive behind it go too.
	{"nvme1", true, "5", []string{"nvme1n1"}, []string{"namespace nvme2n1", "PCI function 0000:21:01.0", "PCI function 0000:23:00.0"}},
	{"nvme2", true, "5", []string{"nvme1n1", "nvme2n1"}, nil},
	// Slot 7 has no power controller.
	{"nvme3", false, "", nil, nil},
}

func TestOf(t *testing.T) {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("testdata", "slots.tree")), "sys")
	for _, tt := range slotTests {
		s, ok, err := Of(sys, tt.ctrl)
		if err != nil || ok != tt.ok || s.Name != tt.name {
			t.Errorf("Of(%s) = slot %q, %v, %v; want slot %q, %v", tt.ctrl, s.Name, ok, err, tt.name, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if s.Power != filepath.Join(sys, "bus", "pci", "slots", tt.name, "power") {
			t.Errorf("Of(%s).Power = %s", tt.ctrl, s.Power)
		}
		if got := s.Others(sys, tt.given); !reflect.DeepEqual(got, tt.others) {
			t.Errorf("Of(%s).Others(%v) = %q, want %q", tt.ctrl, tt.given, got, tt.others)
		}
	}
	if _, _, err := Of(sys, "nvme9"); err == nil {
		t.Errorf("Of(nvme9) found a controller sysfs does not have")
	}
}

// A native multipath head's block device hangs under its subsystem, not
// its controller: given with its controller, the head's own PCI
// function is not another device of its slot; without, it would be.
func TestOthersOfAHead(t *testing.T) {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("testdata", "heads.tree")), "sys")
	s, ok, err := Of(sys, "nvme0")
	if err != nil || !ok || s.Name != "3" {
		t.Fatalf("Of(nvme0) = %q, %v, %v", s.Name, ok, err)
	}
	if got := s.Others(sys, []string{"nvme0n1"}, "nvme0"); got != nil {
		t.Errorf("Others(nvme0n1, controller nvme0) = %q, want none", got)
	}
	if got, want := s.Others(sys, []string{"nvme0n1"}), []string{"PCI function 0000:17:00.0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Others(nvme0n1) = %q, want %q: the fixture does not show the head's missing link", got, want)
	}
}
