package qual

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

const notSteadySpec = `model  = "Loop device"
source = "drivequal test data"

[method]
runtime = "1s"

[precondition]
purge          = "discard"
fill_passes    = 1
random_runtime = "2s"
steady_round   = "200ms"

[[workload]]
name    = "4KB Random Read"
rw      = "randread"
bs      = "4k"
iodepth = 16
numjobs = 8
metric  = "iops"

[[workload]]
name    = "4KB Random Write"
rw      = "randwrite"
bs      = "4k"
iodepth = 16
numjobs = 8
metric  = "iops"

[[capacity]]
name  = "256MiB"
bytes = 268435456
[capacity.spec]
"4KB Random Read" = 500
`

// recordedRun writes a recorded run of one random read cell: real fio
// output (fixtures/fio/randread-8jobs-group.json) and the steady-state
// record of its drive's preconditioning, attained or not.
func recordedRun(t *testing.T, attained bool) string {
	t.Helper()
	dir := t.TempDir()
	test := "TestSingleDrive/256MiB/4KB_Random_Read"
	rec := report.Steady{Step: 3, Name: "random preconditioning (4KB Random Write, until steady state, at most 2s)",
		Kind: "precondition", Twin: "4KB Random Write", Drive: "/dev/loop7", Attained: attained,
		Seconds: 2, BoundSeconds: 2, RoundSeconds: 0.2, Rounds: 9, Window: 5,
		Mean: 41000, RangePct: 31.5, RangeLimitPct: 20, ExcursionPct: 12.25, ExcursionLimitPct: 10, Source: "fio iops log"}
	if attained {
		rec.RangePct, rec.ExcursionPct = 4.1, 1.5
	}
	info := record.Run{Format: record.Format, Spec: "Loop device", SpecName: "loop", SpecFile: "loop.toml", SpecText: notSteadySpec,
		Mode: "record", FioVersion: "fio-3.33", Precondition: plan.Full,
		Drives: []report.Drive{{Path: "/dev/loop7", Bytes: 268435456, Capacity: "256MiB", NUMANode: -1}},
		Tests:  []string{test}, Steady: []report.Steady{rec}, Finished: "2026-01-01T00:00:00Z"}
	writeJSON(t, filepath.Join(dir, "run.json"), info)
	out, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "fio", "randread-8jobs-group.json"))
	require.NoError(t, err)
	base := filepath.Join(dir, filepath.FromSlash(test))
	require.NoError(t, os.MkdirAll(filepath.Dir(base), 0o755))
	require.NoError(t, os.WriteFile(base+".json", out, 0o644))
	writeJSON(t, base+".steady.json", []report.Steady{rec})
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := cmdline.ModuleRoot(wd)
	require.NoError(t, err)
	return root
}

// replayCell sets up a replay of dir and judges its one cell.
func replayCell(t *testing.T, dir string) (Outcome, *Suite) {
	t.Helper()
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := setupOne(t, cfg)
	require.Empty(t, errs)
	cells := s.SingleCells()
	require.Len(t, cells, 1)
	require.Len(t, cells[0].Cells, 1)
	o, err := s.Run(context.Background(), cells[0].Cells[0], t.Logf)
	require.NoError(t, err)
	return o, s
}

// A recorded cell whose drive did not reach steady state in its random
// preconditioning replays INCONCLUSIVE, with the window's figures; the
// same recording with steady state reached passes.
func TestReplayNotSteadyIsInconclusive(t *testing.T) {
	o, s := replayCell(t, recordedRun(t, false))
	require.Equal(t, report.Inconclusive, o.Result.Verdict)
	require.Equal(t, report.CauseNotSteady, o.Result.Cause)
	require.Contains(t, o.Message, "/dev/loop7 did not reach steady state in step 3 (4KB Random Write) within 2s")
	require.Contains(t, o.Message, "range 31.5 % (limit 20 %), excursion 12.2 % (limit 10 %)")
	require.Len(t, s.Report.SteadyState, 1, "results.json lists the run's steady-state records")
	require.Contains(t, string(s.Report.Summary()), "**not reached** within 2s")

	o, _ = replayCell(t, recordedRun(t, true))
	require.Equal(t, report.Pass, o.Result.Verdict, o.Message)
	require.Len(t, o.Result.Steady, 1)
}

// A recorded cell below spec whose CPUs were 99 % busy (its .cpu.json,
// edited here) replays INCONCLUSIVE host-bound with the figures and the
// fix; at 10 % busy the same figure fails below spec; a cell that meets
// its spec passes whatever the CPUs did, and carries the figures.
func TestReplayHostBound(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spec  string
		busy  float64
		want  [2]string
		error string
	}{
		{"saturated", "5_000_000", 0.99, [2]string{report.Inconclusive, report.CauseHostBound},
			"fio's 8 jobs on CPUs 0-1 (2) were 99 % busy (the CPUs' time, fio's jobs 25 % of it): the host, not the drive, bounds this figure; give the drive more CPUs or a faster host"},
		{"idle", "5_000_000", 0.10, [2]string{report.Fail, report.CauseBelowSpec}, "< spec 5,000,000 IOPS"},
		{"passes", "500", 0.99, [2]string{report.Pass, ""}, ""},
		// The same 8 jobs, reported as one group_reporting entry whose
		// mean job ran its CPU flat out (usr_cpu and sys_cpu edited here),
		// allowed a 24-CPU NUMA node 34 % busy: bound by the jobs, not the
		// drive, though the node's figures read a third.
		{"pegged jobs", "5_000_000", 0.34, [2]string{report.Inconclusive, report.CauseHostBound},
			"fio's 8 jobs on /dev/loop7 ran at 97.0 % of one CPU each on average (group_reporting gives their mean: user + system time over their runtime), at least 95 %; the CPUs fio was allowed, 0-23 (24), were 34 % busy: the host, not the drive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := recordedRun(t, true)
			var info record.Run
			data, err := os.ReadFile(filepath.Join(dir, "run.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &info))
			info.SpecText = strings.Replace(info.SpecText, `"4KB Random Read" = 500`, `"4KB Random Read" = `+tt.spec, 1)
			writeJSON(t, filepath.Join(dir, "run.json"), info)
			cpu := record.CPU{CPUs: "0-1", N: 2, Busy: tt.busy}
			fioPct := 25.3
			if tt.name == "pegged jobs" {
				cpu = record.CPU{CPUs: "0-23", N: 24, Busy: tt.busy}
				out := filepath.Join(dir, "TestSingleDrive", "256MiB", "4KB_Random_Read.json")
				data, err := os.ReadFile(out)
				require.NoError(t, err)
				edited := strings.Replace(strings.Replace(string(data), `"usr_cpu" : 1.512500`, `"usr_cpu" : 30.000000`, 1), `"sys_cpu" : 4.825000`, `"sys_cpu" : 67.000000`, 1)
				require.NotEqual(t, string(data), edited)
				require.NoError(t, os.WriteFile(out, []byte(edited), 0o644))
				fioPct = 97.0 * 8 / 24 // 8 jobs at 0.97 CPU over about 1 s of 24 CPUs
			}
			writeJSON(t, filepath.Join(dir, "TestSingleDrive", "256MiB", "4KB_Random_Read.cpu.json"), cpu)
			o, _ := replayCell(t, dir)
			require.Equal(t, tt.want, [2]string{o.Result.Verdict, o.Result.Cause}, o.Result.Error)
			require.Contains(t, o.Result.Error, tt.error)
			h := o.Result.HostCPU
			require.NotNil(t, h)
			// fio's 8 jobs used 0.507 CPU-seconds over about 1 s of 2 CPUs.
			require.Equal(t, [3]any{cpu.CPUs, cpu.N, 8}, [3]any{h.CPUs, h.N, h.Jobs})
			require.InDelta(t, 100*tt.busy, h.BusyPct, 1e-9)
			require.InDelta(t, fioPct, h.FioPct, 0.5)
		})
	}
}

// -dry-run of a replay prints what it would judge; it has no plan of
// steps to print (it once indexed an empty one).
func TestDryRunOfAReplay(t *testing.T) {
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: recordedRun(t, true), Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full, DryRun: true}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	var b strings.Builder
	s.PrintPlan(&b)
	require.Contains(t, b.String(), "no fio runs and nothing is written; the recordings of 1 cells would be judged")
}

// A recorded cell whose drive's PCIe path had a link sysfs did not know
// (its .link.json) names it in the cell's message, live or replayed,
// whatever the verdict: a pass, and a figure below spec, which is still
// judged.
func TestReplayUnknownLinkInMessage(t *testing.T) {
	const unknown = `/dev/loop7: PCIe link at switch port 0000:09:00.0 not checked: current_link_speed of 0000:09:00.0 reads "Unknown"`
	for _, tt := range []struct {
		spec string
		want [2]string
	}{
		{"500", [2]string{report.Pass, ""}},
		{"5_000_000", [2]string{report.Fail, report.CauseBelowSpec}},
	} {
		dir := recordedRun(t, true)
		var info record.Run
		data, err := os.ReadFile(filepath.Join(dir, "run.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &info))
		info.SpecText = strings.Replace(info.SpecText, `"4KB Random Read" = 500`, `"4KB Random Read" = `+tt.spec, 1)
		writeJSON(t, filepath.Join(dir, "run.json"), info)
		writeJSON(t, filepath.Join(dir, "TestSingleDrive", "256MiB", "4KB_Random_Read.link.json"), record.Link{Unknown: unknown})
		o, _ := replayCell(t, dir)
		require.Equal(t, tt.want, [2]string{o.Result.Verdict, o.Result.Cause}, o.Result.Error)
		require.Contains(t, o.Message, unknown)
		if tt.want[0] != report.Pass {
			require.Contains(t, o.Result.Error, unknown)
		}
	}
}

// A replay of a run made with -any-model says so in its header as the run
// did, and names what the run kept of a failed drive for its supplier and
// how it checked the drive's model: results.json and summary.md of the
// replay are the run's.
func TestReplayKeepsAnyModelAndTheFailureCapture(t *testing.T) {
	dir := recordedRun(t, true)
	var info record.Run
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	info.AnyModel = `/dev/loop7 (ACME X1) judged against Loop device, whose models ("SOLIDIGM SB5PH27X*") they are not`
	info.Drives[0].ModelCheck = `"ACME X1" is not one of loop's models; judged against it with -any-model`
	capture := report.Capture{Files: []string{filepath.Join(dir, "failure", "0.error-log.json")}, Notes: []string{"no telemetry: NVMe status: Invalid Field in Command"}}
	info.Drives[0].Failure = &capture
	writeJSON(t, filepath.Join(dir, "run.json"), info)
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dir, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := setupOne(t, cfg)
	require.Empty(t, errs, errors.Join(errs...))
	assert.Equal(t, info.AnyModel, s.Report.AnyModel)
	require.Len(t, s.Report.Drives, 1)
	assert.Equal(t, info.Drives[0].ModelCheck, s.Report.Drives[0].ModelCheck)
	require.NotNil(t, s.Report.Drives[0].Failure)
	assert.Equal(t, capture, *s.Report.Drives[0].Failure)
	summary := string(s.Report.Summary())
	assert.Contains(t, summary, "**-any-model:** /dev/loop7 (ACME X1)")
	assert.Contains(t, summary, "/dev/loop7 failed: kept for its supplier: "+capture.Files[0])
}
