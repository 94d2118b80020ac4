package ocp

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/specs"
)

// c0GUID and c3GUID are the OCP log pages' GUIDs as they lie in the page.
var (
	c0GUID = []byte{0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF}
	c3GUID = []byte{0x92, 0x7a, 0xc0, 0x8c, 0xd0, 0x84, 0x6c, 0x9c, 0x70, 0x43, 0xe6, 0xd4, 0x58, 0x5e, 0xd4, 0x85}
)

// c0WithEndToEnd is a C0 page (OCP Datacenter NVMe SSD specification)
// whose end-to-end Detected Errors (bytes 75:72) and Corrected Errors
// (79:76) are as given, capacitor health 100 %, log page version 2.
func c0WithEndToEnd(detected, corrected uint32) []byte {
	p := make([]byte, 512)
	le := binary.LittleEndian
	le.PutUint32(p[72:], detected)
	le.PutUint32(p[76:], corrected)
	le.PutUint16(p[128:], 100)
	le.PutUint16(p[494:], 2)
	copy(p[496:], c0GUID)
	return p
}

// c3WithBucket0 is an enabled latency monitor page (version 1) whose
// active bucket 0 counted read, write and trim commands, at the
// specification's offsets: reserved 35:32, Trim 39:36, Write 43:40, Read
// 47:44.
func c3WithBucket0(read, write, trim uint32) []byte {
	p := make([]byte, 512)
	le := binary.LittleEndian
	p[0] = 1
	le.PutUint32(p[0x24:], trim)
	le.PutUint32(p[0x28:], write)
	le.PutUint32(p[0x2C:], read)
	le.PutUint16(p[0x1EE:], 1)
	copy(p[0x1F0:], c3GUID)
	return p
}

// TestLogsReadOCPByTheNVMeCLIVersion runs the real nvme-cli (the one on
// PATH, or DRIVEQUAL_NVME) through fixtures/nvme/shim, which serves it C0
// and C3 pages laid out as the OCP specification lays them, and reads
// them as a live run does: the version from what `nvme version` prints,
// the logs on receipt and around a cell. A drive that detected 5
// end-to-end errors fails ocp_end_to_end_errors on every version (on
// nvme-cli 2.3, which prints them as "End to end corrected errors", too),
// and the latency monitor's bucket 0 counts 1,000 reads, 200 writes and
// 3 trims: the reads not available before nvme-cli 2.5, which does not
// print them.
func TestLogsReadOCPByTheNVMeCLIVersion(t *testing.T) {
	testenv.MustHaveRoot(t)
	bin := cmp.Or(os.Getenv("DRIVEQUAL_NVME"), "nvme")
	bin = testenv.MustHave(t, bin, "apt-get install nvme-cli")
	testenv.MustHave(t, "gcc", "apt-get install gcc")
	dir := t.TempDir()
	shim := filepath.Join(dir, "logpage-shim.so")
	src := filepath.Join("..", "..", "..", "..", "..", "fixtures", "nvme", "shim", "logpage-shim.c")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", shim, src, "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	page := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page("02.bin", make([]byte, 512)) // the SMART log: zeros
	page("c0.bin", c0WithEndToEnd(0, 0))
	page("c3.bin", c3WithBucket0(0, 0, 0))
	wrapper := filepath.Join(dir, "nvme")
	script := fmt.Sprintf("#!/bin/sh\nLD_PRELOAD=%s SHIM_LOG_02=%[2]s/02.bin SHIM_LOG_c0=%[2]s/c0.bin SHIM_LOG_c3=%[2]s/c3.bin exec %s \"$@\"\n", shim, dir, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cli := nvme.CLI{Binary: wrapper}
	version, err := cli.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dev := testenv.Loop(t, 1<<20)
	var o Logs
	h, _ := o.Receipt(t.Context(), cli, 0, dev)
	if h.Skip != "" {
		t.Fatalf("nvme-cli %s: receipt: %s", version, h.Skip)
	}
	paths := func(int) string { return dev }
	before := o.Read(t.Context(), cli, paths, []int{0}, true)

	page("c0.bin", c0WithEndToEnd(5, 0))
	page("c3.bin", c3WithBucket0(1000, 200, 3))
	after := o.Read(t.Context(), cli, paths, []int{0}, true)
	last, _, lost := o.After(t.Context(), cli, dev)
	if lost != "" {
		t.Fatalf("nvme-cli %s: after: %s", version, lost)
	}
	if last.EndToEndDetected != 5 || last.EndToEndCorrected != 0 {
		t.Errorf("nvme-cli %s: C0 read as detected %d, corrected %d; want 5, 0", version, last.EndToEndDetected, last.EndToEndCorrected)
	}
	for _, c := range health.JudgeOCP(h.Before, last, specs.DefaultHealth().OCP) {
		if c.Name == "ocp_end_to_end_errors" && (c.Verdict != health.Fail || !strings.Contains(c.Message, "0 before, 5 after")) {
			t.Errorf("nvme-cli %s: %+v, want it failed from 0 to 5", version, c)
		}
	}

	run := Run{Drives: []plan.Drive{{Info: device.Info{Path: dev, Block: true}}}, Skip: func(int) string { return "" }, Spec: &specs.Spec{}}
	ws := o.WAFs(run, []int{0}, before, after, false, true)
	want := "bucket 0: read +1000, write +200, trim +3;"
	var major, minor int
	if _, err := fmt.Sscanf(version, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("nvme-cli version %q: %v", version, err)
	}
	if major < 2 || major == 2 && minor < 5 {
		want = "bucket 0: read n/a, write +200, trim +3;"
	}
	if len(ws) != 1 || !strings.Contains(ws[0].Latency, want) {
		t.Errorf("nvme-cli %s: latency monitor %+v, want %q", version, ws, want)
	}
}
