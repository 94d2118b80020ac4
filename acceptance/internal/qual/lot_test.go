package qual

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/lot"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// The recorded 6-drive scaling step's cells (fixtures/lot-6-drives).
const (
	lotRead  = "TestScaling/6_drives/128KB_Sequential_Read"
	lotWrite = "TestScaling/6_drives/128KB_Sequential_Write"
)

// lotCopy copies fixtures/lot-6-drives (a real recording: six 64 MiB loop
// devices scaled together, one 32 MiB drive alone) for a test to edit.
func lotCopy(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives"))))
	return dir
}

// lotSpec writes the recording's spec with a [lot] rule of 95 % coverage
// at 95 % confidence (fixtures/lot-6-drives/lot-rule.toml); without32
// drops its 32MiB capacity, whose one drive can decide no lot.
func lotSpec(t *testing.T, without32 bool) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives", "lot-rule.toml"))
	require.NoError(t, err)
	text := string(data)
	if without32 {
		i := strings.Index(text, "[[capacity]]\nname  = \"32MiB\"")
		j := strings.Index(text, "[scaling]")
		require.True(t, i > 0 && j > i)
		text = text[:i] + text[j:]
	}
	path := filepath.Join(t.TempDir(), "lot-rule.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// setDriveFigures edits the recorded fio output of test in dir so that
// drive i's figure is want[i] MB/s: each drive's (each reporting group's)
// io_bytes is scaled by want / its recorded figure; fio's MB/s is
// io_bytes / runtime, and nothing else of the output changes.
func setDriveFigures(t *testing.T, dir, test string, want []float64) {
	t.Helper()
	recordedOnce.Do(func() {
		_, recorded = judgeLotRun(t, lotSpec(t, false), filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives"))
	})
	res := recorded.results[test]
	require.Len(t, res.PerDrive, len(want))
	scaleIOsPerDrive(t, dir, test, "io_bytes", func(g int) float64 { return want[g] / res.PerDrive[g].Actual })
}

// recorded is the recording judged as it was made, once.
var (
	recordedOnce sync.Once
	recorded     lotRun
)

type lotRun struct {
	results map[string]report.Result // every result by test
	cells   map[string]LotCell       // the TestLot cells by test
}

// judgeLotRun replays dirs (several: a fleet) judged by specPath, every
// cell, then the lot, as the suite does.
func judgeLotRun(t *testing.T, specPath string, dirs ...string) (*Run, lotRun) {
	t.Helper()
	cfg := &Config{Spec: specPath, SpecGiven: true, Replay: dirs[0], Replays: dirs, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	var suites []*Suite
	for _, m := range s.Members {
		suites = append(suites, m.Suite)
	}
	for _, x := range suites {
		for _, c := range x.allCells() {
			if c.Skip == "" {
				_, err := x.Run(context.Background(), c, t.Logf)
				require.NoError(t, err)
			}
		}
	}
	out := lotRun{results: map[string]report.Result{}, cells: map[string]LotCell{}}
	for _, c := range s.JudgeLot() {
		out.cells[c.Result.Test] = c
	}
	require.NoError(t, s.WriteReport())
	for _, r := range s.Report.Results {
		out.results[r.Test] = r
	}
	return s, out
}

// tight are six figures 1 % apart, three times the pass line of 90 MB/s.
var tight = []float64{300, 303, 297, 301, 299, 302}

// The recorded 6-drive step with every drive's read and write figure set
// tight and well above the pass line (edited: each drive's io_bytes
// scaled to tight) is accepted by normal theory, naming k and the bound;
// with the 32MiB capacity out of the spec every gate, the lot's
// included, is QUALIFIED.
func TestLotAcceptedOnTightFigures(t *testing.T) {
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, tight)
	setDriveFigures(t, dir, lotWrite, tight)
	s, run := judgeLotRun(t, lotSpec(t, true), dir)
	for _, test := range []string{"TestLot/64MiB/128KB_Sequential_Read", "TestLot/64MiB/128KB_Sequential_Write"} {
		c, ok := run.cells[test]
		require.True(t, ok, test)
		l := c.Result.Lot
		require.Equal(t, report.Pass, c.Result.Verdict, c.Message)
		assert.Equal(t, report.LotAccepted, l.Verdict)
		assert.Equal(t, lot.Normal, l.Method)
		assert.Equal(t, 6, l.N)
		assert.InDelta(t, 3.7077, l.K, 1e-4)
		assert.InDelta(t, 90, l.PassLine, 1e-9)
		assert.InDelta(t, 300.3, l.Mean, 0.5)
		assert.InDelta(t, l.Mean-l.K*l.SD, l.Bound, 1e-9)
		assert.Greater(t, l.Bound, 280.0)
		require.NotNil(t, l.Normality)
		assert.True(t, l.Normality.Normal)
		assert.Contains(t, c.Message, "lot accepted at coverage 95 %, confidence 95 %")
		assert.Contains(t, c.Message, "k = 3.708")
		assert.Contains(t, c.Message, ", normal bound 29")
		assert.Empty(t, c.Result.Error)
	}
	gates := map[string]report.Gate{}
	for _, g := range s.Report.Gates() {
		gates[g.Name] = g
	}
	require.Contains(t, gates, report.LotGate)
	assert.Equal(t, report.Qualified, gates[report.LotGate].Verdict)
	all := s.Report.Overall()
	assert.Equal(t, report.Qualified, all.Verdict, all.Reason)
	assert.Contains(t, s.Report.ClosingLine(), "lot")

	// Every view has it: results.json's lot, summary.md's section, a
	// junit testcase per cell, the chart.
	data, err := os.ReadFile(filepath.Join(s.Cfg.Report, report.ResultsFile))
	require.NoError(t, err)
	var js struct {
		Results []struct {
			Test string          `json:"test"`
			Lot  json.RawMessage `json:"lot"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(data, &js))
	var found bool
	for _, r := range js.Results {
		if r.Test == "TestLot/64MiB/128KB_Sequential_Read" {
			found = true
			for _, key := range []string{`"method": "normal"`, `"n": 6`, `"k": 3.70768`, `"mean": `, `"s": `, `"bound": `, `"pass_line": 90`, `"verdict": "accepted"`} {
				assert.Contains(t, string(r.Lot), key)
			}
		}
	}
	assert.True(t, found, "results.json holds the lot cell")
	summary, err := os.ReadFile(filepath.Join(s.Cfg.Report, report.SummaryFile))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Lot acceptance")
	assert.Contains(t, string(summary), "| 64MiB | 128KB Sequential Read | 6 | 6 | 300 MB/s |")
	assert.Contains(t, string(summary), "| ACCEPTED |")
	xml, err := os.ReadFile(filepath.Join(s.Cfg.Report, junit.File))
	require.NoError(t, err)
	assert.Contains(t, string(xml), `<testcase name="64MiB/128KB_Sequential_Read" classname="TestLot"`)
	assert.Contains(t, string(xml), `<testcase name="lot" classname="Verdict"`)
	assert.Contains(t, string(xml), "lot k: 3.70768")
	svg, err := os.ReadFile(filepath.Join(s.Cfg.Report, report.LotChartFile))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
}

// The same step with its read figures spread (edited: io_bytes scaled so
// the drives read 140 to 260 MB/s, mean 200): the mean is well above the
// pass line but the bound is below it, and no drive fails, so the lot is
// neither accepted nor rejected; the cell says how many drives at this
// mean and spread would accept it, and the lot gate makes the run
// INCONCLUSIVE.
func TestLotUndecidedOnSpreadFigures(t *testing.T) {
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, []float64{140, 260, 175, 225, 190, 210})
	setDriveFigures(t, dir, lotWrite, tight)
	s, run := judgeLotRun(t, lotSpec(t, true), dir)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	l := c.Result.Lot
	require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Equal(t, report.CauseLotUndecided, c.Result.Cause)
	assert.Equal(t, lot.Inconclusive, l.Verdict)
	assert.Equal(t, 6, l.Passing, "every drive passes")
	assert.Greater(t, l.Mean, l.PassLine)
	assert.Less(t, l.Bound, l.PassLine)
	require.True(t, l.NeedAccepts)
	// The smallest sample whose k fits the figures' mean and spread.
	d := (l.Mean - l.PassLine) / l.SD
	kNeed, _ := lot.K(l.Need, 0.95, 0.95)
	kLess, _ := lot.K(l.Need-1, 0.95, 0.95)
	assert.LessOrEqual(t, kNeed, d)
	assert.Greater(t, kLess, d)
	assert.Greater(t, l.Need, 6)
	assert.Contains(t, c.Message, "drives (")
	assert.Contains(t, c.Message, "more) would accept it")
	assert.Contains(t, c.Message, "a zero-failure sample needs 59 drives (53 more, all passing)")
	// The message CI shows (cut to junit.MaxMessage) still says how many
	// drives would decide the lot, for the cell and for the lot gate.
	short := junit.Short(junit.InconclusivePrefix + c.Message)
	assert.Contains(t, short, "more) would accept it", short)
	assert.Contains(t, short, "a zero-failure sample needs 59 drives", short)
	all := s.Report.Overall()
	gate := junit.Short(junit.InconclusivePrefix + all.Reason)
	assert.Contains(t, gate, "more) would accept it", gate)
	assert.Equal(t, report.CapacityInconclusive, all.Verdict)
	assert.Contains(t, all.Reason, "lot: ")
	// The write cell, tight, is still accepted.
	assert.Equal(t, report.Pass, run.cells["TestLot/64MiB/128KB_Sequential_Write"].Result.Verdict)
}

// The recording as it was made (not edited): two of the six loop devices
// read and wrote below the pass line, so at 95 % confidence at most
// 93.7 % of such a lot passes: rejected, and the lot gate is NOT
// QUALIFIED. The 32MiB capacity's one drive decides nothing.
func TestLotRejectedAsRecorded(t *testing.T) {
	s, run := judgeLotRun(t, lotSpec(t, false), filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives"))
	for _, test := range []string{"TestLot/64MiB/128KB_Sequential_Read", "TestLot/64MiB/128KB_Sequential_Write"} {
		c := run.cells[test]
		require.Equal(t, report.Fail, c.Result.Verdict, c.Message)
		assert.Equal(t, report.CauseLotRejected, c.Result.Cause)
		assert.Equal(t, 4, c.Result.Lot.Passing)
		assert.InDelta(t, 0.93715, c.Result.Lot.PassingShareUpper, 1e-5)
		assert.Contains(t, c.Message, "4 of 6 drives pass: at 95 % confidence at most 93.72 % of the lot passes")
	}
	one := run.cells["TestLot/32MiB/128KB_Sequential_Read"]
	assert.Equal(t, report.Inconclusive, one.Result.Verdict)
	assert.Equal(t, 1, one.Result.Lot.N)
	assert.Contains(t, one.Message, "TestSingleDrive/32MiB/128KB_Sequential_Read")
	var lotGate report.Gate
	for _, g := range s.Report.Gates() {
		if g.Name == report.LotGate {
			lotGate = g
		}
	}
	assert.Equal(t, report.NotQualified, lotGate.Verdict)
	assert.Equal(t, 2, lotGate.Failed)
	assert.Equal(t, report.NotQualified, s.Report.Overall().Verdict)
}

// The tight copy recorded, as its run.json now says (edited: precondition
// "quick" for "full"), with quick preconditioning: every cell meets its
// spec but proves nothing, so the lot is not accepted however tight the
// figures, and the message says which cells and why.
func TestLotUndecidedOnInconclusiveCells(t *testing.T) {
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, tight)
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(string(data), `"precondition": "full"`, `"precondition": "quick"`, 1)
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	_, run := judgeLotRun(t, lotSpec(t, true), dir)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Equal(t, []string{lotRead + " (not preconditioned)"}, c.Result.Lot.Unclear)
	assert.Contains(t, c.Message, "undecided with 1 inconclusive cell that proved nothing ("+lotRead+" (not preconditioned)); by the figures alone the lot is accepted")
	// The recorded write figures reject the lot whatever the cells' own
	// verdicts: no drive is missing, so the rejection stands.
	assert.Equal(t, report.Fail, run.cells["TestLot/64MiB/128KB_Sequential_Write"].Result.Verdict)
}

// Three hosts' recordings judged as one fleet (copies of the recording,
// each edited: its host's name in run.json, the 6-drive step's figures set
// tight, and the 32MiB drive's read figure scaled by 1, 1.02 or 0.98):
// the 64MiB lot judges all 18 drives of the three hosts' largest steps,
// and the 32MiB lot, with no scaling, the three hosts' single drives.
func TestLotFleet(t *testing.T) {
	var dirs []string
	for i, f := range []float64{1, 1.02, 0.98} {
		name := "host-" + string(rune('a'+i))
		dir := lotCopy(t, name)
		path := filepath.Join(dir, "run.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"hostname": "lot-host-a"`, `"hostname": "`+name+`"`, 1)), 0o644))
		setDriveFigures(t, dir, lotRead, tight)
		setDriveFigures(t, dir, lotWrite, tight)
		if f != 1 {
			scaleIOs(t, dir, "TestSingleDrive/32MiB/128KB_Sequential_Read", "io_bytes", f)
		}
		dirs = append(dirs, dir)
	}
	_, run := judgeLotRun(t, lotSpec(t, false), dirs...)
	big := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Pass, big.Result.Verdict, big.Message)
	assert.Equal(t, 18, big.Result.Lot.N)
	assert.InDelta(t, 2.4538, big.Result.Lot.K, 1e-3, "k(18) at 95 %/95 %: 2.453")
	assert.Contains(t, big.Message, "n = 18 (3 hosts)")
	hosts := map[string]bool{}
	for _, f := range big.Result.Lot.Figures {
		hosts[strings.SplitN(f.Drive, ":", 2)[0]] = true
		assert.Equal(t, "TestScaling/"+strings.SplitN(f.Drive, ":", 2)[0]+"/6_drives/128KB_Sequential_Read", f.Test)
	}
	assert.Len(t, hosts, 3)
	small := run.cells["TestLot/32MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Pass, small.Result.Verdict, small.Message)
	assert.Equal(t, 3, small.Result.Lot.N)
	assert.InDelta(t, 7.6559, small.Result.Lot.K, 1e-3)
	for _, f := range small.Result.Lot.Figures {
		assert.Contains(t, f.Test, "TestSingleDrive/")
	}
	// Identical copies of one drive have no spread to judge.
	same := run.cells["TestLot/32MiB/128KB_Sequential_Write"]
	assert.Equal(t, report.Inconclusive, same.Result.Verdict)
	assert.Contains(t, same.Message, "all 3 figures are equal")
}

// A fleet of two hosts (copies of the recording, each edited: its host's
// name in run.json, the 6-drive step's figures set tight) whose second
// host's 6-drive read recording is unreadable (edited: its fio output
// replaced by a line that is not JSON): that step has no per-drive
// figure, and its six drives are missing from the lot, not left out of
// it, so the first host's six tight drives alone do not accept it.
func TestLotFleetStepWithoutFigures(t *testing.T) {
	var dirs []string
	for _, name := range []string{"host-a", "host-b"} {
		dir := lotCopy(t, name)
		path := filepath.Join(dir, "run.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"hostname": "lot-host-a"`, `"hostname": "`+name+`"`, 1)), 0o644))
		setDriveFigures(t, dir, lotRead, tight)
		setDriveFigures(t, dir, lotWrite, tight)
		dirs = append(dirs, dir)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dirs[1], filepath.FromSlash(lotRead)+".json"), []byte("not fio's output\n"), 0o644))
	_, run := judgeLotRun(t, lotSpec(t, true), dirs...)
	require.Equal(t, report.CauseBadRecording, run.results["TestScaling/host-b/6_drives/128KB_Sequential_Read"].Cause)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.NotNil(t, c.Result.Lot)
	assert.Equal(t, 6, c.Result.Lot.N, "host-a's six drives are judged")
	assert.Len(t, c.Result.Lot.Missing, 6, "host-b's six drives have no figure")
	assert.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Contains(t, c.Message, "6 drives without a figure")
	assert.Contains(t, c.Message, "6 drives without a figure (6 drives of TestScaling/host-b/6_drives/128KB_Sequential_Read (bad recording))")
	// The write step measured on both hosts: 12 drives, accepted.
	w := run.cells["TestLot/64MiB/128KB_Sequential_Write"]
	assert.Equal(t, 12, w.Result.Lot.N)
	assert.Empty(t, w.Result.Lot.Missing)
	assert.Equal(t, report.Pass, w.Result.Verdict, w.Message)
}

// A drive meets a cell when it reaches spec × (1 − [method] tolerance);
// [scaling] tolerance is how far N drives' total may fall short of N ×
// the baseline. The lot asks what share of the drives meet the cell, so
// its line is the former whatever cell the figures come from. The spec
// here is the recording's with its [scaling] tolerance edited to 0.3 (a
// per-drive line of 70 MB/s), the 6-drive step's figures set tight at 80
// MB/s (edited: io_bytes scaled): every drive is below the 90 MB/s a
// single drive must reach, and the lot is rejected against that line.
func TestLotLineIsTheDrivesOwn(t *testing.T) {
	dir := lotCopy(t, "host-a")
	slow := []float64{80, 80.8, 79.2, 80.3, 79.7, 80.5}
	setDriveFigures(t, dir, lotRead, slow)
	setDriveFigures(t, dir, lotWrite, slow)
	data, err := os.ReadFile(lotSpec(t, true))
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "[scaling]")
	require.Positive(t, i)
	edited := text[:i] + strings.Replace(text[i:], "tolerance = 0.1", "tolerance = 0.3", 1)
	require.NotEqual(t, text, edited)
	path := filepath.Join(t.TempDir(), "lot-scaling-30.toml")
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	_, run := judgeLotRun(t, path, dir)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.NotNil(t, c.Result.Lot)
	assert.InDelta(t, 90, c.Result.Lot.PassLine, 1e-9, "spec 100 MB/s × (1 − [method] tolerance 0.1)")
	assert.InDelta(t, 0.1, c.Result.Tolerance, 1e-12)
	assert.Equal(t, 0, c.Result.Lot.Passing)
	assert.Equal(t, report.Fail, c.Result.Verdict, c.Message)
	assert.Contains(t, c.Message, "pass line 90 MB/s (spec 100 MB/s, tolerance 10 %)")
}

// The dry run says what the rule needs and what the run gives it: 59
// drives for a zero-failure 95 %/95 % sample; the recording's 6-drive
// step, and 24 drives of the built-in plan.
func TestLotDryRun(t *testing.T) {
	cfg := &Config{Spec: lotSpec(t, false), SpecGiven: true, Replay: filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives"),
		Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full, DryRun: true}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	var b strings.Builder
	s.PrintPlan(&b)
	out := b.String()
	assert.Contains(t, out, "lot rule ([lot] coverage 95 %, confidence 95 %): a zero-failure sample needs 59 drives, all passing")
	assert.Contains(t, out, "64MiB: the run has 6 drives for the lot (its 6-drive scaling step): k(6) = 3.708; 53 short of the 59 a zero-failure sample needs")
	assert.Contains(t, out, "32MiB: the run has 1 drive for the lot (its single-drive cells): too few for the normal model")

	live, cells := builtinSuite(t, 24)
	live.Spec.Lot = &specs.Lot{Coverage: 0.95, Confidence: 0.95}
	live.Report = &report.Run{}
	live.Plan = live.Planner.Build(cells)
	b.Reset()
	only(live).PrintPlan(&b)
	assert.Contains(t, b.String(), "a zero-failure sample needs 59 drives")
	assert.Contains(t, b.String(), "1.92TB: the run has 24 drives for the lot (its 24-drive scaling step): k(24) = 2.309; 35 short of the 59")

	// Without [lot], nothing is said.
	live.Spec.Lot = nil
	b.Reset()
	only(live).PrintPlan(&b)
	assert.NotContains(t, b.String(), "lot rule")
}
