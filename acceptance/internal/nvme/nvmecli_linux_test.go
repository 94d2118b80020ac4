package nvme

import (
	"bytes"
	"cmp"
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

// printedFixture is a fixture that nvme-cli version printed here, from
// the log page smartPage encodes of want, with args and the locale given.
type printedFixture struct {
	version string
	file    string
	locale  string
	args    []string
	want    SmartLog
}

// printedFixtures are the fixtures nvme-cli printed through
// fixtures/nvme/shim: 2.3 is Debian bookworm's package, the others were
// built from their tags (see fixtures/nvme/README.md).
var printedFixtures = []printedFixture{
	{"2.0", "smart-log-v2.0-jsonc-double.json", "C", nil, reconstructed},
	{"2.0", "smart-log-v2.0-above-2-64.json", "C", nil, v20Above264},
	{"2.1", "smart-log-v2.1-quoted-float.json", "C", nil, reconstructed},
	{"2.1", "smart-log-v2.1-above-2-64.json", "C", nil, v21Above264},
	{"2.3", "smart-log-v2.3-quoted-decimal.json", "C", nil, reconstructed},
	{"2.3", "smart-log-v2.3-en-us-grouped.json", "en_US.UTF-8", nil, reconstructed},
	{"2.3", "smart-log-v2.3-verbose-warning.json", "C", []string{"-H"}, failing},
	{"2.4", "smart-log-v2.4-above-2-64.json", "C", nil, above264},
	{"2.4", "smart-log-v2.4-verbose-warning.json", "C", []string{"-H"}, failing},
	{"2.11", "smart-log-v2.11-warning-object.json", "C", nil, reconstructed},
}

// TestNVMeCLIPrintsTheFixtures has nvme-cli (the one on PATH, or
// DRIVEQUAL_NVME=path/to/nvme) print the log page of each printedFixture
// of its version (served by the LD_PRELOAD shim in fixtures/nvme/shim on a
// loop device) and checks that it prints the fixture byte for byte; with
// -update it writes the fixture instead. It needs gcc, root and losetup,
// and skips a version that printed no fixture; the en_US case needs that
// locale.
func TestNVMeCLIPrintsTheFixtures(t *testing.T) {
	testenv.MustHaveRoot(t)
	bin := cmp.Or(os.Getenv("DRIVEQUAL_NVME"), "nvme")
	for _, c := range []string{bin, "gcc"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("needs %s: %v", c, err)
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	v, _ := ParseVersion(out)
	var cases []printedFixture
	for _, f := range printedFixtures {
		if f.version == v {
			cases = append(cases, f)
		}
	}
	if len(cases) == 0 {
		t.Skipf("no fixture was printed by nvme-cli %q (%s): set DRIVEQUAL_NVME to one of those in fixtures/nvme/README.md", v, strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "logpage-shim.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", shim, filepath.Join(fixtures, "shim", "logpage-shim.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	dev := testenv.Loop(t, 1<<20)
	var plain []byte // what the C locale printed, to tell a missing locale
	for _, tt := range cases {
		t.Run(tt.file, func(t *testing.T) {
			page := filepath.Join(dir, tt.file+".bin")
			if err := os.WriteFile(page, smartPage(tt.want), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append([]string{"smart-log", dev, "-o", "json"}, tt.args...)...)
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
				t.Errorf("nvme-cli %s prints for %s:\n%s\nthe fixture has:\n%s", v, tt.file, got, want)
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
