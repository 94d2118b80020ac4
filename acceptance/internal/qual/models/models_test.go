package models

import (
	"errors"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/specs"
)

func TestCheckModelsRefusesAnotherModelUnlessAnyModel(t *testing.T) {
	spec, err := specs.Load("solidigm-d7-ps1010")
	if err != nil {
		t.Fatal(err)
	}
	infos := []device.Info{
		{Path: "/dev/nvme0n1", Block: true, Controller: "nvme0", Model: "SOLIDIGM SB5PH27X076T"},
		{Path: "/dev/nvme1n1", Block: true, Controller: "nvme1", Model: "SAMSUNG MZQL27T6HBLA-00B7C"},
		{Path: "/dev/loop3", Block: true, Model: "loop"},
		{Path: "/tmp/img", Model: ""},
		{Path: "/dev/sda", Block: true, Model: "SAMSUNG MZ7L3960HCJR-00A07"},
	}
	checks, anyway, errs := Check(spec, infos, false)
	if len(errs) != 2 || !strings.Contains(errs[1].Error(), `/dev/sda is a "SAMSUNG MZ7L3960HCJR-00A07"`) {
		t.Fatalf("errors %v, want one for the Samsung NVMe drive and one for the SATA drive: neither is the spec's", errs)
	}
	for _, want := range []string{"/dev/nvme1n1", `"SAMSUNG MZQL27T6HBLA-00B7C"`, spec.File, "SOLIDIGM SB5PH27X*", "-spec", "-any-model"} {
		if !strings.Contains(errs[0].Error(), want) {
			t.Errorf("refusal %q does not name %q", errs[0], want)
		}
	}
	if anyway != "" {
		t.Errorf("nothing judged anyway without -any-model, got %q", anyway)
	}
	if !strings.Contains(checks["/dev/loop3"], "not checked") || !strings.Contains(checks["/tmp/img"], "not checked") {
		t.Errorf("test targets are not checked, the table says so: %q", checks)
	}
	if !strings.Contains(checks["/dev/nvme0n1"], "matches") {
		t.Errorf("the D7-PS1010 matches: %q", checks["/dev/nvme0n1"])
	}
	checks, anyway, errs = Check(spec, infos, true)
	if len(errs) != 0 || !strings.Contains(anyway, "/dev/nvme1n1 (SAMSUNG MZQL27T6HBLA-00B7C)") || strings.Contains(anyway, "nvme0n1") {
		t.Errorf("-any-model: errors %v, note %q; want none and the Samsung drive named", errs, anyway)
	}
	if !strings.Contains(checks["/dev/nvme1n1"], "-any-model") {
		t.Errorf("-any-model drive row: %q", checks["/dev/nvme1n1"])
	}
}

func TestChooseBuiltinPicksTheSpecThatNamesTheDrives(t *testing.T) {
	all := map[string]*specs.Spec{
		"a": {Name: "a", Models: []string{"SOLIDIGM SB5PH27X*"}},
		"b": {Name: "b", Models: []string{"SAMSUNG MZQL2*"}},
		"c": {Name: "c"},
	}
	load := func(n string) (*specs.Spec, error) {
		if s, ok := all[n]; ok {
			return s, nil
		}
		return nil, errors.New("no such spec")
	}
	names := []string{"a", "b", "c"}
	if n, ok := ChooseBuiltin(names, load, []string{"SAMSUNG MZQL23T8HCLS-00A07"}); !ok || n != "b" {
		t.Errorf("Samsung drives: %q, %v; want b", n, ok)
	}
	if _, ok := ChooseBuiltin(names, load, []string{"SAMSUNG MZQL23T8HCLS-00A07", "SOLIDIGM SB5PH27X076T"}); ok {
		t.Error("mixed models: no one spec names them all")
	}
	if _, ok := ChooseBuiltin(names, load, nil); ok {
		t.Error("no NVMe drive: nothing to choose by")
	}
}
