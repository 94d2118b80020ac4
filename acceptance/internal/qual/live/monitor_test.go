package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/specs"
)

// A resumed run judges receipt and health against the interrupted run's
// log as read on receipt, and keeps that log in the recording: the
// outputs written after the run do not replace it with the one read when
// the run was resumed (real nvme-cli 2.3 outputs, fixtures/nvme).
func TestAResumedRunKeepsTheLogReadOnReceipt(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", name))
		require.NoError(t, err)
		return data
	}
	received, resumed := read("smart-log-v2.3-quoted-decimal.json"), read("smart-log-v2.3-spare-warning.json")
	dir := t.TempDir()
	before := filepath.Join(dir, "health", "0.before.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(before), 0o755))
	require.NoError(t, os.WriteFile(before, received, 0o644))

	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}
	m := NewMonitor(nvme.CLI{}, drives, specs.Health{}, nil)
	m.raw["0.before"] = resumed // as ReadHealth read it when the run was resumed
	m.resumed(dir, "2.3")
	want, err := nvme.ParseSmartLog(received)
	require.NoError(t, err)
	require.Equal(t, want, m.all()[0].Before, "judged against the log read on receipt")

	require.NoError(t, m.keep(dir, false)) // what the end of the run writes
	got, err := os.ReadFile(before)
	require.NoError(t, err)
	require.Equal(t, string(received), string(got), "the recording keeps the log read on receipt")
}

// A resumed run's setup refuses a drive over its temperature threshold
// as a resume (cool it, then -resume again; the run did write), and
// lets a drive with another warning through to be disqualified while
// the others go on (real nvme-cli 2.3 outputs, fixtures/nvme).
func TestAResumedSetupRefusesOnlyAHotDrive(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		refused bool
	}{
		{"smart-log-v2.3-temperature-warning.json", true},
		{"smart-log-v2.3-spare-warning.json", false},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			fixture, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", tt.fixture))
			require.NoError(t, err)
			fake := filepath.Join(t.TempDir(), "nvme")
			script := "#!/bin/sh\ncase \"$1\" in\nsmart-log) cat '" + fixture + "';;\n*) echo \"fake nvme: $1\" >&2; exit 1;;\nesac\n"
			require.NoError(t, os.WriteFile(fake, []byte(script), 0o755))
			drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Name: "nvme0n1", Block: true, Controller: "nvme0"}}}
			m, errs := ReadHealthResumed(context.Background(), nvme.CLI{Binary: fake}, drives, specs.Health{})
			if !tt.refused {
				require.Empty(t, errs)
				require.Contains(t, m.setupWarnings(), 0, "the drive is disqualified by the resumed run")
				return
			}
			require.Len(t, errs, 1)
			msg := errs[0].Error()
			require.Contains(t, msg, "/dev/nvme0n1")
			require.Contains(t, msg, "then run -resume again")
			require.NotContains(t, msg, "the run wrote nothing", "a resumed run has written to the drive")
		})
	}
}
