package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

type singleTest struct {
	actual, spec, tol float64
	provisional       string
	verdict           string
	message           string
}

var singleTests = []singleTest{
	{62_113, 2_350_000, 0, "", report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
	{2_409_894, 2_350_000, 0, "", report.Pass,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec)"},
	{2_200_000, 2_350_000, 0.1, "", report.Pass,
		"4KB Random Read: actual 2,200,000 IOPS >= spec 2,350,000 IOPS (93.62 % of spec, tolerance 10 %)"},
	{2_409_894, 2_350_000, 0, "measured with -precondition=quick; preconditioning only lowers a drive's figures, so this is not a pass", report.Inconclusive,
		"4KB Random Read: actual 2,409,894 IOPS >= spec 2,350,000 IOPS (102.55 % of spec); measured with -precondition=quick; preconditioning only lowers a drive's figures, so this is not a pass"},
	{62_113, 2_350_000, 0, "measured with -precondition=none", report.Fail,
		"4KB Random Read: actual 62,113 IOPS < spec 2,350,000 IOPS (2.64 % of spec)"},
}

func TestJudgeSingle(t *testing.T) {
	for _, tt := range singleTests {
		j := Single("4KB Random Read", specs.IOPS, tt.actual, tt.spec, tt.tol, tt.provisional)
		if j.Verdict != tt.verdict || j.Message != tt.message {
			t.Errorf("Single(%v, %v, %v, %s) = %s %q, want %s %q", tt.actual, tt.spec, tt.tol, tt.provisional, j.Verdict, j.Message, tt.verdict, tt.message)
		}
	}
}

func shares(vals ...float64) []DriveShare {
	out := make([]DriveShare, len(vals))
	for i, v := range vals {
		out[i] = DriveShare{Path: "/dev/nvme" + string(rune('0'+i)) + "n1", Serial: "S" + string(rune('0'+i)), Actual: v}
	}
	return out
}

func TestJudgeScaling(t *testing.T) {
	// The brief's 8KB Random Read at 24 drives: 27.3 M against 28.8 M.
	per := make([]float64, 24)
	for i := range per {
		per[i] = 27_300_000 / 24.0
	}
	j := Scaling("8KB Random Read", specs.IOPS, shares(per...), 24*1_200_000, 1_200_000, 0.10, "")
	assert.Equal(t, report.Pass, j.Verdict)
	assert.InDelta(t, 0.948, j.Ratio, 0.0005)
	assert.Contains(t, j.Message, "below linear")
	assert.Zero(t, j.Spread)

	// One drive of four 20 % low: named, and below the single-drive spec.
	j = Scaling("4KB Random Read", specs.IOPS, shares(2.4e6, 2.4e6, 1.92e6, 2.4e6), 4*2_350_000, 2_350_000, 0.10, "")
	assert.Equal(t, report.Fail, j.Verdict)
	assert.Contains(t, j.Message, "drive /dev/nvme2n1 (serial S2) is 20.0 % below the median 2,400,000 IOPS")
	assert.NotContains(t, j.Message, "nvme1n1")
	assert.Equal(t, report.Fail, j.PerDrive[2].Verdict)
	assert.Equal(t, report.Pass, j.PerDrive[0].Verdict)
	assert.InDelta(t, 0.48/2.4, j.Spread, 1e-9) // (max − min) / median

	// Total short although each drive passes.
	j = Scaling("4KB Random Read", specs.IOPS, shares(1e6, 1e6), 2*1e6*1.2, 1e6, 0.10, "")
	assert.Equal(t, report.Fail, j.Verdict)
	assert.True(t, strings.HasPrefix(j.Message, "4KB Random Read on 2 drives: total 2,000,000 IOPS < expected 2,400,000 IOPS (83.33 % of expected"), j.Message)
}

// The judge computes the spread, median and outliers of a scaling step
// over the drives without an error (a drive whose jobs failed has no
// figure to compare); the report renders them as given.
func TestJudgeScalingStatistics(t *testing.T) {
	share := func(actuals ...float64) []DriveShare {
		var out []DriveShare
		for i, a := range actuals {
			out = append(out, DriveShare{Path: "/dev/d" + string(rune('a'+i)), Actual: a})
		}
		return out
	}
	tests := []struct {
		name     string
		shares   []DriveShare
		spread   float64
		median   float64
		outliers []string
	}{
		{"equal", share(100, 100, 100), 0, 100, nil},
		{"spread", share(90, 100, 110), 0.2, 100, nil},
		{"one slow", share(100, 100, 89), 11.0 / 100, 100, []string{"/dev/dc"}},
		{"just inside", share(100, 100, 91), 9.0 / 100, 100, nil},
		{"two slow", share(100, 80, 100, 100, 50), 50.0 / 100, 100, []string{"/dev/db", "/dev/de"}},
		{"a drive with an error is left out", append(share(90, 110), DriveShare{Path: "/dev/x", Err: "io error"}), 0.2, 100, nil},
	}
	for _, tt := range tests {
		sj := Scaling("W", specs.IOPS, tt.shares, 0, 1, 0.1, "")
		if math.Abs(sj.Spread-tt.spread) > 1e-12 || sj.Median != tt.median {
			t.Errorf("%s: spread %v median %v, want %v and %v", tt.name, sj.Spread, sj.Median, tt.spread, tt.median)
		}
		var out []string
		for _, d := range sj.PerDrive {
			if d.Outlier {
				out = append(out, d.Path)
			}
		}
		if !slices.Equal(out, tt.outliers) {
			t.Errorf("%s: outliers %v, want %v", tt.name, out, tt.outliers)
		}
	}
}

// A latency workload passes at or below its figure.
func TestSingleLatency(t *testing.T) {
	j := Single("QD1 Read", specs.LatUS, 80, 90, 0, "")
	assert.Equal(t, report.Pass, j.Verdict, j.Message)
	assert.Equal(t, "QD1 Read: actual 80 µs <= spec 90 µs (88.89 % of spec)", j.Message)
	j = Single("QD1 Read", specs.LatUS, 99, 90, 0.05, "")
	assert.Equal(t, report.Fail, j.Verdict)
	assert.Equal(t, "QD1 Read: actual 99 µs > spec 90 µs (110.00 % of spec, tolerance 5 %)", j.Message)
	j = Single("QD1 Read", specs.LatUS, 80, 90, 0, "measured with -precondition=quick")
	assert.Equal(t, report.Inconclusive, j.Verdict)
}

func TestQoS(t *testing.T) {
	limits := []specs.LatencyLimit{
		{Dir: "read", Percentile: 99, Limit: 250 * time.Microsecond, Key: "read_p99_us"},
		{Dir: "read", Percentile: 99.99, Limit: 2 * time.Millisecond, Key: "read_p99_99_us"},
		{Dir: "write", Percentile: 100, Limit: time.Millisecond, Key: "write_max_us"},
	}
	read := &report.Latency{P50: 80, P99: 240, P999: 900, P9999: 2310, P99999: 2400, Max: 2500}
	got := QoS(limits, read, nil)
	require.Len(t, got, 3)
	assert.Equal(t, report.QoSCheck{Key: "read_p99_us", LimitUs: 250, Actual: 240, Verdict: report.Pass}, got[0])
	assert.Equal(t, report.QoSCheck{Key: "read_p99_99_us", LimitUs: 2000, Actual: 2310, Verdict: report.Fail}, got[1])
	assert.Equal(t, report.Fail, got[2].Verdict, "a limit on a direction without bins is not shown to be met")
	assert.Equal(t, "p99.99", PercentileName("read_p99_99_us"))
	assert.Equal(t, "p99.999", PercentileName("write_p99_999_us"))
	assert.Equal(t, "p50", PercentileName("read_p50_us"))
	assert.Equal(t, "max", PercentileName("write_max_us"))
}

// Latency reads the merged bins' percentiles in µs; no bins, no latency.
func TestLatency(t *testing.T) {
	assert.Nil(t, Latency(fiojob.Direction{}))
	d := fiojob.Direction{Bins: map[int64]int64{1000: 98, 5000: 1, 20000: 1}}
	l := Latency(d)
	require.NotNil(t, l)
	assert.Equal(t, 1.0, l.P50)
	assert.Equal(t, 5.0, l.P99)
	assert.Equal(t, 20.0, l.Max)
}

func TestNotSteady(t *testing.T) {
	ok := report.Steady{Step: 3, Kind: "precondition", Twin: "4KB Random Write", Drive: "/dev/a", Attained: true}
	assert.Empty(t, NotSteady([]report.Steady{ok}))
	bad := report.Steady{Step: 9, Kind: "top-up", Twin: "4KB Random Write", Drive: "/dev/b", BoundSeconds: 120,
		Mean: 150000, RangePct: 25, RangeLimitPct: 20, ExcursionPct: 4, ExcursionLimitPct: 10}
	got := NotSteady([]report.Steady{ok, bad})
	assert.Contains(t, got, "/dev/b did not reach steady state in step 9 (4KB Random Write, top-up after idling) within 2m0s")
	assert.Contains(t, got, "window mean 150,000 IOPS, range 25.0 % (limit 20 %), excursion 4.0 % (limit 10 %)")
	bad.Note = "3 rounds, fewer than the 5-round window"
	assert.Contains(t, NotSteady([]report.Steady{bad}), ": 3 rounds, fewer than the 5-round window")
}

// HostBound blames the host when either the CPUs fio was allowed or fio's
// own jobs used at least 95 % of them; the figure: 8 jobs pinned to
// one CPU reporting usr + sys of 99.6 % of it.
func TestHostBound(t *testing.T) {
	for _, tt := range []struct {
		h    *report.HostCPU
		want string
	}{
		{HostCPU("0", 1, -1, 0.996*60, 60, 8, nil),
			"fio's 8 jobs on CPUs 0 (1) were 100 % busy (their own user and system time): the host, not the drive, bounds this figure; give the drive more CPUs or a faster host"},
		{HostCPU("0-1", 2, 0.97, 1.19*60, 60, 8, nil),
			"fio's 8 jobs on CPUs 0-1 (2) were 97 % busy (the CPUs' time, fio's jobs 60 % of it): the host, not the drive, bounds this figure; give the drive more CPUs or a faster host"},
		{HostCPU("0-1", 2, 0.94, 1.19*60, 60, 8, nil), ""},
		{nil, ""},
	} {
		if got := HostBound(tt.h); got != tt.want {
			t.Errorf("HostBound(%+v) = %q, want %q", tt.h, got, tt.want)
		}
	}
	if h := HostCPU("0", 0, 0.5, 1, 1, 1, nil); h != nil {
		t.Errorf("HostCPU with no CPUs = %+v, want nil", h)
	}
}

// At 24 drives a reason several drives share is said once, with the count
// and the drives in short, and the message stays a few lines long.
func TestTwentyFourDrives(t *testing.T) {
	var recs []report.Steady
	for i := 16; i < 40; i++ {
		recs = append(recs, report.Steady{Step: 20, Kind: "precondition", Twin: "4KB Random Write", Drive: fmt.Sprintf("/dev/loop%d", i),
			BoundSeconds: 20, Note: "round 6 was not measured: too few samples of it"})
	}
	got := NotSteady(recs)
	assert.Equal(t, "24 of 24 drives did not reach steady state in step 20 (4KB Random Write) within 20s: round 6 was not measured: too few samples of it: loop16–loop39"+
		"; the figure proves nothing: raise random_runtime (or topup_runtime) and rerun", got)

	// Windows that missed the rule, each with its figures: one reason
	// with the lowest and highest of each.
	recs = recs[:0]
	for i := 0; i < 24; i++ {
		recs = append(recs, report.Steady{Step: 15, Kind: "precondition", Twin: "8KB Random Write", Drive: fmt.Sprintf("/dev/loop%d", i),
			BoundSeconds: 20, Mean: float64(2000 + 10*i), RangePct: float64(30 + i), RangeLimitPct: 20, ExcursionPct: float64(4 + i), ExcursionLimitPct: 10})
	}
	assert.Equal(t, "24 of 24 drives did not reach steady state in step 15 (8KB Random Write) within 20s: window means 2,000–2,230 IOPS, "+
		"ranges 30.0–53.0 % (limit 20 %), excursions 4.0–27.0 % (limit 10 %): loop0–loop23; the figure proves nothing: raise random_runtime (or topup_runtime) and rerun",
		NotSteady(recs))

	// Ten of 24 drives more than 10 % below the median, one of them far.
	per := make([]float64, 24)
	for i := range per {
		per[i] = 17_371
		if i%2 == 0 && i < 20 {
			per[i] = 15_000
		}
	}
	per[14] = 17_371 * (1 - 0.349)
	j := Scaling("4KB Random Write", specs.IOPS, numbered(per...), 24, 1, 0.10, "")
	assert.Equal(t, report.Pass, j.Verdict)
	assert.Contains(t, j.Message, "10 of 24 drives more than 10 % below the median 17,371 IOPS, lowest /dev/nvme14n1 (serial S14) at −34.9 %")
	assert.NotContains(t, j.Message, "nvme0n1", "one drive named, the lowest")
	assert.Less(t, len(j.Message), 300)

	// Every drive below spec, and three with the same job error.
	sh := numbered(per...)
	for i := 3; i < 6; i++ {
		sh[i].Err = "io_u error on file: Input/output error"
	}
	j = Scaling("4KB Random Write", specs.IOPS, sh, 24*20_000, 20_000, 0.10, "")
	assert.Equal(t, report.Fail, j.Verdict)
	assert.Contains(t, j.Message, "24 of 24 drives below spec 20,000 IOPS, lowest /dev/nvme14n1 (serial S14) at 11,309 IOPS (56.54 % of spec)")
	assert.Contains(t, j.Message, "3 of 24 drives: io_u error on file: Input/output error: nvme3n1–nvme5n1")
	assert.Less(t, len(j.Message), 450)
}

// numbered is shares with drive numbers past 9: /dev/nvme14n1, serial S14.
func numbered(vals ...float64) []DriveShare {
	out := make([]DriveShare, len(vals))
	for i, v := range vals {
		out[i] = DriveShare{Path: fmt.Sprintf("/dev/nvme%dn1", i), Serial: fmt.Sprintf("S%d", i), Actual: v}
	}
	return out
}

// Why a scaling cell that met its figure is not a pass comes right after
// its verdict row, before the drives below the median, so that a message
// cut short (a JUnit message) still says it.
func TestScalingProvisionalFollowsTheRow(t *testing.T) {
	per := make([]float64, 24)
	for i := range per {
		per[i] = 2_000
		if i%2 == 0 {
			per[i] = 1_000
		}
	}
	j := Scaling("4KB Random Write", specs.IOPS, numbered(per...), 38_000, 1, 0.10, "measured with -precondition=quick")
	assert.Equal(t, report.Inconclusive, j.Verdict)
	row, rest, _ := strings.Cut(j.Message, "; ")
	assert.Contains(t, row, "total 36,000 IOPS >= expected 38,000 IOPS")
	assert.True(t, strings.HasPrefix(rest, "measured with -precondition=quick; below linear; 12 of 24 drives more than 10 % below the median"), rest)
}
