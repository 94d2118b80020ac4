package specs

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drivequal/drivequal/fiojob"
)

// wantErr is one problem a bad spec must report: on Line, with Text in the
// message (Where and Msg, as Error prints them).
type wantErr struct {
	Line int
	Text string
}

type badTest struct {
	file string // under testdata/bad, without ".toml"
	want []wantErr
}

var badTests = []badTest{
	{"typo", []wantErr{
		{8, `workload "4KB Random Read": missing required key "iodepth"`},
		{14, `workload "4KB Random Read": unknown key "iodeph"`},
	}},
	{"syntax", []wantErr{{18, "syntax error"}}},
	{"missing_rw", []wantErr{{16, `workload "4KB Random Write": missing required key "rw"`}}},
	{"missing_model", []wantErr{{0, `missing required key "model"`}}},
	{"missing_runtime", []wantErr{{5, `method: missing required key "runtime"`}}},
	{"capacity_unknown_workload", []wantErr{{30, `capacity "1.92TB": spec."8KB Random Read": unknown workload "8KB Random Read"`}}},
	{"capacity_empty_spec", []wantErr{{27, `capacity "1.92TB": spec table is empty`}}},
	{"capacity_no_spec", []wantErr{{24, `capacity "1.92TB": missing required key "spec"`}}},
	{"capacity_bytes", []wantErr{{26, `capacity "1.92TB": bytes must be >= 1, got 0`}}},
	{"spec_value", []wantErr{{29, `capacity "1.92TB": spec."4KB Random Write" must be > 0`}}},
	{"load_keys", []wantErr{
		{15, `workload "Mix": bssplit "4k/50:8k/40": shares add up to 90, not 100`},
		{16, `workload "Mix": thinktime "1500ns" must be whole microseconds`},
		{17, `workload "Mix": buffer_compress_percentage is the written data's compressibility; workload rw "randread" writes no data`},
		{19, `workload "Mix": sweep_rate_iops 2001 is not a multiple of numjobs = 8`},
		{26, `workload "Trim": numjobs = 2: rw "randtrim" trims, and trims from more than one job fail (EBUSY)`},
		{28, `workload "Trim": bssplit "4k/50:1000/50": size "1000" is 1000 bytes, not a multiple of 512`},
		{29, `workload "Trim": rate_iops must be >= 1, got 0`},
		{30, `workload "Trim": buffer_compress_percentage is the written data's compressibility; workload rw "randtrim" writes no data`},
		{39, `workload "Rated": bssplit "4k/60,8k/40": per-direction lists (commas) are not supported`},
		{41, `workload "Rated": buffer_compress_percentage must be between 0 and 100, got 101`},
		{42, `workload "Rated": sweep_rate_iops sets each point's rate itself: remove rate_iops`},
		{51, `workload "Swept": sweep_iodepth must be strictly ascending, got 2 after 4`},
		{52, `workload "Swept": thinktime must be a duration string like "60s", got integer 5`},
		{61, `workload "Empty": sweep_rate_iops must be a list of 1 to 32 points`},
		{77, `capacity "1.92TB": at_latency."Mix": set exactly one latency bound (like read_p99_99_us = 2000), got 2 (read_p99_us, read_p99_99_us)`},
		{81, `capacity "1.92TB": at_latency."Trim": workload "Trim" has no sweep_iodepth or sweep_rate_iops`},
		{84, `capacity "1.92TB": at_latency."Rated": workload "Rated" has no sweep_iodepth`},
		{87, `capacity "1.92TB": at_latency."Swept": workload "Swept" has no sweep_iodepth`},
		{89, `capacity "1.92TB": at_latency."Nope": unknown workload "Nope"`},
		{93, `capacity "1.92TB": at_latency."Good": write_p99_us: workload "Good" does not write`},
		{94, `capacity "1.92TB": at_latency."Good": min_iops must be an IOPS > 0, got -5`},
	}},
	{"trim_write_mix", []wantErr{
		{10, `workload "Mix": rw "trimwrite" mixes trims and writes, which fail now and then (EBUSY) on a drive the run holds exclusively; use rw = "randtrim" and a separate write workload`},
		{18, `workload "Random Mix": rw "randtrimwrite" mixes trims and writes`},
	}},
	{"rw_unknown", []wantErr{{10, `workload "4KB Random Read": rw "randomread" is not one of fio's patterns`}}},
	{"bs_unparsable", []wantErr{{11, `workload "4KB Random Read": bs "4q": unknown size suffix "q"`}}},
	{"bs_not_512", []wantErr{{11, `workload "4KB Random Read": bs must be > 0 and a multiple of 512 bytes, got 1000`}}},
	{"iodepth_zero", []wantErr{{12, `workload "4KB Random Read": iodepth must be >= 1, got 0`}}},
	{"iodepth_type", []wantErr{{12, `workload "4KB Random Read": iodepth must be an integer, got string "64"`}}},
	{"numjobs_zero", []wantErr{{21, `workload "4KB Random Write": numjobs must be >= 1, got -1`}}},
	{"rwmixread_range", []wantErr{{19, `workload "4KB Random Write": rwmixread must be between 0 and 100, got 170`}}},
	{"rwmixread_pure", []wantErr{{11, `workload "4KB Random Read": rwmixread is only for mixed patterns`}}},
	{"metric_bad", []wantErr{{14, `workload "4KB Random Read": metric "IOPS" is not one of iops, MBps`}}},
	{"method_tolerance", []wantErr{{7, `method: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got 1`}}},
	{"method_tolerance_percent", []wantErr{{7, `method: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got 5; for 5 % write 0.05`}}},
	{"scaling_tolerance", []wantErr{{34, `scaling: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got -0.1`}}},
	{"fleet_tolerance", []wantErr{{33, `fleet: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got 1`}}},
	{"baseline_tolerance", []wantErr{{33, `baseline: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got -0.05`}}},
	{"baseline_alpha", []wantErr{{33, `baseline: alpha must be in (0, 1), got 0`}}},
	{"lot_coverage", []wantErr{{33, `lot: coverage must be in (0, 1) (0.95 is 95 %), got 95`}, {34, `lot: confidence must be in (0, 1) (0.95 is 95 %), got 1`}}},
	{"lot_missing", []wantErr{{31, `lot: missing required key "confidence"`}, {33, `lot: unknown key "confidense"; did you mean "confidence"?`}}},
	{"lot_method", []wantErr{{35, `lot: method "nonparametric" is not one of normal, distribution-free`}}},
	{"firmware_keys", []wantErr{{33, `firmware: action "activate" is not one of activate-now, replace-at-reset`}, {34, `firmware: slot must be`}, {35, `firmware: max_stall "one second" is not a duration`}}},
	{"firmware_missing", []wantErr{{22, `firmware: missing required key "max_stall"`}}},
	{"purge_verify", []wantErr{{34, `purge: verify "partial" is not one of none, sample, full`}}},
	{"lot_not_table", []wantErr{{4, `lot must be a table ([lot]), got float 0.95`}}},
	{"fleet_not_table", []wantErr{{4, `fleet must be a table ([fleet]), got float 0.2`}}},
	{"runtime_bad", []wantErr{{6, `method: runtime "60 seconds" is not a duration`}}},
	{"runtime_zero", []wantErr{{15, `workload "4KB Random Read": runtime must be > 0`}}},
	{"ramp_negative", []wantErr{{7, `method: ramp_time must be >= 0`}}},
	{"duplicate_workload", []wantErr{
		{16, `workload "4KB Random Read": duplicate workload name (first at line 8)`},
		// The table's "4KB Random Write" now names no workload.
		{29, `capacity "1.92TB": spec."4KB Random Write": unknown workload`},
	}},
	{"duplicate_capacity", []wantErr{{31, `capacity "1.92TB": duplicate capacity name (first at line 24)`}}},
	{"subtest_collision", []wantErr{{16, `workload "4KB_Random_Read": name gives the same subtest name "4KB_Random_Read" as workload "4KB Random Read"`}}},
	{"scaling_capacity_unknown", []wantErr{{32, `scaling: capacity "1.92 TB" is not a capacity of this spec ("1.92TB")`}}},
	{"scaling_drives_order", []wantErr{{33, `scaling: drives must be strictly ascending, got 2 after 4`}}},
	{"scaling_drives_empty", []wantErr{{33, `scaling: drives must list at least one drive count`}}},
	{"scaling_drives_zero", []wantErr{{33, `scaling: drives: drive count 0 must be >= 1`}}},
	{"scaling_baseline", []wantErr{{34, `scaling: baseline "measured" is not one of spec, single`}}},
	{"override_unknown", []wantErr{{35, `scaling override "8KB Random Read": override names unknown workload "8KB Random Read"`}}},
	{"purge_bad", []wantErr{{32, `precondition: purge "secure-erase" is not one of format, sanitize, discard, none`}}},
	{"fill_passes_negative", []wantErr{{32, `precondition: fill_passes must be >= 0, got -1`}}},
	{"steadystate_bad", []wantErr{{32, `precondition: steadystate "lat:5%" is not a fio criterion`}}},
	{"steady_rule", []wantErr{
		{32, `precondition: steady_window must be`},
		{33, `precondition: steady_range must be a fraction of the window mean > 0`},
		{34, `precondition: steady_slope must be a fraction`},
	}},
	{"health_range", []wantErr{
		{32, `health: percent_used_max must be between 0 and 255, got 300`},
		{33, `health: media_errors_max_increase must be >= 0, got -1`},
		{34, `health: spare_margin must be between 0 and 100, got -1`},
		{35, `health: temperature_margin_c must be between 0 and 150, got 200`},
	}},
	{"health_firmware", []wantErr{
		{32, `health: firmware: a firmware revision must not be empty`},
		{32, `health: firmware: firmware revision " GDC7102" has leading or trailing spaces`},
		{32, `health: firmware: firmware revision "GDC7102Q-LONG" is longer than the 8 characters of id-ctrl's fr field`},
	}},
	{"health_firmware_type", []wantErr{{32, `health: firmware must be an array of firmware revisions like ["GDC7102Q"], got string "GDC7102Q"`}}},
	{"health_thermal", []wantErr{{32, `health: thermal_throttle "fail" is not one of inconclusive, ignore`}}},
	{"health_not_table", []wantErr{{4, `health must be a table ([health]), got boolean true`}}},
	{"qos_unknown_workload", []wantErr{{30, `capacity "1.92TB": qos."8KB Random Read": unknown workload "8KB Random Read"`}}},
	{"qos_not_measured", []wantErr{{29, `capacity "1.92TB": qos."4KB Random Write": workload "4KB Random Write" has no spec value at this capacity, so it is not measured here`}}},
	{"qos_direction", []wantErr{
		{32, `capacity "1.92TB": qos."4KB Random Read": write_p99_us: workload "4KB Random Read" does not write (rw "randread"); only read_ limits apply`},
		{34, `capacity "1.92TB": qos."4KB Random Write": read_max_us: workload "4KB Random Write" does not read (rw "randwrite"); only write_ limits apply`},
	}},
	{"qos_value", []wantErr{
		{31, `capacity "1.92TB": qos."4KB Random Read": read_p99_us must be a latency in microseconds > 0, got 0`},
		{32, `capacity "1.92TB": qos."4KB Random Read": read_p99_99_us must be a latency in microseconds > 0, got -5`},
	}},
	{"qos_typo", []wantErr{{32, `capacity "1.92TB": qos."4KB Random Read": unknown key "read_p99_9us"; did you mean "read_p99_9_us"?`}}},
	{"qos_dotted", []wantErr{{32, `capacity "1.92TB": qos."4KB Random Read": unknown key "read_p99.9_us": TOML reads the dots in read_p99.9_us as tables; did you mean "read_p99_9_us"?`}}},
	{"workload_misspelt", []wantErr{
		{30, `capacity "1.92TB": spec."4KB Random Reed": unknown workload "4KB Random Reed"; did you mean "4KB Random Read"?`},
		{31, `capacity "1.92TB": qos."4KB_Random_Read": unknown workload "4KB_Random_Read"; did you mean "4KB Random Read"?`},
		{37, `scaling override "4kb random write": override names unknown workload "4kb random write"; did you mean "4KB Random Write"?`},
	}},
	{"qos_order", []wantErr{{32, `capacity "1.92TB": qos."4KB Random Read": read_p99_99_us = 200 µs is below read_p99_us = 250 µs: a higher percentile's limit cannot be lower`}}},
	{"qos_empty", []wantErr{{30, `capacity "1.92TB": qos."4KB Random Read": no limits`}}},
	{"qos_not_table", []wantErr{{31, `capacity "1.92TB": qos."4KB Random Read": limits must be a table ([capacity.qos."4KB Random Read"]), got integer 250`}}},
	{"precondition_unknown", []wantErr{{15, `workload "4KB Random Read": precondition names unknown workload "4KB Random Writes"; did you mean "4KB Random Write"?`}}},
	{"precondition_loop", []wantErr{
		{15, `workload "4KB Random Read": precondition loops: "4KB Random Read" -> "4KB Random Write" -> "4KB Random Read"`},
		{20, `workload "4KB Random Write": precondition loops: "4KB Random Write" -> "4KB Random Read" -> "4KB Random Write"`},
	}},
	{"unknown_table", []wantErr{
		{0, `method: missing required key "runtime"`},
		{5, `unknown key "methd"; did you mean "method"?`},
	}},
	{"method_not_table", []wantErr{{5, `method must be a table ([method]), got string "60s"`}}},
	{"no_workloads", []wantErr{
		{0, `no workloads`},
		{12, `capacity "1.92TB": spec."4KB Random Read": unknown workload`},
	}},
	{"several", []wantErr{
		{0, `missing required key "source"`},
		{5, `method: runtime "1 minute" is not a duration`},
		{6, `method: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got 1.5`},
		{9, `precondition: purge "erase" is not one of`},
		{11, `workload "4KB Random Read": missing required key "iodepth"`},
		{13, `workload "4KB Random Read": rw "randtrimread" is not one of fio's patterns`},
		{14, `workload "4KB Random Read": bs must be > 0 and a multiple of 512 bytes, got 4000`},
		{15, `workload "4KB Random Read": unknown key "iodeph"`},
		{16, `workload "4KB Random Read": numjobs must be >= 1, got 0`},
		{17, `workload "4KB Random Read": metric "IOPS" is not one of iops, MBps`},
		{19, `workload "4KB Random Read": duplicate workload name (first at line 11)`},
		{26, `workload "4KB Random Read": rwmixread is only for mixed patterns`},
		{32, `capacity "1.92TB": spec."4KB Random Reed": unknown workload "4KB Random Reed"`},
		{37, `capacity "3.84TB": spec table is empty`},
		{40, `scaling: capacity "7.68TB" is not a capacity of this spec ("1.92TB", "3.84TB")`},
		{41, `scaling: drives must be strictly ascending, got 2 after 2`},
		{42, `scaling: tolerance must be a fraction in [0, 1) (0.05 is 5 %), got 1`},
		{44, `scaling override "8KB Random Read": override names unknown workload "8KB Random Read"`},
	}},
}

func TestLoadBad(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, tt := range badTests {
		tested[filepath.Join("testdata", "bad", tt.file+".toml")] = true
		t.Run(tt.file, func(t *testing.T) {
			file := filepath.Join("testdata", "bad", tt.file+".toml")
			s, err := Load(file)
			if err == nil {
				t.Fatalf("Load(%q) = %+v, nil; want an error", file, s)
			}
			if s != nil {
				t.Errorf("Load(%q) returned a spec with error %v", file, err)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Load(%q) error is %T, want ErrorList: %v", file, err, err)
			}
			for _, w := range tt.want {
				prefix := file + ": "
				if w.Line > 0 {
					prefix = fmt.Sprintf("%s:%d: ", file, w.Line)
				}
				found := false
				for _, e := range list {
					if e.Line == w.Line && strings.HasPrefix(e.Error(), prefix) && strings.Contains(e.Error(), w.Text) {
						found = true
					}
				}
				if !found {
					t.Errorf("Load(%q) errors lack %q with %q; got:\n%v", file, prefix, w.Text, err)
				}
			}
			if len(list) != len(tt.want) {
				t.Errorf("Load(%q) reported %d problems, want %d:\n%v", file, len(list), len(tt.want), err)
			}
			for i := 1; i < len(list); i++ {
				if list[i].Line < list[i-1].Line {
					t.Errorf("Load(%q) errors not sorted by line:\n%v", file, err)
					break
				}
			}
		})
	}
	for _, f := range files {
		if !tested[f] {
			t.Errorf("%s has no case in badTests", f)
		}
	}
}

func TestLoadGood(t *testing.T) {
	files, err := filepath.Glob("testdata/good/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no files in testdata/good")
	}
	for _, file := range files {
		s, err := Load(file)
		if err != nil {
			t.Errorf("Load(%q): %v", file, err)
			continue
		}
		if err := checkSpec(s); err != nil {
			t.Errorf("Load(%q) = spec breaking an invariant: %v", file, err)
		}
		if want := strings.TrimSuffix(filepath.Base(file), ".toml"); s.Name != want || s.File != file {
			t.Errorf("Load(%q) Name, File = %q, %q; want %q, %q", file, s.Name, s.File, want, file)
		}
	}
}

// TestParseDefaults checks every default on a spec with only required keys.
func TestParseDefaults(t *testing.T) {
	s, err := Load("testdata/good/minimal.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Name:   "minimal",
		File:   "testdata/good/minimal.toml",
		Model:  "Minimal",
		Source: "drivequal test data",
		Method: Method{Runtime: 60 * time.Second, IOEngine: "libaio", Direct: true},
		Precondition: Precondition{
			Purge:         "format",
			FillPasses:    2,
			RandomRuntime: 30 * time.Minute,
			SteadyRound:   DefaultSteadyRound, SteadyWindow: DefaultSteadyWindow,
			SteadyRange: DefaultSteadyRange, SteadySlope: DefaultSteadySlope,
			IdleLimit: DefaultIdleLimit, TopUpRuntime: DefaultTopUpRuntime,
		},
		Health: Health{PercentUsedMax: 100, ThermalThrottle: "inconclusive", OCP: OCPHealth{CapacitorHealthMin: 10}},
		Workloads: []Workload{{
			Name: "4KB Random Read", RW: "randread", BS: 4096, IODepth: 64, NumJobs: 8,
			Metric: IOPS, RWMixRead: -1, Line: 8,
		}},
		Capacities: []Capacity{{
			Name: "1.92TB", Bytes: 1_920_383_410_176,
			Spec: map[string]float64{"4KB Random Read": 2_350_000},
			Line: 16,
		}},
		Fleet:    Fleet{Tolerance: DefaultScalingTolerance},
		Baseline: Baseline{Tolerance: DefaultBaselineTolerance, LatencyTolerance: DefaultBaselineTolerance, Alpha: DefaultBaselineAlpha},
		Purge:    Purge{Verify: DefaultPurgeVerify},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreFields(Spec{}, "Text")); diff != "" {
		t.Errorf("Load(minimal.toml) mismatch (-want +got):\n%s", diff)
	}
}

// TestParseFull checks every key set to something other than its default.
func TestParseFull(t *testing.T) {
	s, err := Load("testdata/good/full.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Spec{
		Name:   "full",
		File:   "testdata/good/full.toml",
		Model:  "Full",
		Source: "drivequal test data",
		Method: Method{
			Runtime: 90 * time.Second, RampTime: 5 * time.Second,
			IOEngine: "io_uring", Direct: false, Tolerance: 0.05,
		},
		Precondition: Precondition{
			Purge:               "sanitize",
			FillPasses:          0,
			RandomRuntime:       time.Hour,
			SteadyState:         "iops_slope:0.3%",
			SteadyStateDuration: 10 * time.Minute,
			SteadyRound:         30 * time.Second,
			SteadyWindow:        4,
			SteadyRange:         0.25,
			SteadySlope:         0.05,
			IdleLimit:           10 * time.Minute,
			TopUpRuntime:        3 * time.Minute,
		},
		Health: Health{
			PercentUsedMax:           90,
			Firmware:                 []string{"GDC7102Q", "GDC7201Q"},
			MediaErrorsMaxIncrease:   1,
			ErrLogEntriesMaxIncrease: 16,
			SpareMargin:              5,
			TemperatureMarginC:       3,
			ThermalThrottle:          "ignore",
			OCP:                      OCPHealth{CapacitorHealthMin: 10},
		},
		Workloads: []Workload{
			{Name: "Seq/Read 1MiB", RW: "read", BS: 1 << 20, IODepth: 32, NumJobs: 2,
				Metric: MBps, RWMixRead: -1, Runtime: 2 * time.Minute, Line: 34},
			{Name: "Seq Write 1MiB", RW: "write", BS: 1 << 20, IODepth: 32, NumJobs: 2,
				Metric: MBps, RWMixRead: -1, Line: 43},
			{Name: "Mixed 512", RW: "readwrite", BS: 512, IODepth: 1, NumJobs: 1,
				Metric: IOPS, RWMixRead: 0, Precondition: "Seq/Read 1MiB", Line: 51},
			{Name: "Lat 4k QD1", RW: "randrw", BS: 4096, IODepth: 1, NumJobs: 1,
				Metric: LatUS, RWMixRead: -1, Line: 61},
		},
		Capacities: []Capacity{
			{Name: "800GB", Bytes: 800_166_076_416, Line: 69, Spec: map[string]float64{
				"Seq/Read 1MiB": 7000.5, "Seq Write 1MiB": 3500, "Mixed 512": 1e5, "Lat 4k QD1": 85.5},
				QoS: map[string][]LatencyLimit{
					"Seq/Read 1MiB": {
						{"read", 99, 2 * time.Millisecond, "read_p99_us"},
						{"read", 100, 20 * time.Millisecond, "read_max_us"},
					},
					"Mixed 512": {{"write", 50, 12500 * time.Nanosecond, "write_p50_us"}},
					"Lat 4k QD1": {
						{"read", 50, 80 * time.Microsecond, "read_p50_us"},
						{"read", 99, 150 * time.Microsecond, "read_p99_us"},
						{"read", 99.9, 250 * time.Microsecond, "read_p99_9_us"},
						{"read", 99.99, 250 * time.Microsecond, "read_p99_99_us"},
						{"read", 99.999, time.Millisecond, "read_p99_999_us"},
						{"read", 100, 5 * time.Millisecond, "read_max_us"},
						{"write", 50, 20 * time.Microsecond, "write_p50_us"},
						{"write", 99, 40 * time.Microsecond, "write_p99_us"},
						{"write", 99.9, 100 * time.Microsecond, "write_p99_9_us"},
						{"write", 99.99, 400 * time.Microsecond, "write_p99_99_us"},
						{"write", 99.999, 2 * time.Millisecond, "write_p99_999_us"},
						{"write", 100, 10 * time.Millisecond, "write_max_us"},
					},
				}},
			{Name: "1.6TB", Bytes: 1_600_321_314_816, Line: 96, Spec: map[string]float64{
				"Seq/Read 1MiB": 7000}},
		},
		Scaling: Scaling{
			Capacity: "1.6TB", Drives: []int{2, 3}, Baseline: "single", Tolerance: 0,
			Override: map[string]Override{
				"Seq/Read 1MiB": {NumJobs: 4},
				"Mixed 512":     {IODepth: 8, NumJobs: 3},
			},
		},
		Fleet:    Fleet{Tolerance: 0.25},
		Baseline: Baseline{Tolerance: 0.03, LatencyTolerance: 0.25, Alpha: 0.01},
		Lot:      &Lot{Coverage: 0.99, Confidence: 0.90, Method: LotDistributionFree},
		Purge:    Purge{Verify: PurgeVerifyFull},
		Firmware: &Firmware{Action: FirmwareReplaceAtReset, Slot: 2, MaxStall: time.Second},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreFields(Spec{}, "Text")); diff != "" {
		t.Errorf("Load(full.toml) mismatch (-want +got):\n%s", diff)
	}
}

// TestParseInline checks a spec written with inline tables and dotted keys.
func TestParseInline(t *testing.T) {
	s, err := Load("testdata/good/inline.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Workload{
		{Name: "R", RW: "randread", BS: 8192, IODepth: 4, NumJobs: 1, Metric: IOPS, RWMixRead: -1, Line: 8},
		{Name: "W", RW: "randwrite", BS: 8192, IODepth: 4, NumJobs: 1, Metric: IOPS, RWMixRead: -1, Line: 9},
	}
	if diff := cmp.Diff(want, s.Workloads); diff != "" {
		t.Errorf("inline.toml workloads mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"R": 100, "W": 50.5}, s.Capacities[0].Spec); diff != "" {
		t.Errorf("inline.toml capacity spec mismatch (-want +got):\n%s", diff)
	}
	wantQoS := map[string][]LatencyLimit{
		"R": {{"read", 99, 100 * time.Microsecond, "read_p99_us"}, {"read", 100, 10 * time.Millisecond, "read_max_us"}},
		"W": {{"write", 99.99, 800 * time.Microsecond, "write_p99_99_us"}},
	}
	if diff := cmp.Diff(wantQoS, s.Capacities[0].QoS); diff != "" {
		t.Errorf("inline.toml capacity qos mismatch (-want +got):\n%s", diff)
	}
	if want := (Health{PercentUsedMax: 100, SpareMargin: 10, ThermalThrottle: "inconclusive", OCP: OCPHealth{CapacitorHealthMin: 10}}); !cmp.Equal(want, s.Health) {
		t.Errorf("inline.toml health = %+v, want %+v (an empty firmware list is nil)", s.Health, want)
	}
	if got := s.Scaling.Override["R"]; got != (Override{IODepth: 2}) {
		t.Errorf("inline.toml override R = %+v, want iodepth 2", got)
	}
}

// TestParseInlineErrors checks lines of problems in inline tables.
func TestParseInlineErrors(t *testing.T) {
	data := []byte(`model = "x"
source = "y"
method = { runtime = "1s" }
workload = [
  { name = "R", rw = "randread", bs = "4k", iodepth = 1, numjobs = 1, metric = "iops" },
  { name = "W", rw = "randwrite", bs = "4k", iodepth = 0, numjobs = 1, metric = "iops" },
]
[[capacity]]
name = "c"
bytes = 1
spec = { R = 1, W = 1, X = 1 }
`)
	_, err := Parse("inline.toml", data)
	want := "inline.toml:6: workload \"W\": iodepth must be >= 1, got 0\n" +
		"inline.toml:11: capacity \"c\": spec.\"X\": unknown workload \"X\""
	if err == nil || err.Error() != want {
		t.Errorf("Parse(inline.toml) error =\n%v\nwant\n%s", err, want)
	}
}

// TestParseQoSErrors checks lines of problems in latency limits written
// inline and with dotted keys.
func TestParseQoSErrors(t *testing.T) {
	data := []byte(`model = "x"
source = "y"
method = { runtime = "1s" }
workload = [
  { name = "R", rw = "randread", bs = "4k", iodepth = 1, numjobs = 1, metric = "lat_us" },
  { name = "M", rw = "randrw", rwmixread = 100, bs = "4k", iodepth = 1, numjobs = 1, metric = "iops" },
]
[[capacity]]
name = "c"
bytes = 1
spec = { R = 80, M = 1 }
qos.R = { read_p99_us = "250us" }
qos.M.write_p99_us = 100
`)
	_, err := Parse("qos.toml", data)
	want := "qos.toml:12: capacity \"c\": qos.\"R\": read_p99_us must be a number, got string \"250us\"\n" +
		"qos.toml:13: capacity \"c\": qos.\"M\": write_p99_us: workload \"M\" does not write (rwmixread = 100); only read_ limits apply"
	if err == nil || err.Error() != want {
		t.Errorf("Parse(qos.toml) error =\n%v\nwant\n%s", err, want)
	}

	// A qos that is not a table stops the parse, like a spec that is not.
	data = append(data[:len(data):len(data)], "[[capacity]]\nname = \"d\"\nbytes = 1\nspec = { R = 80 }\nqos = 250\n"...)
	_, err = Parse("qos.toml", data)
	want = "qos.toml:18: capacity \"d\": qos must be a table of workloads ([capacity.qos.\"NAME\"]), got integer 250"
	if err == nil || err.Error() != want {
		t.Errorf("Parse(qos.toml with qos = 250) error =\n%v\nwant\n%s", err, want)
	}
}

type lowerIsBetterTest struct {
	m    Metric
	want bool
}

var lowerIsBetterTests = []lowerIsBetterTest{
	{IOPS, false},
	{MBps, false},
	{LatUS, true},
}

func TestLowerIsBetter(t *testing.T) {
	for _, tt := range lowerIsBetterTests {
		if got := tt.m.LowerIsBetter(); got != tt.want {
			t.Errorf("Metric(%q).LowerIsBetter() = %v, want %v", tt.m, got, tt.want)
		}
	}
}

// TestFleetTolerance checks that the fleet's tolerance is [fleet]'s,
// else the scaling tolerance, else the default, whichever cells a run
// selects.
func TestFleetTolerance(t *testing.T) {
	const head = `model = "M"
source = "S"
[method]
runtime = "1s"
[[workload]]
name = "R"
rw = "randread"
bs = "4k"
iodepth = 1
numjobs = 1
metric = "iops"
[[capacity]]
name = "C"
bytes = 1
[capacity.spec]
R = 1
`
	for _, tt := range []struct {
		name, tail string
		want       float64
	}{
		{"neither", "", DefaultScalingTolerance},
		{"scaling", "[scaling]\ncapacity = \"C\"\ndrives = [1]\ntolerance = 0.5\n", 0.5},
		{"scaling zero", "[scaling]\ncapacity = \"C\"\ndrives = [1]\ntolerance = 0\n", DefaultScalingTolerance},
		{"scaling default", "[scaling]\ncapacity = \"C\"\ndrives = [1]\n", DefaultScalingTolerance},
		{"fleet over scaling", "[scaling]\ncapacity = \"C\"\ndrives = [1]\ntolerance = 0.5\n[fleet]\ntolerance = 0.2\n", 0.2},
		{"fleet zero", "[fleet]\ntolerance = 0\n", 0},
		{"empty fleet table", "[scaling]\ncapacity = \"C\"\ndrives = [1]\ntolerance = 0.3\n[fleet]\n", 0.3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("fleet.toml", []byte(head+tt.tail))
			if err != nil {
				t.Fatal(err)
			}
			if s.Fleet.Tolerance != tt.want {
				t.Errorf("Fleet.Tolerance = %v, want %v", s.Fleet.Tolerance, tt.want)
			}
		})
	}
}

// TestLoopSpec checks the loop-device spec others' integration tests use.
func TestLoopSpec(t *testing.T) {
	s, err := Load("testdata/good/loop.toml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "loop" {
		t.Errorf("Name = %q, want loop", s.Name)
	}
	builtin, err := Load("solidigm-d7-ps1010")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(workloadNames(builtin), workloadNames(s)); diff != "" {
		t.Errorf("loop.toml workloads differ from the built-in spec's (-builtin +loop):\n%s", diff)
	}
	c, ok := s.Capacity("1GiB")
	if !ok || c.Bytes != 1<<30 || len(c.Spec) != 8 {
		t.Fatalf("Capacity(1GiB) = %+v, %v; want 1073741824 bytes and 8 cells", c, ok)
	}
	for _, w := range s.Workloads {
		want := 500.0
		if w.Metric == MBps {
			want = 20
		}
		if c.Spec[w.Name] != want {
			t.Errorf("loop spec %q = %v, want %v", w.Name, c.Spec[w.Name], want)
		}
	}
	wantMethod := Method{Runtime: time.Second, IOEngine: "libaio", Direct: true}
	wantPre := withSteadyDefaults(Precondition{Purge: "discard", FillPasses: 1, RandomRuntime: 40 * time.Second})
	wantPre.SteadyRound, wantPre.SteadyRange, wantPre.SteadySlope = 2*time.Second, 10, 10
	wantScaling := Scaling{Capacity: "1GiB", Drives: []int{1, 2, 3, 4}, Baseline: "spec", Tolerance: 0.5}
	if diff := cmp.Diff(wantMethod, s.Method); diff != "" {
		t.Errorf("loop method (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPre, s.Precondition); diff != "" {
		t.Errorf("loop precondition (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantScaling, s.Scaling); diff != "" {
		t.Errorf("loop scaling (-want +got):\n%s", diff)
	}
}

func workloadNames(s *Spec) []string {
	var names []string
	for _, w := range s.Workloads {
		names = append(names, w.Name)
	}
	return names
}

func TestLoadNeither(t *testing.T) {
	arg := filepath.Join(t.TempDir(), "nonexistent.toml")
	_, err := Load(arg)
	if err == nil {
		t.Fatalf("Load(%q) = nil error, want one", arg)
	}
	for _, want := range append(BuiltIn(), arg, "path to a .toml file") {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) error %q does not mention %q", arg, err, want)
		}
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(%q) error does not wrap os.ErrNotExist: %v", arg, err)
	}
	if _, err := Load("solidigm"); err == nil || !strings.Contains(err.Error(), "solidigm-d7-ps1010") {
		t.Errorf(`Load("solidigm") error = %v, want one listing the built-in names`, err)
	}
}

// TestLoadFilePrefersBuiltIn checks that a name is a built-in name first,
// and that a path to a file of the same name is still a path.
func TestLoadPathNamedLikeBuiltIn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "solidigm-d7-ps1010.toml")
	data, err := os.ReadFile("testdata/good/minimal.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "Minimal" || s.File != file {
		t.Errorf("Load(%q) = model %q from %q, want the file's spec", file, s.Model, s.File)
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.toml", Line: 14, Where: `workload "R"`, Msg: "bad"}, `a.toml:14: workload "R": bad`},
		{Error{File: "a.toml", Line: 3, Msg: "bad"}, `a.toml:3: bad`},
		{Error{File: "a.toml", Where: "method", Msg: "bad"}, `a.toml: method: bad`},
		{Error{File: "a.toml", Msg: "bad"}, `a.toml: bad`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
	list := ErrorList{&tests[0].e, &tests[1].e}
	if got, want := list.Error(), "a.toml:3: bad\na.toml:14: workload \"R\": bad"; got != want {
		t.Errorf("ErrorList.Error() = %q, want %q", got, want)
	}
}

type blockSizeTest struct {
	in   string
	want int64
	ok   bool
}

var blockSizeTests = []blockSizeTest{
	{"4k", 4096, true},
	{"4K", 4096, true},
	{"4KiB", 4096, true},
	{"4kb", 4096, true},
	{"128k", 131072, true},
	{"131072", 131072, true},
	{"512", 512, true},
	{"1m", 1 << 20, true},
	{"1MiB", 1 << 20, true},
	{"2g", 2 << 30, true},
	{" 8k ", 8192, true},
	{"0", 0, true}, // parses; the spec's rule refuses it
	{"", 0, false},
	{"k", 0, false},
	{"4q", 0, false},
	{"-4k", 0, false},
	{"1.5k", 0, false},
	{"4 KiB B", 0, false},
	{"99999999999999999999", 0, false},
	{"9223372036854775807k", 0, false},
}

func TestParseBlockSize(t *testing.T) {
	for _, tt := range blockSizeTests {
		got, err := ParseBlockSize(tt.in)
		if ok := err == nil; ok != tt.ok || got != tt.want {
			t.Errorf("ParseBlockSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// checkSpec is what every successfully parsed spec must satisfy.
func checkSpec(s *Spec) error {
	if s.Model == "" || s.Source == "" {
		return fmt.Errorf("empty model or source")
	}
	if s.Method.Runtime <= 0 || s.Method.RampTime < 0 || s.Method.IOEngine == "" {
		return fmt.Errorf("bad method %+v", s.Method)
	}
	if !(s.Method.Tolerance >= 0 && s.Method.Tolerance < 1) {
		return fmt.Errorf("method tolerance %v", s.Method.Tolerance)
	}
	if !contains(purgeMethods, s.Precondition.Purge) || s.Precondition.FillPasses < 0 || s.Precondition.RandomRuntime <= 0 {
		return fmt.Errorf("bad precondition %+v", s.Precondition)
	}
	if h := s.Health; h.PercentUsedMax < 0 || h.PercentUsedMax > 255 || h.SpareMargin < 0 || h.SpareMargin > 100 ||
		h.TemperatureMarginC < 0 || h.ThermalThrottle != ThrottleInconclusive && h.ThermalThrottle != ThrottleIgnore ||
		h.Firmware != nil && len(h.Firmware) == 0 {
		return fmt.Errorf("bad health %+v", h)
	}
	for _, fw := range s.Health.Firmware {
		if fw == "" || len(fw) > 8 || strings.TrimSpace(fw) != fw {
			return fmt.Errorf("health firmware %q", fw)
		}
	}
	if len(s.Workloads) == 0 || len(s.Capacities) == 0 {
		return fmt.Errorf("%d workloads, %d capacities", len(s.Workloads), len(s.Capacities))
	}
	names := map[string]bool{}
	subtests := map[string]bool{}
	for _, w := range s.Workloads {
		switch {
		case w.Name == "" || names[w.Name] || subtests[SubtestName(w.Name)]:
			return fmt.Errorf("workload name %q empty or not unique", w.Name)
		case !contains(rwPatterns, w.RW):
			return fmt.Errorf("workload %q: rw %q", w.Name, w.RW)
		case w.BS <= 0 || w.BS%512 != 0:
			return fmt.Errorf("workload %q: bs %d", w.Name, w.BS)
		case w.IODepth < 1 || w.NumJobs < 1:
			return fmt.Errorf("workload %q: iodepth %d numjobs %d", w.Name, w.IODepth, w.NumJobs)
		case w.Metric != IOPS && w.Metric != MBps && w.Metric != LatUS:
			return fmt.Errorf("workload %q: metric %q", w.Name, w.Metric)
		case w.RWMixRead < -1 || w.RWMixRead > 100 || w.RWMixRead >= 0 && !fiojob.IsMixed(w.RW):
			return fmt.Errorf("workload %q: rwmixread %d", w.Name, w.RWMixRead)
		case w.Runtime < 0:
			return fmt.Errorf("workload %q: runtime %v", w.Name, w.Runtime)
		}
		names[w.Name], subtests[SubtestName(w.Name)] = true, true
	}
	for _, w := range s.Workloads {
		if w.Precondition != "" && !names[w.Precondition] {
			return fmt.Errorf("workload %q: precondition %q", w.Name, w.Precondition)
		}
		if twin := s.WriteTwin(w); !twin.IsWriteOnly() || twin.BS <= 0 {
			return fmt.Errorf("workload %q: write twin %+v", w.Name, twin)
		}
	}
	caps := map[string]bool{}
	for _, c := range s.Capacities {
		if c.Name == "" || caps[c.Name] || c.Bytes <= 0 || len(c.Spec) == 0 {
			return fmt.Errorf("bad capacity %+v", c)
		}
		caps[c.Name] = true
		for name, v := range c.Spec {
			if !names[name] || !(v > 0) || math.IsInf(v, 0) {
				return fmt.Errorf("capacity %q: spec %q = %v", c.Name, name, v)
			}
		}
		if c.QoS != nil && len(c.QoS) == 0 {
			return fmt.Errorf("capacity %q: empty non-nil QoS", c.Name)
		}
		for name, limits := range c.QoS {
			w, _ := s.Workload(name)
			if _, measured := c.Spec[name]; !measured || len(limits) == 0 {
				return fmt.Errorf("capacity %q: qos %q for a cell not measured, or no limits", c.Name, name)
			}
			for i, l := range limits {
				if l.Dir == "read" && !w.Reads() || l.Dir == "write" && !w.Writes() || l.Dir != "read" && l.Dir != "write" ||
					l.Limit <= 0 || !contains([]string{"50", "99", "99.9", "99.99", "99.999", "100"}, strconv.FormatFloat(l.Percentile, 'f', -1, 64)) {
					return fmt.Errorf("capacity %q: qos %q: limit %+v", c.Name, name, l)
				}
				if i > 0 {
					p := limits[i-1]
					if p.Dir == "write" && l.Dir == "read" || p.Dir == l.Dir && (p.Percentile >= l.Percentile || p.Limit > l.Limit) {
						return fmt.Errorf("capacity %q: qos %q: limits out of order: %+v then %+v", c.Name, name, p, l)
					}
				}
			}
		}
	}
	if sc := s.Scaling; sc.Capacity != "" {
		if !caps[sc.Capacity] || len(sc.Drives) == 0 || !(sc.Tolerance >= 0 && sc.Tolerance < 1) ||
			sc.Baseline != "spec" && sc.Baseline != "single" {
			return fmt.Errorf("bad scaling %+v", sc)
		}
		for i, n := range sc.Drives {
			if n < 1 || i > 0 && n <= sc.Drives[i-1] {
				return fmt.Errorf("scaling drives %v", sc.Drives)
			}
		}
		for name, o := range sc.Override {
			if !names[name] || o.IODepth < 0 || o.NumJobs < 0 || o == (Override{}) {
				return fmt.Errorf("scaling override %q: %+v", name, o)
			}
		}
	} else if len(s.Scaling.Drives) != 0 || len(s.Scaling.Override) != 0 {
		return fmt.Errorf("scaling without a capacity: %+v", s.Scaling)
	}
	return nil
}

// withSteadyDefaults is p with the steady-state and idle keys at their
// defaults.
func withSteadyDefaults(p Precondition) Precondition {
	p.SteadyRound, p.SteadyWindow = DefaultSteadyRound, DefaultSteadyWindow
	p.SteadyRange, p.SteadySlope = DefaultSteadyRange, DefaultSteadySlope
	p.IdleLimit, p.TopUpRuntime = DefaultIdleLimit, DefaultTopUpRuntime
	return p
}

// TestReceipt reads [receipt]: each limit unset unless given, sizes in
// bytes or with a decimal unit, and errors naming file, line and fix.
func TestReceipt(t *testing.T) {
	const head = `model = "M"
source = "S"
method = { runtime = "1s" }
workload = [{ name = "R", rw = "randread", bs = "4k", iodepth = 1, numjobs = 1, metric = "iops" }]
capacity = [{ name = "C", bytes = 1, spec = { R = 1 } }]
`
	s, err := Parse("receipt.toml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Receipt{}, s.Receipt); diff != "" {
		t.Errorf("no [receipt]: Receipt mismatch (-want +got):\n%s", diff)
	}
	s, err = Parse("receipt.toml", []byte(head+`[receipt]
max_power_on_hours = 100
max_data_written = "1.5TB"
max_data_read = 2_000_000_000
max_media_errors = 0
`))
	if err != nil {
		t.Fatal(err)
	}
	u := func(n uint64) *uint64 { return &n }
	want := Receipt{MaxPowerOnHours: u(100), MaxDataWritten: u(1_500_000_000_000), MaxDataRead: u(2_000_000_000), MaxMediaErrors: u(0)}
	if diff := cmp.Diff(want, s.Receipt); diff != "" {
		t.Errorf("Receipt mismatch (-want +got):\n%s", diff)
	}
	_, err = Parse("receipt.toml", []byte(head+`[receipt]
max_power_on_hours = -1
max_data_written = "1.5 TiB"
max_unsafe_shutdowns = "3"
`))
	wantErr := "receipt.toml:7: receipt: max_power_on_hours must be >= 0, got -1\n" +
		"receipt.toml:8: receipt: max_data_written \"1.5 TiB\" is not a size: write a number and a decimal unit, such as \"1TB\" (10^12 bytes) or \"500GB\"\n" +
		"receipt.toml:9: receipt: max_unsafe_shutdowns must be an integer, got string \"3\""
	if err == nil || err.Error() != wantErr {
		t.Errorf("Parse(bad [receipt]) error =\n%v\nwant\n%s", err, wantErr)
	}
}

// TestPCIe reads [pcie]: the link a spec's figures need, unset by default.
func TestPCIe(t *testing.T) {
	const head = `model = "M"
source = "S"
method = { runtime = "1s" }
workload = [{ name = "R", rw = "randread", bs = "4k", iodepth = 1, numjobs = 1, metric = "iops" }]
capacity = [{ name = "C", bytes = 1, spec = { R = 1 } }]
`
	s, err := Parse("pcie.toml", []byte(head+"[pcie]\nspeed = 16.0\nwidth = 4\n"))
	if err != nil || s.PCIe != (PCIe{Speed: 16, Width: 4}) {
		t.Errorf("Parse([pcie] speed 16, width 4) = %+v, %v", s.PCIe, err)
	}
	_, err = Parse("pcie.toml", []byte(head+"[pcie]\nspeed = \"Gen4\"\nwidth = 0\n"))
	want := "pcie.toml:7: pcie: speed must be a number, got string \"Gen4\"\npcie.toml:8: pcie: width must be between 1 and 32, got 0"
	if err == nil || err.Error() != want {
		t.Errorf("Parse(bad [pcie]) error =\n%v\nwant\n%s", err, want)
	}
}

// A [lot] table without a method is judged by the normal bound, the
// default; the method is read as written.
func TestLotMethodDefault(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "bad", "lot_method.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, tt := range []struct{ line, want string }{
		{"", LotNormal}, {`method = "normal"`, LotNormal}, {`method = "distribution-free"`, LotDistributionFree},
	} {
		s, err := Parse("lot.toml", []byte(strings.Replace(text, `method     = "nonparametric"`, tt.line, 1)))
		if err != nil {
			t.Fatalf("%q: %v", tt.line, err)
		}
		if s.Lot == nil || s.Lot.Method != tt.want {
			t.Errorf("%q: lot %+v, want method %q", tt.line, s.Lot, tt.want)
		}
	}
}

type suggestWorkloadTest struct {
	name string
	want string
}

var suggestWorkloadTests = []suggestWorkloadTest{
	{"4KB Random Reed", "4KB Random Read"},
	{"4KB_Random_Read", "4KB Random Read"},
	{"4kb random write", "4KB Random Write"},
	{"4KB Random Mixed Read Wirte 70/30", "4KB Random Mixed Read Write 70/30"},
	{"8KB Random Read", ""},        // another size: another workload, not a slip
	{"4KB Random Mixed 60/40", ""}, // other numbers
	{"Sequential Read", ""},        // far from every name
	{"4KB Random Read", "4KB Random Read"},
}

func TestSuggestWorkload(t *testing.T) {
	ws := []Workload{{Name: "4KB Random Read"}, {Name: "4KB Random Write"}, {Name: "4KB Random Mixed Read Write 70/30"}, {Name: "128KB Sequential Read"}}
	for _, tt := range suggestWorkloadTests {
		if got := suggestWorkload(ws, tt.name); got != tt.want {
			t.Errorf("suggestWorkload(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
