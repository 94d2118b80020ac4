package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// failRow is how a missed cell reads: like a row of the brief.
var failRow = regexp.MustCompile(`^(.+): actual ([\d,]+) (IOPS|MB/s) < spec ([\d,]+) (IOPS|MB/s) \((\d+\.\d\d) % of spec\)$`)

// hostBoundRow is a missed cell measured while the CPUs fio ran on were
// saturated, or a fio job ran its CPU flat out: the brief's row, then why
// the host is to blame.
var hostBoundRow = regexp.MustCompile(`^(.+): actual ([\d,]+) (IOPS|MB/s) < spec ([\d,]+) (IOPS|MB/s) \((\d+\.\d\d) % of spec\); (fio's \d+ jobs? on CPUs [-\d,]+ \(\d+\) were \d+ % busy|(\d+ of )?fio's \d+ jobs? ran at [\d.]+ % of one CPU)`)

// The built-in spec's figures judged on loop devices qualify nothing:
// every cell a loop device misses fails with real fio figures and a
// message that reads like the brief's row. Uncapped, a loop device could
// beat a cell (an idle machine's does over 75,000 8 KiB random writes a
// second), which measured without preconditioning is inconclusive, never
// a pass; held to loopIOPS it misses every cell, and that case is
// TestQuickPreconditioningIsNotAPass's. The spec is the built-in one with its 1.92TB capacity sized to
// the 1 GiB loop devices: a drive smaller than the capacity it is judged
// as is refused (TestCapacityLargerThanTheDriveIsRefused).
func TestBuiltInSpecFailsOnLoopDevices(t *testing.T) {
	runParallel(t) // beside the hang test, which waits; a slower loop device only misses more
	builtin, err := os.ReadFile(filepath.Join("..", "..", "..", "specs", "solidigm-d7-ps1010.toml"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(builtin), "bytes = 1_920_383_410_176"))
	spec := writeSpec(t, strings.Replace(string(builtin), "bytes = 1_920_383_410_176", "bytes = 1_073_741_824", 1))
	l1, l2 := newLoop(t, 1<<30), newLoop(t, 1<<30)
	r := runSuite(t, []string{"-test.run=TestSingleDrive"},
		"-spec="+spec, "-drives="+l1+","+l2, "-capacity=1.92TB", "-destructive", "-runtime=1s", "-precondition=none")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "a run where cells miss must fail")

	run := r.results(t)
	require.Len(t, run.Results, 8, "one result per workload of 1.92TB")
	failed := 0
	for _, res := range run.Results {
		assert.True(t, strings.HasPrefix(res.Test, "TestSingleDrive/1.92TB/"), res.Test)
		assert.Greater(t, res.Actual, 0.0, "%s: a real measurement", res.Test)
		switch {
		case res.Actual < res.Spec && res.Cause == report.CauseHostBound:
			// The machine running the tests saturated the CPUs fio had:
			// the host, not the loop device, is blamed, rightly.
			failed++
			assert.Equal(t, report.Inconclusive, res.Verdict, res.Test)
			assert.Regexp(t, hostBoundRow, res.Error, res.Test)
			assert.Contains(t, r.Stdout, "--- SKIP: "+res.Test)
		case res.Actual < res.Spec:
			failed++
			assert.Equal(t, report.Fail, res.Verdict, res.Test)
			assert.Regexp(t, failRow, res.Error, res.Test)
			assert.Contains(t, r.Stdout, "--- FAIL: "+res.Test)
			assert.Contains(t, r.Stdout, res.Error, "the failure message is in go test's output")
		default:
			assert.Equal(t, report.Inconclusive, res.Verdict, res.Test)
			assert.Contains(t, res.Error, "measured with -precondition=none", res.Test)
			assert.Contains(t, r.Stdout, "--- SKIP: "+res.Test)
		}
	}
	assert.GreaterOrEqual(t, failed, 6, "a loop device misses most of a datacenter drive's figures")
	assert.Equal(t, l1, run.Drives[0].Path)
	assert.Equal(t, "loop", run.Drives[0].Model)
	for _, c := range []string{"3.84TB", "7.68TB", "15.36TB"} {
		assert.Contains(t, r.Stdout, "--- SKIP: TestSingleDrive/"+c, "a capacity no drive has is skipped")
	}
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	verdict := "NOT QUALIFIED"
	if !strings.Contains(string(summary), "1.92TB: NOT QUALIFIED") {
		verdict = "INCONCLUSIVE" // every missed cell was host-bound
	}
	assert.Contains(t, string(summary), "1.92TB: "+verdict)
	assert.Equal(t, 1, strings.Count(r.Stdout+r.Stderr, "drivequal: "+verdict), "the closing verdict line is printed once")
}

// A spec scaled to loop devices passes every cell on three of them, single
// and scaling, each scaling step one fio process covering all its drives;
// replaying what was recorded gives the same verdicts.
func TestLoopSpecPassesThenReplays(t *testing.T) {
	// Its figures are a loop device's fortieth (500 IOPS, 20 MB/s) and
	// its steady-state limits 1000 %: not judged tightly.
	runParallel(t)
	drives := []string{newLoop(t, 1<<30), newLoop(t, 1<<30), newLoop(t, 1<<30)}
	spec := loopSpec(t)
	live := runSuite(t, nil, "-spec="+spec, "-drives="+strings.Join(drives, ","), "-destructive")
	noFioLeft(t)
	require.Equal(t, 0, live.Code, "stdout:\n%s\nstderr:\n%s", live.Stdout, live.Stderr)

	verdicts := live.verdicts(t)
	assert.Len(t, verdicts, 3+8+3*8, "3 verify passes, 8 single-drive cells and 8 workloads at 1, 2 and 3 drives")
	for _, d := range drives {
		test := "TestIntegrity/" + strings.TrimPrefix(d, "/dev/")
		assert.Equal(t, report.Pass, verdicts[test], "%s: a clean run reads back every block", test)
		assert.Contains(t, live.Stdout, "--- PASS: "+test)
	}
	for test, v := range verdicts {
		assert.Equal(t, report.Pass, v, test)
	}
	run := live.results(t)
	assert.Equal(t, "live", run.Mode)
	assert.Regexp(t, `^fio-3\.`, run.FioVersion)
	require.Len(t, run.Drives, 3)
	for i, d := range run.Drives {
		assert.Equal(t, drives[i], d.Path)
		assert.Equal(t, int64(1<<30), d.Bytes)
		assert.NotEmpty(t, d.CPUs, "each drive is pinned with cpus_allowed")
	}

	for _, res := range run.Results {
		if res.Kind != report.KindScaling {
			continue
		}
		require.Len(t, res.PerDrive, res.Drives, res.Test)
		for _, d := range res.PerDrive {
			assert.NotEmpty(t, d.CPUs, "%s: %s is pinned, and the mapping is reported", res.Test, d.Path)
		}
	}
	assert.Contains(t, live.Stdout, "  cpus ", "the plan shows the CPU mapping")

	raw := filepath.Join(live.Report, "raw")
	var info struct {
		Precondition string            `json:"precondition"`
		Shared       map[string]string `json:"shared"`
		Steady       []report.Steady   `json:"steady_state"`
	}
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	assert.Equal(t, "full", info.Precondition)
	// The loop spec has no scaling override: every 1-drive scaling cell is
	// the single-drive cell's own job and shares its measurement.
	assert.Len(t, info.Shared, 8, "every 1-drive scaling cell shares the single-drive cell's fio run")
	// One 4 KiB and one 8 KiB random preconditioning of all three drives.
	assert.Len(t, info.Steady, 2*3, "a steady-state record per drive and random preconditioning")
	assert.Len(t, run.SteadyState, 2*3)
	for n := 1; n <= 3; n++ {
		for _, w := range run.Workloads {
			test := fmt.Sprintf("TestScaling/%d_drives/%s", n, specs.SubtestName(w))
			if owner, ok := info.Shared[test]; ok {
				test = owner
			}
			base := filepath.Join(raw, filepath.FromSlash(test))
			data, err := os.ReadFile(base + ".json")
			require.NoError(t, err)
			out, err := fiojob.Parse(data)
			require.NoError(t, err)
			assert.Len(t, out.Groups(), n, "one fio process covers every drive of the %d-drive step", n)
			job, err := os.ReadFile(base + ".fio")
			require.NoError(t, err)
			assert.Equal(t, n, strings.Count(string(job), "filename="), "the job file is kept beside the output")
		}
	}
	replay := runSuite(t, nil, "-spec="+spec, "-replay="+raw)
	require.Equal(t, 0, replay.Code, "stdout:\n%s\nstderr:\n%s", replay.Stdout, replay.Stderr)
	assert.Equal(t, "replay", replay.results(t).Mode)
	if diff := cmp.Diff(verdicts, replay.verdicts(t)); diff != "" {
		t.Errorf("replay verdicts differ from the recorded run (-live +replay):\n%s", diff)
	}
	for _, res := range replay.results(t).Results {
		for _, l := range run.Results {
			if l.Test == res.Test {
				assert.InDelta(t, l.Actual, res.Actual, l.Actual*1e-9, res.Test)
			}
		}
	}
}
