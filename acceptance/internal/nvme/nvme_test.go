package nvme

import (
	"context"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixtures are recorded or reconstructed nvme-cli outputs; see their README.
const fixtures = "../../../fixtures/nvme"

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func u128(s string) Uint128 {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	u, err := Uint128FromBig(b)
	if err != nil {
		panic(err)
	}
	return u
}

type uint128Test struct {
	in   string
	want string // "" for an error
}

var uint128Tests = []uint128Test{
	{"0", "0"},
	{"499296134", "499296134"},
	{`"499296134"`, "499296134"},                     // v2.2-v2.3
	{`"499296134.000000"`, "499296134"},              // v2.1 "%Lf"
	{"499296134.000000", "499296134"},                // a bare float
	{"1e3", "1000"},                                  // an exact exponent
	{"18446744073709551616", "18446744073709551616"}, // 2^64
	{"340282366920938463463374607431768211455", "340282366920938463463374607431768211455"}, // 2^128-1
	{"340282366920938463463374607431768211456", ""},                                        // 2^128
	{"1.5", ""},
	{"-1", ""},
	{`"2,752,848"`, ""},
	{"", ""},
	{"0x10", ""},
}

func TestParseUint128(t *testing.T) {
	for _, tt := range uint128Tests {
		got, err := ParseUint128(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseUint128(%q) = %s, want an error", tt.in, got)
		case tt.want != "" && err != nil:
			t.Errorf("ParseUint128(%q) = error %v, want %s", tt.in, err, tt.want)
		case tt.want != "" && got.String() != tt.want:
			t.Errorf("ParseUint128(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

type smartFixtureTest struct {
	file                   string
	read, written, hostWr  string
	critical               uint8
	temp, sensor1, percent int
	powerOnHours           string
	thm1Count              uint32
}

var smartFixtureTests = []smartFixtureTest{
	// nvme-cli <= v2.0: bare "%.0Lf" numbers.
	{file: "smart-log-v2.0-bare-number.json", read: "499296134", written: "1474968593", hostWr: "51493840602",
		temp: 301, sensor1: 306, percent: 15, powerOnHours: "38313"},
	// v2.1: quoted "%Lf" strings.
	{file: "smart-log-v2.1-quoted-float.json", read: "48217463", written: "91522870", hostWr: "2285437192",
		temp: 310, sensor1: 318, percent: 3, powerOnHours: "8766", thm1Count: 3},
	// v2.2-v2.3: quoted decimal strings.
	{file: "smart-log-v2.3-quoted-decimal.json", read: "48217463", written: "91522870", hostWr: "2285437192",
		temp: 310, sensor1: 318, percent: 3, powerOnHours: "8766", thm1Count: 3},
	// v2.4+: bare integers, here above 2^64.
	{file: "smart-log-v2.4-above-2-64.json", read: "18446744073709551621", written: "340282366920938463463374607431768211455",
		hostWr: "2285437192", temp: 310, sensor1: 318, percent: 3, powerOnHours: "8766", thm1Count: 3},
	// -v: critical_warning as an object.
	{file: "smart-log-v2.4-verbose-warning.json", read: "48217463", written: "91522870", hostWr: "2285437192",
		critical: 5, temp: 310, sensor1: 318, percent: 3, powerOnHours: "8766", thm1Count: 3},
}

func TestParseSmartLogFixtures(t *testing.T) {
	for _, tt := range smartFixtureTests {
		l, err := ParseSmartLog(readFixture(t, tt.file))
		if err != nil {
			t.Errorf("ParseSmartLog(%s) = error %v", tt.file, err)
			continue
		}
		for _, c := range []struct {
			name      string
			got, want string
		}{
			{"DataUnitsRead", l.DataUnitsRead.String(), tt.read},
			{"DataUnitsWritten", l.DataUnitsWritten.String(), tt.written},
			{"HostWriteCommands", l.HostWriteCommands.String(), tt.hostWr},
			{"PowerOnHours", l.PowerOnHours.String(), tt.powerOnHours},
			{"CriticalWarning", strconv.Itoa(int(l.CriticalWarning)), strconv.Itoa(int(tt.critical))},
			{"Temperature", strconv.Itoa(l.Temperature), strconv.Itoa(tt.temp)},
			{"TempSensors[0]", strconv.Itoa(l.TempSensors[0]), strconv.Itoa(tt.sensor1)},
			{"PercentUsed", strconv.Itoa(l.PercentUsed), strconv.Itoa(tt.percent)},
			{"ThmTemp1TransCount", strconv.Itoa(int(l.ThmTemp1TransCount)), strconv.Itoa(int(tt.thm1Count))},
		} {
			if c.got != c.want {
				t.Errorf("ParseSmartLog(%s).%s = %s, want %s", tt.file, c.name, c.got, c.want)
			}
		}
	}
}

func TestParseSmartLogErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`not json`,
		`[1]`,
		`{"temperature": 300}`, // most fields missing
		`{"critical_warning":0,"temperature":300,"avail_spare":100,"spare_thresh":10,"percent_used":1,"data_units_read":"x","data_units_written":1,"power_on_hours":1,"media_errors":0}`,
	} {
		if _, err := ParseSmartLog([]byte(in)); err == nil {
			t.Errorf("ParseSmartLog(%q) = nil error, want one", in)
		}
	}
}

func TestParseSmartLogNegativeUint32(t *testing.T) {
	// json-c before 0.14 printed unsigned 32-bit fields as int32.
	in := `{"critical_warning":0,"temperature":300,"avail_spare":100,"spare_thresh":10,"percent_used":1,
		"data_units_read":1,"data_units_written":1,"power_on_hours":1,"media_errors":0,"thm_temp1_total_time":-1}`
	l, err := ParseSmartLog([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if l.ThmTemp1TotalTime != 1<<32-1 {
		t.Errorf("ThmTemp1TotalTime = %d, want %d", l.ThmTemp1TotalTime, uint32(1<<32-1))
	}
}

func TestDataUnitBytes(t *testing.T) {
	if got := DataUnitBytes(u128("2")).String(); got != "1024000" {
		t.Errorf("DataUnitBytes(2) = %s, want 1024000", got)
	}
}

func TestDecodeCriticalWarning(t *testing.T) {
	tests := []struct {
		in   uint8
		want []string
	}{
		{0, nil},
		{0x01, []string{"available spare is below its threshold"}},
		{0x0a, []string{"temperature is outside a threshold", "media is read-only"}},
		{0x30, []string{"volatile memory backup device has failed", "persistent memory region is read-only or unreliable"}},
		{0x80, []string{"reserved critical warning bit 7 is set"}},
	}
	for _, tt := range tests {
		if got := DecodeCriticalWarning(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeCriticalWarning(%#x) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseIDCtrlSolidigm(t *testing.T) {
	c, err := ParseIDCtrl(readFixture(t, "id-ctrl-solidigm-sbfpf2bu153t.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "SOLIDIGM SBFPF2BU153T" || c.Firmware != "6CV10100" || c.VID != 606 {
		t.Errorf("ParseIDCtrl: model %q firmware %q vid %d, want \"SOLIDIGM SBFPF2BU153T\" \"6CV10100\" 606", c.Model, c.Firmware, c.VID)
	}
	if c.WCTemp != 343 || c.CCTemp != 353 {
		t.Errorf("ParseIDCtrl: wctemp %d cctemp %d, want 343 353", c.WCTemp, c.CCTemp)
	}
	if c.TNVMCap.String() != "15362991415296" {
		t.Errorf("ParseIDCtrl: tnvmcap %s, want 15362991415296", c.TNVMCap)
	}
	// fna 4: per-namespace format with crypto erase; sanicap 0x60000003: crypto and block erase.
	if c.FormatAppliesToAll() || c.SecureEraseAppliesToAll() || !c.CryptoEraseSupported() {
		t.Errorf("ParseIDCtrl: FNA %#x decoded wrong", c.FNA)
	}
	if !c.SanitizeCryptoErase() || !c.SanitizeBlockErase() || c.SanitizeOverwrite() {
		t.Errorf("ParseIDCtrl: SANICAP %#x decoded wrong", c.SANICAP)
	}
	if !c.FormatSupported() {
		t.Errorf("ParseIDCtrl: OACS %#x: Format NVM should be supported", c.OACS)
	}
}

func TestParseIDCtrlNegativeSanicap(t *testing.T) {
	// nvme-cli with json-c < 0.14 printed sanicap through int32.
	c, err := ParseIDCtrl([]byte(`{"mn":"m","sn":"s","fr":"f","sanicap":-1610612734}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.SANICAP != 0xa0000002 {
		t.Errorf("SANICAP = %#x, want 0xa0000002", c.SANICAP)
	}
}

type sanitizeFixtureTest struct {
	file     string
	status   SanitizeStatus
	progress uint16
	erased   bool
}

var sanitizeFixtureTests = []sanitizeFixtureTest{
	{"sanitize-log-v2.3-completed.json", SanitizeCompleted, 65535, true},
	{"sanitize-log-v2.8-in-progress.json", SanitizeInProgress, 32768, false},
	{"sanitize-log-v2.16-failed.json", SanitizeFailed, 65535, false},
	{"sanitize-log-v2.16-completed-no-dealloc.json", SanitizeCompletedNoDealloc, 65535, true},
}

func TestParseSanitizeLogFixtures(t *testing.T) {
	for _, tt := range sanitizeFixtureTests {
		l, err := ParseSanitizeLog(readFixture(t, tt.file))
		if err != nil {
			t.Errorf("ParseSanitizeLog(%s) = error %v", tt.file, err)
			continue
		}
		if l.Device != "nvme0" || l.Status != tt.status || l.Progress != tt.progress || l.GlobalErased != tt.erased {
			t.Errorf("ParseSanitizeLog(%s) = device %q status %v progress %d erased %v, want nvme0 %v %d %v",
				tt.file, l.Device, l.Status, l.Progress, l.GlobalErased, tt.status, tt.progress, tt.erased)
		}
		if want := tt.status == SanitizeCompleted || tt.status == SanitizeCompletedNoDealloc; l.Status.Succeeded() != want {
			t.Errorf("ParseSanitizeLog(%s).Status.Succeeded() = %v, want %v", tt.file, l.Status.Succeeded(), want)
		}
	}
	if l, _ := ParseSanitizeLog(readFixture(t, "sanitize-log-v2.8-in-progress.json")); l.Percent() != 50 {
		t.Errorf("Percent() = %v, want 50", l.Percent())
	}
}

func TestParseSanitizeLogNumericSstat(t *testing.T) {
	l, err := ParseSanitizeLog([]byte(`{"sprog":65535,"sstat":260}`)) // 0x104: global erased, completed with no dealloc
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != SanitizeCompletedNoDealloc || !l.GlobalErased {
		t.Errorf("ParseSanitizeLog(sstat 0x104) = %v erased %v, want %v true", l.Status, l.GlobalErased, SanitizeCompletedNoDealloc)
	}
	if _, err := ParseSanitizeLog([]byte(`{"nvme0":{"sprog":0,"sstat":{"status":"in progress"}}}`)); err == nil {
		t.Error("ParseSanitizeLog without \"(N)\" status = nil error, want one")
	}
}

func TestParseVersion(t *testing.T) {
	v, err := ParseVersion(readFixture(t, "version-2.3.txt"))
	if err != nil || v != "2.3" {
		t.Errorf("ParseVersion(version-2.3.txt) = %q, %v, want \"2.3\"", v, err)
	}
	if v, err := ParseVersion([]byte("nvme version 1.16\n")); err != nil || v != "1.16" {
		t.Errorf("ParseVersion(1.16) = %q, %v, want \"1.16\"", v, err)
	}
	if _, err := ParseVersion([]byte("usage: nvme <command>\n")); err == nil {
		t.Error("ParseVersion(usage) = nil error, want one")
	}
}

// fakeNVMe writes an executable script named nvme in a new directory and
// returns its path.
func fakeNVMe(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nvme")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCLIVersionAndSmartLog(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	smart, _ := filepath.Abs(filepath.Join(fixtures, "smart-log-v2.4-above-2-64.json"))
	cli := CLI{Binary: fakeNVMe(t, `echo "$@" >> `+argv+`
case "$1" in
version) echo "nvme version 2.9.1 (git 2.9.1)"; echo "libnvme version 1.9 (git 1.9)";;
smart-log) cat `+smart+`;;
*) echo "unknown command $1" >&2; exit 1;;
esac
`)}
	ctx := context.Background()
	if v, err := cli.Version(ctx); err != nil || v != "2.9.1" {
		t.Errorf("Version() = %q, %v, want \"2.9.1\"", v, err)
	}
	l, err := cli.SmartLog(ctx, "/dev/nvme0")
	if err != nil || l.DataUnitsRead.String() != "18446744073709551621" {
		t.Errorf("SmartLog() = %v, %v, want data_units_read 18446744073709551621", l.DataUnitsRead, err)
	}
	_, err = cli.IDCtrl(ctx, "/dev/nvme0")
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "unknown command id-ctrl") || !strings.Contains(err.Error(), "/dev/nvme0") {
		t.Errorf("IDCtrl() error = %v, want a *CommandError naming /dev/nvme0 with its stderr", err)
	}
	got, _ := os.ReadFile(argv)
	if want := "version\nsmart-log /dev/nvme0 -o json\nid-ctrl /dev/nvme0 -o json\n"; string(got) != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
}

func TestCLINotInstalled(t *testing.T) {
	cli := CLI{Binary: filepath.Join(t.TempDir(), "no-such-nvme")}
	if _, err := cli.Version(context.Background()); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Version() error = %v, want ErrNotInstalled", err)
	}
	if err := cli.Check(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "install") {
		t.Errorf("Check() = %v, want ErrNotInstalled saying how to install", err)
	}
}

// TestCLICancelKillsGroup: a cancelled context kills nvme-cli and whatever
// it started, promptly.
func TestCLICancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cli := CLI{Binary: fakeNVMe(t, `sleep 60 &
echo $! > `+pidFile+`.tmp; mv `+pidFile+`.tmp `+pidFile+`
wait
`), WaitDelay: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cli.Run(ctx, "sanitize", "/dev/nvme0", "--sanact=2")
		errc <- err
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the fake nvme never started its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run() after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return 10s after cancel")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v to return after cancel", d)
	}
	// The grandchild is gone (a zombie until its reaper runs counts as gone).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); err != nil || isZombie(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the fake nvme survived the cancel", pid)
		}
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
