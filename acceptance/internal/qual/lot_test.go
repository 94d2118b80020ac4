package qual

import (
	"context"
	"encoding/json"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/junit"
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
	cfg := &cmdline.Config{Spec: specPath, SpecGiven: true, Replay: dirs[0], Replays: dirs, Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full}
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

// JudgeLot puts the lot's cells (judged by package lot, tested there) in
// the report and every view of it: the recorded 6-drive step with every
// drive's read and write figure set tight (edited: each drive's io_bytes
// scaled to tight), with the 32MiB capacity out of the spec, is accepted,
// and every gate, the lot's included, is QUALIFIED; results.json,
// summary.md, junit.xml and the chart hold the cells.
func TestLotAcceptedOnTightFigures(t *testing.T) {
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, tight)
	setDriveFigures(t, dir, lotWrite, tight)
	s, run := judgeLotRun(t, lotSpec(t, true), dir)
	require.Len(t, run.cells, 2)
	for _, test := range []string{"TestLot/64MiB/128KB_Sequential_Read", "TestLot/64MiB/128KB_Sequential_Write"} {
		c, ok := run.cells[test]
		require.True(t, ok, test)
		require.Equal(t, report.Pass, c.Result.Verdict, c.Message)
		assert.Equal(t, c.Result, run.results[test], "the report holds the cell JudgeLot returned")
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

// Three hosts' recordings judged as one fleet (copies of the recording,
// each edited: its host's name in run.json, the 6-drive step's figures set
// tight): JudgeLot on the fleet judges every member's cells and drives,
// the 64MiB lot all 18 drives of the three hosts' largest steps and the
// 32MiB lot the three hosts' single drives, each named by its host.
func TestLotFleet(t *testing.T) {
	var dirs []string
	for i := range 3 {
		name := "host-" + string(rune('a'+i))
		dir := lotCopy(t, name)
		path := filepath.Join(dir, "run.json")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"hostname": "lot-host-a"`, `"hostname": "`+name+`"`, 1)), 0o644))
		if i > 0 {
			// Another run of other drives: a copy as it is is refused.
			anotherRun(t, dir, name, i)
		}
		setDriveFigures(t, dir, lotRead, tight)
		setDriveFigures(t, dir, lotWrite, tight)
		dirs = append(dirs, dir)
	}
	_, run := judgeLotRun(t, lotSpec(t, false), dirs...)
	big := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Pass, big.Result.Verdict, big.Message)
	assert.Equal(t, 18, big.Result.Lot.N)
	assert.Contains(t, big.Message, "n = 18 (3 hosts)")
	small := run.cells["TestLot/32MiB/128KB_Sequential_Read"]
	assert.Equal(t, 3, small.Result.Lot.N)
	hosts := map[string]bool{}
	for _, f := range small.Result.Lot.Figures {
		host, _, _ := strings.Cut(f.Drive, ":")
		hosts[host] = true
		assert.Equal(t, "TestSingleDrive/"+host+"/32MiB/128KB_Sequential_Read", f.Test)
	}
	assert.Len(t, hosts, 3)
}

// The dry run says what the rule needs and what the run gives it, in its
// method's terms: k(n) under normal for the recording's 6-drive step and
// the 24 drives of the built-in plan; under distribution-free, 59 drives
// for a zero-failure 95 %/95 % sample, 35 more than the built-in plan's.
func TestLotDryRun(t *testing.T) {
	cfg := &cmdline.Config{Spec: lotSpec(t, false), SpecGiven: true, Replay: filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives"),
		Report: t.TempDir(), Root: moduleRoot(t), Precondition: plan.Full, DryRun: true}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	require.Empty(t, errs)
	var b strings.Builder
	s.PrintPlan(&b)
	out := b.String()
	assert.Contains(t, out, "lot rule ([lot] coverage 95 %, confidence 95 %): method normal, assuming normal figures: needs at least 3 drives")
	assert.Contains(t, out, "64MiB: the run has 6 drives for the lot (its 6-drive scaling step): k(6) = 3.708\n")
	assert.Contains(t, out, "32MiB: the run has 1 drive for the lot (its single-drive cells): too few for the normal model")

	live, cells := builtinSuite(t, 24)
	live.Spec.Lot = &specs.Lot{Coverage: 0.95, Confidence: 0.95}
	live.Report = &report.Run{}
	live.Plan = live.Planner.Build(cells)
	b.Reset()
	only(live).PrintPlan(&b)
	assert.Contains(t, b.String(), "1.92TB: the run has 24 drives for the lot (its 24-drive scaling step): k(24) = 2.309\n")
	live.Spec.Lot.Method = specs.LotDistributionFree
	b.Reset()
	only(live).PrintPlan(&b)
	assert.Contains(t, b.String(), "a zero-failure sample needs 59 drives")
	assert.Contains(t, b.String(), "1.92TB: the run has 24 drives for the lot (its 24-drive scaling step): 35 short of the 59 a zero-failure sample needs, so no lot of it is accepted")

	// Without [lot], nothing is said.
	live.Spec.Lot = nil
	b.Reset()
	only(live).PrintPlan(&b)
	assert.NotContains(t, b.String(), "lot rule")
}

// lotSpecWith is lotSpec(t, true) with each pair of edits (old, new)
// made once, each required to apply.
func lotSpecWith(t *testing.T, edits ...string) string {
	t.Helper()
	path := lotSpec(t, true)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	for i := 0; i+1 < len(edits); i += 2 {
		require.Contains(t, text, edits[i])
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// One pass line per drive and cell: six drives at 95 % of spec (edited:
// io_bytes scaled to 94.6–95.4 MB/s), judged with [scaling] tolerance =
// 0.1 and [method] tolerance = 0. TestScaling judges each drive's share
// at spec × (1 − [scaling] tolerance) = 90 MB/s, and so does TestLot:
// both say every drive passes, and the lot is accepted. One drive set to
// 85 MB/s fails both, the same drive.
func TestLotAndScalingShareOnePassLine(t *testing.T) {
	spec := lotSpecWith(t, "tolerance = 0.1\n\n[precondition]", "tolerance = 0\n\n[precondition]")
	near := []float64{95, 95.4, 94.6, 95.2, 94.8, 95.1}
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, near)
	setDriveFigures(t, dir, lotWrite, near)
	s, run := judgeLotRun(t, spec, dir)
	require.InDelta(t, 0, s.Spec.Method.Tolerance, 0)
	require.InDelta(t, 0.1, s.Spec.Scaling.Tolerance, 0)
	for _, w := range []string{"128KB_Sequential_Read", "128KB_Sequential_Write"} {
		step := run.results["TestScaling/6_drives/"+w]
		require.Len(t, step.PerDrive, 6)
		c := run.cells["TestLot/64MiB/"+w]
		require.Equal(t, report.Pass, c.Result.Verdict, c.Message)
		assert.InDelta(t, 90, c.Result.Lot.PassLine, 1e-9)
		assert.Equal(t, 6, c.Result.Lot.Passing)
		for i, d := range step.PerDrive {
			assert.Equal(t, report.Pass, d.Verdict, "TestScaling's verdict on %s", d.Path)
			assert.True(t, c.Result.Lot.Figures[i].Pass, "TestLot's verdict on %s", d.Path)
		}
	}
	slow := append([]float64{85}, near[1:]...)
	dir = lotCopy(t, "host-b")
	setDriveFigures(t, dir, lotRead, slow)
	setDriveFigures(t, dir, lotWrite, near)
	_, run = judgeLotRun(t, spec, dir)
	step := run.results["TestScaling/6_drives/128KB_Sequential_Read"]
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	for i, d := range step.PerDrive {
		assert.Equal(t, d.Verdict == report.Pass, c.Result.Lot.Figures[i].Pass, "%s: TestScaling %s", d.Path, d.Verdict)
	}
	assert.Equal(t, report.Fail, step.PerDrive[0].Verdict)
	assert.Equal(t, 5, c.Result.Lot.Passing)
}

// A 6-drive step recorded without preconditioning (run.json's
// precondition edited to "quick"), its figures as recorded, two drives
// below the line: TestScaling fails the step, its drives' evidence, but
// the figures are not the drives' preconditioned ones, so TestLot counts
// them as missing: INCONCLUSIVE, not FAIL.
func TestLotNotPreconditionedIsInconclusive(t *testing.T) {
	dir := lotCopy(t, "host-a")
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"precondition": "full"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"precondition": "full"`, `"precondition": "quick"`, 1)), 0o644))
	_, run := judgeLotRun(t, lotSpec(t, true), dir)
	for _, w := range []string{"128KB_Sequential_Read", "128KB_Sequential_Write"} {
		assert.Equal(t, report.Fail, run.results["TestScaling/6_drives/"+w].Verdict)
		c := run.cells["TestLot/64MiB/"+w]
		require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
		assert.Contains(t, c.Message, "6 drives whose figure is not the drive's own")
	}
	// As recorded, preconditioned: rejected.
	_, run = judgeLotRun(t, lotSpec(t, true), lotCopy(t, "host-b"))
	assert.Equal(t, report.Fail, run.cells["TestLot/64MiB/128KB_Sequential_Read"].Result.Verdict)
}

// The spec's method is the one judged by: the recorded step with six
// tight figures at three times the pass line is accepted under normal
// and, six drives being too few to show the coverage without a model,
// INCONCLUSIVE under distribution-free, saying 59 would decide it.
func TestLotMethodFromTheSpec(t *testing.T) {
	dir := lotCopy(t, "host-a")
	setDriveFigures(t, dir, lotRead, tight)
	setDriveFigures(t, dir, lotWrite, tight)
	_, run := judgeLotRun(t, lotSpec(t, true), dir)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Pass, c.Result.Verdict, c.Message)
	assert.Equal(t, "normal", c.Result.Lot.Method)
	spec := lotSpecWith(t, "confidence = 0.95\n", "confidence = 0.95\nmethod     = \"distribution-free\"\n")
	_, run = judgeLotRun(t, spec, dir)
	c = run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Equal(t, "distribution-free", c.Result.Lot.Method)
	assert.Contains(t, c.Message, "59 drives (53 more, all passing) would accept it")
	assert.Nil(t, c.Result.Lot.Normality, "no distribution is assumed, none checked")
}

// notPreconditioned marks the recording in dir as made with
// -precondition=quick (run.json's precondition edited).
func notPreconditioned(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"precondition": "full"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"precondition": "full"`, `"precondition": "quick"`, 1)), 0o644))
}

// A fleet replay judges each member's figures by that member's own
// preconditioning, not the first member's: host-a recorded fully
// preconditioned (4 of its 6 drives pass), host-b the same recording made
// with -precondition=quick. host-b's six figures are not its drives' own,
// so they count as missing: 4 of 6 alone would reject, but were host-b's
// six to pass (10 of 12) it would not, so the lot is INCONCLUSIVE, not
// rejected on figures a quick run gave. Members the other way round:
// host-b's six figures are judged, host-a's six are the missing ones.
func TestLotFleetMembersOwnPreconditioning(t *testing.T) {
	a, b := lotCopy(t, "host-a"), lotCopy(t, "host-b")
	anotherRun(t, b, "lot-host-b", 1)
	notPreconditioned(t, b)
	_, run := judgeLotRun(t, lotSpec(t, true), a, b)
	for _, w := range []string{"128KB_Sequential_Read", "128KB_Sequential_Write"} {
		c := run.cells["TestLot/64MiB/"+w]
		require.NotNil(t, c.Result.Lot, w)
		require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
		assert.Equal(t, 6, c.Result.Lot.N, "host-a's own six figures")
		assert.Equal(t, 4, c.Result.Lot.Passing)
		require.Len(t, c.Result.Lot.Missing, 6)
		for _, m := range c.Result.Lot.Missing {
			assert.Contains(t, m, "not preconditioned (-precondition=quick)")
		}
		for _, f := range c.Result.Lot.Figures {
			assert.NotContains(t, f.Test, "#2", "a figure of the quick member")
		}
	}
	_, run = judgeLotRun(t, lotSpec(t, true), b, a)
	c := run.cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.NotNil(t, c.Result.Lot)
	assert.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Equal(t, 6, c.Result.Lot.N, "the fully preconditioned member's six figures are judged")
	assert.Len(t, c.Result.Lot.Missing, 6)
}
