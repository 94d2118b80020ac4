package nvmevm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/e2e/suiterun"
	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// envReboot names the boot of TestQEMUReboot a guest runs ("1", "2").
const envReboot = "DRIVEQUAL_QEMU_REBOOT"

// Serials of the two controllers TestQEMUReboot swaps between boots.
const (
	serialBayA = "DQBAYA001"
	serialBayB = "DQBAYB001"
)

// rebootMachine is a guest with two controllers of one namespace each,
// in PCI order first, second: the kernel numbers them nvme0 and nvme1 in
// that order, as a server's BIOS enumerates its slots.
func rebootMachine(images string, first, second string) qemu.Machine {
	img := func(serial string) string { return filepath.Join(images, serial+".raw") }
	return qemu.Machine{
		Memory: 1024, CPUs: 2, Udev: true,
		Controllers: []qemu.Controller{{ID: "c0", Serial: first}, {ID: "c1", Serial: second}},
		Namespaces: []qemu.Namespace{
			{Controller: "c0", NSID: 1, Image: img(first)},
			{Controller: "c1", NSID: 1, Image: img(second)},
		},
	}
}

// TestQEMUReboot boots a guest, runs the suite on its two emulated NVMe
// namespaces given by their by-id links, and kills it after its first
// cell; then boots it again with the two controllers in swapped PCI order
// (nvme0 ↔ nvme1: the kernel names and device numbers of the drives are
// swapped, and the boot id is new). -resume with the new kernel paths in
// the new order continues the run: the recorded drive 1 is the same
// namespace, the first boot's cell is kept, and every cell is judged.
func TestQEMUReboot(t *testing.T) {
	if inGuest() {
		t.Skip("the guest's own run")
	}
	kernel, busybox := testenv.MustHaveQEMU(t)
	work := t.TempDir()
	initrd := testenv.Initramfs(t, kernel, busybox)
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	suite := suiterun.Build(t, work)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(self, filepath.Join(bin, "nvmevm.test")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nvmevm.test", filepath.Join(bin, "nvme")); err != nil {
		t.Fatal(err)
	}
	images := filepath.Join(work, "images")
	if err := os.Mkdir(images, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{serialBayA, serialBayB} {
		p := filepath.Join(images, s+".raw")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, nsBytes); err != nil {
			t.Fatal(err)
		}
	}
	realNvme, err := exec.LookPath("nvme")
	if err != nil {
		t.Fatal(err)
	}
	boot := func(n int, m qemu.Machine) {
		t.Helper()
		m.Shares = []string{root}
		script := fmt.Sprintf(`set -e
mkdir /tmp/drivequal-bin
cp %s %s/nvmevm.test /tmp/drivequal-bin/
ln -s nvmevm.test /tmp/drivequal-bin/nvme
cd %s
export PATH=/tmp/drivequal-bin:$PATH %s=1 %s=%d %s=/tmp/drivequal-bin/acceptance.test %s=%s DRIVEQUAL_NVME_REAL=%s GOTRACEBACK=all
exec /tmp/drivequal-bin/nvmevm.test -test.v=true -test.count=1 -test.timeout=12m -test.run='^TestRebootPhase%d$'
`, shellQuote(suite), shellQuote(bin), shellQuote(wd), envGuest, envReboot, n, envSuite, envWork, shellQuote(work), shellQuote(realNvme), n)
		ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
		defer cancel()
		res, err := m.Run(ctx, kernel, initrd, work, script)
		t.Logf("boot %d (%s): %s wall, exit %d\n%s", n, res.Accel, res.Wall.Round(100*time.Millisecond), res.Exit, res.Output)
		if err != nil || res.Exit != 0 || !strings.Contains(res.Output, fmt.Sprintf("--- PASS: TestRebootPhase%d", n)) {
			t.Fatalf("boot %d: %v (exit %d)\nconsole:\n%s", n, err, res.Exit, res.Console)
		}
	}
	boot(1, rebootMachine(images, serialBayA, serialBayB))
	boot(2, rebootMachine(images, serialBayB, serialBayA))
}

// rebootRecord is where both boots' runs record: the shared work
// directory, which survives the guest.
func rebootRecord() (report, raw string) {
	report = filepath.Join(os.Getenv(envWork), "reboot-report")
	return report, filepath.Join(report, "raw")
}

func rebootGuest(t *testing.T, phase string) {
	t.Helper()
	if !inGuest() || os.Getenv(envReboot) != phase {
		t.Skip("runs in boot " + phase + " of the guest TestQEMUReboot boots")
	}
}

// TestRebootPhase1 is the first boot: the run, given the namespaces by
// their by-id links, killed after its first cell.
func TestRebootPhase1(t *testing.T) {
	rebootGuest(t, "1")
	a, b := mustNamespace(t, controllers(t, serialBayA)[0], 1), mustNamespace(t, controllers(t, serialBayB)[0], 1)
	if a != "/dev/nvme0n1" || b != "/dev/nvme1n1" {
		t.Fatalf("first boot: %s is %s and %s is %s, want nvme0n1 and nvme1n1", serialBayA, a, serialBayB, b)
	}
	rep, raw := rebootRecord()
	linkA, linkB := "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_"+serialBayA+"_1", "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_"+serialBayB+"_1"
	cmd := exec.Command(os.Getenv(envSuite), "-test.count=1", "-test.v=true", "-test.timeout=5m",
		"-spec="+specFile(t, "format.toml"), "-drives="+linkA+","+linkB, "-capacity=32MiB", "-destructive", "-report="+rep)
	wd, _ := os.Getwd()
	root, _ := cmdline.ModuleRoot(wd)
	cmd.Dir = filepath.Join(root, "acceptance")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Minute)
	killed := false
	for time.Now().Before(deadline) && !killed {
		data, err := os.ReadFile(filepath.Join(raw, "run.json"))
		var r record.Run
		if err == nil && json.Unmarshal(data, &r) == nil && len(r.Tests) >= 1 {
			killed = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) == nil
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("no cell was recorded within 4 min:\n%s", out.String())
	}
	t.Logf("killed after its first cell")
}

// TestRebootPhase2 is the boot after: the controllers are in swapped
// order, and -resume is given the new kernel paths in the new order.
func TestRebootPhase2(t *testing.T) {
	rebootGuest(t, "2")
	a, b := mustNamespace(t, controllers(t, serialBayA)[0], 1), mustNamespace(t, controllers(t, serialBayB)[0], 1)
	if a != "/dev/nvme1n1" || b != "/dev/nvme0n1" {
		t.Fatalf("second boot: %s is %s and %s is %s, want nvme1n1 and nvme0n1 (swapped)", serialBayA, a, serialBayB, b)
	}
	rep, raw := rebootRecord()
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var first record.Run
	if err := json.Unmarshal(data, &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Tests) != 1 || first.Finished != "" {
		t.Fatalf("the first boot's recording: tests %v, finished %q; want one cell, unfinished", first.Tests, first.Finished)
	}
	kept, err := record.Hash(filepath.Join(raw, filepath.FromSlash(first.Tests[0])+".json"))
	if err != nil {
		t.Fatal(err)
	}
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives=/dev/nvme0n1,/dev/nvme1n1", "-capacity=32MiB", "-destructive", "-record="+raw, "-resume")
	if r.Code != 0 {
		t.Fatalf("-resume after the reboot: exit %d\n%s", r.Code, r.output())
	}
	mustContain(t, r.output(),
		"drives matched by identity: drive 1 (recorded at /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_"+serialBayA+"_1) is /dev/nvme1n1; drive 2 (recorded at /dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_"+serialBayB+"_1) is /dev/nvme0n1",
		"--- PASS: TestSingleDrive/32MiB/128KB_Sequential_Write", "--- PASS: TestSingleDrive/32MiB/128KB_Sequential_Read",
		"drivequal: QUALIFIED")
	if strings.Contains(r.Stdout, "measuring "+first.Tests[0]+" ") {
		t.Errorf("%s, recorded before the reboot, was measured again", first.Tests[0])
	}
	if got, _ := record.Hash(filepath.Join(raw, filepath.FromSlash(first.Tests[0])+".json")); got != kept {
		t.Errorf("%s changed: sha256 %s, was %s", first.Tests[0], got, kept)
	}
	var after record.Run
	data, _ = os.ReadFile(filepath.Join(raw, "run.json"))
	if err := json.Unmarshal(data, &after); err != nil {
		t.Fatal(err)
	}
	if after.BootID == first.BootID || after.Finished == "" {
		t.Errorf("boot id %q (was %q), finished %q: want a new boot, finished", after.BootID, first.BootID, after.Finished)
	}
	_ = rep
}
