package specs

import (
	"os"
	"strings"
	"testing"
)

func minimalWith(t *testing.T, extra string) (*Spec, error) {
	t.Helper()
	base, err := os.ReadFile("testdata/good/minimal.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(base), "[method]", extra+"\n[method]", 1)
	return Parse("x.toml", []byte(text))
}

func TestModelsEnduranceAndOCPHealthKeys(t *testing.T) {
	s, err := minimalWith(t, `models = ["SOLIDIGM SB5PH27X*", "ACME X?"]

[endurance]
dwpd = 1
warranty_years = 5
source = "product brief"

[health]
ocp_bad_user_blocks_max_increase      = 2
ocp_bad_system_blocks_max_increase    = 1
ocp_uncorrectable_reads_max_increase  = 3
ocp_end_to_end_errors_max_increase    = 4
ocp_incomplete_shutdowns_max_increase = 5
ocp_capacitor_health_min              = 50
`)
	if err != nil {
		t.Fatal(err)
	}
	want := OCPHealth{BadUserBlocksMaxIncrease: 2, BadSystemBlocksMaxIncrease: 1, UncorrectableReadsMaxIncrease: 3,
		EndToEndErrorsMaxIncrease: 4, IncompleteShutdownsMaxIncrease: 5, CapacitorHealthMin: 50}
	if s.Health.OCP != want {
		t.Errorf("OCP health = %+v, want %+v", s.Health.OCP, want)
	}
	for model, ok := range map[string]bool{"SOLIDIGM SB5PH27X076T": true, "SOLIDIGM SB5PH27X153TOP": true, "ACME X1": true,
		"ACME X12": false, "SAMSUNG MZQL23T8HCLS-00A07": false, "QEMU NVMe Ctrl": false} {
		if s.MatchesModel(model) != ok {
			t.Errorf("MatchesModel(%q) = %v, want %v", model, !ok, ok)
		}
	}
	if b, ok := s.Endurance.RatedBytes(1_920_383_410_176); !ok || b != 1_920_383_410_176*365*5 {
		t.Errorf("RatedBytes = %v, %v; want 1 DWPD x 5 years", b, ok)
	}
	none, err := minimalWith(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if !none.MatchesModel("anything") {
		t.Error("a spec without models matches any model")
	}
	if _, ok := none.Endurance.RatedBytes(1); ok {
		t.Error("no [endurance]: no rated bytes")
	}
}

func TestModelsAndEnduranceRefusals(t *testing.T) {
	for extra, want := range map[string]string{
		`models = []`:                              "leave the key out",
		`models = "SOLIDIGM*"`:                     "must be an array of model-number patterns",
		`models = ["SOLIDIGM [X"]`:                 "is not a valid pattern",
		`models = [" SOLIDIGM"]`:                   "leading or trailing spaces",
		"[endurance]\npbw = 1\ndwpd = 1":           "both pbw and dwpd",
		"[endurance]\ndwpd = 1":                    "dwpd needs warranty_years",
		"[endurance]\npbw = -3":                    "pbw must be a number above 0",
		"[health]\nocp_capacitor_health_min = 101": "ocp_capacitor_health_min",
	} {
		_, err := minimalWith(t, extra)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", extra, err, want)
		}
	}
}

func TestBuiltinSpecNamesItsDrives(t *testing.T) {
	s, err := Load("solidigm-d7-ps1010")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"SOLIDIGM SB5PH27X019T", "SOLIDIGM SB5PH27X038T", "SOLIDIGM SB5PH27X076T", "SOLIDIGM SB5PH27X153T", "SOLIDIGM SB5PH27X153TOP"} {
		if !s.MatchesModel(m) {
			t.Errorf("the built-in spec does not match %q", m)
		}
	}
	for _, m := range []string{"SAMSUNG MZQL21T9HCJR-00A07", "QEMU NVMe Ctrl", "SOLIDIGM SBFPF2BU153T"} {
		if s.MatchesModel(m) {
			t.Errorf("the built-in spec matches %q", m)
		}
	}
}
