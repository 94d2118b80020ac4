package nvmevm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The interruptions a multi-hour run meets, on emulated NVMe under the
// guest kernel's driver and the real nvme-cli: a reboot that numbers the
// controllers the other way round, a media error during the read-back, a
// critical warning raised mid-run, each followed by a kill and -resume.
// Each drive is its own capacity of the spec (32, 40 or 48 MiB), so that
// every cell names its drive. One guest configuration, booted twice, the
// second boot (its reboot) after the first's QEMU has exited, in the same
// subtest (TestQEMU/interrupted):
//
//	interrupted           nvme0 DQSWAP00A 32 MiB ┐ a run killed, for the reboot
//	                      nvme1 DQSWAP00B 48 MiB ┘
//	                      nvme2 DQBADRD01 32 MiB, reads of badSector fail until a flush
//	                      nvme3 DQWARNMID 40 MiB, critical warning set over QMP mid-run
//	                      nvme4 DQPEER001 48 MiB, their neighbour
//	                      nvme5, nvme6 DQTWIN001 16 MiB each, one serial,
//	                      no NGUID, EUI-64 or UUID; two SCSI disks of 16 MiB
//	                      (resume_identity_test.go)
//	the reboot            A's and B's images again, their controllers in each
//	                      other's PCI slot: nvme0 is DQSWAP00B, nvme1 DQSWAP00A
//
// The namespaces are passed in Machine.Extra (qemu.NamespaceArgs) with
// images this file creates, each at its size; the two boots share the
// swapped drives' images and a state directory (over 9p, tag "persist")
// that holds the killed run's recording.

const (
	serialBad   = "DQBADRD01"
	serialWarn2 = "DQWARNMID"
	serialPeer  = "DQPEER001"
	serialSwapA = "DQSWAP00A"
	serialSwapB = "DQSWAP00B"

	// badSector is the 512-byte sector whose reads the bad namespace
	// fails, 20 MiB in: past what the kernel's partition scan and udev
	// read, inside what the fill writes and its read-back reads.
	badSector = 40960

	// persistTag is the 9p tag of the swapped boots' state directory,
	// mounted at persistDir in the guest.
	persistTag = "persist"
	persistDir = "/tmp/drivequal-persist"
)

func init() {
	configs = append(configs,
		config{name: "interrupted", machine: func(images string) qemu.Machine { return interruptedMachine(images, false) },
			// The SCSI disks of TestGuestDisksSwappedRefused.
			optional: []string{"sd_mod", "virtio_scsi"},
			tests: []string{"TestGuestSwappedReboot", "TestGuestReadBackMediaError", "TestGuestCriticalWarningMidRun",
				"TestGuestDisksSwappedRefused", "TestGuestSameSerialRefused"},
			reboot: &config{name: "interrupted-rebooted", machine: func(images string) qemu.Machine { return interruptedMachine(images, true) },
				tests: []string{"TestGuestSwappedRebootResumed"}}},
	)
	// The OCP skip rides on the format purge's qualifying run; the
	// identity and model tests use the same guest's namespaces.
	for i := range configs {
		if configs[i].name != "multipath-off" {
			continue
		}
		for _, n := range []string{"TestGuestIdentity", "TestGuestModelRefused", "TestGuestAnyModel", "TestGuestNoOCPLog"} {
			if !slices.Contains(configs[i].tests, n) {
				configs[i].tests = append(configs[i].tests, n)
			}
		}
	}
}

// sizedNamespace is a namespace with its image's size.
type sizedNamespace struct {
	qemu.Namespace
	bytes int64
}

// withNamespaces returns m with ns passed in Extra, each image created
// (sparse, at its size) unless it is there already.
func withNamespaces(m qemu.Machine, ns []sizedNamespace) qemu.Machine {
	var plain []qemu.Namespace
	for _, n := range ns {
		if _, err := os.Stat(n.Image); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(n.Image, nil, 0o644); err != nil {
				panic(err)
			}
			if err := os.Truncate(n.Image, n.bytes); err != nil {
				panic(err)
			}
		}
		n.Namespace.IOPS = heldIOPS()
		plain = append(plain, n.Namespace)
	}
	args, err := qemu.NamespaceArgs("xns", plain)
	if err != nil {
		panic(err)
	}
	m.Extra = append(m.Extra, args...)
	return m
}

// nsUUID is a namespace UUID a reboot keeps (QEMU draws a new one at
// every start unless given).
func nsUUID(n int) string { return fmt.Sprintf("6c1c2a2e-0d3b-4d7e-9a51-%012x", n) }

// interruptedMachine is the interrupted guest, or with rebooted its second
// boot: the swapped drives alone, their controllers exchanged. The
// swapped drives' images and the state directory are beside the
// configurations' work directories (images is WORK/CONFIG/images), so
// that the second boot has the first's. The bad namespace's blkdebug
// rules fail reads of badSector until its first flush.
func interruptedMachine(images string, rebooted bool) qemu.Machine {
	shared := filepath.Join(filepath.Dir(filepath.Dir(images)), "interrupted-shared")
	state := filepath.Join(shared, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		panic(err)
	}
	m := qemu.Machine{Memory: 1024, CPUs: 2, SingleThreadTCG: true, Cmdline: []string{"nvme_core.multipath=N"}, Udev: true,
		Controllers: []qemu.Controller{{ID: "swapa", Serial: serialSwapA}, {ID: "swapb", Serial: serialSwapB}},
		Extra:       []string{"-virtfs", "local,path=" + state + ",mount_tag=" + persistTag + ",security_model=none,multidevs=remap"}}
	ns := []sizedNamespace{
		{qemu.Namespace{Controller: "swapa", NSID: 1, Image: filepath.Join(shared, "a.raw"), EUI64: 0x0011223344550011, UUID: nsUUID(0x11)}, 32 << 20},
		{qemu.Namespace{Controller: "swapb", NSID: 1, Image: filepath.Join(shared, "b.raw"), EUI64: 0x0011223344550012, UUID: nsUUID(0x12)}, 48 << 20},
	}
	if rebooted {
		var err error
		if m, err = m.Swapped("swapa", "swapb"); err != nil {
			panic(err)
		}
		return withNamespaces(m, ns)
	}
	rules := filepath.Join(images, "bad.rules")
	if err := qemu.WriteBlkdebug(rules, []qemu.MediaError{{Sector: badSector, UntilFlush: true}}); err != nil {
		panic(err)
	}
	img := func(name string) string { return filepath.Join(images, name+".raw") }
	m.Controllers = append(m.Controllers, qemu.Controller{ID: "bad", Serial: serialBad}, qemu.Controller{ID: "warnmid", Serial: serialWarn2}, qemu.Controller{ID: "peer", Serial: serialPeer})
	m, twins := withIdentityDrives(m, images)
	return withNamespaces(m, append(append(ns,
		sizedNamespace{qemu.Namespace{Controller: "bad", NSID: 1, Image: img("bad"), EUI64: 0x0011223344550021, UUID: nsUUID(0x21), Blkdebug: rules}, 32 << 20},
		sizedNamespace{qemu.Namespace{Controller: "warnmid", NSID: 1, Image: img("warnmid"), EUI64: 0x0011223344550022, UUID: nsUUID(0x22)}, 40 << 20},
		sizedNamespace{qemu.Namespace{Controller: "peer", NSID: 1, Image: img("peer"), EUI64: 0x0011223344550023, UUID: nsUUID(0x23)}, 48 << 20},
	), twins...))
}

// mountPersist mounts the swapped boots' state directory at persistDir.
func mountPersist(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll(persistDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if mounts, err := os.ReadFile("/proc/self/mounts"); err == nil && strings.Contains(string(mounts), " "+persistDir+" 9p ") {
		return persistDir // a test before this one in the boot mounted it
	}
	out, err := exec.Command("mount", "-t", "9p", "-o", "trans=virtio,version=9p2000.L,msize=512000", persistTag, persistDir).CombinedOutput()
	if err != nil {
		t.Fatalf("mounting the state directory (9p %s): %v: %s", persistTag, err, out)
	}
	return persistDir
}

// drive is the namespace of the controller with serial: its kernel path.
func drive(t *testing.T, serial string) string {
	t.Helper()
	return mustNamespace(t, controllers(t, serial)[0], 1)
}

// byID is udev's by-id link of the namespace of the controller with serial.
func byID(serial string) string { return "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_" + serial }

// runAt is one run of the suite with report directory rep (its recording
// in rep/raw), which a scenario keeps across runs.
type runAt struct {
	result
	rep    string
	killed bool // stopped with SIGKILL when stop said so
}

// syncBuffer is a bytes.Buffer that one goroutine writes while another
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// suiteAt runs the suite like runSuite, with the report in rep, and kills
// it with SIGKILL, as the OOM killer or a hard cancel would, as soon as
// stop (polled every 20 ms with rep and the suite's stdout so far; nil:
// never) returns true.
func suiteAt(t *testing.T, rep string, stop func(rep, stdout string) bool, args ...string) runAt {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(rep + ".nvme.log")
	all := append([]string{"-test.count=1", "-test.v=true", suiteTimeout, "-report=" + rep}, args...)
	cmd := exec.Command(os.Getenv(envSuite), all...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Env = append(os.Environ(), "DRIVEQUAL_NVME_LOG="+log)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	var mu sync.Mutex
	killed := false
	done := make(chan struct{})
	if stop != nil {
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if stop(rep, stdout.String()) {
					mu.Lock()
					killed = cmd.Process.Signal(syscall.SIGKILL) == nil
					mu.Unlock()
					return
				}
			}
		}()
	}
	err = cmd.Wait()
	close(done)
	mu.Lock()
	defer mu.Unlock()
	r := runAt{result: result{Stdout: stdout.String(), Stderr: stderr.String()}, rep: rep, killed: killed}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if b, err := os.ReadFile(log); err == nil {
		r.NVMe = strings.Split(strings.TrimSpace(string(b)), "\n")
		os.Remove(log)
	}
	how := fmt.Sprintf("exit %d", r.Code)
	if killed {
		how = "killed"
	}
	var steps []string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if stepLine.MatchString(l) {
			steps = append(steps, "  "+l)
		}
	}
	t.Logf("suite %s: %s in %s\n%s", strings.Join(args, " "), how, time.Since(start).Round(100*time.Millisecond), strings.Join(steps, "\n"))
	return r
}

// stepLine is the suite's line as it starts a step of its plan.
var stepLine = regexp.MustCompile(`^drivequal: \d\d:\d\d:\d\d (step \d+ of \d+|resuming)`)

// recorded is the recording's run.json under rep; false while it is not
// there or not whole.
func recorded(rep string) (record.Run, bool) {
	var run record.Run
	b, err := os.ReadFile(filepath.Join(rep, "raw", "run.json"))
	if err != nil || json.Unmarshal(b, &run) != nil {
		return run, false
	}
	return run, true
}

// resultOf is test's result in rep's results.json, once there.
func resultOf(rep, test string) (report.Result, bool) {
	var run report.Run
	b, err := os.ReadFile(filepath.Join(rep, "results.json"))
	if err != nil || json.Unmarshal(b, &run) != nil {
		return report.Result{}, false
	}
	for _, r := range run.Results {
		if r.Test == test {
			return r, true
		}
	}
	return report.Result{}, false
}

// results reads the run's results.json, by test.
func (r runAt) results(t *testing.T) map[string]report.Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.rep, "results.json"))
	if err != nil {
		t.Fatalf("results.json: %v\n%s", err, r.output())
	}
	var run report.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	by := map[string]report.Result{}
	for _, res := range run.Results {
		by[res.Test] = res
	}
	return by
}

// verdictIs fails t unless test's verdict in by is want.
func verdictIs(t *testing.T, by map[string]report.Result, test, want, why string) {
	t.Helper()
	got, ok := by[test]
	switch {
	case !ok:
		t.Errorf("%s: not in results.json (%s)", test, why)
	case got.Verdict != want:
		t.Errorf("%s: verdict %q (%s: %s), want %s: %s", test, got.Verdict, got.Cause, got.Error, want, why)
	}
}

// sums is the sha256 of each file of the recording raw that belongs to one
// of cells (raw/CELL.*).
func sums(t *testing.T, raw string, cells []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range cells {
		files, _ := filepath.Glob(filepath.Join(raw, filepath.FromSlash(c)+".*"))
		for _, f := range files {
			rel, _ := filepath.Rel(raw, f)
			out[rel] = testenv.SHA256(t, f)
		}
	}
	return out
}

// integrityName is TestIntegrity's subtest of drive path, as the suite
// names it (a path's slashes do not make levels).
func integrityName(path string) string {
	return "TestIntegrity/" + strings.ReplaceAll(strings.TrimPrefix(path, "/dev/"), "/", "-")
}

// errorLogNamed fails t unless results.json names, for drive dev (its
// "drives" entry), an nvme error-log capture that is in the recording: the
// evidence a supplier asks for first. The field is read by name from the
// JSON ("failure_capture": {"files": [...]}).
func errorLogNamed(t *testing.T, rep, dev string) {
	t.Helper()
	var run struct {
		Drives []struct {
			Path    string `json:"path"`
			Capture *struct {
				Files []string `json:"files"`
				Notes []string `json:"notes"`
			} `json:"failure_capture"`
		} `json:"drives"`
	}
	b, err := os.ReadFile(filepath.Join(rep, "results.json"))
	if err != nil || json.Unmarshal(b, &run) != nil {
		t.Errorf("results.json: %v", err)
		return
	}
	for _, d := range run.Drives {
		if d.Path != dev {
			continue
		}
		if d.Capture == nil {
			t.Errorf("results.json: drive %s has no failure_capture (no nvme error-log kept for its supplier)", dev)
			return
		}
		for _, f := range d.Capture.Files {
			p := f
			if !filepath.IsAbs(p) {
				p = filepath.Join(rep, "raw", f)
			}
			if _, err := os.Stat(p); err == nil && strings.Contains(filepath.Base(f), "error-log") {
				return
			}
		}
		t.Errorf("results.json: drive %s: failure_capture %+v names no error-log file in the recording", dev, *d.Capture)
		return
	}
	t.Errorf("results.json: no drive %s", dev)
}

const (
	cellW32  = "TestSingleDrive/32MiB/128KB_Sequential_Write"
	cellR32  = "TestSingleDrive/32MiB/128KB_Sequential_Read"
	cellRR32 = "TestSingleDrive/32MiB/4KB_Random_Read"
	cellW40  = "TestSingleDrive/40MiB/128KB_Sequential_Write"
	cellR40  = "TestSingleDrive/40MiB/128KB_Sequential_Read"
	cellRR40 = "TestSingleDrive/40MiB/4KB_Random_Read"
	cellW48  = "TestSingleDrive/48MiB/128KB_Sequential_Write"
	cellR48  = "TestSingleDrive/48MiB/128KB_Sequential_Read"
)

// shared runs a suite run that two guest tests judge once per boot: each
// guest test is a process of its own, so the first to ask makes the run
// and keeps what it needs under the guest's /tmp (a tmpfs the boot keeps),
// and the second reads it back.
func shared(t *testing.T, name string, v any, make func()) {
	t.Helper()
	p := filepath.Join(os.TempDir(), "drivequal-shared-"+name+".json")
	if b, err := os.ReadFile(p); err == nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return
	}
	make()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// savedRun is a runAt as shared keeps it.
type savedRun struct {
	Code           int
	Stdout, Stderr string
	NVMe           []string
	Rep            string
	Killed         bool
}

func save(r runAt) savedRun {
	return savedRun{Code: r.Code, Stdout: r.Stdout, Stderr: r.Stderr, NVMe: r.NVMe, Rep: r.rep, Killed: r.killed}
}

func (s savedRun) run() runAt {
	return runAt{result: result{Code: s.Code, Stdout: s.Stdout, Stderr: s.Stderr, NVMe: s.NVMe}, rep: s.Rep, killed: s.Killed}
}

// failingRun is one live run on the bad, warned and neighbour drives,
// killed once the warned drive's cell after the warning was judged, and
// its -resume.
type failingRun struct {
	bad, warned, peer string
	first, resumed    runAt
	warnErr           error  // the QMP request's
	flushed           string // why the bad sector still fails after the flush, or ""
}

// savedFailing is a failingRun as shared keeps it.
type savedFailing struct {
	Bad, Warned, Peer string
	First, Resumed    savedRun
	WarnErr, Flushed  string
}

// failingDrives makes the failing-drives run once: the bad namespace's
// read-back fails on badSector (an I/O error fio reports); while the warned
// drive's first cell runs, the host sets its critical warning to 0x08
// (media read-only) over QMP; the run is killed with SIGKILL as soon as
// results.json judges the warned drive's next cell, before the neighbour's
// sequential read. The bad namespace is then flushed, which ends its media
// error (a marginal block that a second try reads), and the same command
// is run with -resume.
func failingDrives(t *testing.T) *failingRun {
	var sv savedFailing
	shared(t, "failing", &sv, func() {
		f := makeFailing(t)
		sv = savedFailing{Bad: f.bad, Warned: f.warned, Peer: f.peer, First: save(f.first), Resumed: save(f.resumed), Flushed: f.flushed}
		if f.warnErr != nil {
			sv.WarnErr = f.warnErr.Error()
		}
	})
	f := &failingRun{bad: sv.Bad, warned: sv.Warned, peer: sv.Peer, first: sv.First.run(), resumed: sv.Resumed.run(), flushed: sv.Flushed}
	if sv.WarnErr != "" {
		f.warnErr = errors.New(sv.WarnErr)
	}
	return f
}

// makeFailing makes the failing-drives run (see failingDrives).
func makeFailing(t *testing.T) *failingRun {
	f := &failingRun{}
	{
		f.bad, f.warned, f.peer = drive(t, serialBad), drive(t, serialWarn2), drive(t, serialPeer)
		dir, err := os.MkdirTemp("", "failing-")
		if err != nil {
			t.Fatal(err)
		}
		rep := filepath.Join(dir, "report")
		args := []string{"-spec=" + specFile(t, "failing.toml"), "-drives=" + f.bad + "," + f.warned + "," + f.peer, "-destructive"}
		set := false
		f.first = suiteAt(t, rep, func(rep, stdout string) bool {
			if !set && strings.Contains(stdout, "measuring "+cellW40+" ") {
				set = true
				_, f.warnErr = hostQMP("qom-set", map[string]any{"path": "/machine/peripheral/warnmid", "property": "smart_critical_warning", "value": qemu.WarnReadOnly})
				if f.warnErr != nil {
					return true
				}
			}
			_, judged := resultOf(rep, cellR40)
			return set && judged
		}, args...)
		if !set && f.warnErr == nil {
			f.warnErr = fmt.Errorf("the run ended (exit %d) before it measured %s, during which the warning is set", f.first.Code, cellW40)
		}
		if out, err := exec.Command("nvme", "flush", f.bad, "-n", "1").CombinedOutput(); err != nil {
			f.flushed = fmt.Sprintf("nvme flush %s: %v: %s", f.bad, err, out)
		} else if out, err := exec.Command("dd", "if="+f.bad, "of=/dev/null", "bs=4096", fmt.Sprintf("skip=%d", badSector/8), "count=1", "iflag=direct").CombinedOutput(); err != nil {
			f.flushed = fmt.Sprintf("sector %d of %s still fails after the flush: %v: %s", badSector, f.bad, err, out)
		}
		f.resumed = suiteAt(t, rep, nil, append(args, "-resume")...)
	}
	return f
}

// TestGuestReadBackMediaError: the 32 MiB drive's namespace fails every
// read of one sector (QEMU's blkdebug: Unrecovered Read Error to the
// kernel's driver, an I/O error to fio) during the read-back of its fill.
// The run is killed, the sector made readable again, and -resume keeps
// the drive disqualified: TestIntegrity names the failed read-back, the
// drive's cells fail, its error log is in the recording and named in
// results.json; the 48 MiB neighbour qualifies.
func TestGuestReadBackMediaError(t *testing.T) {
	guest(t)
	f := failingDrives(t)
	if !f.first.killed {
		t.Errorf("the first run was not killed (exit %d)\n%s", f.first.Code, f.first.output())
	}
	if f.flushed != "" {
		t.Fatal(f.flushed)
	}
	r := f.resumed
	if r.Code != 1 {
		t.Errorf("-resume: exit %d, want 1 (NOT QUALIFIED): neither refused nor qualified\n%s", r.Code, r.output())
	}
	by := r.results(t)
	integ := integrityName(f.bad)
	verdictIs(t, by, integ, report.Fail, "the read-back that failed before the kill stays failed, though the sector now reads")
	if res := by[integ]; !strings.Contains(res.Error, f.bad) {
		t.Errorf("%s: error %q does not name %s", integ, res.Error, f.bad)
	}
	for _, c := range []string{cellW32, cellR32, cellRR32} {
		verdictIs(t, by, c, report.Fail, "its drive stays disqualified")
	}
	for _, c := range []string{cellW48, cellR48, integrityName(f.peer)} {
		verdictIs(t, by, c, report.Pass, "the neighbour qualifies")
	}
	mustContain(t, r.Stdout, "--- FAIL: TestVerdict/32MiB", "--- PASS: TestVerdict/48MiB")
	errorLogNamed(t, r.rep, f.bad)
}

// TestGuestCriticalWarningMidRun: the host sets the 40 MiB drive's
// critical warning to 0x08 (media read-only) over QMP while its first cell
// runs. Its next cell fails naming the warning before the run is killed.
// -resume is not refused for the warning (raised mid-run, it is in the
// recording), keeps that cell failed naming it, fails the drive's random
// read naming it too (not "not preconditioned", though the drive was not
// preconditioned: a disqualifying cause outranks it), and goes on with the
// neighbour, whose remaining cell passes; the warned drive's error log is
// in the recording.
func TestGuestCriticalWarningMidRun(t *testing.T) {
	guest(t)
	f := failingDrives(t)
	if f.warnErr != nil {
		t.Fatalf("setting the critical warning over QMP: %v\n%s", f.warnErr, f.first.output())
	}
	if !f.first.killed {
		t.Errorf("the first run was not killed (exit %d)", f.first.Code)
	}
	want := f.warned + " raised critical_warning 0x08"
	check := func(when string, by map[string]report.Result, cells ...string) {
		t.Helper()
		for _, c := range cells {
			res := by[c]
			if res.Verdict != report.Fail || res.Cause != report.CauseCriticalWarning || !strings.Contains(res.Error, want) {
				t.Errorf("%s: %s: %q (%s: %s), want fail (%s) naming %q", when, c, res.Verdict, res.Cause, res.Error, report.CauseCriticalWarning, want)
			}
		}
	}
	check("the live run", f.first.results(t), cellR40)
	if out, err := exec.Command("nvme", "smart-log", f.warned, "-o", "json").Output(); err != nil || !bytes.Contains(out, []byte(`"critical_warning":8`)) {
		t.Errorf("nvme smart-log %s after the QMP request: %v\n%s", f.warned, err, out)
	}

	r := f.resumed
	if r.Code != 1 {
		t.Errorf("-resume: exit %d, want 1 (NOT QUALIFIED): not refused for the warning, the warned drive not qualified\n%s", r.Code, r.output())
	}
	by := r.results(t)
	check("the resumed run", by, cellR40, cellRR40)
	verdictIs(t, by, cellR48, report.Pass, "the resume goes on with the neighbour")
	mustContain(t, r.Stdout, "measuring "+cellR48+" ", "--- FAIL: TestVerdict/40MiB", "--- PASS: TestVerdict/48MiB")
	errorLogNamed(t, r.rep, f.warned)
}

// swapState is what the first boot of the swapped reboot leaves for the
// second in the state directory (killed.json).
type swapState struct {
	A, B   string            // the kernel paths of drives A and B in the first boot
	BootID string            // the first boot's, as run.json recorded it
	Kept   []string          // the cells run.json listed when the run was killed
	Sums   map[string]string // their files' sha256
}

func twoArgs(t *testing.T, drives string) []string {
	return []string{"-spec=" + specFile(t, "two.toml"), "-drives=" + drives, "-destructive"}
}

// TestGuestSwappedReboot is the first boot of the swapped-order reboot: a
// run on drives A (32 MiB) and B (48 MiB), given by their by-id links, is
// killed with SIGKILL once run.json lists its first cell (A's; B's is
// next); its recording
// and what it kept are in the state directory the second boot
// (TestGuestSwappedRebootResumed) mounts.
func TestGuestSwappedReboot(t *testing.T) {
	guest(t)
	a, b := drive(t, serialSwapA), drive(t, serialSwapB)
	rep := filepath.Join(mountPersist(t), "report")
	r := suiteAt(t, rep, func(rep, _ string) bool { run, _ := recorded(rep); return len(run.Tests) >= 1 },
		twoArgs(t, byID(serialSwapA)+","+byID(serialSwapB))...)
	if !r.killed {
		t.Fatalf("the run ended (exit %d) before its first cell was recorded\n%s", r.Code, r.output())
	}
	run, _ := recorded(rep)
	st := swapState{A: a, B: b, BootID: run.BootID, Kept: run.Tests, Sums: sums(t, filepath.Join(rep, "raw"), run.Tests)}
	if len(st.Sums) == 0 {
		t.Fatalf("run.json lists %q but no file of it is in the recording", run.Tests)
	}
	data, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(persistDir, "killed.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %q; %s is %s, %s is %s", run.Tests, serialSwapA, a, serialSwapB, b)
}

// TestGuestSwappedRebootResumed is the second boot: the controllers of A
// and B are in each other's PCI slot, so the kernel paths of the first
// boot now name the other drive, while the by-id links follow their
// drives. -resume with the by-id links continues the killed run, and is
// killed as it starts measuring the next cell; -resume again with the new kernel
// paths, in the kernel's order (B first), finishes it: every cell is
// judged and passes, and the first run's cells are kept byte for byte and
// not measured again.
func TestGuestSwappedRebootResumed(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	var st swapState
	data, err := os.ReadFile(filepath.Join(dir, "killed.json"))
	if err != nil {
		t.Fatalf("the first boot (TestGuestSwappedReboot) left nothing: %v", err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	a, b := drive(t, serialSwapA), drive(t, serialSwapB)
	if a != st.B || b != st.A {
		t.Fatalf("after the reboot %s is %s and %s is %s; the first boot had %s and %s: the controllers did not swap", serialSwapA, a, serialSwapB, b, st.A, st.B)
	}
	for serial, dev := range map[string]string{serialSwapA: a, serialSwapB: b} {
		if got, err := filepath.EvalSymlinks(byID(serial)); err != nil || got != dev {
			t.Fatalf("%s points to %q (%v), want %s", byID(serial), got, err, dev)
		}
	}
	t.Logf("after the reboot: %s is %s (was %s), %s is %s (was %s)", serialSwapA, a, st.A, serialSwapB, b, st.B)
	rep := filepath.Join(dir, "report")
	raw := filepath.Join(rep, "raw")

	// Killed as it starts measuring the cell the first run did not reach:
	// the second resume measures it again.
	r1 := suiteAt(t, rep, func(_, stdout string) bool {
		return strings.Contains(stdout, "measuring "+cellW48+" ")
	}, append(twoArgs(t, byID(serialSwapA)+","+byID(serialSwapB)), "-resume")...)
	if !r1.killed {
		t.Fatalf("-resume with the by-id links ended (exit %d) before it measured a cell\n%s", r1.Code, r1.output())
	}
	mustContain(t, r1.Stdout, "drivequal: resuming the run recorded in "+raw)
	for _, c := range st.Kept {
		if strings.Contains(r1.Stdout, "measuring "+c+" ") {
			t.Errorf("-resume with the by-id links measured %s, which the first run recorded", c)
		}
	}

	// The kernel's order now: nvme0n1 (B) before nvme1n1 (A).
	paths := []string{a, b}
	slices.Sort(paths)
	r2 := suiteAt(t, rep, nil, append(twoArgs(t, strings.Join(paths, ",")), "-resume")...)
	if r2.Code != 0 {
		t.Errorf("-resume with the new kernel paths %v: exit %d, want 0\n%s", paths, r2.Code, r2.output())
	}
	by := r2.results(t)
	for _, c := range []string{cellW32, cellW48, integrityName(a), integrityName(b)} {
		verdictIs(t, by, c, report.Pass, "judged in the resumed run")
	}
	var run report.Run
	if b, err := os.ReadFile(filepath.Join(rep, "results.json")); err == nil {
		json.Unmarshal(b, &run)
	}
	if n := len(run.Resumptions); n != 2 {
		t.Errorf("results.json records %d resumptions, want 2", n)
	} else if !slices.Equal(run.Resumptions[0].Kept, st.Kept) {
		t.Errorf("the first resumption kept %q, want the killed run's %q", run.Resumptions[0].Kept, st.Kept)
	}
	for _, c := range st.Kept {
		if strings.Contains(r2.Stdout, "measuring "+c+" ") {
			t.Errorf("-resume with the new kernel paths measured %s, which the first run recorded", c)
		}
	}
	after := sums(t, raw, st.Kept)
	for f, sum := range st.Sums {
		if after[f] != sum {
			t.Errorf("%s, recorded before the reboot, changed: sha256 %s, was %s", f, after[f], sum)
		}
	}
	mustContain(t, r2.Stdout, "drivequal: QUALIFIED",
		// The mapping, printed: drive 1 (A) is now nvme1n1, drive 2 (B) nvme0n1.
		"drivequal: drives matched by identity: drive 1 (recorded at ", ") is "+a+"; drive 2 (recorded at ", ") is "+b)
	if fin, ok := recorded(rep); !ok || fin.BootID == "" || fin.BootID == st.BootID || fin.Finished == "" {
		t.Errorf("run.json: boot id %q (the first boot's %q), finished %q: want the new boot's, finished", fin.BootID, st.BootID, fin.Finished)
	}
}

// formatPurgeLive runs the suite with args and -destructive once a boot,
// its report in a directory of its own: TestGuestFormatPurge's live run,
// which TestGuestNoOCPLog judges too.
func formatPurgeLive(t *testing.T, args []string) runAt {
	var sv savedRun
	shared(t, "format-purge", &sv, func() {
		dir, err := os.MkdirTemp("", "format-purge-")
		if err != nil {
			t.Fatal(err)
		}
		sv = save(suiteAt(t, filepath.Join(dir, "report"), nil, append(args, "-destructive")...))
	})
	return sv.run()
}

// TestGuestNoOCPLog: QEMU 7.2's controller has no OCP extended SMART log
// (C0). The format purge's live run (TestGuestFormatPurge) asks nvme-cli
// for it, says so for its drive, "no OCP C0 log (...)", and still
// qualifies.
func TestGuestNoOCPLog(t *testing.T) {
	guest(t)
	args, dev := formatPurgeArgs(t)
	r := formatPurgeLive(t, args)
	if r.Code != 0 {
		t.Errorf("exit %d, want 0\n%s", r.Code, r.output())
	}
	mustContain(t, r.Stdout, "drivequal: QUALIFIED")
	summary, _ := os.ReadFile(filepath.Join(r.rep, "summary.md"))
	found := false
	for _, l := range strings.Split(r.output()+"\n"+string(summary), "\n") {
		found = found || (strings.Contains(l, "no OCP C0 log (") && (strings.Contains(l, dev) || strings.Contains(l, serialFormat)))
	}
	if !found {
		t.Errorf("nothing says %s has no OCP C0 log (\"no OCP C0 log (...)\" naming it) in the output or summary.md", dev)
	}
	if got := r.sent("ocp"); len(got) == 0 {
		t.Errorf("nvme-cli's ocp smart-add-log was never sent (nvme-cli commands: %q)", r.NVMe)
	}
}
