package powertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/specs"
)

func slotTest(t *testing.T, drives ...Drive) *Test {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("..", "..", "device", "slot", "testdata", "slots.tree")), "sys")
	return &Test{Live: true, Cfg: &cmdline.Config{PowerCut: Slot}, Sysfs: sys, Drives: drives, NVMe: nvmeNone(t),
		Spec: &specs.PowerLoss{Cycles: 3, ReadyWithin: time.Minute, CutAfter: 5 * time.Second, Size: 1 << 30, BS: 4096, FlushEvery: 32}}
}

// nvmeNone is an nvme-cli that reads no drive.
func nvmeNone(t *testing.T) (c nvme.CLI) {
	c.Binary = "false"
	return c
}

func ns(name, ctrl string) Drive { return Drive{Path: "/dev/" + name, Name: name, Ctrl: ctrl} }

// A slot cut is refused, before anything runs, when the slot holds a
// namespace or a switch port not given, or when no slot with a power
// controller holds the drive; a slot holding only what is given is cut
// by writing its power file, which the dry run prints.
func TestSlotProblems(t *testing.T) {
	for _, tt := range []struct {
		drives []Drive
		want   []string
	}{
		{[]Drive{ns("nvme0n1", "nvme0")}, []string{"parsing -power-cut: /dev/nvme0n1: slot 3 also holds namespace nvme0n2, which its power cut would take down"}},
		{[]Drive{ns("nvme1n1", "nvme1")}, []string{"slot 5 also holds namespace nvme2n1, PCI function 0000:21:01.0, PCI function 0000:23:00.0"}},
		{[]Drive{ns("nvme3n1", "nvme3")}, []string{"parsing -power-cut: /dev/nvme3n1: no PCIe slot with a power controller holds it"}},
		{[]Drive{{Path: "/dev/loop3", Name: "loop3"}}, []string{"/dev/loop3: no PCIe slot with a power controller holds it"}},
		{[]Drive{ns("nvme0n1", "nvme0"), ns("nvme0n2", "nvme0")}, nil},
	} {
		errs := slotTest(t, tt.drives...).Problems()
		if len(errs) != len(tt.want) {
			t.Errorf("Problems(%v) = %v, want %d", tt.drives, errs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("Problems(%v)[%d] = %v, want %q", tt.drives, i, errs[i], w)
			}
		}
	}
	pt := slotTest(t, ns("nvme0n1", "nvme0"), ns("nvme0n2", "nvme0"))
	var b bytes.Buffer
	pt.Print(&b)
	power := filepath.Join(pt.Sysfs, "bus", "pci", "slots", "3", "power")
	for _, want := range []string{
		fmt.Sprintf("/dev/nvme0n1: cut: echo 0 > '%s'", power),
		fmt.Sprintf("restore: echo 1 > '%s'", power),
		"data at risk: the first 1024 MiB",
		"3 cycle(s) a drive, plp false",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Print = %s\nwant %q in it", b.String(), want)
		}
	}
}

// A cut given with a spec without [power_loss] is refused.
func TestNoPowerLossTable(t *testing.T) {
	pt := &Test{Live: true, Cfg: &cmdline.Config{PowerCut: "cut {path}"}, SpecFile: "my.toml"}
	errs := pt.Problems()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "parsing -power-cut: spec my.toml has no [power_loss] table") {
		t.Errorf("Problems = %v", errs)
	}
}

// A replay judges each recorded cycle again, reading only the files
// run.json lists, and the cycles' cuts raise TestHealth's allowance of
// new OCP incomplete shutdowns.
func TestReplayJudgesRecordedCycles(t *testing.T) {
	dir := t.TempDir()
	cycles := []string{
		`{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10, "counters": [{"name": "unsafe shutdowns", "before": 4, "after": 5}]}`,
		`{"drive": "/dev/nvme0n1", "cycle": 2, "acknowledged": 10, "lost_writes": 2, "lba_bytes": 512, "lost": [{"offset": 4096, "length": 8192, "found": "old data"}]}`,
	}
	files := map[string]string{}
	for i, c := range cycles {
		rel := fmt.Sprintf("powerloss/nvme0n1/cycle_%d.json", i+1)
		if err := os.MkdirAll(filepath.Join(dir, "powerloss", "nvme0n1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		files[rel] = "listed"
	}
	health := specs.Health{OCP: specs.OCPHealth{IncompleteShutdownsMaxIncrease: 1}}
	var got []report.HealthCheck
	pt := &Test{Cfg: &cmdline.Config{}, Dir: dir, Files: files, Health: &health, Drives: []Drive{ns("nvme0n1", "nvme0")},
		Spec: &specs.PowerLoss{Cycles: 3}, Add: func(c []report.HealthCheck) { got = c }}
	drives, why := pt.Run(context.Background(), t.Logf)
	if why != "" || len(drives) != 1 {
		t.Fatalf("Run = %v, %q", drives, why)
	}
	d := drives[0]
	if len(d.Cycles) != 2 || d.Cycles[0].Verdict.Verdict != report.Pass || d.Cycles[1].Verdict.Verdict != report.Fail {
		t.Errorf("cycles = %+v, want a pass and a fail", d.Cycles)
	}
	if !strings.Contains(d.Cycles[1].Message, "LBA 8, 16 blocks (8192 bytes at offset 4096), came back as old data") {
		t.Errorf("cycle 2: %s", d.Cycles[1].Message)
	}
	if d.Skip != "the recording holds no power-loss cycle 3 of /dev/nvme0n1" {
		t.Errorf("Skip = %q", d.Skip)
	}
	if len(got) != 2 || got[1].Check != "cycle_2" || got[1].Verdict != report.Fail {
		t.Errorf("report checks = %+v", got)
	}
	if health.OCP.IncompleteShutdownsMaxIncrease != 3 {
		t.Errorf("incomplete shutdowns allowed = %d, want 1 + 2 cuts", health.OCP.IncompleteShutdownsMaxIncrease)
	}
	// A cycle file run.json does not list is not trusted.
	delete(files, "powerloss/nvme0n1/cycle_2.json")
	drives, _ = pt.Run(context.Background(), t.Logf)
	if len(drives[0].Cycles) != 1 {
		t.Errorf("an unlisted cycle was judged: %+v", drives[0].Cycles)
	}
}
