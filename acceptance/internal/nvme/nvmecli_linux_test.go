package nvme

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the fixtures nvme-cli prints (printedFixtures) with what it prints here")

// printedFixture is a fixture that nvme-cli printed here, from the log
// page smartPage encodes of want, with args and the locale given.
type printedFixture struct {
	file   string
	locale string
	args   []string
	want   SmartLog
}

// printedFixtures are the fixtures that nvme-cli 2.3 printed through
// fixtures/nvme/shim: its quoted 128-bit counters, the en_US thousands
// separators, and -H's critical_warning object for a failing drive.
var printedFixtures = []printedFixture{
	{"smart-log-v2.3-quoted-decimal.json", "C", nil, reconstructed},
	{"smart-log-v2.3-en-us-grouped.json", "en_US.UTF-8", nil, reconstructed},
	{"smart-log-v2.3-verbose-warning.json", "C", []string{"-H"}, failing},
}

// printedVersion is the nvme-cli that printed printedFixtures.
const printedVersion = "2.3"

// TestNVMeCLIPrintsTheFixtures has the installed nvme-cli print each
// printedFixture's log page (served by the LD_PRELOAD shim in
// fixtures/nvme/shim on a loop device) and checks that it prints the
// fixture byte for byte; with -update it writes the fixture instead. It
// needs nvme-cli 2.3 (Debian bookworm's 2.4+really2.3), gcc, root and
// losetup; the en_US case needs that locale.
func TestNVMeCLIPrintsTheFixtures(t *testing.T) {
	testenv.MustHaveRoot(t)
	for _, c := range []string{"nvme", "gcc"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("needs %s: %v", c, err)
		}
	}
	out, err := exec.Command("nvme", "version").Output()
	if err != nil {
		t.Fatalf("nvme version: %v", err)
	}
	if v, _ := ParseVersion(out); v != printedVersion {
		t.Skipf("the fixtures were printed by nvme-cli %s; this is %s", printedVersion, strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "logpage-shim.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", shim, filepath.Join(fixtures, "shim", "logpage-shim.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	dev := testenv.Loop(t, 1<<20)
	var plain []byte // what the C locale printed, to tell a missing locale
	for _, tt := range printedFixtures {
		t.Run(tt.file, func(t *testing.T) {
			page := filepath.Join(dir, tt.file+".bin")
			if err := os.WriteFile(page, smartPage(tt.want), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("nvme", append([]string{"smart-log", dev, "-o", "json"}, tt.args...)...)
			cmd.Env = append(os.Environ(), "LC_ALL="+tt.locale, "LD_PRELOAD="+shim, "SHIM_SMART_LOG="+page)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("nvme smart-log: %v: %s", err, stderr.Bytes())
			}
			switch {
			case tt.locale == "C" && tt.args == nil:
				plain = got
			case tt.locale != "C" && bytes.Equal(got, plain):
				t.Skipf("locale %s is not installed (nvme-cli printed no separators)", tt.locale)
			}
			path := filepath.Join(fixtures, tt.file)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := readFixture(t, tt.file); !bytes.Equal(got, want) {
				t.Errorf("nvme-cli %s prints for %s:\n%s\nthe fixture has:\n%s", printedVersion, tt.file, got, want)
			}
			if l, err := ParseSmartLog(got); err != nil || l != tt.want {
				t.Errorf("ParseSmartLog(what nvme-cli printed) = %+v, %v; want %+v", l, err, tt.want)
			}
		})
	}
}

// smartPage encodes l as the 512-byte SMART / Health Information log page
// (NVMe base specification, SMART / Health Information log): little-endian fields at
// their byte offsets.
func smartPage(l SmartLog) []byte {
	p := make([]byte, 512)
	le := binary.LittleEndian
	p[0] = l.CriticalWarning
	le.PutUint16(p[1:], uint16(l.Temperature))
	p[3], p[4], p[5] = byte(l.AvailSpare), byte(l.SpareThresh), byte(l.PercentUsed)
	p[6] = l.EnduranceGroupWarning
	for i, u := range []Uint128{l.DataUnitsRead, l.DataUnitsWritten, l.HostReadCommands, l.HostWriteCommands,
		l.ControllerBusyTime, l.PowerCycles, l.PowerOnHours, l.UnsafeShutdowns, l.MediaErrors, l.NumErrLogEntries} {
		le.PutUint64(p[32+16*i:], u.Lo)
		le.PutUint64(p[40+16*i:], u.Hi)
	}
	le.PutUint32(p[192:], l.WarningTempTime)
	le.PutUint32(p[196:], l.CriticalCompTime)
	for i, k := range l.TempSensors {
		le.PutUint16(p[200+2*i:], uint16(k))
	}
	le.PutUint32(p[216:], l.ThmTemp1TransCount)
	le.PutUint32(p[220:], l.ThmTemp2TransCount)
	le.PutUint32(p[224:], l.ThmTemp1TotalTime)
	le.PutUint32(p[228:], l.ThmTemp2TotalTime)
	return p
}
