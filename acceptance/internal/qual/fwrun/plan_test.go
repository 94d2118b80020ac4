package fwrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

var fwSpec = &specs.Spec{File: "s.toml", Firmware: &specs.Firmware{Action: specs.FirmwareActivateNow, Slot: 2, MaxStall: time.Second}}

// ns is namespace name of controller ctrl, whose namespaces are all (the
// device information purge.Plan's refusal tests use).
func ns(name, ctrl string, all ...string) device.Info {
	var sib []string
	for _, n := range all {
		if n != name {
			sib = append(sib, n)
		}
	}
	return device.Info{Path: "/dev/" + name, Resolved: "/dev/" + name, Name: name, Block: true, Controller: ctrl, Siblings: sib, Size: 1 << 30}
}

func infoDrives(infos ...device.Info) []plan.Drive {
	var out []plan.Drive
	for _, i := range infos {
		out = append(out, plan.Drive{Info: i, Capacity: "1GiB"})
	}
	return out
}

// firmwareSteps are pl's firmware steps as "step: drives".
func firmwareSteps(pl plan.Plan) map[string][]int {
	out := map[string][]int{}
	for _, st := range pl.Steps {
		if st.Kind == plan.StepFirmware {
			out[st.Purge] = st.Drives
		}
	}
	return out
}

// The image flashed is the step's Image field, whatever its name holds:
// a path with " (" in it is the whole path.
func TestImageIsTheStepsField(t *testing.T) {
	img := "/tmp/fw (v2).bin"
	cfg := &cmdline.Config{Firmware: img, FirmwareBack: "/tmp/back (v1).bin"}
	ds := infoDrives(ns("nvme0n1", "nvme0", "nvme0n1"))
	var pl plan.Plan
	Add(&pl, cfg, fwSpec, ds)
	require.Len(t, pl.Steps, 2)
	assert.Equal(t, img, pl.Steps[0].Image)
	assert.Contains(t, pl.Steps[0].Name, img+" (0 bytes)")
	in := In{Drives: ds, Spec: fwSpec, Record: t.TempDir()}
	assert.Equal(t, img, input(in, pl.Steps[0], []int{0}).Image)
	assert.Equal(t, "/tmp/back (v1).bin", input(in, pl.Steps[1], []int{0}).Image)
}

// Each step's drives are those whose own TestFirmware/<name>/<step> -run
// selects, with two drives.
func TestAddSelectsEachDrivesStep(t *testing.T) {
	ds := infoDrives(device.Info{Path: "/dev/loop5", Name: "loop5", Block: true}, device.Info{Path: "/dev/loop6", Name: "loop6", Block: true})
	for _, tc := range []struct {
		run  string
		want map[string][]int
	}{
		{"", map[string][]int{"activate": {0, 1}, "back": {0, 1}}},
		{"TestFirmware", map[string][]int{"activate": {0, 1}, "back": {0, 1}}},
		{"TestFirmware/loop5", map[string][]int{"activate": {0}, "back": {0}}},
		{"TestFirmware/loop6", map[string][]int{"activate": {1}, "back": {1}}},
		{"TestFirmware/loop5/back", map[string][]int{"back": {0}}},
		{"TestFirmware/loop6/activate", map[string][]int{"activate": {1}}},
		{"TestFirmware/loop7", map[string][]int{}},
		{"TestSingleDrive", map[string][]int{}},
	} {
		t.Run(tc.run, func(t *testing.T) {
			var pl plan.Plan
			Add(&pl, &cmdline.Config{Firmware: "/a.bin", FirmwareBack: "/b.bin", Run: tc.run}, fwSpec, ds)
			assert.Equal(t, tc.want, firmwareSteps(pl))
		})
	}
}

// A drive absent from a resume gets no firmware step: what is at its
// path is not the drive the run held.
func TestAddNeverAnAbsentDrive(t *testing.T) {
	ds := infoDrives(device.Info{Path: "/dev/loop5", Name: "loop5", Block: true}, device.Info{Path: "/dev/loop6", Name: "loop6", Block: true})
	ds[1].Absent = "/dev/loop6 did not come back"
	var pl plan.Plan
	Add(&pl, &cmdline.Config{Firmware: "/a.bin", FirmwareBack: "/b.bin"}, fwSpec, ds)
	assert.Equal(t, map[string][]int{"activate": {0}, "back": {0}}, firmwareSteps(pl))
}

// A firmware commit reaches every namespace of its controller: a
// namespace not given, or given but left out by -run, is refused naming
// it and the fix; a controller whose namespaces are all the step's is one
// step (one group), the load on them all.
func TestRefuseANamespaceTheCommitReaches(t *testing.T) {
	n1, n2 := ns("nvme0n1", "nvme0", "nvme0n1", "nvme0n2"), ns("nvme0n2", "nvme0", "nvme0n1", "nvme0n2")
	other := ns("nvme1n1", "nvme1", "nvme1n1")
	cfg := &cmdline.Config{Firmware: "/a.bin"}

	errs := Refuse(cfg, fwSpec, []device.Info{n1, other})
	require.Len(t, errs, 1)
	assert.Equal(t, "/dev/nvme0n1: -firmware: a firmware commit reaches every namespace of nvme0, and its namespaces /dev/nvme0n2 not in -drives would take the activation's stall unloaded and unjudged: add them to -drives (and select their TestFirmware/<name>/activate), or leave -firmware out", errs[0].Error())

	reset := *fwSpec.Firmware
	reset.Action = specs.FirmwareReplaceAtReset
	errs = Refuse(cfg, &specs.Spec{Firmware: &reset}, []device.Info{n1})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "stall and the controller reset unloaded")

	sel := &cmdline.Config{Firmware: "/a.bin", Run: "TestFirmware/nvme0n1"}
	errs = Refuse(sel, fwSpec, []device.Info{n1, n2})
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "/dev/nvme0n2 left out by -run")

	assert.Empty(t, Refuse(cfg, fwSpec, []device.Info{n1, n2, other}))
	assert.Empty(t, Refuse(&cmdline.Config{}, fwSpec, []device.Info{n1}), "no -firmware")
	assert.Empty(t, Refuse(&cmdline.Config{Firmware: "/a.bin", Run: "TestSingleDrive"}, fwSpec, []device.Info{n1}), "no firmware step selected")

	ds := infoDrives(n1, other, n2)
	var pl plan.Plan
	Add(&pl, cfg, fwSpec, ds)
	require.Len(t, pl.Steps, 1)
	assert.Equal(t, [][]int{{0, 2}, {1}}, groups(ds, pl.Steps[0].Drives))
	in := input(In{Drives: ds, Spec: fwSpec, Record: t.TempDir()}, pl.Steps[0], []int{0, 2})
	assert.Equal(t, "/dev/nvme0n1", in.Device)
	assert.Equal(t, []string{"/dev/nvme0n2"}, in.Others)
	assert.Equal(t, "/dev/nvme0", in.Admin)
	assert.Equal(t, int64(256<<20), in.Known)
	// Two controllers, the wait for the load's first I/O included, and
	// 256 MiB written and read back on each of three drives at 1 GB/s.
	known := 3 * 2 * time.Duration(float64(256<<20)/1e9*1e9)
	assert.Equal(t, 2*(firmware.LoadStart+2*Settle+time.Second+10*time.Second)+known, pl.Steps[0].Est)
}

// The cell measured before and after the activation is the last one
// measured on the drive alone: the state the drive is in.
func TestRemeasuredIsTheLastCell(t *testing.T) {
	cell := func(test string, d int) plan.Cell {
		return plan.Cell{Kind: report.KindSingle, Test: test, Drives: []int{d}}
	}
	pl := plan.Plan{Steps: []plan.Step{
		{Kind: plan.StepMeasure, Est: time.Minute, Cells: []plan.Cell{cell("TestSingleDrive/1GiB/128KB_Sequential_Write", 0)}},
		{Kind: plan.StepRandom},
		{Kind: plan.StepMeasure, Est: 2 * time.Minute, Cells: []plan.Cell{cell("TestSingleDrive/1GiB/4KB_Random_Read", 0)}},
		{Kind: plan.StepMeasure, Est: time.Minute, Cells: []plan.Cell{cell("TestSingleDrive/1GiB/4KB_Random_Read", 1)}},
	}}
	st, ok := remeasured(pl, 0)
	require.True(t, ok)
	assert.Equal(t, "TestSingleDrive/1GiB/4KB_Random_Read", st.Cells[0].Test)
	assert.Equal(t, 2*time.Minute, st.Est)
	_, ok = remeasured(pl, 2)
	assert.False(t, ok)
}

// The spec's slot is refused, naming the drive, the spec, the controller
// and the fix, on a controller with fewer slots or whose slot 1 is
// read-only; a controller that reports no slot count, or is not known,
// is not checked.
func TestCheckSlots(t *testing.T) {
	cfg := &cmdline.Config{Firmware: "/a.bin"}
	spec := func(slot int) *specs.Spec {
		return &specs.Spec{File: "s.toml", Firmware: &specs.Firmware{Action: specs.FirmwareActivateNow, Slot: slot, MaxStall: time.Second}}
	}
	infos := []device.Info{ns("nvme0n1", "nvme0", "nvme0n1"), ns("nvme1n1", "nvme1", "nvme1n1")}
	two := map[string]nvme.Controller{"nvme0": {Model: "M", FRMW: 2<<1 | 1}}
	errs := CheckSlots(cfg, spec(3), infos, two)
	require.Len(t, errs, 1)
	assert.Equal(t, "/dev/nvme0n1: [firmware] slot = 3 in s.toml: controller nvme0 (M) has 2 firmware slot(s) (id-ctrl frmw 0x5): set slot to one of 1 to 2, or 0 to let the controller choose", errs[0].Error())
	errs = CheckSlots(cfg, spec(1), infos, two)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "keeps slot 1 read-only (id-ctrl frmw 0x5 bit 0): set slot to one of 2 to 2")
	assert.Empty(t, CheckSlots(cfg, spec(2), infos, two))
	assert.Empty(t, CheckSlots(cfg, spec(0), infos, two), "the controller chooses")
	assert.Empty(t, CheckSlots(cfg, spec(1), infos, map[string]nvme.Controller{"nvme0": {FRMW: 2 << 1}}), "slot 1 writable")
	assert.Empty(t, CheckSlots(cfg, spec(7), infos, map[string]nvme.Controller{"nvme0": {}}), "no slot count reported")
	assert.Empty(t, CheckSlots(&cmdline.Config{Firmware: "/a.bin", Run: "TestFirmware/nvme1n1"}, spec(3), infos, two), "nvme0n1 not selected")
}
