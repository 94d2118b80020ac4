package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A run killed during cycle 2 has listed cycle 1 in run.json as soon as
// it was written, and cycle 2 as started: cycle 1 edited from its FAIL to
// a pass refuses the resume.
func TestPowerLossResumeTrustsOnlyListed(t *testing.T) {
	dev := newLoop(t, 64<<20)
	img := backFile(t, dev)
	rep := filepath.Join(t.TempDir(), "report")
	cut := "blockdev --setro {path}; " + testenv.LoopWritesLanded(img) + "; dd if=/dev/zero of=" + img + " bs=64k count=1 oflag=direct conv=notrunc,fsync status=none"
	args := []string{"-spec=" + filepath.Join("internal", "e2e", "testdata", "powerloss2slow.toml"), "-drives=" + dev, "-destructive", "-report=" + rep, "-power-cut=" + cut, "-power-restore=blockdev --setrw {path}"}
	name := strings.TrimPrefix(dev, "/dev/")
	raw := filepath.Join(rep, "raw")
	c1 := filepath.Join(raw, "powerloss", name, "cycle_1.json")
	join := throttled(t, dev)
	runSuiteCtx(context.Background(), t, func(cmd *exec.Cmd) {
		join(cmd)
		go func() {
			for i := 0; i < 1200; i++ {
				if _, err := os.Stat(filepath.Join(raw, "powerloss", name, "cycle_2")); err == nil {
					_ = cmd.Process.Kill()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}, nil, powerLossOnly, args...)
	_ = exec.Command("blockdev", "--setrw", dev).Run()
	rj, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rj), "powerloss/"+name+"/cycle_1.json", "cycle 1 listed once written")
	assert.Contains(t, string(rj), "powerloss/"+name+"/cycle_2.json", "cycle 2 listed as started before its cut")
	data, err := os.ReadFile(c1)
	require.NoError(t, err)
	require.Regexp(t, `"lost_writes": [1-9]`, string(data), "cycle 1 recorded whole, failed")
	forged := regexp.MustCompile(`"lost_writes": [0-9]+`).ReplaceAll(data, []byte(`"lost_writes": 0`))
	require.NoError(t, os.WriteFile(c1, forged, 0o644))
	r := runSuite(t, powerLossOnly, append(args, "-resume")...)
	t.Logf("resume: code %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "parsing -resume: powerloss/"+name+"/cycle_1.json (edited after recording")
	assert.NotContains(t, r.Stdout, "--- PASS: TestPowerLoss/"+name+"/cycle_1")
}

// Cycle 1 keeps every write and cycle 2 loses 64 KiB: a replay judged
// with a spec of one cycle still judges the failed cycle 2, and a replay
// whose listed cycle_2.json is gone does not pass.
func TestPowerLossReplayKeepsFailedCycle(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	dev := newLoop(t, 64<<20)
	img := backFile(t, dev)
	mark := filepath.Join(t.TempDir(), "mark")
	rep := filepath.Join(t.TempDir(), "report")
	cut := "blockdev --setro {path}; if [ -e " + mark + " ]; then " + testenv.LoopWritesLanded(img) + "; dd if=/dev/zero of=" + img + " bs=64k count=1 oflag=direct conv=notrunc,fsync status=none; fi; touch " + mark
	r := runPL(t, []string{dev}, nil, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss2.toml"), "-drives="+dev, "-destructive", "-report="+rep,
		"-power-cut="+cut, "-power-restore=blockdev --setrw {path}")
	require.NotEqual(t, 0, r.Code, r.Stdout)
	name := strings.TrimPrefix(dev, "/dev/")
	raw := filepath.Join(rep, "raw")
	one := runSuite(t, powerLossOnly, "-replay="+raw, "-spec="+filepath.Join("internal", "e2e", "testdata", "powerloss.toml"))
	assert.NotEqual(t, 0, one.Code)
	assert.Contains(t, one.Stdout, "--- FAIL: TestPowerLoss/"+name+"/cycle_2")
	require.NoError(t, os.Remove(filepath.Join(raw, "powerloss", name, "cycle_2.json")))
	gone := runSuite(t, powerLossOnly, "-replay="+raw)
	assert.NotEqual(t, 0, gone.Code)
	assert.Contains(t, gone.Stdout, "NOT QUALIFIED: power_loss: 1 of 2 checks failed; first: "+dev+": recorded cycle 2 missing")
}
