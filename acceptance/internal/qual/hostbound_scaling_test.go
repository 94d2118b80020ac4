package qual

import (
	"context"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// pegJobs sets usr_cpu and sys_cpu of every fio job of reporting group
// group (one drive's jobs) in test's recorded output in dir to 40 and 59.5:
// each job at 99.5 % of one CPU, an edit the test using it says it made.
func pegJobs(t *testing.T, dir, test string, group int) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(test)+".json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`"groupid" : ([0-9]+)|"(usr|sys)_cpu" : [0-9.]+`)
	g := -1
	edited := re.ReplaceAllStringFunc(string(data), func(m string) string {
		sub := re.FindStringSubmatch(m)
		if sub[1] != "" {
			g, _ = strconv.Atoi(sub[1])
			return m
		}
		if g != group {
			return m
		}
		if sub[2] == "usr" {
			return `"usr_cpu" : 40.000000`
		}
		return `"sys_cpu" : 59.500000`
	})
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
}

// replayAll replays every cell of dir and returns the results by test.
func replayAll(t *testing.T, dir string) map[string]report.Result {
	t.Helper()
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Replays: []string{dir}, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := setupOne(t, cfg)
	require.Empty(t, errs)
	out := map[string]report.Result{}
	for _, c := range s.allCells() {
		if c.Skip == "" {
			o, err := s.Run(context.Background(), c, t.Logf)
			require.NoError(t, err)
			out[c.Test] = o.Result
		}
	}
	return out
}

// In a 24-drive step a pegged fio job excuses its own drive, not another:
// the brief's 24-drive random read with drive 10's jobs at half their
// I/Os (below spec, its jobs at the few % of a CPU the recording gives
// them) and drive 6's 8 jobs at 99.5 % of one CPU each (a fast drive's
// jobs at their CPUs' limit), the host 34 % busy, fails below spec on
// drive 10: its jobs had headroom, so its CPUs did not hold it back.
// With drive 10's own jobs pegged instead, the cell is host-bound.
func TestScalingHostBoundIsPerDrive(t *testing.T) {
	const test = "TestScaling/24_drives/4KB_Random_Read"
	for _, tt := range []struct {
		name   string
		pegged int
		want   [2]string
	}{
		{"another drive's jobs pegged", 5, [2]string{report.Fail, report.CauseBelowSpec}},
		{"the slow drive's own jobs pegged", 9, [2]string{report.Inconclusive, report.CauseHostBound}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := briefCopy(t)
			scaleIOsPerDrive(t, dir, test, "total_ios", func(g int) float64 {
				if g == 9 {
					return 0.5
				}
				return 1
			})
			pegJobs(t, dir, test, tt.pegged)
			require.NoError(t, record.WriteJSON(dir, test, record.CPUExt, record.CPU{CPUs: "0-191", N: 192, Busy: 0.34}))
			res := replayAll(t, dir)[test]
			require.Equal(t, tt.want, [2]string{res.Verdict, res.Cause}, res.Error)
			require.Contains(t, res.Error, "drive brief/1.92TB/10 at ")
			require.NotNil(t, res.HostCPU)
			require.Equal(t, 8, res.HostCPU.JobsAtLimit)
			if tt.want[0] == report.Inconclusive {
				require.Contains(t, res.Error, "on brief/1.92TB/10")
			}
		})
	}
}
