package nvme

import (
	"errors"
	"strings"
	"testing"
)

func TestParseOCPSmartEveryFixture(t *testing.T) {
	cases := map[string]OCPSmart{
		"ocp-smart-add-log-autoval-ssd.json":         autovalC0,
		"ocp-smart-add-log-v2.3-autoval-values.json": autovalC0,
		"ocp-smart-add-log-v2.3-worn.json":           wornC0,
		"ocp-smart-add-log-v2.4-worn.json":           wornC0,
		"ocp-smart-add-log-v2.11-worn.json":          wornC0,
		"ocp-smart-add-log-v3.0-worn.json":           wornC0,
	}
	noC0 := map[string]string{
		"ocp-smart-add-log-v3.0-error.json": "Failure reading the C0 Log Page",
	}
	var files []string
	for f, want := range cases {
		files = append(files, f)
		got, err := ParseOCPSmart(readFixture(t, f))
		if err != nil || got != want {
			t.Errorf("%s: ParseOCPSmart = %+v, %v; want %+v", f, got, err, want)
		}
	}
	for f, why := range noC0 {
		files = append(files, f)
		_, err := ParseOCPSmart(readFixture(t, f))
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

func TestParseOCPLatencyEveryFixture(t *testing.T) {
	cases := map[string]OCPLatency{
		"ocp-latency-monitor-log-v2.3-inactive.json": {},
		"ocp-latency-monitor-log-v2.3-active.json":   activeC3,
	}
	var files []string
	for f, want := range cases {
		files = append(files, f)
		got, err := ParseOCPLatency(readFixture(t, f))
		if err != nil || got != want {
			t.Errorf("%s: ParseOCPLatency = %+v, %v; want %+v", f, got, err, want)
		}
		if got.Enabled() != (want.FeatureStatus != 0) {
			t.Errorf("%s: Enabled() = %v", f, got.Enabled())
		}
	}
	checkCovered(t, "ocp-latency-monitor-log-*", files)
}

func TestParseOCPSmartRefusesWhatIsNotC0(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"missing field": {`{"Log page GUID":"0x` + OCPSmartGUID + `"}`, `"Physical media units written" (or "physical_media_units_written") is missing`},
		"other GUID":    {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), "afd5", "0fd5", 1), "is not the OCP C0 GUID"},
		"not a number":  {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), `"Capacitor health":40`, `"Capacitor health":"x"`, 1), `"Capacitor health"`},
		"hi missing":    {strings.Replace(string(mustFixture(t, "ocp-smart-add-log-v2.4-worn.json")), `"hi":1,`, ``, 1), `"hi" is missing`},
	} {
		_, err := ParseOCPSmart([]byte(tt.in))
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
