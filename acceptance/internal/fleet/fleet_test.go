package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Every run in these tests is synthetic (Synthetic, then changed by the
// case): made up in memory, measured on no drive.

const readWL = "4KB Random Read" // spec 2,350,000 IOPS at 1.92TB in the built-in spec

// setResult changes host h's (0-based) single-drive result for workload.
func setResult(t *testing.T, runs []Run, h int, workload string, f func(*report.Result)) {
	t.Helper()
	for i := range runs[h].Report.Results {
		res := &runs[h].Report.Results[i]
		if res.Kind == report.KindSingle && res.Workload == workload {
			f(res)
			return
		}
	}
	t.Fatalf("host %d has no single-drive result for %q", h, workload)
}

// setActual sets a result's actual to ratio × its spec, and its own
// verdict as its run would judge it.
func setActual(ratio float64) func(*report.Result) {
	return func(res *report.Result) {
		res.Actual, res.Ratio = res.Spec*ratio, ratio
		if ratio < 1-res.Tolerance {
			res.Verdict, res.Cause, res.Error = report.Fail, report.CauseBelowSpec, "below spec"
		}
	}
}

type judgeTest struct {
	name      string
	hosts     int
	change    func(t *testing.T, runs []Run)
	tolerance float64
	// verdict and cause of the 4KB Random Read cell; every other cell passes.
	verdict, cause string
	drives         int
	// contains are substrings its message must have.
	contains []string
}

var judgeTests = []judgeTest{
	{
		name: "pass", hosts: 5, tolerance: Recorded,
		verdict: report.Pass, drives: 5,
		contains: []string{"4KB Random Read across 5 drives on 5 hosts: every drive meets spec 2,350,000 IOPS", "limit 10 %"},
	},
	{
		// One slow drive, still within a loose tolerance of the spec, but
		// 20 % below its peers: the fleet names it with its host.
		name: "one slow drive is an outlier", hosts: 5, tolerance: 0.25,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 2, readWL, setActual(0.82))
		},
		verdict: report.Fail, cause: CauseSpread, drives: 5,
		contains: []string{"outliers more than 10 % below the median",
			"syn-h003:/dev/disk/by-id/nvme-SYNTH_h003_d01 (serial SYNh003d01) 1,927,000 IOPS"},
	},
	{
		name: "slow drive below spec", hosts: 5, tolerance: Recorded,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 4, readWL, setActual(0.97))
		},
		verdict: report.Fail, cause: report.CauseBelowSpec, drives: 5,
		contains: []string{"1 of 5 drives below spec 2,350,000 IOPS: syn-h005:/dev/disk/by-id/nvme-SYNTH_h005_d01 (serial SYNh005d01) 2,279,500 IOPS (97.00 % of spec)"},
	},
	{
		// The run failed the drive below its spec's 0 % tolerance; the
		// fleet's 5 % re-judges it, and counts it.
		name: "member below its own spec within the fleet's tolerance", hosts: 3, tolerance: 0.05,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 1, readWL, setActual(0.97))
		},
		verdict: report.Pass, drives: 3,
		contains: []string{"(tolerance 5 %)"},
	},
	{
		name: "member fio failed without a figure", hosts: 4, tolerance: Recorded,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 0, readWL, func(res *report.Result) {
				res.Actual, res.Ratio = 0, 0
				res.Verdict, res.Cause, res.Error = report.Fail, report.CauseFioFailed, "fio: exit status 1"
			})
		},
		verdict: report.Fail, cause: CauseNoFigure, drives: 3,
		contains: []string{"across 4 drives on 4 hosts (3 with a figure)",
			"syn-h001:/dev/disk/by-id/nvme-SYNTH_h001_d01 (serial SYNh001d01) has no figure (its own verdict fail, fio failed): fio: exit status 1"},
	},
	{
		// fio reported job errors but a figure: the figure counts, and the
		// member's failure fails the fleet cell.
		name: "member fio failed with a figure", hosts: 4, tolerance: Recorded,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 3, readWL, func(res *report.Result) {
				res.Verdict, res.Cause, res.Error = report.Fail, report.CauseFioFailed, "err=5/Input/output error"
			})
		},
		verdict: report.Fail, cause: CauseMemberFailed, drives: 4,
		contains: []string{"syn-h004:/dev/disk/by-id/nvme-SYNTH_h004_d01 (serial SYNh004d01) failed in its own run (fio failed): err=5/Input/output error"},
	},
	{
		name: "member inconclusive", hosts: 3, tolerance: Recorded,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 1, readWL, func(res *report.Result) {
				res.Verdict, res.Cause, res.Error = report.Inconclusive, report.CauseNotSteady, "did not reach steady state"
			})
		},
		verdict: report.Inconclusive, cause: CauseMemberNotClear, drives: 3,
		contains: []string{"1 of 3 drives inconclusive", "syn-h002:/dev/disk/by-id/nvme-SYNTH_h002_d01 (serial SYNh002d01) (not steady)"},
	},
	{
		name: "one drive", hosts: 1, tolerance: Recorded,
		verdict: report.Inconclusive, cause: CauseTooFew, drives: 1,
		contains: []string{"across 1 drive on 1 host: a fleet needs at least 2 drives"},
	},
	{
		// Below spec beats inconclusive, as in a run's own cells.
		name: "one drive below spec", hosts: 1, tolerance: Recorded,
		change: func(t *testing.T, runs []Run) {
			setResult(t, runs, 0, readWL, setActual(0.5))
		},
		verdict: report.Fail, cause: report.CauseBelowSpec, drives: 1,
	},
	{
		// A latency cell: lower is better, so the slow drive is the one
		// above the spec and the median.
		name: "latency", hosts: 4, tolerance: 0.5,
		change: func(t *testing.T, runs []Run) {
			for h := range runs {
				setResult(t, runs, h, readWL, func(res *report.Result) {
					res.Metric, res.Spec, res.Actual = "lat_us", 100, 90
				})
			}
			setResult(t, runs, 2, readWL, func(res *report.Result) { res.Actual = 120 })
		},
		verdict: report.Fail, cause: CauseSpread, drives: 4,
		contains: []string{"outliers more than 10 % above the median", "syn-h003:"},
	},
}

func TestJudge(t *testing.T) {
	for _, tt := range judgeTests {
		t.Run(tt.name, func(t *testing.T) {
			runs := Synthetic(tt.hosts, 1, nil)
			if tt.change != nil {
				tt.change(t, runs)
			}
			if err := Compatible(runs); err != nil {
				t.Fatalf("Compatible = %v, want nil", err)
			}
			cells := Judge(runs, tt.tolerance, report.DefaultDriveTolerance)
			if len(cells) != 8 {
				t.Fatalf("Judge gave %d cells, want 8 (one per workload of 1.92TB)", len(cells))
			}
			for _, c := range cells {
				if c.Workload != readWL {
					want := report.Pass
					if tt.hosts < 2 {
						want = report.Inconclusive
					}
					if c.Verdict != want {
						t.Errorf("%s: verdict %s, want %s: %s", c.Test, c.Verdict, want, c.Message)
					}
					continue
				}
				if c.Test != "TestFleet/1.92TB/4KB_Random_Read" {
					t.Errorf("Test = %q, want TestFleet/1.92TB/4KB_Random_Read", c.Test)
				}
				if c.Verdict != tt.verdict || c.Cause != tt.cause || c.Drives != tt.drives {
					t.Errorf("Judge: verdict %s, cause %q, drives %d; want %s, %q, %d\nmessage: %s",
						c.Verdict, c.Cause, c.Drives, tt.verdict, tt.cause, tt.drives, c.Message)
				}
				for _, s := range tt.contains {
					if !strings.Contains(c.Message, s) {
						t.Errorf("message does not say %q:\n%s", s, c.Message)
					}
				}
				if c.Drives > 0 && !(c.Min <= c.Median && c.Median <= c.Max) {
					t.Errorf("min %v, median %v, max %v out of order", c.Min, c.Median, c.Max)
				}
			}
		})
	}
}

// TestJudgeOrder: cells follow the spec's capacity and workload order,
// and each member is the host's first drive of the capacity.
func TestJudgeOrder(t *testing.T) {
	runs := Synthetic(3, 2, nil)
	cells := Judge(runs, Recorded, 0.25)
	var got []string
	for _, c := range cells {
		got = append(got, c.Workload)
	}
	want := runs[0].Report.Workloads
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cell order = %q, want the spec's %q", got, want)
	}
	m := cells[0].Members[1]
	if m.Host != "syn-h002" || m.Path != "/dev/disk/by-id/nvme-SYNTH_h002_d01" || m.Serial != "SYNh002d01" {
		t.Errorf("member = %s, want syn-h002's first drive", m.Name())
	}
	if cells[0].FleetTolerance != 0.25 || cells[0].Tolerance != runs[0].Report.Results[0].Tolerance {
		t.Errorf("tolerances = %v, %v; want the fleet's 0.25 and the recorded %v",
			cells[0].FleetTolerance, cells[0].Tolerance, runs[0].Report.Results[0].Tolerance)
	}
}

type compatibleTest struct {
	name   string
	change func(runs []Run)
	want   []string // substrings of the error; none: no error
}

var compatibleTests = []compatibleTest{
	{name: "same spec and fio"},
	{
		name: "spec mismatch",
		change: func(runs []Run) {
			runs[2].Report.JudgedBy = &report.SpecRef{Model: "Acme X1", File: "specs/acme.toml", SHA256: "abcdef0123456789abcdef"}
		},
		want: []string{"runs judged by 2 different specs",
			"Solidigm D7-PS1010 (specs/solidigm-d7-ps1010.toml, sha256 ", "): syn-h001, syn-h002",
			"Acme X1 (specs/acme.toml, sha256 abcdef012345…): syn-h003"},
	},
	{
		name: "fio major mismatch",
		change: func(runs []Run) {
			runs[1].Report.FioVersion = "fio-4.0"
			runs[2].Report.FioVersion = "fio-3.28"
		},
		want: []string{"different fio major versions: fio-3.x: syn-h001 (fio-3.36), syn-h003 (fio-3.28); fio-4.x: syn-h002 (fio-4.0)"},
	},
	{
		// A minor difference is fine.
		name:   "fio minor differs",
		change: func(runs []Run) { runs[1].Report.FioVersion = "fio-3.41" },
	},
	{
		name:   "same directory twice",
		change: func(runs []Run) { runs[2].Dir = runs[0].Dir },
		want:   []string{"syn-h001 is given twice"},
	},
	{
		name:   "same drive twice",
		change: func(runs []Run) { runs[1].Report.Drives[0].Serial = runs[0].Report.Drives[0].Serial },
		want:   []string{"drive serial SYNh001d01 is in syn-h001 (/dev/disk/by-id/nvme-SYNTH_h001_d01) and in syn-h002 (/dev/disk/by-id/nvme-SYNTH_h002_d01)"},
	},
	{
		name:   "no report",
		change: func(runs []Run) { runs[1].Report = nil },
		want:   []string{"syn-h002: no report"},
	},
}

func TestCompatible(t *testing.T) {
	for _, tt := range compatibleTests {
		t.Run(tt.name, func(t *testing.T) {
			runs := Synthetic(3, 1, nil)
			if tt.change != nil {
				tt.change(runs)
			}
			err := Compatible(runs)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Compatible = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compatible = nil, want an error saying %q", tt.want)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Compatible = %v\nwant it to say %q", err, s)
				}
			}
		})
	}
	if err := Compatible(nil); err == nil {
		t.Error("Compatible(nil) = nil, want an error")
	}
}

func TestChart(t *testing.T) {
	runs := Synthetic(6, 1, nil)
	setResult(t, runs, 3, readWL, setActual(0.8))
	path := filepath.Join(t.TempDir(), "charts", "fleet.svg")
	if err := Chart(Judge(runs, Recorded, report.DefaultDriveTolerance), path); err != nil {
		t.Fatalf("Chart = %v", err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Each row says its verdict, and the title counts them.
	for _, s := range []string{"<svg", readWL + ": FAIL<", ": PASS<", "fleet: ", " fail", "actual / spec", "below spec or outlier"} {
		if !strings.Contains(string(svg), s) {
			t.Errorf("chart does not contain %q", s)
		}
	}
	if err := Chart(nil, path); err == nil {
		t.Error("Chart(no cells) = nil, want an error")
	}
}

func TestSynthetic(t *testing.T) {
	runs := Synthetic(2, 24, nil)
	if got := len(runs[0].Report.Results); got != 72 {
		t.Errorf("Synthetic(2, 24) has %d results per run, want 72 (8 single + 8 × 8 scaling)", got)
	}
	if len(runs[1].Report.Drives) != 24 {
		t.Errorf("Synthetic(2, 24) has %d drives per run, want 24", len(runs[1].Report.Drives))
	}
	again := Synthetic(2, 24, nil)
	if runs[1].Report.Results[5].Actual != again[1].Report.Results[5].Actual {
		t.Error("Synthetic differs between calls, want the same figures")
	}
}

// BenchmarkJudgeFleet judges 50 hosts × 24 drives, 72 results each
// (synthetic, in memory): Compatible, then Judge.
func BenchmarkJudgeFleet(b *testing.B) {
	runs := Synthetic(50, 24, nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := Compatible(runs); err != nil {
			b.Fatal(err)
		}
		cells := Judge(runs, Recorded, report.DefaultDriveTolerance)
		if len(cells) != 8 || cells[0].Drives != 50 {
			b.Fatalf("Judge gave %d cells, first with %d drives; want 8 with 50", len(cells), cells[0].Drives)
		}
	}
}
