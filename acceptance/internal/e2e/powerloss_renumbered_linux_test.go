package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Two drives, the first's cut zeroing the first 64 KiB of its image (it
// fails), the second's losing nothing (it passes); then the two images
// are attached again swapped, each at the other's loop device, and the
// same line resumed: the resume matches the drives by identity, and each
// physical drive keeps its own verdict at its new path: the image that
// lost writes fails at the second device, the one that lost nothing
// passes at the first. A replay of the resumed recording judges the same.
func TestPowerLossRenumberedOnResume(t *testing.T) {
	runParallel(t)
	devs := []string{newLoop(t, 64<<20), newLoop(t, 64<<20)}
	imgs := []string{backFile(t, devs[0]), backFile(t, devs[1])}
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	cut := "blockdev --setro {path}; if [ {path} = " + devs[0] + " ]; then " + testenv.LoopWritesLanded(imgs[0]) + "; dd if=/dev/zero of=" + imgs[0] + " bs=64k count=1 oflag=direct conv=notrunc,fsync status=none; fi"
	args := []string{"-spec=" + filepath.Join("internal", "e2e", "testdata", "powerloss.toml"), "-drives=" + strings.Join(devs, ","), "-destructive",
		"-report=" + rep, "-power-cut=" + cut, "-power-restore=blockdev --setrw {path}"}
	first := runPL(t, devs, nil, args...)
	noFioLeft(t)
	verdicts := func(r result) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, c := range r.results(t).PowerLoss {
			out[c.Drive] = c.Verdict
		}
		return out
	}
	require.Equal(t, map[string]string{devs[0]: report.Fail, devs[1]: report.Pass}, verdicts(first), first.Stdout+first.Stderr)

	testenv.Reattach(t, devs, []string{imgs[1], imgs[0]}, nil)
	resumed := runSuite(t, powerLossOnly, append(args, "-resume")...)
	noFioLeft(t)
	require.Contains(t, resumed.Stdout+resumed.Stderr, "drive 1 (recorded at "+devs[0]+") is "+devs[1], resumed.Stdout+resumed.Stderr)
	assert.Equal(t, map[string]string{devs[1]: report.Fail, devs[0]: report.Pass}, verdicts(resumed),
		"the image that lost writes is now at %s: %s", devs[1], resumed.Stdout+resumed.Stderr)
	assert.Contains(t, resumed.Stdout, "--- FAIL: TestPowerLoss/"+strings.TrimPrefix(devs[1], "/dev/")+"/cycle_1")
	assert.NotContains(t, resumed.Stdout, "power cut (", "a resume cuts no cycle recorded whole")

	replay := runSuite(t, powerLossOnly, "-replay="+raw, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"))
	assert.Equal(t, map[string]string{devs[1]: report.Fail, devs[0]: report.Pass}, verdicts(replay), replay.Stdout+replay.Stderr)

	// Judged with a spec without [power_loss], the replay still judges
	// every cycle run.json lists: the failed one stays failed.
	text, err := os.ReadFile(filepath.Join("testdata", "powerloss.toml"))
	require.NoError(t, err)
	bare := filepath.Join(t.TempDir(), "bare.toml")
	require.NoError(t, os.WriteFile(bare, []byte(strings.Split(string(text), "[power_loss]")[0]), 0o644))
	replay = runSuite(t, powerLossOnly, "-replay="+raw, "-spec="+bare)
	assert.Equal(t, map[string]string{devs[1]: report.Fail, devs[0]: report.Pass}, verdicts(replay), replay.Stdout+replay.Stderr)

	// run.json files drive 1's cycles in its first folder still.
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"power_loss": "`+strings.TrimPrefix(devs[0], "/dev/")+`"`)
}
