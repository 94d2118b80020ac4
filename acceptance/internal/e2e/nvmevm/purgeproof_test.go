package nvmevm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuestPurgeProven runs -purge-after on the format namespace, twice,
// selecting TestIntegrity and TestPurge so that nothing overwrites the
// fill before the purge at the end. First with the real nvme-cli and
// QEMU 7.2's Format NVM (--ses=1) through the kernel's driver: every
// sector of the namespace reads back as the format promises, and
// TestPurge passes. Then with a stand-in for `nvme format` alone, which
// exits 0 and erases nothing (every other command is the real nvme-cli):
// the read-back finds the fill and TestPurge fails, naming the command
// and the LBAs, and a replay of its recording fails it the same way. The
// fill, the read-backs and every other command are real.
func TestGuestPurgeProven(t *testing.T) {
	guest(t)
	args, dev := formatPurgeArgs(t)
	args = append(args, "-destructive", "-purge-after", "-test.run=TestIntegrity|TestPurge")
	name := "TestPurge/nvme-QEMU_NVMe_Ctrl_" + serialFormat // as TestIntegrity names a by-id path
	format := "format " + dev + " --ses=1 --force"

	real := runSuite(t, nil, args...)
	if real.Code != 0 {
		t.Errorf("real format: exit %d\n%s", real.Code, real.output())
	}
	mustContain(t, real.Stdout, "--- PASS: "+name, "which promises zeros", "none of the fill left")
	if got := real.sent("format"); len(got) != 2 || got[1] != format+" -> exit 0" {
		t.Errorf("formats sent: %q, want two (the purge before the fill, the one at the end) %q", got, format)
	}

	bin := t.TempDir()
	liar := filepath.Join(bin, "nvme-liar")
	script := "#!/bin/sh\n# Formats nothing and says it did; everything else is nvme-cli's.\n" +
		"if [ \"$1\" = format ]; then exit 0; fi\nexec /usr/sbin/nvme \"$@\"\n"
	if err := os.WriteFile(liar, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "raw")
	lied := runSuite(t, []string{"DRIVEQUAL_NVME_REAL=" + liar}, append(args, "-record="+rec)...)
	if lied.Code == 0 {
		t.Errorf("a format that erases nothing: exit 0\n%s", lied.output())
	}
	mustContain(t, lied.Stdout, "--- FAIL: "+name, "the purge did not erase: after `nvme "+format+"`", "this run's fill: LBAs 0-")
	if !strings.Contains(lied.Stdout, "NOT QUALIFIED") {
		t.Errorf("the capacity is not NOT QUALIFIED:\n%s", lied.Stdout)
	}

	// A replay of that recording fails it the same way, from purge.json.
	replay := runSuite(t, nil, "-replay="+rec)
	if replay.Code == 0 {
		t.Errorf("replay of the failed purge: exit 0\n%s", replay.output())
	}
	mustContain(t, replay.Stdout, "--- FAIL: "+name, "the purge did not erase: after `nvme "+format+"`", "this run's fill: LBAs 0-")
}
