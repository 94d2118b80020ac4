package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
)

type thousandsTest struct {
	in  float64
	out string
}

var thousandsTests = []thousandsTest{
	{0, "0"},
	{7, "7"},
	{999, "999"},
	{1000, "1,000"},
	{14500, "14,500"},
	{126011, "126,011"},
	{2409894, "2,409,894"},
	{2350000, "2,350,000"},
	{57400000, "57,400,000"},
	{1_920_383_410_176, "1,920,383,410,176"},
	{2409893.5, "2,409,894"}, // halves round away from zero
	{2409894.49, "2,409,894"},
	{999.5, "1,000"},
	{-1234567, "-1,234,567"},
	{-0.4, "0"}, // never "-0"
	{math.NaN(), "n/a"},
	{math.Inf(1), "n/a"},
	{math.Inf(-1), "n/a"},
}

func TestFormatThousands(t *testing.T) {
	for _, tt := range thousandsTests {
		if out := Thousands(tt.in); out != tt.out {
			t.Errorf("Thousands(%v) = %q, want %q", tt.in, out, tt.out)
		}
	}
}

type valueTest struct {
	v      float64
	metric string
	out    string
}

var valueTests = []valueTest{
	{2350000, "iops", "2,350,000 IOPS"},
	{14500, "MBps", "14,500 MB/s"},
	{14506.4, "MBps", "14,506 MB/s"},
	{12, "", "12"},
}

func TestFormatValue(t *testing.T) {
	for _, tt := range valueTests {
		if out := FormatValue(tt.v, tt.metric); out != tt.out {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", tt.v, tt.metric, out, tt.out)
		}
	}
}

type percentTest struct {
	actual, ref float64
	out         string
}

var percentTests = []percentTest{
	{2409894, 2350000, "102.55 %"}, // the brief's 4KB Random Read, 1.92TB
	{126011, 1200000, "10.50 %"},
	{1260110, 1200000, "105.01 %"},
	{14506, 14500, "100.04 %"},
	{2350000, 2350000, "100.00 %"},
	{1, 3, "33.33 %"},
	{2, 3, "66.67 %"},
	{0, 14500, "0.00 %"},
	{5, 0, "n/a"},
	{math.NaN(), 1, "n/a"},
	{1, math.Inf(1), "n/a"},
}

func TestFormatPercent(t *testing.T) {
	for _, tt := range percentTests {
		if out := formatPercent(tt.actual, tt.ref); out != tt.out {
			t.Errorf("formatPercent(%v, %v) = %q, want %q", tt.actual, tt.ref, out, tt.out)
		}
	}
}

type bytesTest struct {
	in  int64
	out string
}

var bytesTests = []bytesTest{
	{1_920_383_410_176, "1.92 TB"},
	{3_840_755_982_336, "3.84 TB"},
	{15_360_000_000_000, "15.36 TB"},
	{1 << 30, "1.07 GB"},
	{999, "999 B"},
	{0, "-"},
	{-1, "-"},
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range bytesTests {
		if out := formatBytes(tt.in); out != tt.out {
			t.Errorf("formatBytes(%d) = %q, want %q", tt.in, out, tt.out)
		}
	}
}

type gateTest struct {
	name    string
	results []Result
	gate    string // the gate looked at
	out     string // its verdict; "" for no such gate
}

func res(capacity, verdict, err string) Result {
	return Result{Capacity: capacity, Kind: KindSingle, Verdict: verdict, Error: err}
}

func scalingRes(verdict string) Result {
	return Result{Capacity: "1.92TB", Kind: KindScaling, Drives: 24, Verdict: verdict}
}

var gateTests = []gateTest{
	{"all pass", []Result{res("1.92TB", Pass, ""), res("1.92TB", Pass, "")}, "1.92TB", Qualified},
	{"one fail", []Result{res("1.92TB", Pass, ""), res("1.92TB", Fail, "")}, "1.92TB", NotQualified},
	{"fail beats inconclusive", []Result{res("1.92TB", Inconclusive, "x"), res("1.92TB", Fail, "")}, "1.92TB", NotQualified},
	{"one inconclusive", []Result{res("1.92TB", Pass, ""), res("1.92TB", Inconclusive, "")}, "1.92TB", CapacityInconclusive},
	{"pass with an error", []Result{res("1.92TB", Pass, ""), res("1.92TB", Pass, "fio: exit 1")}, "1.92TB", CapacityInconclusive},
	{"unknown verdict", []Result{res("1.92TB", Pass, ""), res("1.92TB", "", "")}, "1.92TB", CapacityInconclusive},
	{"other capacity's fail ignored", []Result{res("1.92TB", Pass, ""), res("3.84TB", Fail, "")}, "1.92TB", Qualified},
	{"scaling is its own gate", []Result{res("1.92TB", Pass, ""), scalingRes(Fail)}, "1.92TB", Qualified},
	{"scaling fail", []Result{res("1.92TB", Pass, ""), scalingRes(Fail)}, ScalingGate, NotQualified},
	{"all inconclusive scaling", []Result{scalingRes(Inconclusive), scalingRes(Inconclusive)}, ScalingGate, CapacityInconclusive},
	{"not tested", []Result{res("1.92TB", Pass, "")}, "7.68TB", ""},
	{"no results", nil, "1.92TB", ""},
}

func TestGates(t *testing.T) {
	for _, tt := range gateTests {
		r := &Run{Results: tt.results}
		out := ""
		for _, g := range r.Gates() {
			if g.Name == tt.gate {
				out = g.Verdict
			}
		}
		if out != tt.out {
			t.Errorf("%s: Gates()[%q] = %q, want %q", tt.name, tt.gate, out, tt.out)
		}
	}
}

type overallTest struct {
	name    string
	results []Result
	verdict string
	reason  string // a part of the reason
}

var overallTests = []overallTest{
	{"all pass", []Result{res("1.92TB", Pass, ""), scalingRes(Pass)}, Qualified, ""},
	{"scaling fails the run", []Result{res("1.92TB", Pass, ""), scalingRes(Fail)}, NotQualified, "scaling: 1 of 1 cells failed"},
	{"fail beats inconclusive", []Result{res("1.92TB", Inconclusive, "x"), res("3.84TB", Fail, "slow")}, NotQualified, "3.84TB: 1 of 1 cells failed; first: slow"},
	{"quick preconditioning", []Result{{Capacity: "1.92TB", Verdict: Inconclusive, Cause: CausePrecondition, Error: "4KB Random Read: ..."}},
		CapacityInconclusive, "1.92TB: 1 of 1 cells inconclusive; first: measured with -precondition=quick; rerun with -precondition=full to qualify"},
	{"nothing judged", nil, CapacityInconclusive, "nothing was judged"},
}

// The run's verdict is its worst gate's: what the exit status gives.
func TestOverall(t *testing.T) {
	for _, tt := range overallTests {
		r := &Run{Results: tt.results, Precondition: "quick"}
		g := r.Overall()
		if g.Verdict != tt.verdict || !strings.Contains(g.Reason, tt.reason) {
			t.Errorf("%s: Overall() = %s %q, want %s containing %q", tt.name, g.Verdict, g.Reason, tt.verdict, tt.reason)
		}
	}
}

func TestClosingLineSaysReconstructed(t *testing.T) {
	r := &Run{Source: "Acme brief, 2024", Reconstructed: true, Results: []Result{res("1.92TB", Pass, "")}}
	want := "QUALIFIED: 1.92TB: 1 of 1 cells passed (replay of figures reconstructed from Acme brief, 2024; no drive was measured)"
	if got := r.ClosingLine(); got != want {
		t.Errorf("ClosingLine() = %q, want %q", got, want)
	}
}

func drives(actuals ...float64) []DriveResult {
	var per []DriveResult
	for i, a := range actuals {
		per = append(per, DriveResult{Path: "/dev/d" + string(rune('a'+i)), Actual: a})
	}
	return per
}

// Tables follow the spec's workload order, then any other workload in the
// order results name it.
func TestSummaryWorkloadOrder(t *testing.T) {
	r := &Run{
		Spec:      "Acme X1",
		Workloads: []string{"A", "B", "C"},
		Results: []Result{
			{Capacity: "1TB", Workload: "Z", Metric: "iops", Spec: 1, Actual: 1, Verdict: Pass},
			{Capacity: "1TB", Workload: "C", Metric: "iops", Spec: 1, Actual: 1, Verdict: Pass},
			{Capacity: "1TB", Workload: "A", Metric: "iops", Spec: 1, Actual: 1, Verdict: Pass},
			{Capacity: "1TB", Workload: "Y", Metric: "iops", Spec: 1, Actual: 1, Verdict: Pass},
		},
	}
	var got []string
	for _, line := range strings.Split(string(r.Summary()), "\n") {
		if f := strings.Split(line, " | "); len(f) == 5 && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Workload") {
			got = append(got, strings.TrimPrefix(f[0], "| "))
		}
	}
	if want := []string{"A", "C", "Z", "Y"}; !slices.Equal(got, want) {
		t.Errorf("summary rows = %v, want %v", got, want)
	}
}

// Text from fio lands in table cells; a pipe or newline must not break the
// table.
func TestSummaryEscapesCells(t *testing.T) {
	r := &Run{Spec: "Acme X1", Results: []Result{{
		Capacity: "1TB", Workload: "A|B", Metric: "iops", Spec: 1, Actual: 1,
		Verdict: Fail, Error: "line one\nline | two",
	}}}
	s := string(r.Summary())
	for _, want := range []string{`| A\|B |`, `[^1]: line one line \| two`} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

// Messages a recording supplies (a firmware step's, a purge's, a power
// cut's) reach summary.md as their text: no raw control character (an
// escape sequence, a newline) and no HTML tag; a "<" between figures
// stays.
func TestSummaryEscapesRecordedMessages(t *testing.T) {
	msg := "stalled\n\x1b[2J<script>alert(1)</script> 3 < 4"
	r := &Run{Spec: "Acme X1", Results: []Result{
		{Test: "TestFirmware/a/activate", Kind: KindFirmware, Verdict: Fail, Error: msg, Firmware: &firmware.Result{Message: msg}},
		{Test: "TestPurge/a", Kind: KindPurge, Verdict: Fail, Error: msg, Purge: &purgeproof.Result{Message: msg}},
	}}
	s := string(r.Summary())
	for _, bad := range []string{"\x1b", "<script>", "</script>", "\n\x1b"} {
		if strings.Contains(s, bad) {
			t.Errorf("summary holds %q raw:\n%s", bad, s)
		}
	}
	if want := `stalled \x1b[2J&lt;script>alert(1)&lt;/script> 3 < 4`; strings.Count(s, want) < 2 {
		t.Errorf("summary lacks %q in both sections:\n%s", want, s)
	}
}

// A gate's reason quotes its first failure's first line: escaped, so
// that the closing line and TestVerdict's log line carry no raw control
// character a recording supplied.
func TestGateReasonEscaped(t *testing.T) {
	r := &Run{Results: []Result{{Capacity: "1TB", Test: "TestFirmware/a/activate", Kind: KindFirmware, Verdict: Fail, Error: "\x1b[2Jstalled\nsecond line"}}}
	line := r.ClosingLine()
	if strings.Contains(line, "\x1b") || !strings.Contains(line, `\x1b[2Jstalled`) || strings.Contains(line, "second line") {
		t.Errorf("closing line %q", line)
	}
}

// The fleet's table renders the judge's figures, the spread beside its
// limit, and names each failed drive.
func TestSummaryFleet(t *testing.T) {
	r := &Run{Spec: "Acme X1", Mode: "replay", Hosts: []Host{{Name: "h1", Verdict: Pass}, {Name: "h2", Verdict: Fail}},
		Results: []Result{{
			Test: "TestFleet/1TB/A", Kind: KindFleet, Capacity: "1TB", Workload: "A", Metric: "iops",
			Spec: 100, Drives: 2, Min: 40, Median: 120, Max: 200, Spread: 4.0 / 3, Tolerance: 0.5, Actual: 120,
			Verdict: Fail, PerDrive: []DriveResult{
				{Path: "h1:/dev/a", Actual: 200, Verdict: Pass},
				{Path: "h2:/dev/b", Actual: 40, Verdict: Fail, Error: "outlier, below spec"},
			},
		}}}
	s := string(r.Summary())
	want := "| 1TB | A | 100 IOPS | 2 | 40 IOPS | 120 IOPS | 200 IOPS | 133.33 % (limit 50.00 %) | FAIL | h2:/dev/b (outlier, below spec) |"
	if !strings.Contains(s, want) {
		t.Errorf("summary lacks the fleet row %q:\n%s", want, s)
	}
}

func TestSummaryNoResults(t *testing.T) {
	s := string((&Run{Spec: "Acme X1", Mode: "live"}).Summary())
	if !strings.HasPrefix(s, "**INCONCLUSIVE**: no test has been judged yet; next: wait for the run to finish; if it has, its log says why it stopped.\n\n# drivequal: Acme X1\n") {
		t.Errorf("summary does not open with the bottom line and the title:\n%s", s)
	}
	if strings.Contains(s, "## Scaling") || strings.Contains(s, "QUALIFIED") {
		t.Errorf("summary of a run without results has verdicts or a scaling section:\n%s", s)
	}
}

func TestSummaryNoPrecondition(t *testing.T) {
	r := &Run{Spec: "Acme X1", Mode: "live", Precondition: "none", Results: []Result{
		{Capacity: "1TB", Workload: "A", Metric: "iops", Spec: 1, Actual: 2, Verdict: Pass},
	}}
	s := string(r.Summary())
	if !strings.Contains(s, "precondition: none. The drives were not preconditioned") {
		t.Errorf("summary of a run without preconditioning does not say so:\n%s", s)
	}
}
