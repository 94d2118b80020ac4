package nvmevm

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The TestGuest* tests run only in the guest that TestQEMU boots, on its
// emulated NVMe controllers under the kernel's nvme driver; on the host
// they skip.

// guest skips t outside the guest.
func guest(t *testing.T) {
	t.Helper()
	if !inGuest() {
		t.Skip("runs in the QEMU guest that TestQEMU boots")
	}
}

// nvmeScript is the guest's nvme: a shell script, so that the suite's
// nvme-cli commands, dozens a run, start no Go binary under TCG. It runs
// the real nvme-cli (DRIVEQUAL_NVME_REAL, else /usr/sbin/nvme, as the
// wrapper does) with its arguments and, when
// DRIVEQUAL_NVME_LOG names a file, appends "ARGS -> exit N" to it, so a
// test sees every command the suite sent. With DRIVEQUAL_FAKE_IDCTRL set
// it hands the command to this binary (nvmeWrapper, as nvme-fake).
//
// The log line is printf's, not echo's: the guest's /bin/sh is the
// host's (dash on Debian), whose echo reads backslashes in the arguments
// as escapes, and "\c" in one would end the line without " -> exit N".
const nvmeScript = `#!/bin/sh
if [ -n "$DRIVEQUAL_FAKE_IDCTRL" ]; then exec /tmp/drivequal-bin/nvme-fake "$@"; fi
real=${DRIVEQUAL_NVME_REAL:-/usr/sbin/nvme}
if [ -z "$DRIVEQUAL_NVME_LOG" ]; then exec "$real" "$@"; fi
"$real" "$@"
code=$?
printf '%s -> exit %d\n' "$*" "$code" >>"$DRIVEQUAL_NVME_LOG"
exit $code
`

// nvmeWrapper is the guest's nvme when DRIVEQUAL_FAKE_IDCTRL is set (see
// nvmeScript): it runs the real nvme-cli and logs the command as the
// script does. QEMU 7.2 emulates FNA 0 and SANICAP 0; with
// DRIVEQUAL_FAKE_IDCTRL="fna=1,sanicap=2" the JSON of `nvme id-ctrl`
// has those fields, and only those, rewritten, so the suite plans a
// controller-wide format or sanitize as on a drive that reports them.
func nvmeWrapper(args []string) int {
	real := os.Getenv("DRIVEQUAL_NVME_REAL")
	if real == "" {
		real = "/usr/sbin/nvme"
	}
	cmd := exec.Command(real, args...)
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &stdout, os.Stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "nvme wrapper:", err)
		code = 127
	}
	out := stdout.Bytes()
	if fake := os.Getenv("DRIVEQUAL_FAKE_IDCTRL"); fake != "" && len(args) > 0 && args[0] == "id-ctrl" && code == 0 {
		for _, kv := range strings.Split(fake, ",") {
			k, v, _ := strings.Cut(kv, "=")
			re := regexp.MustCompile(`("` + regexp.QuoteMeta(k) + `"\s*:\s*)\d+`)
			out = re.ReplaceAll(out, []byte("${1}"+v))
		}
	}
	os.Stdout.Write(out)
	if log := os.Getenv("DRIVEQUAL_NVME_LOG"); log != "" {
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "%s -> exit %d\n", strings.Join(args, " "), code)
			f.Close()
		}
	}
	return code
}

// controllers returns the guest's controllers with serial, by number
// (nvme2 before nvme3).
func controllers(t *testing.T, serial string) []string {
	t.Helper()
	ents, _ := filepath.Glob("/sys/class/nvme/nvme*")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(e, "serial"))
		if err == nil && strings.TrimSpace(string(b)) == serial {
			out = append(out, filepath.Base(e))
		}
	}
	sort.Slice(out, func(i, j int) bool { return ctrlNum(out[i]) < ctrlNum(out[j]) })
	if len(out) == 0 {
		t.Fatalf("no NVMe controller with serial %s in /sys/class/nvme", serial)
	}
	return out
}

func ctrlNum(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "nvme"))
	return n
}

// namespace returns the block device of namespace nsid on controller ctrl
// ("/dev/nvme3n2"), or "" when the controller does not have it.
func namespace(ctrl string, nsid int) string {
	ents, _ := filepath.Glob("/sys/class/nvme/" + ctrl + "/" + ctrl + "n*")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(e, "nsid"))
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(nsid) {
			return "/dev/" + filepath.Base(e)
		}
	}
	return ""
}

// mustNamespace is namespace, failing t when it is missing.
func mustNamespace(t *testing.T, ctrl string, nsid int) string {
	t.Helper()
	d := namespace(ctrl, nsid)
	if d == "" {
		ents, _ := os.ReadDir("/sys/class/nvme/" + ctrl + "/")
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("controller %s has no namespace %d: /sys/class/nvme/%s holds %s", ctrl, nsid, ctrl, strings.Join(names, " "))
	}
	return d
}

// subsystem returns the two controllers of the NVM subsystem: the first
// has namespace 1 alone, the second namespaces 1 and 2.
func subsystem(t *testing.T) (a, b string) {
	t.Helper()
	cs := controllers(t, serialSubsys)
	if len(cs) != 2 {
		t.Fatalf("serial %s: controllers %v, want 2", serialSubsys, cs)
	}
	a, b = cs[0], cs[1]
	if namespace(a, 2) != "" {
		a, b = b, a
	}
	return a, b
}

// result is one run of the suite.
type result struct {
	Code           int
	Stdout, Stderr string
	NVMe           []string // the nvme-cli commands it ran, "ARGS -> exit N"
}

func (r result) output() string { return r.Stdout + r.Stderr }

// suiteTimeout is each suite run's -test.timeout in a guest: under TCG
// beside the rest of make test a firmware run of two steps took 4.6 min,
// and the suite ends what it is doing at its deadline.
const suiteTimeout = "-test.timeout=10m"

// runSuite runs the acceptance suite's test binary like `go test
// ./acceptance -args ARGS` would, with env added, a report directory of
// its own, and every nvme-cli command logged.
func runSuite(t *testing.T, env []string, args ...string) result {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "nvme.log")
	all := append([]string{"-test.count=1", "-test.v=true", suiteTimeout, "-report=" + filepath.Join(dir, "report")}, args...)
	cmd := exec.Command(os.Getenv(envSuite), all...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Env = append(append(os.Environ(), env...), "DRIVEQUAL_NVME_LOG="+log)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	res := result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if b, err := os.ReadFile(log); err == nil {
		res.NVMe = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	t.Logf("suite %s: exit %d in %s", strings.Join(args, " "), res.Code, time.Since(start).Round(100*time.Millisecond))
	return res
}

// sent returns the commands of r that match verb ("format", "sanitize").
func (r result) sent(verb string) []string {
	var out []string
	for _, c := range r.NVMe {
		if strings.HasPrefix(c, verb+" ") {
			out = append(out, c)
		}
	}
	return out
}

// scribble writes 1 MiB of random bytes at the start of dev, so that a
// byte-for-byte comparison is of data, not of zeros.
func scribble(t *testing.T, dev string) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// hashes hashes each device.
func hashes(t *testing.T, devs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range devs {
		out = append(out, testenv.MD5(t, d))
	}
	return out
}

// unchanged fails t unless every device hashes as before.
func unchanged(t *testing.T, before []string, devs ...string) {
	t.Helper()
	for i, h := range hashes(t, devs...) {
		if h != before[i] {
			t.Errorf("%s changed: md5 %s before, %s after", devs[i], before[i], h)
		}
	}
}

// specFile is testdata/name as an absolute path.
func specFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustContain fails t unless out holds every one of want.
func mustContain(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// refused checks that a run was refused before anything was written:
// non-zero exit, no purge sent.
func refused(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.Code == 0 {
		t.Errorf("exit 0, want a refusal\n%s", r.output())
	}
	if f, s := r.sent("format"), r.sent("sanitize"); len(f)+len(s) > 0 {
		t.Errorf("purges sent: %q %q", f, s)
	}
	mustContain(t, r.output(), want...)
}

// TestGuestFormatPurge qualifies one emulated namespace end to end with
// the format purge: -dry-run prints the nvme format it will send and what
// it erases, and the run sends exactly that through the real nvme-cli and
// the kernel's driver, then runs fio on the namespace.
func TestGuestFormatPurge(t *testing.T) {
	guest(t)
	args, dev := formatPurgeArgs(t)
	want := "nvme format " + dev + " --ses=1 --force"

	dry := runSuite(t, nil, append(args, "-dry-run")...)
	if dry.Code != 0 {
		t.Fatalf("-dry-run: exit %d\n%s", dry.Code, dry.output())
	}
	mustContain(t, dry.Stdout, want+" (erases namespace 1 of nqn.2019-08.org.qemu:"+serialFormat+": "+filepath.Base(dev)+")")
	if len(dry.sent("format")) > 0 {
		t.Errorf("-dry-run sent %q", dry.sent("format"))
	}

	live := formatPurgeLive(t, args)
	mustContain(t, live.Stdout, "--- PASS: TestSingleDrive/32MiB/128KB_Sequential_Write", "--- PASS: TestSingleDrive/32MiB/128KB_Sequential_Read",
		// A by-id path's slashes do not make levels of TestHealth.
		"--- PASS: TestHealth/disk-by-id-nvme-QEMU_NVMe_Ctrl_"+serialFormat+"/critical_warning",
		// The receipt is read through the real driver and nvme-cli: QEMU's
		// controller has no power-on hours, and no limit is set.
		"--- SKIP: TestReceipt/disk-by-id-nvme-QEMU_NVMe_Ctrl_"+serialFormat+"/power_on_hours")
	if live.Code != 0 {
		t.Errorf("exit %d\n%s", live.Code, live.output())
	}
	if got := live.sent("format"); len(got) != 1 || got[0] != strings.TrimPrefix(want, "nvme ")+" -> exit 0" {
		t.Errorf("nvme-cli formats sent: %q, want one %q that exits 0 (the dry run's)", got, want)
	}
	mustContain(t, live.output(), want)
}

// formatPurgeArgs is TestGuestFormatPurge's command line without
// -destructive, and the namespace's kernel path. The drive is given by its
// by-id link, as an operator would: the format goes to the block device it
// points to.
func formatPurgeArgs(t *testing.T) ([]string, string) {
	t.Helper()
	dev := mustNamespace(t, controllers(t, serialFormat)[0], 1)
	return []string{"-spec=" + specFile(t, "format.toml"), "-drives=" + byID(serialFormat), "-capacity=32MiB"}, dev
}

// TestGuestCriticalWarningRefused: a namespace whose controller reports a
// critical warning from boot is refused at setup, and left byte for byte
// as it was.
func TestGuestCriticalWarningRefused(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialWarn)[0], 1)
	scribble(t, dev)
	before := hashes(t, dev)
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives="+dev, "-capacity=32MiB", "-destructive")
	refused(t, r, dev, "critical")
	if strings.Contains(r.Stdout, "=== RUN   TestSingleDrive") {
		t.Errorf("cells ran on a refused drive:\n%s", r.Stdout)
	}
	unchanged(t, before, dev)
}

// TestGuestPurgeReachesTheSubsystem: native multipath off, one NVM
// subsystem with controllers A and B, namespace 1 shared (a block device
// through each), namespace 2 private to B. A format that applies to all
// namespaces (FNA bit 0) and a sanitize erase the whole subsystem, so
// namespace 1 alone, given through A, is refused naming B's namespace 2,
// and every namespace is left byte for byte as it was. Given both
// namespaces, the dry run plans one command for the subsystem and names
// everything it erases. QEMU reports FNA 0 and SANICAP 0 and implements no
// sanitize: the nvme wrapper rewrites those two fields of id-ctrl's JSON
// (and nothing else), as a drive that has them would report them.
func TestGuestPurgeReachesTheSubsystem(t *testing.T) {
	guest(t)
	a, b := subsystem(t)
	ns1, ns1b, ns2 := mustNamespace(t, a, 1), mustNamespace(t, b, 1), mustNamespace(t, b, 2)
	nqn := "nqn.2019-08.org.qemu:" + subsysNQN
	scribble(t, ns1)
	scribble(t, ns2)
	before := hashes(t, ns1, ns2)
	for _, c := range []struct{ spec, fake, verb string }{
		{"format.toml", "fna=1", "format"},
		{"sanitize.toml", "sanicap=2", "sanitize"},
	} {
		t.Run(c.verb, func(t *testing.T) {
			env := []string{"DRIVEQUAL_FAKE_IDCTRL=" + c.fake}
			r := runSuite(t, env, "-spec="+specFile(t, c.spec), "-drives="+ns1, "-capacity=32MiB", "-destructive")
			refused(t, r, ns1, ns2+" is not in -drives", nqn)
			unchanged(t, before, ns1, ns2)

			// Both namespaces given (namespace 1 through A): accepted, one
			// command for the subsystem, reaching every block device.
			dry := runSuite(t, env, "-spec="+specFile(t, c.spec), "-drives="+ns1+","+ns2, "-capacity=32MiB", "-dry-run")
			if dry.Code != 0 {
				t.Fatalf("-dry-run of both namespaces: exit %d\n%s", dry.Code, dry.output())
			}
			reach := []string{filepath.Base(ns1), filepath.Base(ns1b), filepath.Base(ns2)}
			sort.Strings(reach)
			mustContain(t, dry.Stdout, "(erases every namespace of "+nqn+": "+strings.Join(reach, ", ")+")")
			if n := strings.Count(dry.Stdout, "  nvme "+c.verb+" "); n != 1 {
				t.Errorf("-dry-run prints %d %s commands, want one for the subsystem:\n%s", n, c.verb, dry.Stdout)
			}
			if f, s := dry.sent("format"), dry.sent("sanitize"); len(f)+len(s) > 0 {
				t.Errorf("-dry-run sent %q %q", f, s)
			}
		})
	}
}

// TestGuestSameNamespaceTwoPaths: with native multipath off, the shared
// namespace is /dev/nvmeAn1 and /dev/nvmeBn1; given both, it is refused
// like the same device twice, so no scaling cell measures one namespace
// as two drives.
func TestGuestSameNamespaceTwoPaths(t *testing.T) {
	guest(t)
	a, b := subsystem(t)
	ns1, ns1b := mustNamespace(t, a, 1), mustNamespace(t, b, 1)
	scribble(t, ns1)
	before := hashes(t, ns1)
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives="+ns1+","+ns1b, "-capacity=32MiB", "-destructive")
	refused(t, r, ns1b+": is the same NVMe namespace as "+ns1)
	unchanged(t, before, ns1)
}

// TestGuestZonedRefused: a zoned namespace is refused at setup, saying
// why, instead of failing mid-run; nothing is written to it.
func TestGuestZonedRefused(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialZoned)[0], 1)
	if z, _ := os.ReadFile("/sys/class/block/" + filepath.Base(dev) + "/queue/zoned"); strings.TrimSpace(string(z)) != "host-managed" {
		t.Fatalf("%s: queue/zoned %q, want host-managed", dev, z)
	}
	before := hashes(t, dev)
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives="+dev, "-capacity=32MiB", "-destructive")
	refused(t, r, dev+": is a zoned device (queue/zoned: host-managed)")
	unchanged(t, before, dev)
}

// TestGuestGenericCharDevice: the namespace's generic character device
// (/dev/ngXnY) is refused naming the block device to give.
func TestGuestGenericCharDevice(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialFormat)[0], 1)
	ng := "/dev/ng" + strings.TrimPrefix(filepath.Base(dev), "nvme")
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives="+ng, "-capacity=32MiB", "-dry-run")
	refused(t, r, ng+": is the generic character device (ng) of NVMe namespace", "give its block device, "+dev)
}

// TestGuestByIDGlob: Debian 12's udev gives each namespace two
// nvme-MODEL_SERIAL by-id links (the second with _NSID); a -drives glob
// over them is one drive, not the same target twice. udev runs in the
// guest as on a host.
func TestGuestByIDGlob(t *testing.T) {
	guest(t)
	dev := mustNamespace(t, controllers(t, serialFormat)[0], 1)
	glob := "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_" + serialFormat + "*"
	links, _ := filepath.Glob(glob)
	if len(links) < 2 {
		t.Fatalf("%s matches %q: want udev's two links for %s", glob, links, dev)
	}
	r := runSuite(t, nil, "-spec="+specFile(t, "format.toml"), "-drives="+glob, "-capacity=32MiB", "-dry-run")
	if r.Code != 0 {
		t.Fatalf("-dry-run with -drives=%s: exit %d\n%s", glob, r.Code, r.output())
	}
	if n := strings.Count(r.Stdout, " -> "+dev+"  model"); n != 1 {
		t.Errorf("the dry run lists %s %d times, want once:\n%s", dev, n, r.Stdout)
	}
}
