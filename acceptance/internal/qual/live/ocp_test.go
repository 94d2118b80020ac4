package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/ocp"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/specs"
)

// A resumed run judges C0 from the interrupted run's receipt: the bad
// blocks grown before the interruption are not forgotten.
func TestResumedRunKeepsTheC0ReadOnReceipt(t *testing.T) {
	dir := t.TempDir()
	before, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", "ocp-smart-add-log-v2.3-autoval-values.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := recording.HealthFile(dir, 0, "c0-before")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, before, 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(nvme.CLI{}, []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}, specs.DefaultHealth(), nil)
	m.ocp.Init(t.Context(), m.nvme)
	m.ocp.HasC0(0)
	// What this run read on receipt: the drive as it is now, worn.
	m.health[0].OCP.Before = nvme.OCPSmart{BadUserNANDBlocks: 3}
	m.resumedOCP(dir, "2.3", 0)
	if got := m.health[0].OCP.Before.BadUserNANDBlocks; got != 0 {
		t.Errorf("the resumed run judges from %d bad blocks, want the interrupted run's receipt, 0", got)
	}
	if string(m.raw["0.c0-before"]) != string(before) {
		t.Error("the recording keeps the interrupted run's receipt")
	}
}

// readStandin serves the SMART log and C0 fixtures; its C0 read answers
// only once every one of $OCP_N drives has asked for its own, so that
// reading the drives one after the other gets the first one killed at
// ocp.ReadTimeout.
const readStandin = `#!/bin/sh
case "$1" in
smart-log) cat "$OCP_FX/smart-log-v2.4-above-2-64.json" ;;
ocp)
	touch "$OCP_DIR/asked.$(echo "$3" | tr / _)"
	i=0
	while [ "$(ls "$OCP_DIR" | grep -c '^asked\.')" -lt "$OCP_N" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && exit 3
		sleep 0.1
	done
	cat "$OCP_FX/ocp-smart-add-log-autoval-ssd.json"
	;;
*) exit 1 ;;
esac
`

// nvmeDrives returns n drives /dev/nvme0n1, /dev/nvme1n1, ... for a
// stand-in nvme-cli, and their indices.
func nvmeDrives(n int) (drives []plan.Drive, indices []int) {
	for i := range n {
		drives = append(drives, plan.Drive{Info: device.Info{Path: fmt.Sprintf("/dev/nvme%dn1", i), Block: true}})
		indices = append(indices, i)
	}
	return drives, indices
}

// The C0 reads around a cell are made on all its drives at once: a
// 24-drive step waits for one drive's reads, not 24 in turn.
func TestReadOCPReadsTheDrivesAtOnce(t *testing.T) {
	const n = 4
	bin, state := t.TempDir(), t.TempDir()
	script := filepath.Join(bin, "nvme")
	if err := os.WriteFile(script, []byte(readStandin), 0o755); err != nil {
		t.Fatal(err)
	}
	fx, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "fixtures", "nvme"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OCP_FX", fx)
	t.Setenv("OCP_DIR", state)
	t.Setenv("OCP_N", "4")
	old := ocp.ReadTimeout
	ocp.ReadTimeout = 20 * time.Second
	t.Cleanup(func() { ocp.ReadTimeout = old })
	drives, all := nvmeDrives(n)
	m := NewMonitor(nvme.CLI{Binary: script}, drives, specs.DefaultHealth(), nil)
	m.ocp.Init(t.Context(), m.nvme)
	for _, d := range all {
		m.ocp.HasC0(d)
	}
	got := m.readOCP(t.Context(), all, false)
	if c0, smart := got.Drives(); c0 != n || smart != n {
		t.Errorf("read C0 of %d and SMART of %d of %d drives, want all", c0, smart, n)
	}
}

// A drive that gave C0 on receipt and does not after the run has its OCP
// checks failed, not skipped, and the recording says why for a replay.
func TestC0LostAfterTheRunIsKeptAsAFailure(t *testing.T) {
	bin := t.TempDir()
	script := filepath.Join(bin, "nvme")
	body := "#!/bin/sh\ncase \"$1\" in\nsmart-log) cat \"$OCP_FX/smart-log-v2.4-above-2-64.json\" ;;\n*) echo 'NVMe status: Internal Error(0x6)' >&2; exit 6 ;;\nesac\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	fx, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "fixtures", "nvme"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OCP_FX", fx)
	m := NewMonitor(nvme.CLI{Binary: script}, []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}}, specs.DefaultHealth(), nil)
	m.ocp.Init(t.Context(), m.nvme)
	m.ocp.HasC0(0)
	m.afterOCP(t.Context(), 0)
	o := m.health[0].OCP
	if o.Read || o.Skip != "" || !strings.Contains(o.Lost, "could not be read after the run") {
		t.Errorf("C0 lost after the run: %+v", o)
	}
	if !strings.Contains(string(m.raw["0.c0-after"]), `"error"`) {
		t.Errorf("c0-after = %q, want the reason as an error object", m.raw["0.c0-after"])
	}
}
