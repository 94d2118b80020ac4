package powertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// TestHealth's allowance of new OCP incomplete shutdowns after the
// cycles: one a cut each drive saw for a drive without the promise of
// power-loss protection (two drives cut twice each: 2 a drive; with the
// whole host cut each time, every drive saw all 4), and none for a
// drive that promises it: its protection must complete every shutdown.
func TestIncompleteShutdownAllowance(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var drives []Drive
	for _, name := range []string{"nvme0n1", "nvme1n1"} {
		drives = append(drives, ns(name, "nvme0"))
		for k := 1; k <= 2; k++ {
			rel := fmt.Sprintf("powerloss/%s/cycle_%d.json", name, k)
			if err := os.MkdirAll(filepath.Join(dir, "powerloss", name), 0o755); err != nil {
				t.Fatal(err)
			}
			c := fmt.Sprintf(`{"drive": "/dev/%s", "cycle": %d, "acknowledged": 10}`, name, k)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			files[rel] = "listed"
		}
	}
	for _, tt := range []struct {
		name      string
		plp, host bool
		want      uint64
	}{
		{"no plp, drive cuts", false, false, 1 + 2},
		{"no plp, host cuts", false, true, 1 + 4},
		{"plp, drive cuts", true, false, 1},
		{"plp, host cuts", true, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			health := specs.Health{OCP: specs.OCPHealth{IncompleteShutdownsMaxIncrease: 1}}
			pt := &Test{Cfg: &cmdline.Config{PowerCutHost: tt.host}, Dir: dir, Files: files, Health: &health, Drives: drives,
				Spec: &specs.PowerLoss{Cycles: 2, PLP: tt.plp}, Add: func([]report.HealthCheck) {}}
			if _, why := pt.Run(context.Background(), t.Logf); why != "" {
				t.Fatal(why)
			}
			if got := health.OCP.IncompleteShutdownsMaxIncrease; got != tt.want {
				t.Errorf("incomplete shutdowns allowed = %d, want %d", got, tt.want)
			}
		})
	}
}

// The C0 log's PLP start count is evidence of a cut only for a drive
// that reports a PLP capacitor and the count itself.
func TestPLPCounted(t *testing.T) {
	all := nvme.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}
	for _, tt := range []struct {
		name string
		c0   nvme.OCPSmart
		want bool
	}{
		{"capacitor and count", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: nvme.Uint128{Lo: 287}}, true},
		{"no capacitor", nvme.OCPSmart{CapacitorHealth: 0xffff, PLPStartCount: nvme.Uint128{Lo: 0}}, false},
		{"count not reported", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: all}, false},
		{"count past 64 bits", nvme.OCPSmart{CapacitorHealth: 100, PLPStartCount: nvme.Uint128{Hi: 1}}, false},
	} {
		if got := plpCounted(tt.c0); got != tt.want {
			t.Errorf("%s: plpCounted = %v, want %v", tt.name, got, tt.want)
		}
	}
}
