package powertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/cycle"
)

// nvmeNoSmart is an nvme-cli that identifies every drive (an NVMe
// controller, not QEMU's) and whose SMART log does not read.
func nvmeNoSmart(t *testing.T) nvme.CLI {
	bin := filepath.Join(t.TempDir(), "nvme")
	script := "#!/bin/sh\ncase \"$1\" in\nid-ctrl) echo '{\"vid\": 5197, \"sn\": \"S1\", \"mn\": \"M\", \"fr\": \"F\", \"vwc\": 1}' ;;\n*) echo 'smart-log: Input/output error' >&2; exit 1 ;;\nesac\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return nvme.CLI{Binary: bin}
}

// An NVMe drive nvme-cli identifies keeps counts of power losses: when
// they do not read, its cycle has no evidence (never a pass on data
// alone); a target nvme-cli does not identify keeps none and has none
// to miss.
func TestCountsUnreadOnNVMe(t *testing.T) {
	for _, tt := range []struct {
		name string
		nv   nvme.CLI
		want string
	}{
		{"NVMe, SMART log unread", nvmeNoSmart(t), "its counts of power losses did not read before the cut (its SMART log does not read"},
		{"not NVMe", nvmeNone(t), ""},
	} {
		pt := cmdTest(t, "true", "true", tt.nv, ns("nvme1n1", "nvme1"))
		cd := pt.target(context.Background(), pt.Drives[0])
		before, why := cd.Counters(context.Background())
		got := cycle.Unread(cd, before, why)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Unread = %q (counters %v, %q), want %q", tt.name, got, before, why, tt.want)
		}
	}
}
