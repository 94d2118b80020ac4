package qual

import (
	"context"
	"encoding/json"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// briefCopy copies the brief's recordings (fixtures/solidigm-d7-ps1010)
// into a temporary directory, for a test to edit.
func briefCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "brief")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010"))))
	return dir
}

// scaleIOs multiplies every "key" : N of the recorded fio output of test
// in dir by f: an edit of a recording that the test using it says it made
// (fio's IOPS is total_ios / runtime, its MB/s io_bytes / runtime).
func scaleIOs(t *testing.T, dir, test, key string, f float64) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(test)+".json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`"` + key + `" : ([0-9]+)`)
	edited := re.ReplaceAllStringFunc(string(data), func(m string) string {
		n, _ := strconv.ParseInt(re.FindStringSubmatch(m)[1], 10, 64)
		return `"` + key + `" : ` + strconv.FormatInt(int64(math.Round(float64(n)*f)), 10)
	})
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
}

// scaleIOsPerDrive is scaleIOs with a factor per drive: f(g) for the
// jobs of fio's reporting group g (one group per drive).
func scaleIOsPerDrive(t *testing.T, dir, test, key string, f func(group int) float64) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(test)+".json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`"groupid" : ([0-9]+)|"` + key + `" : ([0-9]+)`)
	group := 0
	edited := re.ReplaceAllStringFunc(string(data), func(m string) string {
		sub := re.FindStringSubmatch(m)
		if sub[1] != "" {
			group, _ = strconv.Atoi(sub[1])
			return m
		}
		n, _ := strconv.ParseInt(sub[2], 10, 64)
		return `"` + key + `" : ` + strconv.FormatInt(int64(math.Round(float64(n)*f(group))), 10)
	})
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
}

// judgeAgainst replays dir, every cell, and compares it with baselines,
// as the suite does (TestBaseline last).
func judgeAgainst(t *testing.T, dir string, baselines ...string) (*Run, map[string]report.Result) {
	t.Helper()
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Replays: []string{dir}, Report: t.TempDir(), Root: moduleRoot(t),
		Precondition: plan.Full, Baselines: baselines}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	one := s.Members[0].Suite
	for _, c := range one.allCells() {
		if c.Skip == "" {
			_, err := one.Run(context.Background(), c, t.Logf)
			require.NoError(t, err)
		}
	}
	cells := s.JudgeBaseline(context.Background())
	require.NoError(t, s.WriteReport())
	out := map[string]report.Result{}
	for _, c := range cells {
		out[c.Test] = c
	}
	return s, out
}

// The brief against itself: every compared cell reads "~" and passes, and
// the run, with its baseline gate, is QUALIFIED.
func TestBaselineAgainstItself(t *testing.T) {
	brief := filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010")
	s, cells := judgeAgainst(t, brief, brief)
	require.Len(t, cells, 48, "every cell of the brief compared")
	for name, c := range cells {
		assert.Equal(t, report.Pass, c.Verdict, name)
		assert.Equal(t, report.Same, c.Baseline.Metric.Verdict, name)
		assert.Zero(t, c.Baseline.Metric.Delta, name)
	}
	one := cells["TestBaseline/1.92TB/4KB_Random_Read"].Baseline.Metric
	assert.Equal(t, "1 sample", one.Note, "one drive a side: judged by the tolerance alone")
	many := cells["TestBaseline/24_drives/4KB_Random_Read"].Baseline.Metric
	assert.True(t, many.Tested)
	assert.Equal(t, 24, many.This.N, "one figure per drive")
	all := s.Report.Overall()
	assert.Equal(t, report.Qualified, all.Verdict, all.Reason)
	assert.Contains(t, s.Report.ClosingLine(), "baseline")
	for _, r := range s.Report.Results {
		if r.Kind == report.KindSingle || r.Kind == report.KindScaling {
			assert.NotNil(t, r.Baseline, "%s carries its comparison in results.json", r.Test)
		}
	}
	summary, err := os.ReadFile(filepath.Join(s.Cfg.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Against the baseline")
	assert.Contains(t, string(summary), "| Workload | Figure | Baseline | This run | Delta | p | Verdict |")
	assert.FileExists(t, filepath.Join(s.Cfg.Report, "charts", "baseline-1.92TB.svg"))
	assert.FileExists(t, filepath.Join(s.Cfg.Report, "charts", "baseline-scaling.svg"))
}

// This run's recordings are the brief's, edited by this test:
//   - TestScaling/24_drives/4KB_Random_Write: every job's total_ios × 0.90,
//     a 10 % drop on per-drive figures within ±2 % of each other;
//   - TestScaling/24_drives/4KB_Random_Read: total_ios × 0.99 on every
//     drive, times a factor per drive within ±3 % (drive g: 1 + 0.03 ×
//     sin(1.7 g)), as a rerun would differ: a 1 % drop within the noise;
//   - TestScaling/24_drives/4KB_Random_Mixed_Read_Write_70-30: total_ios ×
//     0.99 on every drive alike: a 1 % drop the test does see, within
//     the tolerance;
//   - TestScaling/24_drives/8KB_Random_Write: total_ios × 1.10;
//   - TestSingleDrive/1.92TB/128KB_Sequential_Read: io_bytes × 0.90, one
//     drive a side.
func TestBaselineEditedRecordings(t *testing.T) {
	brief := filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010")
	dir := briefCopy(t)
	scaleIOs(t, dir, "TestScaling/24_drives/4KB_Random_Write", "total_ios", 0.90)
	scaleIOsPerDrive(t, dir, "TestScaling/24_drives/4KB_Random_Read", "total_ios", func(g int) float64 {
		return 0.99 * (1 + 0.03*math.Sin(1.7*float64(g)))
	})
	scaleIOs(t, dir, "TestScaling/24_drives/4KB_Random_Mixed_Read_Write_70-30", "total_ios", 0.99)
	scaleIOs(t, dir, "TestScaling/24_drives/8KB_Random_Write", "total_ios", 1.10)
	scaleIOs(t, dir, "TestSingleDrive/1.92TB/128KB_Sequential_Read", "io_bytes", 0.90)
	s, cells := judgeAgainst(t, dir, brief)

	for _, name := range []string{"24_drives/4KB_Random_Write", "24_drives/4KB_Random_Read", "24_drives/4KB_Random_Mixed_Read_Write_70-30",
		"24_drives/8KB_Random_Write", "1.92TB/128KB_Sequential_Read"} {
		c := cells["TestBaseline/"+name]
		t.Logf("%s: %s", name, c.Baseline.Metric.Line())
	}
	drop := cells["TestBaseline/24_drives/4KB_Random_Write"]
	assert.Equal(t, report.Fail, drop.Verdict)
	assert.Equal(t, report.CauseRegressed, drop.Cause)
	assert.Contains(t, drop.Error, "-10.00 %")
	assert.Contains(t, drop.Error, "p=0.000 n=24")
	assert.Less(t, drop.Baseline.Metric.P, 0.05)

	noise := cells["TestBaseline/24_drives/4KB_Random_Read"]
	assert.Equal(t, report.Pass, noise.Verdict, noise.Error)
	assert.Equal(t, report.Same, noise.Baseline.Metric.Verdict, "p = %v", noise.Baseline.Metric.P)

	real := cells["TestBaseline/24_drives/4KB_Random_Mixed_Read_Write_70-30"]
	assert.Equal(t, report.Pass, real.Verdict, real.Error)
	assert.Equal(t, report.Worse, real.Baseline.Metric.Verdict)
	assert.InDelta(t, -0.01, real.Baseline.Metric.Delta, 0.0005)

	better := cells["TestBaseline/24_drives/8KB_Random_Write"]
	assert.Equal(t, report.Pass, better.Verdict)
	assert.Equal(t, report.Improved, better.Baseline.Metric.Verdict)

	single := cells["TestBaseline/1.92TB/128KB_Sequential_Read"]
	assert.Equal(t, report.Fail, single.Verdict)
	assert.Equal(t, "1 sample", single.Baseline.Metric.Note)
	assert.Contains(t, single.Error, "judged by tolerance alone")

	untouched := cells["TestBaseline/24_drives/8KB_Random_Read"]
	assert.Equal(t, report.Same, untouched.Baseline.Metric.Verdict)

	var gate report.Gate
	for _, g := range s.Report.Gates() {
		if g.Name == report.BaselineGate {
			gate = g
		}
	}
	assert.Equal(t, report.NotQualified, gate.Verdict, "the baseline gate counts in the exit status")
	assert.Equal(t, 2, gate.Failed)
	assert.Equal(t, report.NotQualified, s.Report.Overall().Verdict)
	summary, err := os.ReadFile(filepath.Join(s.Cfg.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "| 24 drives: 4KB Random Write | iops | 150,000 IOPS | 135,000 IOPS | -10.00 % | p=0.000 n=24 | **REGRESSED** |")
	junit, err := os.ReadFile(filepath.Join(s.Cfg.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `<testcase name="24_drives/4KB_Random_Write" classname="TestBaseline"`)
	assert.Contains(t, string(junit), `type="regressed"`)
}

// Vendor A against vendor B: the baseline was recorded and judged with
// another spec (this test writes it into the copy's run.json: the
// built-in spec with another model name and lower figures); its cells
// match by name, and the report says which spec judged each side.
func TestBaselineOtherSpec(t *testing.T) {
	brief := filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010")
	other := briefCopy(t)
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	text := strings.Replace(string(spec.Text), `model  = "Solidigm D7-PS1010"`, `model  = "Vendor B X1"`, 1)
	require.NotEqual(t, string(spec.Text), text)
	path := filepath.Join(other, "run.json")
	var info map[string]any
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	info["spec_text"], info["spec_name"], info["spec_file"] = text, "vendor-b", "specs/vendor-b.toml"
	writeJSON(t, path, info)

	s, cells := judgeAgainst(t, brief, other)
	require.Len(t, cells, 48)
	require.Len(t, s.Report.Baseline, 1)
	assert.Equal(t, "Vendor B X1", s.Report.Baseline[0].JudgedBy.Model)
	summary, err := os.ReadFile(filepath.Join(s.Cfg.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "This run: judged by Solidigm D7-PS1010")
	assert.Contains(t, string(summary), "judged by Vendor B X1 (specs/vendor-b.toml)")
}

// A baseline with no cell in common is refused before anything runs,
// naming the flag, both sides' specs and the fix.
func TestBaselineNothingMatches(t *testing.T) {
	loop := recordedRun(t, true)
	brief := filepath.Join(moduleRoot(t), "fixtures", "solidigm-d7-ps1010")
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: brief, Replays: []string{brief}, Report: t.TempDir(), Root: moduleRoot(t),
		Precondition: plan.Full, Baselines: []string{loop}}
	_, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Len(t, errs, 1)
	msg := errs[0].Error()
	for _, want := range []string{"parsing -baseline:", "Solidigm D7-PS1010", "Loop device (loop.toml)", "TestSingleDrive/256MiB/4KB_Random_Read", "or drop -baseline"} {
		assert.Contains(t, msg, want)
	}
}
