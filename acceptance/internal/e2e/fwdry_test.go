//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dry run with two drives plans each drive's firmware steps as -run
// selects them, the image by its whole path (one holding " (").
func TestFirmwareDryRunSelectsEachDrive(t *testing.T) {
	runParallel(t) // dry runs on a loop device of its own, nothing timed
	a, b := guardedLoop(t), guardedLoop(t)
	na, nb := strings.TrimPrefix(a, "/dev/"), strings.TrimPrefix(b, "/dev/")
	img := filepath.Join(t.TempDir(), "fw (v2).bin")
	require.NoError(t, os.WriteFile(img, make([]byte, 4096), 0o644))
	back := filepath.Join(t.TempDir(), "back.bin")
	require.NoError(t, os.WriteFile(back, make([]byte, 8192), 0o644))
	// step is the dry run's plan line of the firmware step, its drives
	// first ("" when it has none).
	step := func(out, name string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[1] == "firmware" && strings.Contains(l, "firmware "+name+": ") {
				return f[2]
			}
		}
		return ""
	}
	// Each drive's name anchored: loop1 is in loop12, and a test beside
	// this one may hold the numbers between.
	for _, tc := range []struct{ sel, activate, back string }{
		{"TestFirmware", a + "," + b, a + "," + b},
		{"TestFirmware/^" + nb + "$", b, b},
		{"TestFirmware/^" + na + "$/back", "", a},
		{"TestFirmware/^" + nb + "$/activate", b, ""},
	} {
		res := runSuite(t, []string{"-test.run=" + tc.sel}, "-spec="+testdataFile(t, "firmware.toml"), "-drives="+a+","+b, "-firmware="+img, "-firmware-back="+back, "-dry-run")
		require.Equal(t, 0, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
		assert.Equal(t, tc.activate, step(res.Stdout, "activate"), "%s: %s", tc.sel, res.Stdout)
		assert.Equal(t, tc.back, step(res.Stdout, "back"), "%s: %s", tc.sel, res.Stdout)
		if tc.activate != "" {
			assert.Contains(t, res.Stdout, "firmware activate: "+img+" (4096 bytes) to slot 2")
		}
	}
}
