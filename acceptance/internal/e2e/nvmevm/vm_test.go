package nvmevm

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/e2e/suiterun"
	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Environment the host gives the guest's run of this binary.
const (
	envGuest  = "DRIVEQUAL_QEMU_GUEST"  // "1" in the guest
	envSuite  = "DRIVEQUAL_QEMU_SUITE"  // the acceptance suite's test binary
	envWork   = "DRIVEQUAL_QEMU_WORK"   // the shared work directory
	envConfig = "DRIVEQUAL_QEMU_CONFIG" // the configuration's name
	// envMissing holds the optional modules the kernel lacks, each
	// "name=why", separated by ";".
	envMissing = "DRIVEQUAL_QEMU_MISSING"
)

// Serials of the guest's controllers (see machine).
const (
	serialFormat = "DQFMT0001" // one controller, one namespace: format purges
	serialWarn   = "DQWARN001" // one namespace, critical warning set from boot
	serialSubsys = "DQSUBSYS1" // two controllers of one NVM subsystem
	serialZoned  = "DQZNS0001" // one zoned namespace
	subsysNQN    = "drivequal-subsys"
	nsBytes      = 32 << 20
)

// criticalWarning is the byte the warned controller reports: bit 2, NVM
// subsystem reliability degraded.
const criticalWarning = 0x04

// machine is the guest every test here runs in, with native multipath off
// (nvme_core.multipath=N) so that a namespace shared by two controllers is
// two block devices, as on a host configured that way:
//
//	nvme0 (DQFMT0001)   nvme0n1
//	nvme1 (DQWARN001)   nvme1n1, critical warning 0x04
//	nvme2 (DQSUBSYS1) ┐ namespace 1, shared: nvme2n1 and nvme3n1
//	nvme3 (DQSUBSYS1) ┘ namespace 2, private to nvme3: nvme3n2
//	nvme4 (DQZNS0001)   nvme4n1, zoned
//
// The kernel names are what Linux usually gives; the tests find each by its
// serial and namespace ID instead.
func machine(images string) qemu.Machine {
	img := func(name string) string { return filepath.Join(images, name+".raw") }
	return qemu.Machine{
		Memory:          1024,
		CPUs:            2,
		SingleThreadTCG: true,
		Cmdline:         []string{"nvme_core.multipath=N"},
		Udev:            true,
		Subsystems:      []qemu.Subsystem{{ID: "ss", NQN: subsysNQN}},
		Controllers: []qemu.Controller{
			{ID: "fmt", Serial: serialFormat},
			{ID: "warn", Serial: serialWarn, CriticalWarning: criticalWarning},
			{ID: "ssa", Serial: serialSubsys, Subsys: "ss"},
			{ID: "ssb", Serial: serialSubsys, Subsys: "ss"},
			{ID: "zns", Serial: serialZoned},
		},
		Namespaces: []qemu.Namespace{
			{Controller: "fmt", NSID: 1, Image: img("fmt-1"), EUI64: 0x0011223344550001},
			{Controller: "warn", NSID: 1, Image: img("warn-1"), EUI64: 0x0011223344550002},
			{Controller: "ssa", NSID: 1, Image: img("subsys-1"), EUI64: 0x0011223344550003},
			{Controller: "ssb", NSID: 2, Image: img("subsys-2"), Private: true, EUI64: 0x0011223344550004},
			{Controller: "zns", NSID: 1, Image: img("zns-1"), Zoned: true},
		},
		Extra: disks(img),
	}
}

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "nvme-fake" {
		os.Exit(nvmeWrapper(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// guestIOPS holds the namespaces a boot's machine gives its controllers
// (Machine.Namespaces, and those the interrupted boots pass in Extra) to
// that many requests a second (qemu.Namespace.IOPS): 64 MB/s at 128 KiB,
// 64 times the 1 MB/s cells of the guests' specs. Not held: the opt-in
// power-loss boots' NBD drives, whose cut comes a set time into their
// writes; the drives hot-added over QMP (the neighbour test's hold their
// own byte rate); the SCSI and SATA disks, which are not NVMe.
//
// Under TCG every request costs the host the guest's CPU work of issuing
// and completing it, and a guest's fio, unheld, ran its time-based cells
// as fast as TCG let it:
// the multipath-off boot, alone on 2 cores, took 117 CPU-s unheld, 90
// at 300 requests a second, 93 at 600 (and 113 at 100, where the waits
// it lengthens cost more than the I/O it saves).
const guestIOPS = 500

// heldIOPS is the limit the boots give their namespaces: guestIOPS, or
// none with DRIVEQUAL_QEMU_COMPARE=1, whose figures of a namespace over
// NVMe/TCP and attached directly would otherwise both be the limit's.
func heldIOPS() int {
	if os.Getenv("DRIVEQUAL_QEMU_COMPARE") == "1" {
		return 0
	}
	return guestIOPS
}

// inGuest reports whether this binary runs in the QEMU guest.
func inGuest() bool { return os.Getenv(envGuest) == "1" }

// config is a guest and its boot: its machine, the modules it loads, and
// the TestGuest* tests that run in it, one after the other, in one boot,
// and the boot that follows it (reboot), if any.
// Each is a subtest of TestQEMU named by name. A file adds its own with
// func init() { configs = append(configs, config{...}) }.
type config struct {
	// name is the subtest's name ("multipath-off") and the guest's
	// DRIVEQUAL_QEMU_CONFIG.
	name string
	// machine returns the guest, its namespaces' images under images
	// (created here, each of imageBytes). Its QMP socket is set by TestQEMU.
	machine func(images string) qemu.Machine
	// imageBytes is each namespace's size (default nsBytes).
	imageBytes int64
	// modules are loaded at boot after qemu.Modules (with their
	// dependencies); a kernel that lacks one skips this configuration
	// naming it (a failure with DRIVEQUAL_REQUIRE_LOOP=1).
	modules []string
	// optional are loaded at boot when the kernel has them; a test that
	// needs one missing finds why in the guest (missingModule) and skips
	// naming it, so that the configuration's other tests still run.
	optional []string
	// tests are the TestGuest* tests this boot runs, in the order given.
	tests []string
	// timeout bounds the boot (default 19 minutes: the multipath-off boot, its scenarios all passed, reached 14 minutes beside the rest of make test on 2 cores).
	timeout time.Duration
	// reboot is the boot that follows this one once its QEMU has exited,
	// in the same place and the same subtest (TestQEMU/interrupted/
	// TestGuestSwappedRebootResumed): its name names its work directory
	// and DRIVEQUAL_QEMU_CONFIG in the guest, its machine may differ (the
	// controllers in each other's slot), and its tests take over the state
	// the boot before left. A boot whose power the host cut at the guest's
	// request (power's {"cut_host": true}) ends where it was, in its last
	// test, without its exit file: that is its expected end, and its
	// reboot judges what the cut left.
	reboot *config
	// power, when set, starts on the host what the machine's controllers
	// need before the guest boots (nbdkit servers), given the work
	// directory and QEMU's QMP socket, and returns what serves the
	// guest's power requests (powerRequest); what it started ends with t.
	power func(t *testing.T, work, qmp string) powerFunc
	// cuts names the test of this boot that asks the host to cut its
	// power: only it may end without its verdict, the boot with it.
	cuts string
	// optIn, when set, is the variable that must be 1 for TestQEMU to boot
	// this configuration; without it the configuration skips, saying why.
	optIn string
}

// envPower opts in to the power-cut guests (powerloss, powerloss-host):
// their five boots would add some 5 minutes of the two cores make test
// has, so make test leaves them out.
const envPower = "DRIVEQUAL_QEMU_POWER"

// configs are the guests TestQEMU boots, in this order.
var configs = []config{{
	name:    "multipath-off",
	machine: machine,
	// The SCSI and SATA disks of TestGuestDiskIdentity.
	optional: []string{"sd_mod", "virtio_scsi", "ahci"},
	tests: []string{
		"TestGuestFormatPurge", "TestGuestPurgeProven", "TestGuestCriticalWarningRefused", "TestGuestPurgeReachesTheSubsystem",
		"TestGuestSameNamespaceTwoPaths", "TestGuestZonedRefused", "TestGuestGenericCharDevice", "TestGuestByIDGlob",
		"TestGuestQMP", "TestGuestIdentity", "TestGuestDiskIdentity", "TestGuestModelRefused", "TestGuestAnyModel",
	},
}}

// TestQEMU boots one guest for each configuration (configs), each with
// its emulated NVMe controllers, runs that configuration's TestGuest*
// tests in it with the suite's own test binary, and reports each as a
// subtest: TestQEMU/multipath-off/TestGuestZonedRefused. Two guests run
// at once (DRIVEQUAL_QEMU_GUESTS sets how many; 1: one after the
// other). Each runs under KVM where /dev/kvm opens and KVM starts it, TCG
// (about 15 s to boot) otherwise; the log says which, and why KVM did
// not.
func TestQEMU(t *testing.T) {
	if inGuest() {
		t.Skip("the guest's own run")
	}
	if p := rebootRun(flagValue("test.run"), configs); p != "" {
		t.Fatal(p)
	}
	kernel, busybox := testenv.MustHaveQEMU(t)
	t.Parallel()
	work := t.TempDir()

	// The suite and this binary go into a directory shared with every
	// guest: the guest sees the host's /tmp, where go test builds them, as
	// an empty tmpfs.
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	suite := suiterun.Build(t, bin)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := copyFile(self, filepath.Join(bin, "nvmevm.test")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "nvme"), []byte(nvmeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	// Every guest test is run by some configuration: one left out of the
	// table would pass by never running.
	out, err := exec.Command(self, "-test.list", "^TestGuest").Output()
	if err != nil {
		t.Fatalf("listing the guest tests: %v", err)
	}
	listed := map[string]bool{}
	for _, c := range configs {
		for _, b := range c.boots() {
			for _, n := range b.tests {
				listed[n] = true
			}
		}
	}
	for _, n := range strings.Fields(string(out)) {
		if strings.HasPrefix(n, "TestGuest") && !listed[n] {
			t.Errorf("%s is in no configuration's tests (configs): add it to the one whose machine it needs", n)
		}
	}
	realNvme, err := exec.LookPath("nvme")
	if err != nil {
		t.Fatal(err)
	}
	// go test -run 'TestQEMU/multipath-off/TestGuestZoned' boots that
	// configuration alone and runs that guest test alone in it.
	var only string
	if f := flagValue("test.run"); f != "" {
		if parts := strings.SplitN(f, "/", 3); len(parts) == 3 {
			only = parts[2]
		}
	}
	// At most guests() guests at once: under TCG a guest's time is mostly
	// its CPUs', but also waits (9p, udev, QEMU's I/O), which a second
	// guest fills.
	// At most guests() guests at once, started longest first: the
	// subtests are started here in that order, each once a slot is free,
	// and run side by side in goroutines (parallel subtests would start
	// in no set order, and a long guest that started last ran on alone
	// for minutes after the others had ended).
	h := host{kernel: kernel, busybox: busybox, root: root, wd: wd, bin: bin, suite: suite, nvme: realNvme}
	runGuests(t, longestFirst(configs), guests(), func(t *testing.T, c config) { h.config(t, c, work, only) })
}

// runGuests runs run for each of cs as a subtest of t named by it, at
// most n at once, started in the order of cs, each once one of the n
// slots is free, side by side in goroutines; it returns when all have.
func runGuests(t *testing.T, cs []config, n int, run func(*testing.T, config)) {
	slots := make(chan struct{}, n)
	var running sync.WaitGroup
	for _, c := range cs {
		slots <- struct{}{}
		running.Add(1)
		go func() {
			defer running.Done()
			defer func() { <-slots }()
			t.Run(c.name, func(t *testing.T) { run(t, c) })
		}()
	}
	running.Wait()
}

// config boots c and its reboots in work, running their tests (those
// that only selects, when set).
func (h host) config(t *testing.T, c config, work, only string) {
	boots := c.boots()
	tests := bootTests(t, boots, only)
	if c.optIn != "" && os.Getenv(c.optIn) != "1" {
		t.Skipf("%s boots with %s=1 (not in make test: see envPower)", c.name, c.optIn)
	}
	if tests == nil {
		t.Skipf("no test of %s matches %q", c.name, only)
	}
	for i, b := range boots[:len(tests)] {
		if !h.boot(t, b, filepath.Join(work, b.name), tests[i]) {
			return
		}
	}
}

// boots is c's boot followed by its reboots.
func (c config) boots() []config {
	out := []config{c}
	for r := c.reboot; r != nil; r = r.reboot {
		out = append(out, *r)
	}
	return out
}

// rebootRun says what to run instead when the -run pattern run selects,
// at TestQEMU's second level, the name of a reboot and of no
// configuration: a reboot is no subtest of its own, and go test would
// run nothing and pass. "" when run is fine.
func rebootRun(run string, configs []config) string {
	parts := strings.SplitN(run, "/", 3)
	if len(parts) < 2 {
		return ""
	}
	re, err := regexp.Compile(parts[1])
	if err != nil {
		return ""
	}
	var reboots []string
	for _, c := range configs {
		if re.MatchString(c.name) {
			return ""
		}
		for _, b := range c.boots()[1:] {
			if re.MatchString(b.name) {
				reboots = append(reboots, fmt.Sprintf("%s is a later boot of %s, in its subtest: -run 'TestQEMU/%s/%s' runs it after the boot before it", b.name, c.name, c.name, strings.Join(b.tests, "|")))
			}
		}
	}
	return strings.Join(reboots, "; ")
}

// bootTests is what each of boots runs when only selects its tests: the
// boots up to the last one with a test selected, each before it whole
// (the later boot takes over the state it leaves, whichever of its
// tests made it), the last its selected tests; nil when none is.
func bootTests(t *testing.T, boots []config, only string) [][]string {
	last := -1
	var tests [][]string
	for i, b := range boots {
		tests = append(tests, selected(t, b.tests, only))
		if len(tests[i]) > 0 {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	for i := range last {
		tests[i] = boots[i].tests
	}
	return tests[:last+1]
}

// selected is tests, or those that only matches when it is set.
func selected(t *testing.T, tests []string, only string) []string {
	if only == "" {
		return tests
	}
	re, err := regexp.Compile(only)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(slices.Clone(tests), func(n string) bool { return !re.MatchString(n) })
}

// readmeSection is the README's heading of the guests' table, and
// testingSection docs/testing.md's.
const (
	readmeSection  = "## NVMe under QEMU"
	testingSection = "## The QEMU NVMe guest"
)

// readmeProblems checks that the section of readme under the heading
// section names every boot of configs, as `name`, in a table row that
// names each of its scenarios, as `Scenario` (the test's name without
// TestGuest): a scenario added to a boot is added to the tables a
// newcomer reads.
func readmeProblems(readme, section string, configs []config) []string {
	_, sec, ok := strings.Cut(readme, "\n"+section+"\n")
	if !ok {
		return []string{"no " + section + " section: add one with a table of the guest boots and their scenarios"}
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows []string
	for _, line := range strings.Split(sec, "\n") {
		if strings.HasPrefix(line, "| ") {
			rows = append(rows, line)
		}
	}
	var problems []string
	for _, c := range configs {
		for _, b := range c.boots() {
			row := ""
			if i := slices.IndexFunc(rows, func(r string) bool { return strings.Contains(r, "`"+b.name+"`") }); i >= 0 {
				row = rows[i]
			}
			if row == "" {
				problems = append(problems, fmt.Sprintf("%s: no row names the boot `%s`: add | `%s` | its scenarios |", section, b.name, b.name))
				continue
			}
			for _, n := range b.tests {
				if short := strings.TrimPrefix(n, "TestGuest"); !strings.Contains(row, "`"+short+"`") {
					problems = append(problems, fmt.Sprintf("%s: the row of `%s` does not name its scenario `%s` (%s): add it", section, b.name, short, n))
				}
			}
		}
	}
	return problems
}

// alone is how long each configuration's boots took, run alone under TCG
// on this project's 2-core machine (its reboot's included).
var alone = map[string]time.Duration{
	"powerloss":      170 * time.Second,
	"multipath-on":   145 * time.Second,
	"powerloss-host": 160 * time.Second,
	"interrupted":    108 * time.Second,
	"multipath-off":  96 * time.Second,
}

// longestFirst is configs, the longest (alone) first, those not measured
// last: two guests at a time, the last to start are the shortest, so both
// slots end close together instead of one guest running on alone.
func longestFirst(configs []config) []config {
	out := slices.Clone(configs)
	slices.SortStableFunc(out, func(a, b config) int { return cmp.Compare(alone[b.name], alone[a.name]) })
	return out
}

// defaultGuests is how many guests TestQEMU boots at once by default.
const defaultGuests = 2

// guests is how many guests TestQEMU boots at once:
// DRIVEQUAL_QEMU_GUESTS (1: one after the other), else defaultGuests.
func guests() int {
	if n, err := strconv.Atoi(os.Getenv("DRIVEQUAL_QEMU_GUESTS")); err == nil && n > 0 {
		return n
	}
	return defaultGuests
}

// host is what every boot of TestQEMU shares.
type host struct {
	kernel     qemu.Kernel
	busybox    string
	root, wd   string // the module's root and this package's directory
	bin, suite string // the shared directory of binaries, and the suite in it
	nvme       string // the real nvme-cli
}

// boot boots the guest of c with work as its work directory, runs tests
// (c's, or those -run selects) and reports each as a subtest; it reports
// whether the guest ran them all to their end.
func (h host) boot(t *testing.T, c config, work string, tests []string) bool {
	mods := slices.Clone(c.modules)
	var missing []string
	for _, o := range c.optional {
		if err := h.kernel.CheckModules([]string{o}); err != nil {
			missing = append(missing, o+"="+strings.ReplaceAll(err.Error(), ";", ","))
			continue
		}
		mods = append(mods, o)
	}
	initrd := testenv.InitramfsWith(t, h.kernel, h.busybox, mods...)
	images := filepath.Join(work, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		t.Fatal(err)
	}
	m := c.machine(images)
	// The checkout may be under /tmp or /root, which the guest covers with
	// tmpfs: share it at its own path, and the binaries with it.
	m.Shares = append(m.Shares, h.root, h.bin)
	m.QMP = filepath.Join(work, "qmp.sock")
	size := c.imageBytes
	if size == 0 {
		size = nsBytes
	}
	for i := range m.Namespaces {
		m.Namespaces[i].IOPS = heldIOPS()
	}
	for _, n := range m.Namespaces {
		if err := os.WriteFile(n.Image, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(n.Image, size); err != nil {
			t.Fatal(err)
		}
	}
	// One run of the binary per test, in the order c gives them: go test
	// would run them in the order of their files.
	var runs []string
	for _, n := range tests {
		runs = append(runs, shellQuote("-test.run=^"+n+"$"))
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = 19 * time.Minute
	}
	// The guest runs both binaries from its tmpfs: each run of the suite
	// would otherwise read it again over 9p. fio's --version, which each
	// run of the suite asks first, is answered with what the real fio
	// answered once at boot, by a script that runs the real fio for
	// everything else: under TCG the answer took 0.6 s of CPU (fio loads
	// 64 shared libraries, Ceph's and their static constructors among
	// them, before it reads an argument): in the multipath-off boot 24 of
	// fio's 28 runs ended within 1.5 s, 10.4 of its 13.1 CPU-seconds.
	script := fmt.Sprintf(`set -e
echo "guest up after $(cut -d' ' -f1 /proc/uptime) s"
mkdir /tmp/drivequal-bin
cp %s %s/nvmevm.test %s/nvme /tmp/drivequal-bin/
ln -s nvmevm.test /tmp/drivequal-bin/nvme-fake
fio=$(command -v fio) || { echo "no fio in the guest: install fio (apt-get install fio)"; exit 1; }
version=$("$fio" --version)
printf '#!/bin/sh\n[ "$*" = --version ] && { echo "%%s"; exit 0; }\nexec "%%s" "$@"\n' "$version" "$fio" >/tmp/drivequal-bin/fio
chmod +x /tmp/drivequal-bin/fio
cd %s
export PATH=/tmp/drivequal-bin:$PATH %s=1 %s=/tmp/drivequal-bin/acceptance.test %s=%s %s=%s %s=%s DRIVEQUAL_NVME_REAL=%s GOTRACEBACK=all %s
set +e
status=0
for run in %s; do
  /tmp/drivequal-bin/nvmevm.test -test.v=true -test.count=1 -test.timeout=%s "$run" || status=1
done
exit $status
`, shellQuote(h.suite), shellQuote(h.bin), shellQuote(h.bin), shellQuote(h.wd), envGuest, envSuite, envWork, shellQuote(work), envConfig, shellQuote(c.name), envMissing, shellQuote(strings.Join(missing, ";")), shellQuote(h.nvme), passed(), strings.Join(runs, " "), timeout-2*time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var power powerFunc
	if c.power != nil {
		power = c.power(t, work, m.QMP)
	}
	served := serveRequests(ctx, t, work, m.QMP, power)
	res, err := m.Run(ctx, h.kernel, initrd, work, script)
	cancel()
	<-served
	if res.Fallback != "" {
		t.Logf("guest: ran under %s after %s", res.Accel, res.Fallback)
	}
	if res.Rebooted != "" {
		t.Logf("guest: booted a second time: %s", res.Rebooted)
	}
	if res.Stuck != "" {
		t.Logf("guest %s: %s", c.name, res.Stuck)
	}
	t.Logf("guest %s (%s): %s wall, %s of the host's CPU, exit %d", c.name, res.Accel, res.Wall.Round(100*time.Millisecond), res.CPU.Round(100*time.Millisecond), res.Exit)
	// A guest whose power the host cut at its request (a power
	// request {"cut_host": true}) stops where it was, without its exit
	// file: the test that asked ends there, and its reboot judges it.
	cut := hostCutAt(work)
	if cut != "" {
		t.Logf("guest: the host cut its power at %s at its request (QEMU: %v)", cut, err)
		if c.reboot == nil {
			t.Errorf("the host cut the power of %s, and no reboot follows to judge what the cut left", c.name)
		}
		if c.cuts == "" {
			t.Errorf("the host cut the power of %s, whose tests do not ask for it (config.cuts)", c.name)
		}
	}
	if (err != nil || res.Exit < 0) && cut == "" {
		t.Fatalf("guest: %v\nconsole:\n%s\noutput:\n%s", err, res.Console, res.Output)
	}
	if pre, _, ok := strings.Cut(res.Output, "=== RUN"); ok {
		t.Logf("guest: %s", strings.TrimSpace(pre)) // when it was up
	}
	ran := splitTests(res.Output)
	if len(ran) == 0 {
		t.Fatalf("the guest ran no test (exit %d)\nconsole:\n%s\noutput:\n%s", res.Exit, res.Console, res.Output)
	}
	seen := map[string]bool{}
	for i, gt := range ran {
		seen[gt.name] = true
		t.Run(gt.name, func(t *testing.T) {
			switch {
			case gt.verdict == "PASS":
				t.Log("\n" + gt.log)
			case gt.verdict == "did not end" && cut != "" && i == len(ran)-1 && gt.name == c.cuts:
				t.Logf("the host cut the guest's power during it, at its request; the reboot judges what the cut left:\n%s", gt.log)
			case gt.verdict == "SKIP":
				t.Skip("\n" + gt.log)
			default:
				t.Errorf("%s in the guest:\n%s", gt.verdict, gt.log)
			}
		})
	}
	whole := true
	for _, n := range tests {
		if !seen[n] {
			t.Errorf("%s did not run in the guest %s (no such test, or the run stopped before it)", n, c.name)
			whole = false
		}
	}
	if res.Exit != 0 && cut == "" && !t.Failed() {
		t.Errorf("the guest's tests exited %d\noutput:\n%s", res.Exit, res.Output)
	}
	return whole
}

// passedOn are the host's variables a guest test reads as the host's
// tests do: DRIVEQUAL_REQUIRE_LOOP=1 makes a skip (a kernel module the
// guest lacks) a failure in the guest too; DRIVEQUAL_QEMU_PULL_TRIES
// repeats TestGuestNeighbourPulled's pulls.
var passedOn = []string{"DRIVEQUAL_REQUIRE_LOOP", "DRIVEQUAL_QEMU_COMPARE", envPullTries}

// passed is passedOn as the host has them, for the guest's export line.
func passed() string {
	var out []string
	for _, k := range passedOn {
		if v, ok := os.LookupEnv(k); ok {
			out = append(out, k+"="+shellQuote(v))
		}
	}
	return strings.Join(out, " ")
}

// guestTest is one top-level test of the guest's go test -v output.
type guestTest struct {
	name, verdict, log string
}

var (
	runLine  = regexp.MustCompile(`^=== RUN   (TestGuest\w*)$`)
	doneLine = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (TestGuest\w*) `)
)

// splitTests cuts go test -v output into its top-level tests (the guest
// runs them one after the other); a test that never ended (a panic, the
// timeout) is reported as such with the rest of the output.
func splitTests(out string) []guestTest {
	var tests []guestTest
	var cur *guestTest
	var log strings.Builder
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := runLine.FindStringSubmatch(line); m != nil {
			if cur != nil {
				cur.verdict, cur.log = "did not end", log.String()
				tests = append(tests, *cur)
			}
			cur = &guestTest{name: m[1]}
			log.Reset()
			continue
		}
		if m := doneLine.FindStringSubmatch(line); m != nil && cur != nil && m[2] == cur.name {
			log.WriteString(line + "\n")
			cur.verdict, cur.log = m[1], log.String()
			tests = append(tests, *cur)
			cur = nil
			log.Reset()
			continue
		}
		log.WriteString(line + "\n")
	}
	if cur != nil {
		cur.verdict, cur.log = "did not end", log.String()
		tests = append(tests, *cur)
	}
	return tests
}

func flagValue(name string) string {
	for i, a := range os.Args[1:] {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+2 < len(os.Args) {
			return os.Args[i+2]
		}
	}
	return ""
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
