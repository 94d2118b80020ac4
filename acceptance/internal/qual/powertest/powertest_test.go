package powertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/specs"
)

func cmdTest(t *testing.T, cut, restore string, nv nvme.CLI, drives ...Drive) *Test {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("..", "..", "device", "slot", "testdata", "slots.tree")), "sys")
	return &Test{Live: true, Cfg: &cmdline.Config{PowerCut: cut, PowerRestore: restore}, Sysfs: sys, Drives: drives, NVMe: nv,
		Spec: &specs.PowerLoss{Cycles: 3, ReadyWithin: time.Minute, CutAfter: 5 * time.Second, Size: 1 << 30, BS: 4096, FlushEvery: 32}}
}

// nvmeSerial is an nvme-cli whose every drive reports serial sn.
func nvmeSerial(t *testing.T, sn string) nvme.CLI { return nvmeVWC(t, sn, 0) }

// nvmeVWC is an nvme-cli whose every drive reports serial sn and vwc.
func nvmeVWC(t *testing.T, sn string, vwc int) nvme.CLI {
	bin := filepath.Join(t.TempDir(), "nvme")
	if err := os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\necho '{\"sn\": \"%s\", \"mn\": \"M\", \"fr\": \"F\", \"vwc\": %d}'\n", sn, vwc)), 0o755); err != nil {
		t.Fatal(err)
	}
	return nvme.CLI{Binary: bin}
}

// nvmeNone is an nvme-cli that reads no drive.
func nvmeNone(t *testing.T) (c nvme.CLI) {
	c.Binary = "false"
	return c
}

func ns(name, ctrl string) Drive { return Drive{Path: "/dev/" + name, Name: name, Ctrl: ctrl} }

func shares(d Drive, names ...string) Drive {
	d.Shares = names
	return d
}

// The whole host's cut cuts every drive and device of the host by
// design: a drive's other namespaces are not refused there.
func TestHostCutSharesNotRefused(t *testing.T) {
	pt := cmdTest(t, "bmc power off", "", nvmeNone(t), shares(ns("nvme0n1", "nvme0"), "nvme0n2"))
	pt.Cfg.PowerCutHost = true
	assert.Empty(t, pt.Problems())
}

// A drive that did not come back at its path is looked for among the
// host's other NVMe namespaces by its identity, by an identifier unique
// to it, its own name passed over; one namespace through two controllers
// (native multipath off) is one drive found; a drive that repeats its
// serial (no NGUID, EUI-64 or UUID), or two subsystems' namespaces that
// match, are no drive found.
func TestRenamedFindsTheDrive(t *testing.T) {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("..", "..", "device", "slot", "testdata", "slots.tree")), "sys")
	a := identity.Identity{Kind: "nvme", NSID: 1, NGUID: "0123456789abcdef0123456789abcdef", Serial: "S1", Model: "M", Bytes: 1 << 30, Subsystem: "nqn.a"}
	other := a
	other.Subsystem = "nqn.b"
	noNQN := a
	noNQN.Subsystem = ""
	cheap := identity.Identity{Kind: "nvme", NSID: 1, Serial: "0123456789", Model: "CHEAP SSD", Bytes: 1 << 30}
	for _, tt := range []struct {
		ids  map[string]identity.Identity
		self string
		want identity.Identity
		at   string
	}{
		{map[string]identity.Identity{"/dev/nvme2n1": a}, "nvme0n1", a, "/dev/nvme2n1"},
		{map[string]identity.Identity{"/dev/nvme2n1": a}, "nvme2n1", a, ""},
		{map[string]identity.Identity{"/dev/nvme0n2": a, "/dev/nvme2n1": a}, "nvme0n1", a, "/dev/nvme0n2"},
		{map[string]identity.Identity{"/dev/nvme0n2": a, "/dev/nvme2n1": other}, "nvme0n1", a, ""},
		{map[string]identity.Identity{"/dev/nvme2n1": noNQN}, "nvme0n1", noNQN, "/dev/nvme2n1"},
		{map[string]identity.Identity{"/dev/nvme0n2": noNQN, "/dev/nvme2n1": noNQN}, "nvme0n1", noNQN, ""},
		{map[string]identity.Identity{"/dev/nvme2n1": cheap}, "nvme0n1", cheap, ""},
		{map[string]identity.Identity{"/dev/nvme2n1": a}, "nvme0n1", cheap, ""},
	} {
		identify := func(p string) (identity.Identity, error) {
			if id, ok := tt.ids[p]; ok {
				return id, nil
			}
			return identity.Identity{}, os.ErrNotExist
		}
		assert.Equal(t, tt.at, renamed(sys, identify, tt.self, tt.want.String()), "%v, self %s, want %s", tt.ids, tt.self, tt.want)
	}
}

// A drive's values are read once: after a cut its controller may come
// back under another name, and its old name be another drive's or none,
// so that its slot read again would be another drive's or empty (an
// empty outlet is every outlet to some PDUs).
func TestValuesReadOnce(t *testing.T) {
	pt := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), ns("nvme0n1", "nvme0"))
	d := pt.Drives[0]
	assert.Equal(t, "3", pt.values(d)["slot"])
	// nvme0 comes back as nvme4; nvme0 is now a controller in slot 5.
	link := filepath.Join(pt.Sysfs, "class", "nvme", "nvme0")
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink("../../devices/pci0000:16/0000:16:03.0/0000:20:00.0/0000:21:00.0/0000:22:00.0/nvme/nvme1", link))
	assert.Equal(t, "3", pt.values(d)["slot"])
	assert.Contains(t, pt.config(d, 2).Env, "DQ_SLOT=3")
	fresh := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), ns("nvme0n1", "nvme0"))
	fresh.Sysfs = pt.Sysfs
	assert.Equal(t, "5", fresh.values(d)["slot"], "read again, the slot would be another drive's")
}

// A command that uses a drive's slot or serial is refused, before
// anything runs (a dry run too), for a drive that has none: an empty
// outlet is every outlet to some PDUs. Two drives with one serial are
// refused. The dry run prints the commands and their variables.
func TestCommandProblems(t *testing.T) {
	for _, tt := range []struct {
		cut, restore string
		nv           nvme.CLI
		drives       []Drive
		want         []string
	}{
		{"pdu off {path}", "pdu on $DQ_PATH", nvmeNone(t), []Drive{ns("nvme0n1", "nvme0")}, nil},
		{"pdu off {path}", "pdu on {path}", nvmeNone(t), []Drive{ns("nvme1n1", "nvme1")}, nil},
		{"pdu off {slot}", "pdu on $DQ_SLOT", nvmeNone(t), []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")}, []string{
			"parsing -power-cut: a cut of /dev/nvme0n1 also cuts what -drives does not give: /dev/nvme0n2 (in its PCIe slot 3); each would lose its power unwritten and unjudged (a mounted namespace, the boot drive): name the drive's own outlet",
			"parsing -power-cut: a cut of /dev/nvme1n1 also cuts what -drives does not give: /dev/nvme2n1 (in its PCIe slot 5), PCI function 0000:21:01.0 (in its PCIe slot 5), PCI function 0000:23:00.0 (in its PCIe slot 5);"}},
		{"pdu off {slot}", "pdu on {slot}", nvmeNone(t), []Drive{ns("nvme1n1", "nvme1"), ns("nvme2n1", "nvme2")}, []string{
			"parsing -drives: /dev/nvme1n1 and /dev/nvme2n1 are both in PCIe slot 5 (in it or behind a switch in it), which {slot} cuts: a power cut of one is a cut of the other; give one of them"}},
		{"pdu off {serial}", "pdu on {serial}", nvmeSerial(t, "S1"), []Drive{shares(ns("nvme0n1", "nvme0"), "nvme0n2")}, []string{
			"parsing -power-cut: a cut of /dev/nvme0n1 also cuts what -drives does not give: /dev/nvme0n2 (another namespace of its NVM subsystem); each would lose its power unwritten and unjudged (a mounted namespace, the boot drive): give a drive whose controller has no other namespace"}},
		{"pdu off {slot}", "pdu on {slot}", nvmeSerial(t, "S1"), []Drive{shares(ns("nvme0n1", "nvme0"), "nvme0n2"), shares(ns("nvme0n2", "nvme0"), "nvme0n1")}, []string{
			"parsing -drives: /dev/nvme0n1 and /dev/nvme0n2 are namespaces of one NVM subsystem: a power cut of one is a cut of the other; give one of them"}},
		{"pdu off {slot}", "pdu on $DQ_SLOT", nvmeNone(t), []Drive{ns("nvme3n1", "nvme3")}, []string{
			"parsing -power-cut: /dev/nvme3n1 has no slot (no /sys/bus/pci/slots/NAME holds its controller)",
			"parsing -power-restore: /dev/nvme3n1 has no slot"}},
		{"pdu off {serial}", "pdu on {path}", nvmeNone(t), []Drive{{Path: "/dev/loop3", Name: "loop3"}}, []string{
			"parsing -power-cut: /dev/loop3 has no serial (nvme-cli reads no NVMe serial of it): the command would run with it empty"}},
		{"pdu off {serial}", "pdu on {serial}", nvmeSerial(t, "S1"), []Drive{ns("nvme0n1", "nvme0")}, nil},
		{"pdu off {path}", "pdu on {path}", nvmeSerial(t, "S1"), []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")}, []string{
			"parsing -drives: /dev/nvme0n1 and /dev/nvme1n1 have the same serial S1"}},
	} {
		errs := cmdTest(t, tt.cut, tt.restore, tt.nv, tt.drives...).Problems()
		if len(errs) != len(tt.want) {
			t.Errorf("Problems(%s, %v) = %v, want %d", tt.cut, tt.drives, errs, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(errs[i].Error(), w) {
				t.Errorf("Problems(%v)[%d] = %v, want %q", tt.drives, i, errs[i], w)
			}
		}
	}
	pt := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), ns("nvme0n1", "nvme0"))
	var b bytes.Buffer
	pt.Print(&b)
	for _, want := range []string{
		`/dev/nvme0n1: cut: pdu off "$DQ_SLOT"`,
		`restore: pdu on "$DQ_SLOT"`,
		"run by sh with DQ_PATH=/dev/nvme0n1 DQ_SERIAL= DQ_SLOT=3 DQ_NAME=nvme0n1",
		"data at risk: the first 1024 MiB",
		"3 cycle(s) a drive, plp false",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Print = %s\nwant %q in it", b.String(), want)
		}
	}
}

// A drive's cut reaches the other namespaces of its subsystem, not the
// drive itself through another controller (native multipath off: one
// namespace, two block devices), and every sibling when the subsystem's
// namespace IDs are not known.
func TestSharesFromSiblings(t *testing.T) {
	info := device.Info{Name: "nvme0n1", Controller: "nvme0", Subsystem: "nqn.x", NSID: 1,
		Siblings: []string{"nvme0n2", "nvme1n1"}, Reach: map[string]int{"nvme0n1": 1, "nvme0n2": 2, "nvme1n1": 1}}
	bare := info
	bare.Reach = nil
	// A dual-port head: both its controllers are its own (in a slot, not
	// another device).
	head := info
	head.Paths = []device.Path{{Name: "nvme0c0n1", Controller: "nvme0"}, {Name: "nvme0c1n1", Controller: "nvme1"}}
	pt := New(&cmdline.Config{}, &specs.Spec{}, []plan.Drive{{Info: info}, {Info: bare}, {Info: head}}, false, nil, nil)
	assert.Equal(t, []string{"nvme0n2"}, pt.Drives[0].Shares)
	assert.Equal(t, []string{"nvme0n2", "nvme1n1"}, pt.Drives[1].Shares)
	assert.Equal(t, []string{"nvme0"}, pt.Drives[0].controllers())
	assert.Equal(t, []string{"nvme0", "nvme1"}, pt.Drives[2].controllers())
}

// A drive in a slot of its own behind a switch that sits in another
// drive's slot goes with that slot: the pair is refused, though their
// slots' names differ.
func TestNestedSlots(t *testing.T) {
	pt := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), ns("nvme1n1", "nvme1"), ns("nvme2n1", "nvme2"))
	six := filepath.Join(pt.Sysfs, "bus", "pci", "slots", "6")
	require.NoError(t, os.MkdirAll(six, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(six, "address"), []byte("0000:22:00\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(six, "power"), []byte("1\n"), 0o644))
	assert.Equal(t, "6", pt.values(pt.Drives[0])["slot"], "nvme1's own slot, behind the switch")
	assert.Equal(t, "5", pt.values(pt.Drives[1])["slot"])
	errs := pt.Problems()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "/dev/nvme2n1 and /dev/nvme1n1 are both in PCIe slot 5 (in it or behind a switch in it)")
}

// A dual-port head behind a switch in slot 5: both its controllers are
// its own, the other drive in the slot is not; and that other drive,
// whose slot (5) holds a port of the head that has a slot of its own (6),
// cuts the head with it: refused as a pair.
func TestDualPortHeadInASlot(t *testing.T) {
	sys := filepath.Join(testenv.BuildTree(t, filepath.Join("..", "..", "device", "slot", "testdata", "dualport.tree")), "sys")
	head := ns("nvme1n1", "nvme1")
	head.Ctrls = []string{"nvme1", "nvme2"}
	pt := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), head)
	pt.Sysfs = sys
	errs := pt.Problems()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "/dev/nvme3n1 (in its PCIe slot 5)")
	assert.NotContains(t, errs[0].Error(), "0000:23:00.0", "its second port is its own")
	one := ns("nvme1n1", "nvme1") // known by its first controller alone
	pt = cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), one)
	pt.Sysfs = sys
	assert.Contains(t, fmt.Sprint(pt.Problems()), "PCI function 0000:23:00.0 (in its PCIe slot 5)", "the fixture shows the second port")

	six := filepath.Join(sys, "bus", "pci", "slots", "6")
	require.NoError(t, os.MkdirAll(six, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(six, "address"), []byte("0000:22:00\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(six, "power"), []byte("1\n"), 0o644))
	pt = cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), head, ns("nvme3n1", "nvme3"))
	pt.Sysfs = sys
	assert.Equal(t, "6", pt.values(pt.Drives[0])["slot"])
	assert.Contains(t, fmt.Sprint(pt.Problems()), "/dev/nvme3n1 and /dev/nvme1n1 are both in PCIe slot 5 (in it or behind a switch in it)")
}

// A native multipath head alone in its slot is not refused for its own
// controller's PCI function (its block device hangs under its
// subsystem, not the controller).
func TestSlotOfAHead(t *testing.T) {
	pt := cmdTest(t, "pdu off {slot}", "pdu on {slot}", nvmeNone(t), ns("nvme0n1", "nvme0"))
	pt.Sysfs = filepath.Join(testenv.BuildTree(t, filepath.Join("..", "..", "device", "slot", "testdata", "heads.tree")), "sys")
	assert.Empty(t, pt.Problems())
	assert.Equal(t, "3", pt.values(pt.Drives[0])["slot"])
}

// A command that names neither the serial nor the slot (a fixture's
// script) is given neither: the checks of a slot that holds others, or
// of a drive without a serial, are made of a command that uses them, and
// a script that read DQ_SLOT of its own would cut a switch's other port.
func TestUnnamedValuesNotGiven(t *testing.T) {
	pt := cmdTest(t, "/opt/fixture/cut", "/opt/fixture/restore", nvmeNone(t), ns("nvme1n1", "nvme1"))
	assert.Empty(t, pt.Problems(), "nothing of the slot is used")
	assert.Equal(t, []string{"DQ_PATH=/dev/nvme1n1", "DQ_SERIAL=", "DQ_NAME=nvme1n1"}, pt.config(pt.Drives[0], 1).Env, "the serial set (empty when none: refused of a command that names it), the slot not")
	pt = cmdTest(t, "/opt/fixture/cut $DQ_SLOT", "/opt/fixture/restore", nvmeNone(t), ns("nvme1n1", "nvme1"))
	assert.Len(t, pt.Problems(), 1, "the slot's other devices refused")
}

// A drive with a volatile write cache the kernel treats as write through
// gets no flush: refused, naming the file and the fix. A drive without
// a volatile cache, or a kernel that sends flushes, is not.
func TestWriteThroughRefused(t *testing.T) {
	for _, tt := range []struct {
		cache string
		vwc   int
		want  bool
	}{{"write through\n", 1, true}, {"write back\n", 1, false}, {"write through\n", 0, false}} {
		pt := cmdTest(t, "pdu off {path}", "pdu on {path}", nvmeVWC(t, "S1", tt.vwc), ns("nvme0n1", "nvme0"))
		q := filepath.Join(pt.Sysfs, "class", "block", "nvme0n1", "queue")
		if err := os.MkdirAll(q, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(q, "write_cache"), []byte(tt.cache), 0o644); err != nil {
			t.Fatal(err)
		}
		errs := pt.Problems()
		if got := len(errs) == 1 && strings.Contains(errs[0].Error(), "/dev/nvme0n1: its controller reports a volatile write cache but") && strings.Contains(errs[0].Error(), "echo 'write back' >"); got != tt.want || len(errs) > 1 || !tt.want && len(errs) > 0 {
			t.Errorf("write_cache %q, vwc %d: Problems = %v", tt.cache, tt.vwc, errs)
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
	if len(d.Cycles) != 3 || d.Cycles[0].Verdict.Verdict != report.Pass || d.Cycles[1].Verdict.Verdict != report.Fail || d.Cycles[2].Verdict.Verdict != report.Inconclusive {
		t.Errorf("cycles = %+v, want a pass, a fail and one never run", d.Cycles)
	}
	if !strings.Contains(d.Cycles[1].Message, "LBA 8, 16 blocks (8192 bytes at offset 4096), came back as old data") {
		t.Errorf("cycle 2: %s", d.Cycles[1].Message)
	}
	if !strings.Contains(d.Cycles[2].Message, "cycle 3 of 3 was never run") {
		t.Errorf("cycle 3: %s", d.Cycles[2].Message)
	}
	if len(got) != 3 || got[1].Check != "cycle_2" || got[1].Verdict != report.Fail || got[2].Verdict != report.Inconclusive {
		t.Errorf("report checks = %+v", got)
	}
	if health.OCP.IncompleteShutdownsMaxIncrease != 3 {
		t.Errorf("incomplete shutdowns allowed = %d, want 1 + 2 cuts", health.OCP.IncompleteShutdownsMaxIncrease)
	}
	pt.AllowRecorded()
	if health.OCP.IncompleteShutdownsMaxIncrease != 3 {
		t.Errorf("incomplete shutdowns allowed = %d after Run and AllowRecorded, want 1 + 2 cuts once", health.OCP.IncompleteShutdownsMaxIncrease)
	}
	// A cycle file run.json does not list is not trusted.
	delete(files, "powerloss/nvme0n1/cycle_2.json")
	drives, _ = pt.Run(context.Background(), t.Logf)
	if len(drives[0].Cycles) != 3 || drives[0].Cycles[1].Verdict.Verdict != report.Inconclusive {
		t.Errorf("an unlisted cycle was judged: %+v", drives[0].Cycles)
	}
}

// A replay judges every cycle run.json lists whatever the spec's cycles:
// a failed cycle 2 judged with a spec of 1 cycle still fails, and a
// listed cycle whose file is gone fails as missing. A spec asking 3
// cycles of a recording holding 1 is not QUALIFIED.
func TestReplayKeepsEveryRecordedCycle(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for k, c := range []string{
		`{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10}`,
		`{"drive": "/dev/nvme0n1", "cycle": 2, "acknowledged": 10, "lost_writes": 1, "lost": [{"offset": 0, "length": 4096, "found": "zeros"}]}`,
	} {
		rel := fmt.Sprintf("powerloss/nvme0n1/cycle_%d.json", k+1)
		if err := os.MkdirAll(filepath.Join(dir, "powerloss", "nvme0n1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		files[rel] = "listed"
	}
	var r report.Run
	pt := &Test{Cfg: &cmdline.Config{}, Dir: dir, Files: files, Drives: []Drive{ns("nvme0n1", "nvme0")},
		Spec: &specs.PowerLoss{Cycles: 1}, Add: func(c []report.HealthCheck) { r.PowerLoss = c }}
	gate := func() report.Gate {
		for _, g := range r.Gates() {
			if g.Name == report.PowerLossGate {
				return g
			}
		}
		t.Fatalf("no power_loss gate in %+v", r.Gates())
		return report.Gate{}
	}
	pt.Run(context.Background(), t.Logf)
	if g := gate(); g.Verdict != report.NotQualified {
		t.Errorf("a failed cycle 2 judged with a spec of 1 cycle: gate %s", g)
	}
	if err := os.Remove(filepath.Join(dir, "powerloss", "nvme0n1", "cycle_2.json")); err != nil {
		t.Fatal(err)
	}
	pt.Run(context.Background(), t.Logf)
	if g := gate(); g.Verdict != report.NotQualified || !strings.Contains(g.Reason, "recorded cycle 2 missing") {
		t.Errorf("a listed cycle 2 deleted: gate %s", g)
	}
	delete(files, "powerloss/nvme0n1/cycle_2.json")
	pt.Spec.Cycles = 3
	pt.Run(context.Background(), t.Logf)
	if g := gate(); g.Verdict != report.CapacityInconclusive || !strings.Contains(g.Reason, "cycle 2 of 3 was never run") {
		t.Errorf("1 of 3 cycles recorded: gate %s", g)
	}
}

// A spec with [power_loss] run without a cut method tested nothing: the
// power_loss gate is INCONCLUSIVE, saying so.
func TestNoCutMethodInconclusive(t *testing.T) {
	var r report.Run
	pt := &Test{Live: true, Cfg: &cmdline.Config{}, Drives: []Drive{ns("nvme0n1", "nvme0")}, Spec: &specs.PowerLoss{Cycles: 1},
		Add: func(c []report.HealthCheck) { r.PowerLoss = c }}
	if _, why := pt.Run(context.Background(), t.Logf); why == "" {
		t.Fatal("run without a cut method")
	}
	for _, g := range r.Gates() {
		if g.Name == report.PowerLossGate {
			if g.Verdict != report.CapacityInconclusive || !strings.Contains(g.Reason, "not tested: no cut method") {
				t.Errorf("gate %s", g)
			}
			return
		}
	}
	t.Errorf("no power_loss gate: %+v", r.Gates())
}

// A resumed run trusts only the cycle files run.json lists: a cycle file
// on disk it does not list (written after the run's last listing, or
// forged) is run again, here stopped before its cut.
func TestResumeDoesNotTrustUnlisted(t *testing.T) {
	dir := t.TempDir()
	rel := "powerloss/nvme0n1/cycle_1.json"
	if err := os.MkdirAll(filepath.Join(dir, "powerloss", "nvme0n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(`{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10, "counters": [{"name": "unsafe shutdowns", "before": 4, "after": 5}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pt := &Test{Live: true, Cfg: &cmdline.Config{PowerCut: "cut {path}", PowerRestore: "restore {path}", Resume: true}, Dir: dir, Files: map[string]string{},
		Drives: []Drive{ns("nvme0n1", "nvme0")}, Spec: &specs.PowerLoss{Cycles: 1}, Add: func([]report.HealthCheck) {}}
	drives, _ := pt.Run(ctx, t.Logf)
	if len(drives) != 1 || len(drives[0].Cycles) != 1 || drives[0].Cycles[0].Verdict.Verdict != report.Inconclusive || !strings.Contains(drives[0].Skip, "the run was stopped") {
		t.Errorf("an unlisted cycle file was trusted by a resume: %+v", drives)
	}
}

// A drive is known by what its path resolves to and that device's
// identity, not by its size: a link repointed to another loop device of
// the same size over a copy of the same data identifies otherwise.
func TestIdentifySwappedDrive(t *testing.T) {
	testenv.MustHaveLoop(t)
	a, b := testenv.Loop(t, 8<<20), testenv.Loop(t, 8<<20)
	link := filepath.Join(t.TempDir(), "drive")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	was, err := Identify(link)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := Identify(link); err != nil || again != was {
		t.Fatalf("Identify(%s) = %q, %v; was %q", link, again, err, was)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, link); err != nil {
		t.Fatal(err)
	}
	now, err := Identify(link)
	if err != nil {
		t.Fatal(err)
	}
	if now == was {
		t.Errorf("a swapped loop device identifies as the drive it replaced: %s", now)
	}
	if !strings.Contains(was, "loop device over") || !strings.Contains(was, "inode") {
		t.Errorf("Identify = %q, want the loop device's backing file by inode", was)
	}
}

// A recording's samples file each drive's cycles in its folder, whatever
// its path now (a resume that found the drives renumbered): drive 1, now
// at nvme1n1, is judged by the cycles in nvme0n1's folder, which name
// the path it had. A cycle that names neither the drive's path nor one
// recorded for it was filed under another drive: it fails.
func TestCyclesFollowTheRecordedDrive(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for folder, c := range map[string]string{
		"nvme0n1": `{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10, "lost_writes": 1, "lost": [{"offset": 0, "length": 4096, "found": "zeros"}]}`,
		"nvme1n1": `{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10}`,
	} {
		rel := "powerloss/" + folder + "/cycle_1.json"
		if err := os.MkdirAll(filepath.Join(dir, "powerloss", folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		files[rel] = "listed"
	}
	var got []report.HealthCheck
	pt := &Test{Cfg: &cmdline.Config{}, Dir: dir, Files: files, Drives: []Drive{ns("nvme1n1", "nvme1"), ns("nvme0n1", "nvme0")},
		Spec: &specs.PowerLoss{Cycles: 1}, Add: func(c []report.HealthCheck) { got = c }}
	pt.File(&record.Samples{Drives: []record.DriveSample{
		{PowerLoss: "nvme0n1", PowerLossPaths: []string{"/dev/nvme0n1"}},
		{PowerLoss: "nvme1n1", PowerLossPaths: []string{"/dev/nvme1n1"}},
	}})
	pt.Run(context.Background(), t.Logf)
	if len(got) != 2 || got[0].Drive != "/dev/nvme1n1" || got[0].Verdict != report.Fail || !strings.Contains(got[0].Message, "came back as zeros") {
		t.Errorf("drive 1 (now /dev/nvme1n1) is judged by its own cycle, which lost writes: %+v", got)
	}
	if len(got) != 2 || got[1].Verdict != report.Fail || !strings.Contains(got[1].Message, `it is a cycle of drive "/dev/nvme0n1", filed under /dev/nvme0n1, whose cycles name /dev/nvme1n1`) {
		t.Errorf("a cycle of drive 1 filed in drive 2's folder: %+v", got)
	}
}

// A run.json edited to list a cycle far beyond any spec's (cycle
// 2,000,000) is one failure naming it as an edited recording, not two
// million cycles never run: the cycles up to the spec's are judged.
func TestReplayRefusesACycleBeyondAnySpec(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "powerloss", "nvme0n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "powerloss", "nvme0n1", "cycle_1.json"), []byte(`{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10}`), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"powerloss/nvme0n1/cycle_1.json": "listed", "powerloss/nvme0n1/cycle_2000000.json": "listed"}
	var got []report.HealthCheck
	pt := &Test{Cfg: &cmdline.Config{}, Dir: dir, Files: files, Drives: []Drive{ns("nvme0n1", "nvme0")},
		Spec: &specs.PowerLoss{Cycles: 1}, Add: func(c []report.HealthCheck) { got = c }}
	drives, _ := pt.Run(context.Background(), t.Logf)
	if len(drives) != 1 || len(drives[0].Cycles) != 2 || len(got) != 2 {
		t.Fatalf("cycles %d, checks %d, want the edited listing and cycle 1", len(drives[0].Cycles), len(got))
	}
	if got[0].Verdict != report.Fail || got[0].Check != "cycle_2000000" || !strings.Contains(got[0].Message, "run.json lists power-loss cycle 2000000 of /dev/nvme0n1, more than any spec may ask for (1000): an edited recording") {
		t.Errorf("check %+v", got[0])
	}
	if got[1].Check != "cycle_1" || got[1].Verdict != report.Pass {
		t.Errorf("cycle 1: %+v", got[1])
	}
}

// A replay judged with a spec without [power_loss] still judges every
// cycle run.json lists: a recorded failure is not dropped by the spec.
func TestReplayWithoutPowerLossTableJudgesListed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "powerloss", "nvme0n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := `{"drive": "/dev/nvme0n1", "cycle": 1, "acknowledged": 10, "lost_writes": 1, "lost": [{"offset": 0, "length": 4096, "found": "zeros"}]}`
	if err := os.WriteFile(filepath.Join(dir, "powerloss", "nvme0n1", "cycle_1.json"), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []report.HealthCheck
	pt := &Test{Cfg: &cmdline.Config{}, Dir: dir, Files: map[string]string{"powerloss/nvme0n1/cycle_1.json": "listed"}, Drives: []Drive{ns("nvme0n1", "nvme0")},
		Add: func(c []report.HealthCheck) { got = c }}
	_, why := pt.Run(context.Background(), t.Logf)
	if why != "" || len(got) != 1 || got[0].Verdict != report.Fail || !strings.Contains(got[0].Message, "came back as zeros") {
		t.Errorf("Run: %q, checks %+v; want the recorded cycle judged, failed", why, got)
	}
	if pt.Spec != nil {
		t.Errorf("the test's spec is left %+v, was none", pt.Spec)
	}
}

// Without TestPowerLoss in the process (-replay -run TestHealth), the
// cycles run.json lists still raise TestHealth's allowance, once; not
// for a drive that promises power-loss protection.
func TestAllowRecorded(t *testing.T) {
	files := map[string]string{"powerloss/nvme0n1/cycle_1.json": "x", "powerloss/nvme0n1/cycle_2.json": "x", "powerloss/nvme1n1/cycle_1.json": "x"}
	for _, tt := range []struct {
		plp  bool
		want uint64
	}{{false, 3}, {true, 1}} {
		health := specs.Health{OCP: specs.OCPHealth{IncompleteShutdownsMaxIncrease: 1}}
		pt := &Test{Cfg: &cmdline.Config{}, Files: files, Health: &health, Drives: []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")},
			Spec: &specs.PowerLoss{Cycles: 1, PLP: tt.plp}}
		pt.AllowRecorded()
		pt.AllowRecorded()
		if got := health.OCP.IncompleteShutdownsMaxIncrease; got != tt.want {
			t.Errorf("plp %v: incomplete shutdowns allowed = %d, want %d", tt.plp, got, tt.want)
		}
	}
}

// A resumed cycle runs in a directory of its own: what an unlisted
// cycle directory held (a link to a file outside the recording, a FIFO
// where fio's output goes) is removed before the cycle starts, and a
// drive's folder that is a link is removed, not followed.
func TestResumeClearsAnUnlistedCycleDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	cyc := filepath.Join(dir, "powerloss", "nvme0n1", "cycle_1")
	if err := os.MkdirAll(cyc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(cyc, "fio.stderr")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cyc, "fio.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The second drive's folder is a link to a directory outside.
	if err := os.MkdirAll(filepath.Join(outside, "cycle_1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "powerloss", "nvme1n1")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pt := &Test{Live: true, Cfg: &cmdline.Config{PowerCut: "cut {path}", PowerRestore: "restore {path}", Resume: true}, Dir: dir, Files: map[string]string{},
		Drives: []Drive{ns("nvme0n1", "nvme0"), ns("nvme1n1", "nvme1")}, Spec: &specs.PowerLoss{Cycles: 1}, Add: func([]report.HealthCheck) {}}
	pt.Run(ctx, t.Logf)
	if _, err := os.Lstat(cyc); !os.IsNotExist(err) {
		ents, _ := os.ReadDir(cyc)
		t.Errorf("the unlisted cycle directory is still there (%v): %v", err, ents)
	}
	if st, err := os.Lstat(filepath.Join(dir, "powerloss", "nvme1n1")); err == nil && st.Mode()&os.ModeSymlink != 0 {
		t.Errorf("the drive's folder is still a link")
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "keep" {
		t.Errorf("the file outside the recording: %q, %v; want it untouched", data, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "cycle_1")); err != nil {
		t.Errorf("the directory a linked folder pointed to was changed: %v", err)
	}
}

// A cycle that begins lists in run.json only its own file and
// directory: a file planted beside them in the drive's folder (a
// made-up clean cycle 2) is not vouched for, and a link where the
// cycle's own file goes is replaced, not written through.
func TestBeginListsOnlyItsOwnCycle(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	rec := runjson.New(dir)
	if err := rec.Start(record.Run{}); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "powerloss", "nvme0n1")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "cycle_2.json"), []byte(`{"drive": "/dev/nvme0n1", "cycle": 2, "acknowledged": 1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(folder, "cycle_1.json")); err != nil {
		t.Fatal(err)
	}
	pt := &Test{Live: true, Cfg: &cmdline.Config{PowerCut: "cut {path}", PowerRestore: "restore {path}", Resume: true}, Dir: dir, Files: map[string]string{},
		Drives: []Drive{ns("nvme0n1", "nvme0")}, Spec: &specs.PowerLoss{Cycles: 1}, Rec: rec}
	if err := pt.begin(context.Background(), pt.Drives[0], 1); err != nil {
		t.Fatal(err)
	}
	run, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(run, []byte(`"powerloss/nvme0n1/cycle_1.json"`)) || bytes.Contains(run, []byte("cycle_2.json")) {
		t.Errorf("run.json lists %s; want cycle_1.json and not the planted cycle_2.json", run)
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "keep" {
		t.Errorf("the file the link pointed to: %q, %v; want it untouched", data, err)
	}
	if st, err := os.Lstat(filepath.Join(folder, "cycle_1.json")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("cycle_1.json: %v, %v; want a regular file of this run's", st, err)
	}
}
