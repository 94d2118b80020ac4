package nvme

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// ocpFixture is an OCP output in fixtures/nvme, the nvme-cli version
// that printed it (as `nvme version` gives it; "" for the real one,
// whose version is inferred) and what it holds.
type ocpFixture struct {
	file, version string
}

func TestParseOCPSmartEveryFixture(t *testing.T) {
	cases := map[ocpFixture]OCPSmart{
		{"ocp-smart-add-log-autoval-ssd.json", ""}:                        autovalC0,
		{"ocp-smart-add-log-v2.3-autoval-values.json", "2.3"}:             autovalC0,
		{"ocp-smart-add-log-v2.3-worn.json", "2.3"}:                       wornC0,
		{"ocp-smart-add-log-v2.3-e2e-detected.json", "2.3"}:               detectedC0,
		{"ocp-smart-add-log-v2.3-system-blocks-not-reported.json", "2.3"}: unreportedC0,
		{"ocp-smart-add-log-v2.4-worn.json", "2.4"}:                       wornC0,
		{"ocp-smart-add-log-v2.5-e2e-detected.json", "2.5"}:               detectedC0,
		{"ocp-smart-add-log-v2.11-worn.json", "2.11"}:                     wornC0,
		{"ocp-smart-add-log-v2.16-e2e-detected.json", "2.16"}:             detectedC0,
		{"ocp-smart-add-log-v2.16-format-2-e2e-detected.json", "2.16"}:    detectedC0,
		{"ocp-smart-add-log-v2.16-format-2-e2e-detected.json", "3.0-rc1"}: detectedC0,
		{"ocp-smart-add-log-v3.0-worn.json", "3.0"}:                       wornC0,
	}
	noC0 := map[string]string{
		"ocp-smart-add-log-v3.0-error.json": "Failure reading the C0 Log Page",
	}
	var files []string
	for f, want := range cases {
		files = append(files, f.file)
		got, err := ParseOCPSmart(readFixture(t, f.file), f.version)
		if err != nil || got != want {
			t.Errorf("%s: ParseOCPSmart(nvme-cli %q) = %+v, %v; want %+v", f.file, f.version, got, err, want)
		}
		// Without the version, the output itself says how it is laid out.
		if got, err := ParseOCPSmart(readFixture(t, f.file), ""); err != nil || got != want {
			t.Errorf("%s: ParseOCPSmart(version not known) = %+v, %v; want %+v", f.file, got, err, want)
		}
	}
	for f, why := range noC0 {
		files = append(files, f)
		_, err := ParseOCPSmart(readFixture(t, f), "3.0")
		var no *NoOCPLog
		if !errors.As(err, &no) || !strings.Contains(err.Error(), why) || !strings.HasPrefix(err.Error(), "no OCP C0 log (") {
			t.Errorf("%s: ParseOCPSmart error = %v; want a *NoOCPLog saying %q", f, err, why)
		}
	}
	// The stderr files are what nvme-cli printed for a drive without C0.
	for f, why := range map[string]string{
		"ocp-smart-add-log-v2.3-no-c0.stderr":        "Failure reading the C0 Log Page",
		"ocp-smart-add-log-v2.3-unknown-guid.stderr": "Unknown GUID in C0 Log Page data",
	} {
		files = append(files, f)
		err := noOCP("C0", nil, &CommandError{Argv: []string{"nvme"}, Stderr: ErrorText(string(readFixture(t, f))), Err: errors.New("exit status 255")})
		var no *NoOCPLog
		if !errors.As(err, &no) || !strings.Contains(no.Why, why) {
			t.Errorf("%s: noOCP = %v; want a *NoOCPLog saying %q", f, err, why)
		}
	}
	checkCovered(t, "ocp-smart-add-log-*", files)
}

// nvme-cli 2.3 (Debian 12's, read from what its `nvme version` printed)
// prints a C0 page that detected 5 end-to-end errors and corrected none
// as "End to end corrected errors":5: read by its version, it is 5
// detected.
func TestParseOCPSmartReadsEndToEndErrorsByVersion(t *testing.T) {
	v, err := ParseVersion(readFixture(t, "version-2.3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := readFixture(t, "ocp-smart-add-log-v2.3-e2e-detected.json")
	if !strings.Contains(string(out), `"End to end corrected errors":5`) {
		t.Fatalf("nvme-cli 2.3 printed no \"End to end corrected errors\":5 for the page of 5 detected errors:\n%s", out)
	}
	got, err := ParseOCPSmart(out, v)
	if err != nil || got.EndToEndDetected != 5 || got.EndToEndCorrected != 0 {
		t.Errorf("ParseOCPSmart(nvme-cli %s) = detected %d, corrected %d, %v; want 5, 0", v, got.EndToEndDetected, got.EndToEndCorrected, err)
	}
}

// A recording may hold an output another nvme-cli printed than the one
// its run.json names: a resume after an update from 2.3 to 2.5 keeps the
// interrupted run's c0-before (printed by 2.3) in a run.json that names
// 2.5, and a replay reads it with 2.5. What nvme-cli printed says how it
// is laid out, whatever the version given: 5 detected end-to-end errors
// and read counts 1000 are read as such either way, in the live resumed
// run and in its replay alike.
func TestParseOCPReadsTheLayoutPrintedNotTheVersionNamed(t *testing.T) {
	for _, tt := range []struct{ file, version string }{
		{"ocp-smart-add-log-v2.3-e2e-detected.json", "2.5"},
		{"ocp-smart-add-log-v2.5-e2e-detected.json", "2.3"},
	} {
		got, err := ParseOCPSmart(readFixture(t, tt.file), tt.version)
		if err != nil || got != detectedC0 {
			t.Errorf("%s: ParseOCPSmart(nvme-cli %q) = detected %d, corrected %d, %v; want detected 5, corrected 0",
				tt.file, tt.version, got.EndToEndDetected, got.EndToEndCorrected, err)
		}
	}
	for _, tt := range []struct {
		file, version string
		want          OCPLatency
	}{
		{"ocp-latency-monitor-log-v2.3-read-write-trim.json", "2.5", printedBefore25(readWriteTrimC3)},
		{"ocp-latency-monitor-log-v2.5-read-write-trim.json", "2.3", readWriteTrimC3},
	} {
		got, err := ParseOCPLatency(readFixture(t, tt.file), tt.version)
		if err != nil || got != tt.want {
			t.Errorf("%s: ParseOCPLatency(nvme-cli %q) = %+v, %v; want %+v", tt.file, tt.version, got, err, tt.want)
		}
	}
}

func TestParseOCPLatencyEveryFixture(t *testing.T) {
	cases := map[ocpFixture]OCPLatency{
		{"ocp-latency-monitor-log-v2.3-inactive.json", "2.3"}:          printedBefore25(OCPLatency{}),
		{"ocp-latency-monitor-log-v2.3-active.json", "2.3"}:            printedBefore25(activeC3),
		{"ocp-latency-monitor-log-v2.3-read-write-trim.json", "2.3"}:   printedBefore25(readWriteTrimC3),
		{"ocp-latency-monitor-log-v2.5-read-write-trim.json", "2.5"}:   readWriteTrimC3,
		{"ocp-latency-monitor-log-v2.16-read-write-trim.json", "2.16"}: readWriteTrimC3,
	}
	var files []string
	for f, want := range cases {
		files = append(files, f.file)
		for _, v := range []string{f.version, ""} {
			got, err := ParseOCPLatency(readFixture(t, f.file), v)
			if err != nil || got != want {
				t.Errorf("%s: ParseOCPLatency(nvme-cli %q) = %+v, %v; want %+v", f.file, v, got, err, want)
			}
			if got.Enabled() != (want.FeatureStatus != 0) {
				t.Errorf("%s: Enabled() = %v", f.file, got.Enabled())
			}
		}
	}
	checkCovered(t, "ocp-latency-monitor-log-*", files)
}

// An all-ones field is one the drive does not report: a KIOXIA CD8's Bad
// system nand blocks, 0xFFFFFFFFFFFF in its 48 bits.
func TestOCPSmartAllOnesIsNotReported(t *testing.T) {
	o := autovalC0
	o.BadSystemNANDBlocks = 0xFFFFFFFFFFFF
	o.EndToEndDetected = 0xFFFFFFFF
	o.PhysicalMediaRead = Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}
	o.CapacitorHealth = 0xFFFF // no capacitor: reported, its own meaning
	want := []string{"Physical media units read", "Bad system nand blocks - Raw", "End to end detected errors"}
	if got := o.Unreported(); !slices.Equal(got, want) {
		t.Errorf("Unreported() = %q, want %q", got, want)
	}
	if got := autovalC0.Unreported(); len(got) != 0 {
		t.Errorf("Unreported() of the autoval drive = %q, want none", got)
	}
	o.BadSystemNANDBlocks = 0xFFFFFFFFFFFE
	if !o.Reported("Bad system nand blocks - Raw") {
		t.Error("0xFFFFFFFFFFFE is a count")
	}
}

// Each judged or reported C0 count is "not reported" when all ones in its
// width in the OCP specification's page, and a count one below that is a
// count: the widths here are the specification's byte ranges, written
// out apart from the parser's table.
func TestOCPSmartAllOnesAtEachFieldsWidth(t *testing.T) {
	for _, tt := range []struct {
		name  string
		bytes string // the field's bytes in the page
		bits  int
		set   func(*OCPSmart, uint64)
	}{
		{"Bad user nand blocks - Raw", "37:32", 48, func(o *OCPSmart, v uint64) { o.BadUserNANDBlocks = v }},
		{"Bad user nand blocks - Normalized", "39:38", 16, func(o *OCPSmart, v uint64) { o.BadUserNANDNormalized = v }},
		{"Bad system nand blocks - Raw", "45:40", 48, func(o *OCPSmart, v uint64) { o.BadSystemNANDBlocks = v }},
		{"XOR recovery count", "55:48", 64, func(o *OCPSmart, v uint64) { o.XORRecoveries = v }},
		{"Uncorrectable read error count", "63:56", 64, func(o *OCPSmart, v uint64) { o.UncorrectableReads = v }},
		{"Soft ecc error count", "71:64", 64, func(o *OCPSmart, v uint64) { o.SoftECCErrors = v }},
		{"End to end corrected errors", "79:76", 32, func(o *OCPSmart, v uint64) { o.EndToEndCorrected = v }},
		{"End to end detected errors", "75:72", 32, func(o *OCPSmart, v uint64) { o.EndToEndDetected = v }},
		{"System data percent used", "80", 8, func(o *OCPSmart, v uint64) { o.SystemDataPercentUsed = v }},
		{"Refresh counts", "87:81", 56, func(o *OCPSmart, v uint64) { o.RefreshCount = v }},
		{"Max User data erase counts", "91:88", 32, func(o *OCPSmart, v uint64) { o.MaxEraseCount = v }},
		{"Min User data erase counts", "95:92", 32, func(o *OCPSmart, v uint64) { o.MinEraseCount = v }},
		{"Number of Thermal throttling events", "96", 8, func(o *OCPSmart, v uint64) { o.ThermalThrottlingEvents = v }},
		{"PCIe correctable error count", "111:104", 64, func(o *OCPSmart, v uint64) { o.PCIeCorrectableErrors = v }},
		{"Incomplete shutdowns", "115:112", 32, func(o *OCPSmart, v uint64) { o.IncompleteShutdowns = v }},
		{"Percent free blocks", "120", 8, func(o *OCPSmart, v uint64) { o.PercentFreeBlocks = v }},
		{"Unaligned I/O", "143:136", 64, func(o *OCPSmart, v uint64) { o.UnalignedIO = v }},
		{"NUSE - Namespace utilization", "159:152", 64, func(o *OCPSmart, v uint64) { o.NUSE = v }},
	} {
		ones := ^uint64(0) >> (64 - tt.bits)
		o := autovalC0
		tt.set(&o, ones)
		if o.Reported(tt.name) || !slices.Contains(o.Unreported(), tt.name) {
			t.Errorf("%s (bytes %s) = %#x: Reported = true, want not reported", tt.name, tt.bytes, ones)
		}
		tt.set(&o, ones-1)
		if !o.Reported(tt.name) {
			t.Errorf("%s (bytes %s) = %#x: Reported = false, want a count", tt.name, tt.bytes, ones-1)
		}
	}
	// nvme-cli 2.3 prints a 32-bit field through json_object_new_int:
	// all ones is -1, still not reported.
	out := strings.Replace(string(readFixture(t, "ocp-smart-add-log-v2.3-autoval-values.json")), `"Incomplete shutdowns":0`, `"Incomplete shutdowns":-1`, 1)
	if o, err := ParseOCPSmart([]byte(out), "2.3"); err != nil || o.Reported("Incomplete shutdowns") {
		t.Errorf(`nvme-cli 2.3's "Incomplete shutdowns":-1: ParseOCPSmart = %d, %v; want 0xffffffff, not reported`, o.IncompleteShutdowns, err)
	}
}

func TestParseOCPSmartRefusesWhatIsNotC0(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"missing field": {`{"Log page GUID":"0x` + OCPSmartGUID + `"}`, `"Physical media units written" (or "physical_media_units_written") is missing`},
		"other GUID":    {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), "afd5", "0fd5", 1), "is not the OCP C0 GUID"},
		"not a number":  {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), `"Capacitor health":40`, `"Capacitor health":"x"`, 1), `"Capacitor health"`},
		"hi missing":    {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), `"hi":1,`, ``, 1), `"hi" is missing`},
	} {
		_, err := ParseOCPSmart([]byte(tt.in), "2.4")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.want)
		}
	}
}

func TestOCPArgsAskForSnakeCaseWhereTheVersionHasIt(t *testing.T) {
	for v, want := range map[string]bool{"2.3": false, "2.11": false, "2.12": true, "2.16": true, "3.0-rc1": true, "": false} {
		got := strings.Contains(strings.Join(OCPArgs("smart-add-log", "/dev/nvme0n1", v), " "), "--output-format-version=2")
		if got != want {
			t.Errorf("OCPArgs for %q: --output-format-version=2 %v, want %v", v, got, want)
		}
	}
	if strings.Contains(strings.Join(OCPArgs("latency-monitor-log", "/dev/nvme0", "3.0"), " "), "format-version") {
		t.Error("the latency monitor log has one format")
	}
}

func mustFixture(t *testing.T, name string) []byte { t.Helper(); return readFixture(t, name) }
