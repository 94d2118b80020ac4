package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/specs"
)

func TestJudgeOCPNamesTheFieldAndBothValues(t *testing.T) {
	rules := specs.DefaultHealth().OCP
	before := nvme.OCPSmart{CapacitorHealth: 100}
	after := nvme.OCPSmart{BadUserNANDBlocks: 3, CapacitorHealth: 100}
	var failed []Check
	for _, c := range JudgeOCP(before, after, rules) {
		if c.Verdict == Fail {
			failed = append(failed, c)
		}
	}
	if len(failed) != 1 || failed[0].Name != "ocp_bad_user_blocks" ||
		!strings.Contains(failed[0].Message, "Bad user nand blocks - Raw: 0 before, 3 after") {
		t.Fatalf("failed checks %+v, want only ocp_bad_user_blocks naming the field and 0 and 3", failed)
	}
	rules.BadUserBlocksMaxIncrease = 3
	for _, c := range JudgeOCP(before, after, rules) {
		if c.Verdict == Fail {
			t.Errorf("limit +3: %+v fails", c)
		}
	}
	for name, a := range map[string]nvme.OCPSmart{
		"ocp_bad_system_blocks":    {BadSystemNANDBlocks: 1, CapacitorHealth: 100},
		"ocp_uncorrectable_reads":  {UncorrectableReads: 1, CapacitorHealth: 100},
		"ocp_end_to_end_errors":    {EndToEndDetected: 1, CapacitorHealth: 100},
		"ocp_incomplete_shutdowns": {IncompleteShutdowns: 1, CapacitorHealth: 100},
		"ocp_capacitor_health":     {CapacitorHealth: 9},
	} {
		for _, c := range JudgeOCP(before, a, specs.DefaultHealth().OCP) {
			if (c.Verdict == Fail) != (c.Name == name) {
				t.Errorf("%s: check %+v", name, c)
			}
		}
	}
	none := nvme.OCPSmart{CapacitorHealth: 0xffff}
	for _, c := range JudgeOCP(none, none, rules) {
		if c.Name == "ocp_capacitor_health" && c.Verdict != Skip {
			t.Errorf("no capacitor: %+v, want skipped", c)
		}
	}
	// 100 % on receipt, "no capacitor" after: it is gone, not absent.
	for _, c := range JudgeOCP(before, none, rules) {
		if c.Name == "ocp_capacitor_health" && (c.Verdict != Fail || !strings.Contains(c.Message, "100 % before, 65535 after")) {
			t.Errorf("capacitor lost during the run: %+v, want failed", c)
		}
	}
}

func TestWriteAmplification(t *testing.T) {
	host := func(units uint64) nvme.SmartLog { return nvme.SmartLog{DataUnitsWritten: nvme.Uint128{Lo: units}} }
	media := func(b uint64) nvme.OCPSmart { return nvme.OCPSmart{PhysicalMediaWritten: nvme.Uint128{Lo: b}} }
	// 1000 data units = 512,000,000 host bytes; media 1,024,000,000.
	w := WriteAmplification(media(5), media(5+1_024_000_000), host(7), host(1007))
	if w.Note != "" || w.String() != "2.00" {
		t.Errorf("WAF = %v, want 2.00", w)
	}
	if w := WriteAmplification(media(0), media(100), host(7), host(7)); !strings.Contains(w.Note, "data_units_written did not move") {
		t.Errorf("host counter still: %v", w)
	}
	if w := WriteAmplification(media(9), media(9), host(7), host(8)); !strings.Contains(w.Note, "Physical media units written did not move") {
		t.Errorf("media counter still: %v", w)
	}
	if w := WriteAmplification(media(0), media(256_000), host(0), host(1)); !strings.Contains(w.Note, "WAF below 1 (0.50") {
		t.Errorf("below 1: %v", w)
	}
	// Above 2^64 bytes on the media counter.
	hi := nvme.OCPSmart{PhysicalMediaWritten: nvme.Uint128{Hi: 1, Lo: 1_024_000_000}}
	lo := nvme.OCPSmart{PhysicalMediaWritten: nvme.Uint128{Hi: 1}}
	if w := WriteAmplification(lo, hi, host(0), host(1000)); w.String() != "2.00" {
		t.Errorf("past 2^64: %v", w)
	}
}

func TestLifeAtAWAF(t *testing.T) {
	e := specs.Endurance{DWPD: 1, WarrantyYears: 5}
	w := WAF{Value: 2}
	got, ok := Life(e, 1000, w, 1)
	if !ok || got != 365*5/2.0 {
		t.Errorf("Life = %v, %v; want half of 1 DWPD x 5 years of drive writes", got, ok)
	}
	if _, ok := Life(specs.Endurance{}, 1000, w, 1); ok {
		t.Error("no rating: no estimate")
	}
	if _, ok := Life(e, 1000, WAF{Note: "no WAF"}, 1); ok {
		t.Error("no WAF figure: no estimate")
	}
}

func TestThrottledOCPCountsIntoTheHeatRule(t *testing.T) {
	b, a := nvme.OCPSmart{ThermalThrottlingEvents: 2}, nvme.OCPSmart{ThermalThrottlingEvents: 3}
	if msg, ok := ThrottledOCP(b, a, specs.DefaultHealth()); !ok || !strings.Contains(msg, "Number of Thermal throttling events 2 → 3") {
		t.Errorf("ThrottledOCP = %q, %v", msg, ok)
	}
	ignore := specs.DefaultHealth()
	ignore.ThermalThrottle = specs.ThrottleIgnore
	if _, ok := ThrottledOCP(b, a, ignore); ok {
		t.Error("thermal_throttle = ignore")
	}
	if _, ok := ThrottledOCP(b, b, specs.DefaultHealth()); ok {
		t.Error("no new event")
	}
}

// A C0 field of all ones is "not valid" in the OCP specification: a
// KIOXIA CD8 reports Bad system nand blocks as 0xFFFFFFFFFFFF. It is not
// 281,474,976,710,655 bad blocks: the check says the drive does not
// report it, and is not judged.
func TestJudgeOCPSkipsAFieldTheDriveDoesNotReport(t *testing.T) {
	rules := specs.DefaultHealth().OCP
	cd8 := nvme.OCPSmart{BadSystemNANDBlocks: 0xFFFFFFFFFFFF, CapacitorHealth: 100}
	grown := cd8
	grown.BadUserNANDBlocks = 1
	for _, tt := range []struct {
		name          string
		before, after nvme.OCPSmart
		want          string
	}{
		{"all ones before and after", cd8, cd8, "0xffffffffffff before and after"},
		{"reported on receipt, not after", nvme.OCPSmart{BadSystemNANDBlocks: 2, CapacitorHealth: 100}, cd8, "2 before, 0xffffffffffff after"},
	} {
		var sys, user Check
		for _, c := range JudgeOCP(tt.before, tt.after, rules) {
			switch c.Name {
			case "ocp_bad_system_blocks":
				sys = c
			case "ocp_bad_user_blocks":
				user = c
			}
		}
		if sys.Verdict != Skip || !strings.Contains(sys.Message, "Bad system nand blocks - Raw: not reported by the drive (all ones: "+tt.want+")") {
			t.Errorf("%s: %+v, want skipped as not reported by the drive", tt.name, sys)
		}
		if user.Verdict != Pass {
			t.Errorf("%s: ocp_bad_user_blocks %+v, still judged", tt.name, user)
		}
	}
	for _, c := range JudgeOCP(cd8, grown, rules) {
		if c.Name == "ocp_bad_user_blocks" && c.Verdict != Fail {
			t.Errorf("a grown bad user block beside the unreported field: %+v, want failed", c)
		}
	}
	allOnes := nvme.OCPSmart{PhysicalMediaWritten: nvme.Uint128{Hi: ^uint64(0), Lo: ^uint64(0)}}
	w := WriteAmplification(allOnes, allOnes, nvme.SmartLog{}, nvme.SmartLog{DataUnitsWritten: nvme.Uint128{Lo: 10}})
	if !strings.Contains(w.Note, "not reported by the drive") {
		t.Errorf("WAF of an all-ones media counter: %+v, want no figure, saying why", w)
	}
}

// nvme-cli 2.3 (Debian 12's) prints a C0 page whose drive detected 5
// end-to-end errors and corrected none as "End to end corrected
// errors":5 (fixtures/nvme, printed through the shim): read by the
// version `nvme version` gave, ocp_end_to_end_errors fails.
func TestEndToEndErrorsFailOnNVMeCLI23(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "nvme", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	v, err := nvme.ParseVersion(read("version-2.3.txt"))
	if err != nil {
		t.Fatal(err)
	}
	before, err1 := nvme.ParseOCPSmart(read("ocp-smart-add-log-v2.3-autoval-values.json"), v)
	after, err2 := nvme.ParseOCPSmart(read("ocp-smart-add-log-v2.3-e2e-detected.json"), v)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, c := range JudgeOCP(before, after, specs.DefaultHealth().OCP) {
		if c.Name == "ocp_end_to_end_errors" && (c.Verdict != Fail || !strings.Contains(c.Message, "End to end detected errors: 0 before, 5 after")) {
			t.Errorf("nvme-cli %s: %+v, want failed: 0 before, 5 after", v, c)
		}
	}
}
