package live

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/specs"
)

// A resumed run judges C0 from the interrupted run's receipt: the bad
// blocks grown before the interruption are not forgotten.
func TestResumedRunKeepsTheC0ReadOnReceipt(t *testing.T) {
	dir := t.TempDir()
	before, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", "ocp-smart-add-log-v2.3-autoval-values.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := recording.HealthFile(dir, 0, "c0-before")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, before, 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(nvme.CLI{}, []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}, specs.DefaultHealth(), nil)
	m.ocp.init(t.Context(), m.nvme)
	m.ocp.c0[0] = true
	// What this run read on receipt: the drive as it is now, worn.
	m.health[0].OCP.Before = nvme.OCPSmart{BadUserNANDBlocks: 3}
	m.resumedOCP(dir, 0)
	if got := m.health[0].OCP.Before.BadUserNANDBlocks; got != 0 {
		t.Errorf("the resumed run judges from %d bad blocks, want the interrupted run's receipt, 0", got)
	}
	if string(m.raw["0.c0-before"]) != string(before) {
		t.Error("the recording keeps the interrupted run's receipt")
	}
}
