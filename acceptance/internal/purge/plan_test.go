package purge

import (
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// ns is namespace name of controller ctrl, whose namespaces are all.
func ns(name, ctrl string, all ...string) device.Info {
	var sib []string
	for _, n := range all {
		if n != name {
			sib = append(sib, n)
		}
	}
	return device.Info{Path: "/dev/" + name, Resolved: "/dev/" + name, Name: name, Block: true, Controller: ctrl, Siblings: sib}
}

var (
	perNamespace = nvme.Controller{Model: "per-ns", OACS: 1 << 1, SANICAP: 0x3}             // FNA 0
	formatAll    = nvme.Controller{Model: "format-all", OACS: 1 << 1, FNA: 1, SANICAP: 0x2} // FNA bit 0
	eraseAll     = nvme.Controller{Model: "erase-all", OACS: 1 << 1, FNA: 2, SANICAP: 0x1}  // FNA bit 1
	noSanitize   = nvme.Controller{Model: "no-sanitize", OACS: 1 << 1}
	overwrite    = nvme.Controller{Model: "overwrite", OACS: 1 << 1, SANICAP: 0x4}
	noFormat     = nvme.Controller{Model: "no-format", SANICAP: 0x2}
)

func TestPlanFormatAllRefusesNamespaceNotGiven(t *testing.T) {
	targets := []device.Info{ns("nvme0n1", "nvme0", "nvme0n1", "nvme0n2")}
	steps, errs := Plan(targets, Format, map[string]nvme.Controller{"nvme0": formatAll})
	if len(steps) != 0 || len(errs) != 1 {
		t.Fatalf("Plan = %v, %v; want no step and one refusal", steps, errs)
	}
	msg := errs[0].Error()
	for _, want := range []string{"/dev/nvme0n1", "/dev/nvme0n2", "add /dev/nvme0n2 to -drives, or purge with discard"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
}

func TestPlanSanitizeRefusesNamespaceNotGiven(t *testing.T) {
	targets := []device.Info{ns("nvme0n1", "nvme0", "nvme0n1", "nvme0n2", "nvme0n3"), ns("nvme1n1", "nvme1", "nvme1n1")}
	steps, errs := Plan(targets, Sanitize, map[string]nvme.Controller{"nvme0": perNamespace, "nvme1": perNamespace})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "/dev/nvme0n2, /dev/nvme0n3 are not in -drives") {
		t.Fatalf("Plan errors = %v, want one refusal naming /dev/nvme0n2, /dev/nvme0n3", errs)
	}
	// The other controller is still purged.
	if len(steps) != 1 || steps[0].Device != "/dev/nvme1" {
		t.Errorf("Plan steps = %v, want one sanitize of /dev/nvme1", steps)
	}
}

func TestPlanSanitizeOncePerController(t *testing.T) {
	all := []string{"nvme0n1", "nvme0n2"}
	targets := []device.Info{ns("nvme0n1", "nvme0", all...), ns("nvme0n2", "nvme0", all...)}
	steps, errs := Plan(targets, Sanitize, map[string]nvme.Controller{"nvme0": perNamespace})
	if len(errs) != 0 {
		t.Fatalf("Plan errors = %v", errs)
	}
	if len(steps) != 1 {
		t.Fatalf("Plan = %d steps (%v), want 1", len(steps), steps)
	}
	s := steps[0]
	if s.Kind != SanitizeNVM || s.Device != "/dev/nvme0" || s.SanAct != SanActBlockErase || !s.ControllerWide ||
		strings.Join(s.Targets, ",") != "/dev/nvme0n1,/dev/nvme0n2" {
		t.Errorf("Plan step = %+v, want one block-erase sanitize of /dev/nvme0 for both namespaces", s)
	}
	if got, want := strings.Join(s.Argv(), " "), "sanitize /dev/nvme0 --sanact=2"; got != want {
		t.Errorf("Argv() = %q, want %q", got, want)
	}
}

func TestPlanSanitizeAction(t *testing.T) {
	tests := []struct {
		ctrl nvme.Controller
		want int // 0: refused
	}{
		{perNamespace, SanActBlockErase}, // crypto and block: block wins
		{eraseAll, SanActCryptoErase},
		{overwrite, SanActOverwrite},
		{noSanitize, 0},
	}
	for _, tt := range tests {
		steps, errs := Plan([]device.Info{ns("nvme0n1", "nvme0", "nvme0n1")}, Sanitize, map[string]nvme.Controller{"nvme0": tt.ctrl})
		switch {
		case tt.want == 0:
			if len(steps) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "purge with format") {
				t.Errorf("Plan(sanitize, %s) = %v, %v; want a refusal suggesting format", tt.ctrl.Model, steps, errs)
			}
		case len(steps) != 1 || steps[0].SanAct != tt.want:
			t.Errorf("Plan(sanitize, %s) = %v, %v; want sanact %d", tt.ctrl.Model, steps, errs, tt.want)
		}
	}
}

func TestPlanFormatPerNamespace(t *testing.T) {
	all := []string{"nvme0n1", "nvme0n2", "nvme0n3"}
	// nvme0n3 is not given: a per-namespace format does not touch it.
	targets := []device.Info{ns("nvme0n1", "nvme0", all...), ns("nvme0n2", "nvme0", all...)}
	steps, errs := Plan(targets, Format, map[string]nvme.Controller{"nvme0": perNamespace})
	if len(errs) != 0 {
		t.Fatalf("Plan errors = %v", errs)
	}
	if len(steps) != 2 {
		t.Fatalf("Plan = %v, want one format per namespace", steps)
	}
	for i, s := range steps {
		want := "format " + targets[i].Path + " --ses=1 --force"
		if s.Kind != FormatNVM || s.ControllerWide || strings.Join(s.Argv(), " ") != want {
			t.Errorf("step %d = %+v (%q), want %q", i, s, strings.Join(s.Argv(), " "), want)
		}
	}
}

func TestPlanFormatControllerWide(t *testing.T) {
	all := []string{"nvme0n1", "nvme0n2"}
	targets := []device.Info{ns("nvme0n1", "nvme0", all...), ns("nvme0n2", "nvme0", all...)}
	for _, c := range []nvme.Controller{formatAll, eraseAll} {
		steps, errs := Plan(targets, Format, map[string]nvme.Controller{"nvme0": c})
		if len(errs) != 0 || len(steps) != 1 || !steps[0].ControllerWide || len(steps[0].Targets) != 2 {
			t.Errorf("Plan(format, FNA %#x) = %v, %v; want one controller-wide format", c.FNA, steps, errs)
		}
	}
}

func TestPlanFallbacks(t *testing.T) {
	loop := device.Info{Path: "/dev/loop3", Resolved: "/dev/loop3", Name: "loop3", Block: true, BackingFile: "/var/tmp/img"}
	unknown := ns("nvme5n1", "nvme5", "nvme5n1")
	nf := ns("nvme6n1", "nvme6", "nvme6n1")
	ctrls := map[string]nvme.Controller{"nvme6": noFormat}
	steps, errs := Plan([]device.Info{loop, unknown, nf}, Format, ctrls)
	if len(errs) != 0 || len(steps) != 3 {
		t.Fatalf("Plan = %v, %v; want three discard fallbacks", steps, errs)
	}
	wants := []string{"not one", "nvme-cli could not read", "does not support Format NVM"}
	for i, s := range steps {
		if s.Kind != DiscardBlocks || s.Note == "" || !strings.Contains(s.Note, wants[i]) || !strings.Contains(s.Note, "discarding instead") {
			t.Errorf("step %d = %+v, want a discard with a note saying %q", i, s, wants[i])
		}
	}
	if !strings.Contains(steps[0].Note, "/dev/loop3") || !strings.Contains(steps[0].Note, "loop device") {
		t.Errorf("loop note %q should name /dev/loop3 as a loop device", steps[0].Note)
	}
}

func TestPlanFilePunchHole(t *testing.T) {
	f := device.Info{Path: "drive.img", Resolved: "/tmp/drive.img", Size: 1 << 30}
	for _, m := range []string{Format, Sanitize, Discard} {
		steps, errs := Plan([]device.Info{f}, m, nil)
		if len(errs) != 0 || len(steps) != 1 || steps[0].Kind != PunchHole || steps[0].Device != "/tmp/drive.img" || steps[0].Size != 1<<30 {
			t.Errorf("Plan(file, %s) = %v, %v; want one punch hole of /tmp/drive.img", m, steps, errs)
		}
	}
}

func TestPlanDiscardAndNone(t *testing.T) {
	targets := []device.Info{ns("nvme0n1", "nvme0", "nvme0n1", "nvme0n2")}
	steps, errs := Plan(targets, Discard, nil)
	if len(errs) != 0 || len(steps) != 1 || steps[0].Kind != DiscardBlocks || steps[0].Note != "" {
		t.Errorf("Plan(discard) = %v, %v; want one plain discard (a sibling not given is fine)", steps, errs)
	}
	if steps, errs := Plan(targets, None, nil); len(steps) != 0 || len(errs) != 0 {
		t.Errorf("Plan(none) = %v, %v; want nothing", steps, errs)
	}
	if _, errs := Plan(targets, "wipe", nil); len(errs) != 1 || !strings.Contains(errs[0].Error(), `"wipe"`) {
		t.Errorf("Plan(wipe) errors = %v, want one naming the method", errs)
	}
}
