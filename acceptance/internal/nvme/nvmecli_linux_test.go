package nvme

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"flag"
	"fmt"
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
	{"2.3", "smart-log-v2.3-temperature-warning.json", "C", nil, hot},
	{"2.3", "smart-log-v2.3-spare-warning.json", "C", nil, spareLow},
	{"2.4", "smart-log-v2.4-above-2-64.json", "C", nil, above264},
	{"2.4", "smart-log-v2.4-verbose-warning.json", "C", []string{"-H"}, failing},
	{"2.11", "smart-log-v2.11-warning-object.json", "C", nil, reconstructed},
}

// sanitizeDevice is the device name the sanitize-log fixtures are keyed
// by: nvme-cli names the device by the basename of the path it was given
// (open_dev_direct: dev->name = basename(devstr), symlinks unresolved), so
// the test runs it on a symlink of that name to the loop device.
const sanitizeDevice = "nvme0"

// sanitizeLogPage is the Sanitize Status log page (log id 0x81), field by
// field; sanitizePage encodes it.
type sanitizeLogPage struct {
	SPROG, SSTAT uint16
	SCDW10       uint32
	// ETO, ETBE, ETCE, ETOND, ETBEND, ETCEND: the estimated times of an
	// overwrite, block erase and crypto erase, then of each with
	// No-Deallocate After Sanitize; ETPVDS, post-verification
	// deallocation (NVMe 2.1, printed from v2.16).
	ETO, ETBE, ETCE, ETOND, ETBEND, ETCEND, ETPVDS uint32
	SSI                                            uint8 // sanitize state bits 3:0, failure state 7:4 (NVMe 2.1)
}

// printedSanitize is a sanitize-log fixture that nvme-cli version printed
// here, from the log page sanitizePage encodes of want.
type printedSanitize struct {
	version string
	file    string
	want    sanitizeLogPage
}

// sanitizeTimes are the estimated times the sanitize fixtures share: block
// erase 120 s and crypto erase 10 s; overwrite and the No-Deallocate
// variants not reported (0xffffffff).
var sanitizeTimes = sanitizeLogPage{SCDW10: 2, ETO: 1<<32 - 1, ETBE: 120, ETCE: 10,
	ETOND: 1<<32 - 1, ETBEND: 1<<32 - 1, ETCEND: 1<<32 - 1, ETPVDS: 1<<32 - 1}

func withSanitize(sprog, sstat uint16, ssi uint8) sanitizeLogPage {
	p := sanitizeTimes
	p.SPROG, p.SSTAT, p.SSI = sprog, sstat, ssi
	return p
}

// printedSanitizes are the sanitize-log fixtures nvme-cli printed through
// fixtures/nvme/shim (2.3 Debian's, 2.8 and 2.16 built from their tags).
// SSTAT: status in bits 2:0, Global Data Erased bit 8.
var printedSanitizes = []printedSanitize{
	{"2.3", "sanitize-log-v2.3-completed.json", withSanitize(65535, 0x101, 0)},
	{"2.8", "sanitize-log-v2.8-in-progress.json", withSanitize(32768, 0x002, 0)},
	// SSI 0x12: Restricted Failure State, failed in Restricted Processing.
	{"2.16", "sanitize-log-v2.16-failed.json", withSanitize(65535, 0x003, 0x12)},
	{"2.16", "sanitize-log-v2.16-completed-no-dealloc.json", withSanitize(65535, 0x104, 0)},
}

// TestNVMeCLIPrintsTheFixtures has nvme-cli (the one on PATH, or
// DRIVEQUAL_NVME=path/to/nvme) print the log page of each printedFixture
// (smart-log) and printedSanitize (sanitize-log) of its version, served by
// the LD_PRELOAD shim in fixtures/nvme/shim on a loop device, and checks
// that it prints the fixture byte for byte; with -update it writes the
// fixture instead. It needs gcc, root and losetup, and skips a version that
// printed no fixture; the en_US case needs that locale.
func TestNVMeCLIPrintsTheFixtures(t *testing.T) {
	bin, v, out := nvmeCLIWithGCC(t)
	var cases []printedFixture
	for _, f := range printedFixtures {
		if f.version == v {
			cases = append(cases, f)
		}
	}
	var sanitizes []printedSanitize
	for _, f := range printedSanitizes {
		if f.version == v {
			sanitizes = append(sanitizes, f)
		}
	}
	if len(cases) == 0 && len(sanitizes) == 0 {
		t.Skipf("no fixture was printed by nvme-cli %q (%s): set DRIVEQUAL_NVME to one of those in fixtures/nvme/README.md", v, strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	shim := filepath.Join(dir, "logpage-shim.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-o", shim, filepath.Join(fixtures, "shim", "logpage-shim.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	dev := testenv.Loop(t, 1<<20)
	named := filepath.Join(dir, sanitizeDevice)
	if err := os.Symlink(dev, named); err != nil {
		t.Fatal(err)
	}
	// run has nvme-cli print what the shim serves: log id 0xNN from the
	// file page(NN) wrote, as SHIM_LOG_NN.
	run := func(t *testing.T, locale string, logs map[uint8][]byte, args ...string) []byte {
		t.Helper()
		env := append(os.Environ(), "LC_ALL="+locale, "LD_PRELOAD="+shim)
		for id, b := range logs {
			page := filepath.Join(t.TempDir(), fmt.Sprintf("log-%02x.bin", id))
			if err := os.WriteFile(page, b, 0o644); err != nil {
				t.Fatal(err)
			}
			env = append(env, fmt.Sprintf("SHIM_LOG_%02x=%s", id, page))
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("nvme %s: %v: %s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return got
	}
	// check writes got to the fixture file with -update, and otherwise
	// reports whether it is the fixture byte for byte.
	check := func(t *testing.T, file string, got []byte) {
		t.Helper()
		if *update {
			if err := os.WriteFile(filepath.Join(fixtures, file), got, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		if want := readFixture(t, file); !bytes.Equal(got, want) {
			t.Errorf("nvme-cli %s prints for %s:\n%s\nthe fixture has:\n%s", v, file, got, want)
		}
	}
	var plain []byte // what the C locale printed, to tell a missing locale
	for _, tt := range cases {
		t.Run(tt.file, func(t *testing.T) {
			got := run(t, tt.locale, map[uint8][]byte{0x02: smartPage(tt.want)}, append([]string{"smart-log", dev, "-o", "json"}, tt.args...)...)
			switch {
			case tt.locale == "C" && tt.args == nil:
				plain = got
			case tt.locale != "C" && bytes.Equal(got, plain):
				t.Skipf("locale %s is not installed (nvme-cli printed no separators)", tt.locale)
			}
			check(t, tt.file, got)
			if l, err := ParseSmartLog(got); err != nil || l != tt.want {
				t.Errorf("ParseSmartLog(what nvme-cli printed) = %+v, %v; want %+v", l, err, tt.want)
			}
		})
	}
	for _, tt := range sanitizes {
		t.Run(tt.file, func(t *testing.T) {
			got := run(t, "C", map[uint8][]byte{0x81: sanitizePage(tt.want)}, "sanitize-log", named, "-o", "json")
			check(t, tt.file, got)
			l, err := ParseSanitizeLog(got)
			p := tt.want
			if err != nil || l.Device != sanitizeDevice || l.Progress != p.SPROG || l.Status != SanitizeStatus(p.SSTAT&7) ||
				l.Passes != int(p.SSTAT>>3&31) || l.GlobalErased != (p.SSTAT&(1<<8) != 0) || l.CDW10 != p.SCDW10 {
				t.Errorf("ParseSanitizeLog(what nvme-cli printed) = %+v, %v; want device %s and the fields of %+v", l, err, sanitizeDevice, p)
			}
		})
	}
}

// sanitizePage encodes p as the 512-byte Sanitize Status log page (NVMe
// base specification, Sanitize Status log page; libnvme's struct
// nvme_sanitize_log_page): SPROG at byte 0, SSTAT 2, SCDW10 4, the
// estimated times 8 to 35, SSI 36; little-endian.
func sanitizePage(p sanitizeLogPage) []byte {
	b := make([]byte, 512)
	le := binary.LittleEndian
	le.PutUint16(b[0:], p.SPROG)
	le.PutUint16(b[2:], p.SSTAT)
	le.PutUint32(b[4:], p.SCDW10)
	for i, t := range []uint32{p.ETO, p.ETBE, p.ETCE, p.ETOND, p.ETBEND, p.ETCEND, p.ETPVDS} {
		le.PutUint32(b[8+4*i:], t)
	}
	b[36] = p.SSI
	return b
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

// nvmeCLIWithGCC returns the nvme-cli the fixture tests run (the one on
// PATH, or DRIVEQUAL_NVME), its version and what its "version" printed,
// skipping the test unless it runs as root with that nvme-cli and gcc
// (which builds the log-page shim).
func nvmeCLIWithGCC(t *testing.T) (bin, version string, out []byte) {
	t.Helper()
	testenv.MustHaveRoot(t)
	bin = cmp.Or(os.Getenv("DRIVEQUAL_NVME"), "nvme")
	for _, c := range []string{bin, "gcc"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("needs %s: %v", c, err)
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	version, _ = ParseVersion(out)
	return bin, version, out
}
