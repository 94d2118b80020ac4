package lot

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// The recorded 6-drive scaling step's cells (fixtures/lot-6-drives).
const (
	lotRead  = "TestScaling/6_drives/128KB_Sequential_Read"
	lotWrite = "TestScaling/6_drives/128KB_Sequential_Write"
)

// The recording's lot-rule.toml has a [lot] rule of 95 % coverage at 95 %
// confidence (rule95) and a [method] tolerance of 10 %.
const methodTolerance = 0.1

// judged is a run's drives and its single-drive and scaling results as
// the suite judged them: what Cells reads.
type judged struct {
	drives  []report.Drive
	results []report.Result
}

// load reads testdata/name (see testdata/README.md), fresh for each test
// to edit.
func load(t *testing.T, name string) *judged {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var run struct {
		Drives  []report.Drive  `json:"drives"`
		Results []report.Result `json:"results"`
	}
	require.NoError(t, json.Unmarshal(data, &run))
	return &judged{drives: run.Drives, results: run.Results}
}

// without drops capacity's results, as a spec without the capacity
// (qual's lotSpec(t, true)) runs none of its cells.
func (j *judged) without(capacity string) *judged {
	j.results = slices.DeleteFunc(j.results, func(r report.Result) bool { return r.Capacity == capacity })
	return j
}

// withoutHost drops a fleet member's results and drives.
func (j *judged) withoutHost(host string) *judged {
	j.results = slices.DeleteFunc(j.results, func(r report.Result) bool { return r.Host == host })
	j.drives = slices.DeleteFunc(j.drives, func(d report.Drive) bool { return strings.HasPrefix(d.Path, host+":") })
	return j
}

// result is the result of test.
func (j *judged) result(t *testing.T, test string) *report.Result {
	t.Helper()
	for i := range j.results {
		if j.results[i].Test == test {
			return &j.results[i]
		}
	}
	t.Fatalf("no result %s", test)
	return nil
}

// setFigures sets drive i's figure of test to want[i] MB/s, as qual's
// tests do by scaling each drive's io_bytes in fio's output. The step's
// own verdict stays as recorded: the lot reads it only when it is
// inconclusive.
func (j *judged) setFigures(t *testing.T, test string, want []float64) {
	t.Helper()
	r := j.result(t, test)
	require.Len(t, r.PerDrive, len(want))
	for i := range want {
		r.PerDrive[i].Actual = want[i]
	}
}

// cells judges the lot by the recording's rule: the TestLot cells by test.
func (j *judged) cells() map[string]Cell {
	out := map[string]Cell{}
	for _, c := range Cells(j.results, j.drives, rule95, Preconditions{"": "full"}) {
		out[c.Result.Test] = c
	}
	return out
}

// gates are the gates of the lot cells alone.
func gates(cells map[string]Cell) map[string]report.Gate {
	run := &report.Run{Precondition: "full"}
	for _, c := range cells {
		run.Results = append(run.Results, c.Result)
	}
	out := map[string]report.Gate{}
	for _, g := range run.Gates() {
		out[g.Name] = g
	}
	return out
}

// tight are six figures 1 % apart, three times the pass line of 90 MB/s.
var tight = []float64{300, 303, 297, 301, 299, 302}

// The recorded 6-drive step with every drive's read and write figure set
// tight and well above the pass line is accepted by normal theory, naming
// k and the bound, and the lot gate is QUALIFIED.
func TestCellsAcceptedOnTightFigures(t *testing.T) {
	j := load(t, "lot-6-drives.json").without("32MiB")
	j.setFigures(t, lotRead, tight)
	j.setFigures(t, lotWrite, tight)
	cells := j.cells()
	for _, test := range []string{"TestLot/64MiB/128KB_Sequential_Read", "TestLot/64MiB/128KB_Sequential_Write"} {
		c, ok := cells[test]
		require.True(t, ok, test)
		l := c.Result.Lot
		require.Equal(t, report.Pass, c.Result.Verdict, c.Message)
		assert.Equal(t, report.LotAccepted, l.Verdict)
		assert.Equal(t, Normal, l.Method)
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
	assert.Len(t, cells, 2, "one cell per capacity and workload")
	g := gates(cells)
	require.Contains(t, g, report.LotGate)
	assert.Equal(t, report.Qualified, g[report.LotGate].Verdict)
}

// The same step with its read figures spread (140 to 260 MB/s, mean
// 200): the mean is well above the pass line but the bound is below it,
// and no drive fails, so the lot is neither accepted nor rejected; the
// cell says how many drives at this mean and spread would accept it, and
// the lot gate is INCONCLUSIVE.
func TestCellsUndecidedOnSpreadFigures(t *testing.T) {
	j := load(t, "lot-6-drives.json").without("32MiB")
	j.setFigures(t, lotRead, []float64{140, 260, 175, 225, 190, 210})
	j.setFigures(t, lotWrite, tight)
	cells := j.cells()
	c := cells["TestLot/64MiB/128KB_Sequential_Read"]
	l := c.Result.Lot
	require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Equal(t, report.CauseLotUndecided, c.Result.Cause)
	assert.Equal(t, Inconclusive, l.Verdict)
	assert.Equal(t, 6, l.Passing, "every drive passes")
	assert.Greater(t, l.Mean, l.PassLine)
	assert.Less(t, l.Bound, l.PassLine)
	require.True(t, l.NeedAccepts)
	// The smallest sample whose k fits the figures' mean and spread.
	d := (l.Mean - l.PassLine) / l.SD
	kNeed, _ := K(l.Need, 0.95, 0.95)
	kLess, _ := K(l.Need-1, 0.95, 0.95)
	assert.LessOrEqual(t, kNeed, d)
	assert.Greater(t, kLess, d)
	assert.Greater(t, l.Need, 6)
	assert.Contains(t, c.Message, "drives (")
	assert.Contains(t, c.Message, "more) would accept it")
	// The evidence: the count, the method and what it assumes. The
	// distribution-free count is not the normal method's to offer.
	assert.Contains(t, c.Message, "lot inconclusive at coverage 95 %, confidence 95 % (normal)")
	assert.Contains(t, c.Message, "6 of 6 drives pass; normal theory: the tolerance bound ")
	assert.Contains(t, c.Message, "assuming normal figures: Shapiro–Wilk p = ")
	assert.NotContains(t, c.Message, "zero-failure")
	// The message CI shows (cut to junit.MaxMessage) still says how many
	// drives would decide the lot, for the cell and for the lot gate.
	short := junit.Short(junit.InconclusivePrefix + c.Message)
	assert.Contains(t, short, "more) would accept it", short)
	assert.Contains(t, short, "6 of 6 drives pass", short)
	g := gates(cells)[report.LotGate]
	assert.Equal(t, report.CapacityInconclusive, g.Verdict)
	reason := junit.Short(junit.InconclusivePrefix + g.String())
	assert.Contains(t, reason, "more) would accept it", reason)
	// The write cell, tight, is still accepted.
	assert.Equal(t, report.Pass, cells["TestLot/64MiB/128KB_Sequential_Write"].Result.Verdict)
}

// The recording as it was made: two of the six loop devices read and
// wrote below the pass line, so at 95 % confidence at most 93.7 % of
// such a lot passes: rejected, and the lot gate is NOT QUALIFIED. The
// 32MiB capacity's one drive decides nothing.
func TestCellsRejectedAsRecorded(t *testing.T) {
	j := load(t, "lot-6-drives.json")
	cells := j.cells()
	for _, test := range []string{"TestLot/64MiB/128KB_Sequential_Read", "TestLot/64MiB/128KB_Sequential_Write"} {
		c := cells[test]
		require.Equal(t, report.Fail, c.Result.Verdict, c.Message)
		assert.Equal(t, report.CauseLotRejected, c.Result.Cause)
		assert.Equal(t, 4, c.Result.Lot.Passing)
		assert.InDelta(t, 0.93715, c.Result.Lot.PassingShareUpper, 1e-5)
		assert.Contains(t, c.Message, "4 of 6 drives pass: at 95 % confidence at most 93.72 % of the lot passes")
	}
	one := cells["TestLot/32MiB/128KB_Sequential_Read"]
	assert.Equal(t, report.Inconclusive, one.Result.Verdict)
	assert.Equal(t, 1, one.Result.Lot.N)
	assert.Contains(t, one.Message, "TestSingleDrive/32MiB/128KB_Sequential_Read")
	require.Len(t, one.Result.Lot.Figures, 1)
	assert.Equal(t, "/dev/loop30", one.Result.Lot.Figures[0].Drive, "the recording's one 32MiB drive")
	g := gates(cells)[report.LotGate]
	assert.Equal(t, report.NotQualified, g.Verdict)
	assert.Equal(t, 2, g.Failed)
}

// A figure the suite says is not the drive's (its cell INCONCLUSIVE as
// host-bound, pcie bound, pcie link degraded, thermal, not steady or not
// preconditioned) counts as missing, as the baseline leaves it out: the
// recorded read step, two of its six drives below the line, marked with
// each of those causes in turn, leaves the lot INCONCLUSIVE, not
// rejected, since were its six drives to pass the lot would not be
// rejected; the message names the drives and the cause. The write step,
// as recorded and its own, still rejects.
func TestCellsNotTheDrivesFiguresAreMissing(t *testing.T) {
	for _, cause := range report.NotTheDrivesCauses {
		t.Run(cause, func(t *testing.T) {
			j := load(t, "lot-6-drives.json").without("32MiB")
			r := j.result(t, lotRead)
			require.Equal(t, report.Fail, r.Verdict, "as recorded: two drives below the line")
			r.Verdict, r.Cause = report.Inconclusive, cause
			cells := j.cells()
			c := cells["TestLot/64MiB/128KB_Sequential_Read"]
			require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
			assert.Equal(t, report.CauseLotUndecided, c.Result.Cause)
			assert.Equal(t, 0, c.Result.Lot.N)
			require.Len(t, c.Result.Lot.Missing, 6)
			assert.Contains(t, c.Result.Lot.Missing[0], "("+cause+")")
			assert.Empty(t, c.Result.Lot.Unclear)
			assert.Contains(t, c.Message, "undecided with 6 drives whose figure is not the drive's own (6 drives of "+lotRead+" ("+cause+"))")
			assert.Contains(t, c.Message, "; n = 0 ("+lotRead+"), pass line 90 MB/s", "no figure, no mean")
			assert.Equal(t, report.Fail, cells["TestLot/64MiB/128KB_Sequential_Write"].Result.Verdict)
		})
	}
}

// A run recorded without the spec's full preconditioning gives the lot no
// figure of the drives' own, whatever its cells' verdicts: the recording
// as made, its 6-drive steps FAIL with two drives below the line, judged
// as measured with -precondition=quick, leaves both lots INCONCLUSIVE,
// not rejected (TestScaling's own FAIL stays the drives' evidence).
func TestCellsNotPreconditionedRunIsInconclusive(t *testing.T) {
	j := load(t, "lot-6-drives.json").without("32MiB")
	for _, test := range []string{lotRead, lotWrite} {
		require.Equal(t, report.Fail, j.result(t, test).Verdict)
	}
	for _, c := range Cells(j.results, j.drives, rule95, Preconditions{"": "quick"}) {
		require.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
		assert.Len(t, c.Result.Lot.Missing, 6)
		assert.Contains(t, c.Message, "6 drives whose figure is not the drive's own")
		assert.Contains(t, c.Message, "not preconditioned (-precondition=quick)")
	}
	// The same recording, preconditioned: rejected.
	for _, c := range Cells(j.results, j.drives, rule95, Preconditions{"": "full"}) {
		assert.Equal(t, report.Fail, c.Result.Verdict, c.Message)
	}
}

// Missing drives do not shield a lot the rest reject: a fleet of the
// three hosts as recorded (two of six drives below the line on each),
// host-c's read step host-bound, is rejected, 8 of 12 passing even were
// host-c's six to pass (14 of 18: at most 93 %).
func TestCellsRejectedDespiteMissing(t *testing.T) {
	j := load(t, "lot-fleet.json").without("32MiB")
	r := j.result(t, "TestScaling/host-c/6_drives/128KB_Sequential_Read")
	r.Verdict, r.Cause = report.Inconclusive, report.CauseHostBound
	c := j.cells()["TestLot/64MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Fail, c.Result.Verdict, c.Message)
	assert.Equal(t, 12, c.Result.Lot.N)
	assert.Equal(t, 8, c.Result.Lot.Passing)
	assert.Len(t, c.Result.Lot.Missing, 6)
	assert.Contains(t, c.Message, "rejected even were the 6 drives without a figure to pass")
}

// Three hosts' copies of the recording judged as one fleet, each host's
// 6-drive step's figures set tight and its 32MiB drive's read figure
// scaled by 1, 1.02 or 0.98: the 64MiB lot judges all 18 drives of the
// three hosts' largest steps, and the 32MiB lot, with no scaling, the
// three hosts' single drives.
func TestCellsFleet(t *testing.T) {
	j := load(t, "lot-fleet.json")
	for i, f := range []float64{1, 1.02, 0.98} {
		host := "host-" + string(rune('a'+i))
		j.setFigures(t, "TestScaling/"+host+"/6_drives/128KB_Sequential_Read", tight)
		j.setFigures(t, "TestScaling/"+host+"/6_drives/128KB_Sequential_Write", tight)
		j.result(t, "TestSingleDrive/"+host+"/32MiB/128KB_Sequential_Read").Actual *= f
	}
	cells := j.cells()
	big := cells["TestLot/64MiB/128KB_Sequential_Read"]
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
	small := cells["TestLot/32MiB/128KB_Sequential_Read"]
	require.Equal(t, report.Pass, small.Result.Verdict, small.Message)
	assert.Equal(t, 3, small.Result.Lot.N)
	assert.InDelta(t, 7.6559, small.Result.Lot.K, 1e-3)
	for _, f := range small.Result.Lot.Figures {
		assert.Contains(t, f.Test, "TestSingleDrive/")
		assert.True(t, strings.HasPrefix(f.Test, "TestSingleDrive/"+strings.SplitN(f.Drive, ":", 2)[0]+"/"), "each single drive named on its own host: %s in %s", f.Drive, f.Test)
	}
	// Identical copies of one drive have no spread to judge.
	same := cells["TestLot/32MiB/128KB_Sequential_Write"]
	assert.Equal(t, report.Inconclusive, same.Result.Verdict)
	assert.Contains(t, same.Message, "all 3 figures are equal")
}

// A fleet of two hosts (host-c of the fleet left out), both 6-drive steps'
// figures set tight, whose second host's 6-drive read recording is
// unreadable (the step as the judge leaves a recording that is not fio's
// JSON: failed, bad recording, nothing measured, no per-drive share): its
// six drives are missing from the lot, not left out of it, so the first
// host's six tight drives alone do not accept it.
func TestCellsFleetStepWithoutFigures(t *testing.T) {
	j := load(t, "lot-fleet.json").withoutHost("host-c").without("32MiB")
	for _, host := range []string{"host-a", "host-b"} {
		j.setFigures(t, "TestScaling/"+host+"/6_drives/128KB_Sequential_Read", tight)
		j.setFigures(t, "TestScaling/"+host+"/6_drives/128KB_Sequential_Write", tight)
	}
	bad := j.result(t, "TestScaling/host-b/6_drives/128KB_Sequential_Read")
	bad.Verdict, bad.Cause, bad.Error = report.Fail, report.CauseBadRecording, "128KB Sequential Read: fio printed no JSON object"
	bad.PerDrive, bad.Actual, bad.Ratio, bad.Spread, bad.Min, bad.Median, bad.Max = nil, 0, 0, 0, 0, 0, 0
	cells := j.cells()
	c := cells["TestLot/64MiB/128KB_Sequential_Read"]
	require.NotNil(t, c.Result.Lot)
	assert.Equal(t, 6, c.Result.Lot.N, "host-a's six drives are judged")
	assert.Len(t, c.Result.Lot.Missing, 6, "host-b's six drives have no figure")
	assert.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	assert.Contains(t, c.Message, "6 drives without a figure (6 drives of TestScaling/host-b/6_drives/128KB_Sequential_Read (bad recording))")
	// The write step measured on both hosts: 12 drives, accepted.
	w := cells["TestLot/64MiB/128KB_Sequential_Write"]
	assert.Equal(t, 12, w.Result.Lot.N)
	assert.Empty(t, w.Result.Lot.Missing)
	assert.Equal(t, report.Pass, w.Result.Verdict, w.Message)
}

// The lot judges a drive by the line its own cell judged it by
// (judge.PassLine): a scaling step's share against spec × (1 − [scaling]
// tolerance), the line of the step's per-drive verdicts, a single drive
// against spec × (1 − [method] tolerance). Here the scaling steps carry a
// [scaling] tolerance of 0.3 (a per-drive line of 70 MB/s) and the
// 6-drive step's figures are set tight at 80 MB/s, below the 90 MB/s of a
// single drive: every drive meets the step's line, and the lot, judged
// against it, is accepted.
func TestCellsLineIsTheDrivesOwn(t *testing.T) {
	j := load(t, "lot-6-drives.json").without("32MiB")
	slow := []float64{80, 80.8, 79.2, 80.3, 79.7, 80.5}
	j.setFigures(t, lotRead, slow)
	j.setFigures(t, lotWrite, slow)
	for i := range j.results {
		if j.results[i].Kind == report.KindScaling {
			j.results[i].Tolerance = 0.3
		}
	}
	c := j.cells()["TestLot/64MiB/128KB_Sequential_Read"]
	require.NotNil(t, c.Result.Lot)
	assert.InDelta(t, 70, c.Result.Lot.PassLine, 1e-9, "spec 100 MB/s × (1 − [scaling] tolerance 0.3)")
	assert.InDelta(t, 0.3, c.Result.Tolerance, 1e-12)
	assert.Equal(t, 6, c.Result.Lot.Passing)
	assert.Equal(t, report.Pass, c.Result.Verdict, c.Message)
	assert.Contains(t, c.Message, "pass line 70 MB/s (spec 100 MB/s, tolerance 30 %)")
	// A single-drive cell's figure is judged at its own [method] line.
	one := load(t, "lot-6-drives.json").cells()["TestLot/32MiB/128KB_Sequential_Read"]
	assert.InDelta(t, 90, one.Result.Lot.PassLine, 1e-9)
}

// The source of a capacity and workload is, on each host, its largest
// scaling step, else its single-drive cell; the rest are left out.
func TestSources(t *testing.T) {
	keys, src := Sources(load(t, "lot-6-drives.json").results)
	assert.Equal(t, []string{"64MiB\x00128KB Sequential Write", "64MiB\x00128KB Sequential Read",
		"32MiB\x00128KB Sequential Write", "32MiB\x00128KB Sequential Read"}, keys)
	var tests []string
	for _, k := range keys {
		for _, r := range src[k] {
			tests = append(tests, r.Test)
		}
	}
	assert.Equal(t, []string{lotWrite, lotRead, "TestSingleDrive/32MiB/128KB_Sequential_Write", "TestSingleDrive/32MiB/128KB_Sequential_Read"}, tests)
}

// What a plan gives the rule: the largest scaling step of the scaling
// capacity, else one drive where single-drive cells run, summed over a
// fleet's hosts; and the plan's lines for them (the dry run's).
func TestDrivesAndWritePlan(t *testing.T) {
	p := RunPlan{ScalingCapacity: "64MiB", LargestStep: 6, Single: []string{"64MiB", "32MiB"}}
	n, from := Drives("64MiB", p)
	assert.Equal(t, 6, n)
	assert.Equal(t, "its 6-drive scaling step", from)
	n, from = Drives("32MiB", p)
	assert.Equal(t, 1, n)
	assert.Equal(t, "its single-drive cells", from)
	n, from = Drives("16MiB", p)
	assert.Equal(t, 0, n)
	assert.Equal(t, "no cell", from)
	n, from = FleetDrives("64MiB", []RunPlan{p, p})
	assert.Equal(t, 12, n)
	assert.Equal(t, "2 hosts", from)

	var b strings.Builder
	WritePlan(&b, rule95, []Supply{
		{Capacity: "64MiB", Drives: 6, From: "its 6-drive scaling step"},
		{Capacity: "32MiB", Drives: 1, From: "its single-drive cells"},
		{Capacity: "16MiB", Drives: 0, From: "no cell"},
		{Capacity: "1.92TB", Drives: 24, From: "its 24-drive scaling step"},
	})
	out := b.String()
	assert.Contains(t, out, "lot rule ([lot] coverage 95 %, confidence 95 %): method normal, assuming normal figures: needs at least 3 drives (the Shapiro–Wilk check), every one passing")
	assert.Contains(t, out, "64MiB: the run has 6 drives for the lot (its 6-drive scaling step): k(6) = 3.708\n")
	assert.Contains(t, out, "32MiB: the run has 1 drive for the lot (its single-drive cells): too few for the normal model")
	assert.Contains(t, out, "1.92TB: the run has 24 drives for the lot (its 24-drive scaling step): k(24) = 2.309\n")
	assert.NotContains(t, out, "16MiB", "a capacity the run gives no drive is left out")
	// The normal method never accepts by the count: a zero-failure
	// sample is nothing it needs.
	assert.NotContains(t, out, "zero-failure")
	b.Reset()
	WritePlan(&b, ruleDF, []Supply{
		{Capacity: "1.92TB", Drives: 24, From: "its 24-drive scaling step"},
		{Capacity: "3.84TB", Drives: 102, From: "17 hosts"},
		{Capacity: "7.68TB", Drives: 59, From: "its 59-drive scaling step"},
	})
	out = b.String()
	assert.Contains(t, out, "lot rule ([lot] coverage 95 %, confidence 95 %): method distribution-free, assuming no distribution: accepted when the Clopper–Pearson lower bound of the passing share reaches 95 % (59 of 59, 92 of 93 drives passing); a zero-failure sample needs 59 drives, all passing")
	assert.Contains(t, out, "1.92TB: the run has 24 drives for the lot (its 24-drive scaling step): 35 short of the 59 a zero-failure sample needs, so no lot of it is accepted\n")
	assert.Contains(t, out, "3.84TB: the run has 102 drives for the lot (17 hosts): accepted with up to 1 drive failing\n")
	assert.Contains(t, out, "7.68TB: the run has 59 drives for the lot (its 59-drive scaling step): accepted with up to 0 drives failing\n")
	// The distribution-free method has no k.
	assert.NotContains(t, out, "k(")
}

// fleetOf17 is the recorded 6-drive step's results copied to 17 hosts
// (host-01 … host-17, as a fleet replay names its members' cells and
// drives), 102 drives, every figure set tight around 200 MB/s, the first
// slow drives set to 80 MB/s, below the 90 MB/s line.
func fleetOf17(t *testing.T, slow int) *judged {
	t.Helper()
	one := load(t, "lot-6-drives.json").without("32MiB")
	j := &judged{}
	for h := 1; h <= 17; h++ {
		host := fmt.Sprintf("host-%02d", h)
		for _, d := range one.drives {
			d.Path = host + ":" + d.Path
			j.drives = append(j.drives, d)
		}
		for _, r := range one.results {
			if r.Kind != report.KindScaling || r.Drives != 6 {
				continue
			}
			r.Host = host
			r.Test = strings.Replace(r.Test, "TestScaling/", "TestScaling/"+host+"/", 1)
			r.PerDrive = slices.Clone(r.PerDrive)
			for i := range r.PerDrive {
				r.PerDrive[i].Path = host + ":" + r.PerDrive[i].Path
				r.PerDrive[i].Actual = tight[i] * 2 / 3
				if (h-1)*6+i < slow {
					r.PerDrive[i].Actual = 80
				}
			}
			j.results = append(j.results, r)
		}
	}
	return j
}

// A fleet of 17 hosts × 6 drives (102 figures) under distribution-free:
// one drive below the line, accepted, 101 of 102; two below, INCONCLUSIVE,
// not rejected, saying how many drives at that passing share would decide.
func TestCellsFleetDistributionFree(t *testing.T) {
	for _, tt := range []struct {
		slow    int
		verdict string
		text    string
	}{
		{1, report.Pass, "101 of 102 drives pass; distribution-free, assuming no distribution: at 95 % confidence at least 95.43 % of the lot passes"},
		{2, report.Inconclusive, "at the observed passing share (98.04 %) "},
	} {
		j := fleetOf17(t, tt.slow)
		cells := Cells(j.results, j.drives, ruleDF, Preconditions{"": "full"})
		require.Len(t, cells, 2)
		for _, c := range cells {
			if !strings.HasSuffix(c.Result.Test, "Read") {
				continue
			}
			l := c.Result.Lot
			require.Equal(t, tt.verdict, c.Result.Verdict, c.Message)
			assert.Equal(t, 102, l.N)
			assert.Equal(t, 102-tt.slow, l.Passing)
			assert.Equal(t, DistributionFree, l.Method)
			assert.Nil(t, l.Normality)
			assert.Contains(t, c.Message, tt.text)
			assert.Contains(t, c.Message, "n = 102 (17 hosts)")
			assert.Contains(t, c.Message, "lot "+map[string]string{report.Pass: "accepted", report.Inconclusive: "inconclusive"}[tt.verdict]+" at coverage 95 %, confidence 95 % (distribution-free)")
		}
	}
	// The same fleet under the normal method: one drive below the line
	// rules its acceptance out (and its figures are not normal).
	j := fleetOf17(t, 1)
	for _, c := range Cells(j.results, j.drives, rule95, Preconditions{"": "full"}) {
		assert.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
	}
}

// A fleet whose hosts give a capacity and workload's figures from cells
// of different lines: host-a and host-b their 6-drive steps' shares, at a
// [scaling] tolerance of 0.3 (line 70 MB/s) and set to 80 MB/s, host-c,
// its scaling steps left out, its single-drive cell at [method] tolerance
// 0.1 (line 90 MB/s). Each figure passes at its own cell's line, as its
// cell judged it: 13 of 13 pass and the lot is not rejected (judging all
// at the strictest line would fail the twelve shares TestScaling passed).
func TestCellsFleetMixedLines(t *testing.T) {
	j := load(t, "lot-fleet.json").without("32MiB")
	j.results = slices.DeleteFunc(j.results, func(r report.Result) bool {
		return r.Host == "host-c" && r.Kind == report.KindScaling
	})
	slow := []float64{80, 80.8, 79.2, 80.3, 79.7, 80.5}
	for _, host := range []string{"host-a", "host-b"} {
		for _, test := range []string{"TestScaling/" + host + "/6_drives/128KB_Sequential_Read", "TestScaling/" + host + "/6_drives/128KB_Sequential_Write"} {
			j.setFigures(t, test, slow)
		}
	}
	for i := range j.results {
		if j.results[i].Kind == report.KindScaling {
			j.results[i].Tolerance = 0.3
		}
	}
	for _, c := range Cells(j.results, j.drives, ruleDF, Preconditions{}) {
		l := c.Result.Lot
		require.NotNil(t, l)
		assert.Equal(t, 13, l.N, c.Message)
		assert.Equal(t, 13, l.Passing, c.Message)
		assert.Equal(t, report.Inconclusive, c.Result.Verdict, c.Message)
		assert.Contains(t, c.Message, "59 drives (46 more, all passing) would accept it")
		assert.Contains(t, c.Message, "scaled to this one")
		for _, f := range l.Figures {
			assert.True(t, f.Pass, "%s in %s", f.Drive, f.Test)
		}
	}
}

// Ten fleet members' single-drive cells of one capacity and workload,
// five measured well above the line and five failed by their drive's
// read-back (data integrity, the cell failed unmeasured): five of ten
// drives pass, which rejects the lot at 95/95. The failed drives are
// the lot's failures, not drives that might still pass.
func TestCellsDisqualifiedDrivesAreFailures(t *testing.T) {
	var src []report.Result
	for i := range 10 {
		r := report.Result{Test: fmt.Sprintf("TestSingleDrive/h%d/32MiB/128KB_Sequential_Read", i), Host: fmt.Sprintf("h%d", i),
			Kind: report.KindSingle, Capacity: "32MiB", Workload: "128KB Sequential Read", Metric: "bw_mbps",
			Spec: 100, Expected: 100, Tolerance: methodTolerance, Verdict: report.Pass, Actual: 300 + float64(i)}
		if i%2 == 1 {
			r.Verdict, r.Cause, r.Actual = report.Fail, report.CauseIntegrity, 0
			r.Error = "not measured: the drive failed the verify pass earlier in this run"
		}
		src = append(src, r)
	}
	c := JudgeCell(src, nil, rule95, Preconditions{})
	require.Equal(t, report.Fail, c.Result.Verdict, c.Message)
	assert.Equal(t, 10, c.Result.Lot.N)
	assert.Equal(t, 5, c.Result.Lot.Passing)
	assert.Empty(t, c.Result.Lot.Missing)
	assert.Contains(t, c.Message, "counting the 5 drives that failed")
}

// A 24-drive scaling step inconclusive because one drive never settled
// (its steady-state record not attained, the other 23 attained) takes
// only that drive's figure out of the lot: n = 23, the drive named
// missing as not steady, and the lot is judged on the others' figures.
func TestCellsOneDriveNotSteadyOfTwentyFour(t *testing.T) {
	const test = "TestScaling/24_drives/4KB_Random_Write"
	r := report.Result{Test: test, Kind: report.KindScaling, Capacity: "1.92TB", Workload: "4KB Random Write", Drives: 24,
		Metric: "iops", Spec: 150000, Expected: 24 * 150000, Tolerance: 0.1, Verdict: report.Inconclusive, Cause: report.CauseNotSteady}
	for i := range 24 {
		path := fmt.Sprintf("/dev/nvme%dn1", i)
		r.PerDrive = append(r.PerDrive, report.DriveResult{Path: path, Serial: fmt.Sprintf("S%02d", i),
			Actual: 160000 + 100*float64(i%5), Verdict: report.Pass})
		r.Steady = append(r.Steady, report.Steady{Step: 3, Kind: "precondition", Twin: "4KB Random Write", Drive: path,
			Attained: i != 17, Window: 5, StopRound: 30, BoundSeconds: 1800})
	}
	c := JudgeCell([]report.Result{r}, nil, rule95, Preconditions{"": "full"})
	assert.Equal(t, 23, c.Result.Lot.N, c.Message)
	assert.Len(t, c.Result.Lot.Figures, 23)
	require.Len(t, c.Result.Lot.Missing, 1)
	assert.Equal(t, "/dev/nvme17n1 in "+test+" ("+report.CauseNotSteady+")", c.Result.Lot.Missing[0])
	for _, f := range c.Result.Lot.Figures {
		assert.NotEqual(t, "/dev/nvme17n1", f.Drive, "the drive that never settled gives no figure")
	}
	assert.Contains(t, c.Message, "1 drive whose figure is not the drive's own (1 drive of "+test+" (not steady))")
}

// A resume after a reboot keeps a 2-drive step measured before it: its
// steady-state records name the drives by the paths they had then, and
// the two swapped kernel names at boot (serial SA, not steady, was
// nvme0n1 and is nvme1n1 now). The drive that never settled is told by
// its serial: its figure is set aside, its neighbour's counts, never the
// other way round.
func TestCellsNotSteadyDriveFollowsItsSerialAcrossRenumbering(t *testing.T) {
	const test = "TestScaling/2_drives/4KB_Random_Write"
	r := report.Result{Test: test, Kind: report.KindScaling, Capacity: "1.92TB", Workload: "4KB Random Write", Drives: 2,
		Metric: "iops", Spec: 150000, Expected: 2 * 150000, Tolerance: 0.1, Verdict: report.Inconclusive, Cause: report.CauseNotSteady,
		PerDrive: []report.DriveResult{
			{Path: "/dev/nvme0n1", Serial: "SB", Actual: 161000, Verdict: report.Pass},
			{Path: "/dev/nvme1n1", Serial: "SA", Actual: 90000, Verdict: report.Fail},
		},
		Steady: []report.Steady{
			{Step: 3, Kind: "precondition", Drive: "/dev/nvme0n1", Serial: "SA", Attained: false, Window: 5, StopRound: 25},
			{Step: 3, Kind: "precondition", Drive: "/dev/nvme1n1", Serial: "SB", Attained: true, Window: 5, StopRound: 25},
		}}
	c := JudgeCell([]report.Result{r}, nil, rule95, Preconditions{"": "full"})
	require.Len(t, c.Result.Lot.Figures, 1, c.Message)
	assert.Equal(t, "/dev/nvme0n1", c.Result.Lot.Figures[0].Drive, "the steady drive (SB) gives its figure")
	assert.Equal(t, 161000.0, c.Result.Lot.Figures[0].Value)
	require.Len(t, c.Result.Lot.Missing, 1)
	assert.Equal(t, "/dev/nvme1n1 in "+test+" ("+report.CauseNotSteady+")", c.Result.Lot.Missing[0])
}

// A scaling step in which one drive of 24 failed an I/O (its per-drive
// entry names the drive's failure, verdict.PrecedeDrives) counts that
// drive as one of the lot's failures, not as a drive without a figure:
// n = 24 with 23 passing, and the drive is named.
func TestCellsDriveFailedInTheStepIsAFailure(t *testing.T) {
	const test = "TestScaling/24_drives/128KB_Sequential_Read"
	r := report.Result{Test: test, Kind: report.KindScaling, Capacity: "64MiB", Workload: "128KB Sequential Read", Drives: 24,
		Metric: "MBps", Spec: 100, Expected: 2400, Tolerance: 0.1, Verdict: report.Fail, Cause: report.CauseIOError}
	for i := range 24 {
		d := report.DriveResult{Path: fmt.Sprintf("/dev/loop%d", i), Actual: 300 + float64(i), Verdict: report.Pass}
		if i == 5 {
			d.Actual, d.Verdict, d.Cause = 12, report.Fail, report.CauseIOError
			d.Error = `job "drive5": errno 5 (input/output error)`
		}
		r.PerDrive = append(r.PerDrive, d)
	}
	c := JudgeCell([]report.Result{r}, nil, ruleDF, Preconditions{"": "full"})
	assert.Equal(t, 24, c.Result.Lot.N, c.Message)
	assert.Equal(t, 23, c.Result.Lot.Passing, c.Message)
	assert.Empty(t, c.Result.Lot.Missing)
	assert.Contains(t, c.Message, "counting the 1 drive that failed (/dev/loop5 in "+test+" (i/o error)) as failing")
}

// Three hosts' copies of one recording (testdata/lot-fleet.json, the
// 6-drive step under three names) whose drives report the same serials:
// the lot is six drives, not 18, each counted once at its first host's
// figure, and the message says the others were left out.
func TestCellsCopiesCountedOnce(t *testing.T) {
	j := load(t, "lot-fleet.json")
	for i := range 3 {
		host := "host-" + string(rune('a'+i))
		for _, test := range []string{"TestScaling/" + host + "/6_drives/128KB_Sequential_Read", "TestScaling/" + host + "/6_drives/128KB_Sequential_Write"} {
			j.setFigures(t, test, tight)
			r := j.result(t, test)
			for d := range r.PerDrive {
				r.PerDrive[d].Serial = fmt.Sprintf("PHA%05d", d)
			}
		}
	}
	for d := range j.drives {
		j.drives[d].Model = "loop"
	}
	big := j.cells()["TestLot/64MiB/128KB_Sequential_Read"]
	assert.Equal(t, 6, big.Result.Lot.N, big.Message)
	assert.Contains(t, big.Message, "n = 6 (3 hosts)")
	assert.Contains(t, big.Message, "12 figures recorded again on another host or step counted once")
	for _, f := range big.Result.Lot.Figures {
		assert.True(t, strings.HasPrefix(f.Drive, "host-a:"), "each drive at its first host's figure: %s", f.Drive)
	}
}
