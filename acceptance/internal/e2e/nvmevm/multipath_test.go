package nvmevm

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Serials of the multipath-on guest's controllers (see machineMultipath).
const (
	serialMP    = "DQMPATH01" // two controllers of one NVM subsystem
	serialPullA = "DQPULL001" // stays in
	serialPullB = "DQPULL002" // pulled mid-step
	serialTCP   = "DQTCP0001" // exported over NVMe/TCP by nvmet
	mpNQN       = "drivequal-mp"
	// pulledID is the QEMU id of the controller device_del removes.
	pulledID = "pullb"
	// mpBytes is the size of each of the guest's namespaces: small, so
	// that a fill through nvmet under TCG takes seconds.
	mpBytes = 16 << 20
)

func init() {
	configs = append(configs, config{
		name:       "multipath-on",
		machine:    machineMultipath,
		imageBytes: mpBytes,
		optional:   []string{"nvmet", "nvmet_tcp", "nvme_tcp"},
		tests:      []string{"TestGuestMultipathHead", "TestGuestNVMeTCP", "TestGuestPulledMidStep", "TestGuestNeighbourPulled", "TestGuestFirmwareUnderLoad"},
		// It took 11.8 min beside the rest of make test on 2 cores; each
		// further try of TestGuestNeighbourPulled (two runs of the suite)
		// takes about a minute and a half under TCG.
		timeout: 20*time.Minute + time.Duration(pullTries()-1)*3*time.Minute,
	})
}

// machineMultipath is the guest with native multipath on
// (nvme_core.multipath=Y, most distributions' default):
//
//	nvme0 (DQMPATH01) ┐ namespace 1, shared: one head, nvme0n1, over
//	nvme1 (DQMPATH01) ┘ paths nvme0c0n1 and nvme0c1n1; namespace 2,
//	                    private to nvme1: nvme0n2 over nvme0c1n2
//	nvme2 (DQPULL001)   nvme2n1
//	nvme3 (DQPULL002)   nvme3n1, removed mid-step by device_del
//	nvme4 (DQTCP0001)   nvme4n1, exported by nvmet over TCP on 127.0.0.1
//
// The names are what Linux usually gives; the tests find each by serial.
//
// hardened_usercopy=off: over loopback, nvme-tcp sends the fill's pages
// without copying them, and nvmet-tcp receives an skb fragment that runs
// from one transparent huge page of fio's buffer into the physically
// next one. Debian 6.1's hardened usercopy then takes the copy out of
// that fragment for a read past its page allocation and stops the
// kernel (kernel BUG at mm/usercopy.c, "Kernel memory exposure attempt
// detected from page alloc (offset 2088960, size 65459)", in
// nvmet_tcp_io_work), and every I/O on the fabric hangs: one run of make
// test in a dozen. A target on another host receives the network's
// pages; the check is a guest's, not what drivequal tests, and the
// suite's read-back still compares every byte the fill wrote.
func machineMultipath(images string) qemu.Machine {
	img := func(name string) string { return filepath.Join(images, name+".raw") }
	return qemu.Machine{
		Memory:          1024,
		CPUs:            2,
		SingleThreadTCG: true,
		Cmdline:         []string{"nvme_core.multipath=Y", "hardened_usercopy=off"},
		Udev:            true,
		Subsystems:      []qemu.Subsystem{{ID: "mp", NQN: mpNQN}},
		Controllers: []qemu.Controller{
			{ID: "mpa", Serial: serialMP, Subsys: "mp"},
			{ID: "mpb", Serial: serialMP, Subsys: "mp"},
			{ID: "pulla", Serial: serialPullA},
			{ID: pulledID, Serial: serialPullB},
			{ID: "tcp", Serial: serialTCP},
		},
		Namespaces: []qemu.Namespace{
			{Controller: "mpa", NSID: 1, Image: img("mp-1"), EUI64: 0x0011223344560001},
			{Controller: "mpb", NSID: 2, Image: img("mp-2"), Private: true, EUI64: 0x0011223344560002},
			{Controller: "pulla", NSID: 1, Image: img("pull-a"), EUI64: 0x0011223344560003},
			{Controller: pulledID, NSID: 1, Image: img("pull-b"), EUI64: 0x0011223344560004},
			{Controller: "tcp", NSID: 1, Image: img("tcp-1"), EUI64: 0x0011223344560005},
		},
	}
}

// needModules skips t, naming the module, unless every one of names was
// loaded at boot (see config.optional).
func needModules(t *testing.T, names ...string) {
	t.Helper()
	for _, m := range strings.Split(os.Getenv(envMissing), ";") {
		name, why, _ := strings.Cut(m, "=")
		for _, n := range names {
			if n == name {
				testenv.Skipf(t, "needs kernel module %s, which the guest's kernel lacks: %s", n, why)
			}
		}
	}
	for _, n := range names {
		if _, err := os.Stat("/sys/module/" + n); err != nil {
			testenv.Skipf(t, "needs kernel module %s, which did not load in the guest (see the console's insmod lines)", n)
		}
	}
}

// hiddenPaths returns the per-path devices of the multipath head dev
// (/dev/nvme0n1: nvme0c0n1, nvme0c1n1), from /sys/class/block.
func hiddenPaths(t *testing.T, dev string) []string {
	t.Helper()
	m := regexp.MustCompile(`^nvme([0-9]+)n([0-9]+)$`).FindStringSubmatch(filepath.Base(dev))
	if m == nil {
		t.Fatalf("%s is not a multipath head's name", dev)
	}
	ents, _ := filepath.Glob("/sys/class/block/nvme" + m[1] + "c*n" + m[2])
	var out []string
	for _, e := range ents {
		out = append(out, filepath.Base(e))
	}
	sort.Strings(out)
	return out
}

// perPath matches a per-path device's name.
var perPath = regexp.MustCompile(`nvme[0-9]+c[0-9]+n[0-9]+`)

// TestGuestMultipathHead: native multipath on, one NVM subsystem of two
// controllers sharing namespace 1 (namespace 2 on the second alone). The
// shared namespace is one drive, its head /dev/nvmeXn1, over two hidden
// per-path devices (nvmeXc0n1, nvmeXc1n1) that have no device node. A
// format that applies to every namespace (FNA bit 0, as the nvme wrapper
// reports it) is refused given the head alone, naming namespace 2, and
// leaves both heads byte for byte as they were. A whole run on the head
// completes with its verdicts; nvme-cli and fio are given the head and
// never a per-path device, the per-namespace format leaves namespace 2
// unchanged, and the drives table names both paths.
func TestGuestMultipathHead(t *testing.T) {
	guest(t)
	start := time.Now()
	if b, _ := os.ReadFile("/sys/module/nvme_core/parameters/multipath"); strings.TrimSpace(string(b)) != "Y" {
		t.Fatalf("nvme_core.multipath is %q, want Y", b)
	}
	nqn := "nqn.2019-08.org.qemu:" + mpNQN
	head1, head2 := headOf(t, nqn, 1), headOf(t, nqn, 2)
	paths := hiddenPaths(t, head1)
	if len(paths) != 2 {
		t.Fatalf("%s has per-path devices %q, want one through each of the two controllers", head1, paths)
	}
	for _, p := range paths {
		if _, err := os.Stat("/dev/" + p); err == nil {
			t.Errorf("/dev/%s exists: a per-path device has no node", p)
		}
	}
	scribble(t, head1)
	scribble(t, head2)
	before := hashes(t, head1, head2)

	// The reach refusal: a format of every namespace, given one.
	r := runSuite(t, []string{"DRIVEQUAL_FAKE_IDCTRL=fna=1"}, "-spec="+specFile(t, "small.toml"), "-drives="+head1, "-capacity=16MiB", "-destructive")
	refused(t, r, head1, head2+" is not in -drives", nqn)
	unchanged(t, before, head1, head2)
	t.Logf("refusal after %s", time.Since(start).Round(100*time.Millisecond))

	// A whole run on the head.
	live, rep := runSuiteWatching(t, nil, func(string, string) {}, "-spec="+specFile(t, "small.toml"), "-drives="+head1, "-capacity=16MiB", "-destructive")
	mustContain(t, live.Stdout, "--- PASS: TestSingleDrive/16MiB/128KB_Sequential_Write", "--- PASS: TestSingleDrive/16MiB/128KB_Sequential_Read",
		"--- PASS: TestHealth/"+strings.TrimPrefix(head1, "/dev/")+"/critical_warning", "drivequal: QUALIFIED")
	if live.Code != 0 {
		t.Errorf("exit %d\n%s", live.Code, live.output())
	}
	want := "format " + head1 + " --ses=1 --force -> exit 0"
	if got := live.sent("format"); len(got) != 1 || got[0] != want {
		t.Errorf("formats sent: %q, want one %q", got, want)
	}
	for _, c := range append(r.NVMe, live.NVMe...) {
		if perPath.MatchString(c) {
			t.Errorf("nvme-cli was given a per-path device: %s", c)
		}
	}
	// fio's job files and outputs, as recorded: no per-path device.
	filepath.WalkDir(rep, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if m := perPath.Find(b); m != nil && !strings.HasSuffix(p, ".md") && !strings.HasSuffix(p, "index.html") && !strings.HasSuffix(p, "results.json") && !strings.HasSuffix(p, "run.json") {
			t.Errorf("%s names the per-path device %s", p, m)
		}
		return nil
	})
	unchanged(t, before[1:], head2) // the per-namespace format reached namespace 1 alone
	summary, err := os.ReadFile(filepath.Join(rep, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(summary), "- "+head1+": native multipath, subsystem "+nqn+", 2 paths: "+paths[0]+" (nvme", paths[1]+" (nvme", "pcie 0000:", "live)")
	t.Logf("scenario took %s", time.Since(start).Round(100*time.Millisecond))
}
