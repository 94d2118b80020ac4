package nvmevm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
)

// The whole host's power cut under QEMU, in three boots on the same
// drives: the powerloss-host boot runs TestPowerLoss with
// -power-cut-host, one cycle, on the three drive personalities of the
// powerloss boot (powerloss_test.go) with plp = true. Every drive is
// written, the run's ledgers and state are saved and synced in its
// recording, and the cut command asks the host to cut ({"cut_host":
// true}), which SIGKILLs every nbdkit (their caches are lost) and QEMU.
// The boot ends there, without the guest's exit file, as the host
// expects (hostCutFile). Its reboot, powerloss-host-rebooted, boots the
// same images, each nbdkit started again with its personality, runs the
// command line with -resume, which judges the drives' cycle, and then
// the run without plp on a second honest volatile cache, which cuts the
// host again; the third boot, powerloss-host-rebooted-again, resumes
// that one.
//
// The boots share, beside their work directories, the drives' images
// and a state directory (9p, tag "persist", written through to the
// host's file: the guest mounts it without a cache, so a write and an
// fsync reach the host's file before they return) that holds the
// recordings, the specs and the cut command, so that each resume's
// command line is its run's.

func init() {
	// Beside the rest of make test the first boot took 5.9 minutes (its
	// guest's drives' snapshot, writes and saves, at a fifth of a core),
	// alone 1 minute. The three boots' limits add to less than the
	// package's 40.
	again := hostCutBoot("powerloss-host-rebooted-again", hostCutBack, true, 8*time.Minute, "", nil, "TestGuestPowerLossHostResumedNoPLP")
	rebooted := hostCutBoot("powerloss-host-rebooted", hostCutBack, true, 11*time.Minute, "TestGuestPowerLossHostCutNoPLP", &again,
		"TestGuestPowerLossHostResumed", "TestGuestPowerLossHostCutNoPLP")
	first := hostCutBoot("powerloss-host", hostCutDrives, false, 11*time.Minute, "TestGuestPowerLossHostCut", &rebooted, "TestGuestPowerLossHostCut")
	first.optIn = envPower
	configs = append(configs, first)
}

// hostCutBoot is a boot of drives of the host cut's (on the images the
// boot before left when keep), running tests, the one named cuts asking
// the host to cut its power, reboot following it.
func hostCutBoot(name string, drives []nbdDrive, keep bool, timeout time.Duration, cuts string, reboot *config, tests ...string) config {
	return config{
		name:    name,
		machine: func(images string) qemu.Machine { return hostCutMachine(images, drives) },
		power: func(t *testing.T, work, qmp string) powerFunc {
			return startNBDOn(t, work, hostCutShared(work), qmp, drives, keep, writeDelay)
		},
		tests: tests, cuts: cuts, timeout: timeout, reboot: reboot,
	}
}

// hostCutShared is the directory the three boots share beside their work
// directories (WORK/CONFIG): the drives' images, and the state directory.
func hostCutShared(work string) string {
	return filepath.Join(filepath.Dir(work), "powerloss-host-shared")
}

// hostCutMachine is the powerloss guest of drives on the shared images,
// with its pid file (the host's cut kills it) and the state directory.
func hostCutMachine(images string, drives []nbdDrive) qemu.Machine {
	work := filepath.Dir(images)
	shared := hostCutShared(work)
	state := filepath.Join(shared, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		panic(err)
	}
	m := powerMachineOf(shared, drives)
	m.Extra = append(m.Extra, "-pidfile", qemuPidFile(work),
		"-virtfs", "local,path="+state+",mount_tag="+persistTag+",security_model=none,multidevs=remap")
	return m
}

// hostCutState is what the first boot leaves for the reboot.
type hostCutState struct {
	Names  map[string]string // by serial: the suite's name of the drive
	BootID string            // the first boot's
}

// serialVWC2 and serialLiar2 are the powerloss-host boots' second honest
// volatile cache and second liar, judged without plp; serialGone a
// protected drive that does not come back after the first cut: the
// reboots' machines have no controller of it.
const (
	serialVWC2  = "DQVWC0002"
	serialLiar2 = "DQLIE0002"
	serialGone  = "DQGONE001"
)

// hostCutDrives are the first powerloss-host boot's drives: the
// powerloss boot's three, a second honest volatile cache and liar, and
// the drive that does not come back; hostCutBack those of the reboots.
var (
	hostCutDrives = append(slices.Clone(nbdDrives), nbdDrive{id: "vwc2", serial: serialVWC2, cache: "writeback"}, nbdDrive{id: "liar2", serial: serialLiar2, cache: "unsafe"}, nbdDrive{id: "gone", serial: serialGone})
	hostCutBack   = hostCutDrives[:len(hostCutDrives)-1]
)

// hostCutRun is one of the two suite runs that each end in a cut of the
// host, each in its own directory of the state directory, with its spec:
// the three personalities with plp = true, and the second honest cache
// and liar without. Each writes for hostCutAfter with a flush every 16 writes of
// a job: beside the rest of make test, three drives written at once for
// 1 s completed as few as 11 writes (the liar) and 38 (the honest
// drive), too few for a flush every 32, and the liar must lose flushed
// writes; the honest drive holds no unflushed write at the cut only when
// both its jobs ended right after a flush (with each flush ending at
// nbdkit's cache, a flush takes a small share of a job's time: see
// nbdServers.start).
type hostCutRun struct {
	name       string
	serials    []string
	plp        bool
	flushEvery int
}

var hostCutRuns = []hostCutRun{
	{name: "plp", serials: []string{serialPLP, serialVWC, serialLiar, serialGone}, plp: true, flushEvery: 16},
	{name: "noplp", serials: []string{serialVWC2, serialLiar2}, flushEvery: 16},
}

// hostCutAfter is how long the host cut's runs write: each write held
// writeDelay by its nbdkit, a job completes at most 2,500 writes in it,
// fewer than its 3,072 blocks, however fast the guest runs.
const hostCutAfter = "5s"

// hostCutScript is both runs' cut command (`cut RUN`; RUN only names the
// run in the logs): it asks the host
// to cut its whole power (power cut-host). The runs cut the host one
// after the other, each in its own boot: at once, the run of one drive
// reached its cut 3.7 minutes before the run of three beside the rest of
// make test (each fsync of their recordings a write-through to the
// host's disk), longer than the minute the suite gives a cut command.
const hostCutScript = `#!/bin/sh
set -eu
exec "$(dirname "$0")/power" cut-host
`

// dir is r's directory in the state directory.
func (r hostCutRun) dir(state string) string { return filepath.Join(state, r.name) }

// args is r's command line in the boot that cuts and the one after it
// (which adds -resume).
func (r hostCutRun) args(state string) []string {
	var drives []string
	for _, s := range r.serials {
		drives = append(drives, byID(s))
	}
	return []string{"-test.count=1", "-test.v=true", suiteTimeout, "-report=" + filepath.Join(r.dir(state), "report"),
		"-spec=" + filepath.Join(r.dir(state), "powerloss.toml"), "-drives=" + strings.Join(drives, ","), "-capacity=32MiB",
		"-destructive", "-test.run=TestPowerLoss", "-power-cut=" + filepath.Join(state, "cut") + " " + r.name, "-power-cut-host"}
}

// hostCutSuite runs the suite with args, its stdout to out and
// its stderr with it.
func hostCutSuite(t *testing.T, out io.Writer, args ...string) int {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Error(err)
		return -1
	}
	cmd := exec.Command(os.Getenv(envSuite), args...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		t.Errorf("running the suite: %v", err)
		return -1
	}
	return 0
}

func bootID(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestGuestPowerLossHostCut is the first boot: the plp run of
// TestPowerLoss with the whole host's cut, one cycle: the protected, the
// honest volatile and the lying drive with plp = true. It never returns:
// the cut command has the host kill QEMU. The run's output goes to the
// boot's output as it comes, so that what it said before the cut is on
// the host, and to plp/first.log in the state directory. Both runs'
// specs are written here, and the drives' names (cut.json).
func TestGuestPowerLossHostCut(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	for name, script := range map[string]string{"power": powerScript, "cut": hostCutScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st := hostCutState{Names: map[string]string{}, BootID: bootID(t)}
	for _, r := range hostCutRuns {
		if err := os.MkdirAll(r.dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		// The resume waits ready_within for the drive not back.
		powerSpecIn(t, r.dir(dir), 1, r.plp, "15s", r.flushEvery, hostCutAfter)
		for _, s := range r.serials {
			real, err := filepath.EvalSymlinks(byID(s))
			if err != nil {
				t.Fatal(err)
			}
			st.Names[s] = filepath.Base(real)
		}
	}
	writeHostCutState(t, dir, "cut.json", st)
	t.Logf("drives %v; the plp run runs until the host cuts its power", st.Names)
	hostCutUntilCut(t, dir, hostCutRuns[0])
}

// TestGuestPowerLossHostCutNoPLP is the reboot's second test: the noplp
// run of TestPowerLoss with the whole host's cut (the second honest
// volatile cache and liar without plp), after the plp run was judged; it
// never returns, and the boot after it judges it.
func TestGuestPowerLossHostCutNoPLP(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	st := readHostCutState(t, dir, "cut.json")
	st.BootID = bootID(t)
	// The suite names the drive by its kernel name in this boot.
	for _, s := range hostCutRuns[1].serials {
		real, err := filepath.EvalSymlinks(byID(s))
		if err != nil {
			t.Fatal(err)
		}
		st.Names[s] = filepath.Base(real)
	}
	writeHostCutState(t, dir, "cut2.json", st)
	hostCutUntilCut(t, dir, hostCutRuns[1])
}

// hostCutUntilCut runs r until the host cuts its power (it does not
// return then); its output to the boot's output and RUN/first.log. A
// minute before the test's deadline, the guest's state is logged: what
// the processes wait in, the I/O each drive has in flight, the kernel's
// last messages.
func hostCutUntilCut(t *testing.T, dir string, r hostCutRun) {
	t.Helper()
	if dl, ok := t.Deadline(); ok && time.Until(dl) > 2*time.Minute {
		timer := time.AfterFunc(time.Until(dl)-time.Minute, func() { fmt.Print(guestState()) })
		defer timer.Stop()
	}
	log, err := os.Create(filepath.Join(r.dir(dir), "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	code := hostCutSuite(t, io.MultiWriter(os.Stdout, log), r.args(dir)...)
	t.Fatalf("the %s run ended (exit %d) and the host's power was not cut", r.name, code)
}

func writeHostCutState(t *testing.T, dir, name string, st hostCutState) {
	t.Helper()
	data, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readHostCutState reads what a boot before left (name in the state
// directory), and checks that this is another boot.
func readHostCutState(t *testing.T, dir, name string) hostCutState {
	t.Helper()
	var st hostCutState
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		t.Fatalf("the boot before left nothing (%s): %v", name, err)
	}
	return st
}

// hostCutPending checks that run r's recording, as the cut left it, is
// there: run.json lists every drive's cycle, pending, and its state and
// snapshot; its run said it cut the host.
func hostCutPending(t *testing.T, dir string, r hostCutRun, st hostCutState) {
	t.Helper()
	first, _ := os.ReadFile(filepath.Join(r.dir(dir), "first.log"))
	mustContain(t, string(first), fmt.Sprintf(" on %d drive(s), ledgers saved; cutting the host's power", len(r.serials)))
	raw := filepath.Join(r.dir(dir), "report", "raw")
	runJSON, err := os.ReadFile(filepath.Join(raw, "run.json"))
	if err != nil {
		t.Fatalf("the %s run's recording did not survive the cut: %v", r.name, err)
	}
	for _, s := range r.serials {
		name := st.Names[s]
		for _, f := range []string{"cycle_1.json", "cycle_1/" + hostcut.StateFile, "cycle_1/" + hostcut.BeforeFile, "cycle_1/" + hostcut.CutFile} {
			if !bytes.Contains(runJSON, []byte(`"powerloss/`+name+"/"+f+`"`)) {
				t.Errorf("the %s run's run.json, as the cut left it, does not list powerloss/%s/%s", r.name, name, f)
			}
		}
		if c := powerCycle(t, raw, name, 1); c.NotRun != hostcut.Pending {
			t.Errorf("%s cycle 1 as the cut left it: not_run %q, want pending (%q)", name, c.NotRun, hostcut.Pending)
		}
	}
}

// hostCutResume runs r's command line with -resume, which must cut
// nothing and judge each drive's cycle from the recording.
func hostCutResume(t *testing.T, dir string, r hostCutRun, st hostCutState) (string, int) {
	t.Helper()
	var out bytes.Buffer
	start := time.Now()
	code := hostCutSuite(t, &out, append(r.args(dir), "-resume")...)
	stdout := out.String()
	t.Logf("the %s run's -resume: exit %d in %s", r.name, code, time.Since(start).Round(100*time.Millisecond))
	os.WriteFile(filepath.Join(r.dir(dir), "resumed.log"), out.Bytes(), 0o644)
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, " acknowledged writes ") && !strings.Contains(l, "QUALIFIED") {
			t.Log(strings.TrimSpace(l))
		}
	}
	for _, s := range r.serials {
		mustContain(t, stdout, st.Names[s]+": cycle 1: the host's power was cut after its writes; reading back")
	}
	if strings.Contains(stdout, "cutting the host's power") {
		t.Errorf("the %s run's resume cut the host again: its one cycle was cut already\n%s", r.name, stdout)
	}
	return stdout, code
}

// TestGuestPowerLossHostResumed is the reboot's first test: what the
// plp run recorded before the cut is there (its run.json lists every
// drive's cycle, pending, and its ledger and state), and its command
// line with -resume judges its drives' cycle from it, cutting nothing:
// the protected drive PASSes, on its data alone (QEMU's controller keeps
// no count of power losses; the cycle says the host restarted since the
// cut); the honest volatile cache FAILs, having lost only writes
// completed after its last completed flush; the liar FAILs, having lost
// flushed writes. The fourth drive, whose controller the reboot's
// machine lacks, did not return: the resume waits ready_within for it,
// FAILs its cycle and disqualifies it in run.json, and judges the
// others.
func TestGuestPowerLossHostResumed(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	st := readHostCutState(t, dir, "cut.json")
	if now := bootID(t); now == st.BootID {
		t.Fatalf("boot id %s is the first boot's: this is no reboot", now)
	}
	for s, name := range st.Names {
		if real, err := filepath.EvalSymlinks(byID(s)); err != nil || filepath.Base(real) != name {
			t.Logf("%s is %q (%v) after the reboot, %s before", s, real, err, name)
		}
	}
	r := hostCutRuns[0]
	hostCutPending(t, dir, r, st)

	raw := filepath.Join(r.dir(dir), "report", "raw")
	stdout, code := hostCutResume(t, dir, r, st)
	if code == 0 {
		t.Errorf("-resume with plp: exit 0, want NOT QUALIFIED (two drives lost writes)\n%s", stdout)
	}
	plp, vwc, liar, gone := st.Names[serialPLP], st.Names[serialVWC], st.Names[serialLiar], st.Names[serialGone]
	mustContain(t, stdout,
		"nothing is at "+byID(serialGone)+" yet: waiting up to 15s (ready_within)",
		"--- FAIL: TestPowerLoss/"+gone+"/cycle_1",
		"did not return after the power cut: nothing was at "+byID(serialGone)+" when the resume started nor within ready_within 15s (drive 4 of the run",
		"--- PASS: TestPowerLoss/"+plp+"/cycle_1",
		"--- FAIL: TestPowerLoss/"+vwc+"/cycle_1",
		"--- FAIL: TestPowerLoss/"+liar+"/cycle_1",
		"acknowledged writes lost (every completed write: the spec promises power-loss protection (plp = true)); first lost range: LBA ",
		"; none of them before a completed flush: each was completed and not yet flushed",
		"of them before a completed flush, which a drive must keep whatever it promises",
		"the host restarted since the cut (another boot id)")
	if c := powerCycle(t, raw, gone, 1); c.NotReturned == "" || c.Acknowledged != 0 {
		t.Errorf("the drive not back: %+v, want not returned, nothing read back", c)
	}
	if runJSON, err := os.ReadFile(filepath.Join(raw, "run.json")); err != nil || !bytes.Contains(runJSON, []byte(`"step": "the resume's setup"`)) {
		t.Errorf("run.json records no failure of the drive not back (%v)", err)
	}
	if c := powerCycle(t, raw, plp, 1); c.Acknowledged == 0 || c.LostWrites != 0 || c.Rule != powerloss.Completed.String() || !strings.Contains(c.NoCounters, "QEMU's emulated controller") {
		t.Errorf("protected: %+v, want acknowledged writes, every completed write kept, judged on its data (QEMU's controller)", c)
	}
	c := powerCycle(t, raw, vwc, 1)
	if c.LostWrites == 0 || c.LostFlushed == nil || *c.LostFlushed != 0 {
		t.Errorf("honest writeback, plp = true: %d lost, lost_flushed %v; want writes lost, none of them flushed", c.LostWrites, c.LostFlushed)
	}
	if flushed, ranges, _ := flushedLostEvery(t, raw, vwc, 1, r.flushEvery); ranges == 0 || flushed != 0 {
		t.Errorf("honest writeback, plp = true: %d lost ranges, %d of them flushed writes (fio's logs); want lost ranges, none flushed", ranges, flushed)
	}
	c = powerCycle(t, raw, liar, 1)
	if c.LostFlushed == nil || *c.LostFlushed == 0 {
		t.Errorf("lying cache: %d lost, lost_flushed %v; want flushed writes among them", c.LostWrites, c.LostFlushed)
	}
	if flushed, ranges, _ := flushedLostEvery(t, raw, liar, 1, r.flushEvery); flushed == 0 {
		t.Errorf("lying cache: %d lost ranges, none of them flushed writes (fio's logs); want flushed writes lost", ranges)
	}
}

// TestGuestPowerLossHostResumedNoPLP is the second reboot: the noplp
// run's recording survived its cut, and its command line with -resume
// judges its drives' cycle, cutting nothing: without plp, the second
// honest cache PASSes: every write completed before its last completed
// flush is kept, though it had writes completed after it; the second
// liar FAILs, having lost flushed writes, which no promise excuses.
func TestGuestPowerLossHostResumedNoPLP(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	st := readHostCutState(t, dir, "cut2.json")
	if now := bootID(t); now == st.BootID {
		t.Fatalf("boot id %s is the boot before's: this is no reboot", now)
	}
	r := hostCutRuns[1]
	hostCutPending(t, dir, r, st)
	raw := filepath.Join(r.dir(dir), "report", "raw")
	stdout, code := hostCutResume(t, dir, r, st)
	if code == 0 {
		t.Errorf("-resume without plp: exit 0, want NOT QUALIFIED (the liar lost flushed writes)\n%s", stdout)
	}
	vwc2, liar2 := st.Names[serialVWC2], st.Names[serialLiar2]
	mustContain(t, stdout, "--- PASS: TestPowerLoss/"+vwc2+"/cycle_1",
		"acknowledged writes read back intact (every write completed before the last completed flush: ",
		"--- FAIL: TestPowerLoss/"+liar2+"/cycle_1",
		"acknowledged writes lost (every write completed before the last completed flush: ")
	if c := powerCycle(t, raw, liar2, 1); c.LostWrites == 0 || len(c.Lost) == 0 {
		t.Errorf("lying cache, no plp: %d lost writes, %d lost ranges; want flushed writes lost (only they are held without plp)", c.LostWrites, len(c.Lost))
	}
	if c := powerCycle(t, raw, vwc2, 1); c.Acknowledged == 0 || c.LostWrites != 0 || c.Completed <= c.Acknowledged {
		t.Errorf("honest writeback, no plp: %d completed, %d acknowledged, %d lost; want flushed writes all kept, and writes completed after the last flush (not held)", c.Completed, c.Acknowledged, c.LostWrites)
	}
}

// The host's cut, without a guest: {"cut_host": true} SIGKILLs every
// nbdkit of the boot (their sockets stop accepting) and the process
// QEMU's pid file names, and notes the cut in the work directory; a
// second request is answered that the host is cut already; a pid file that names no QEMU process, or none, refuses the cut,
// killing nothing and noting nothing.
func TestCutHostKills(t *testing.T) {
	if inGuest() {
		t.Skip("the host's test")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	fake := filepath.Join(t.TempDir(), "qemu-system-x86_64")
	if err := copyFile(sleep, fake); err != nil {
		t.Fatal(err)
	}
	start := func(bin string) (*exec.Cmd, chan error) {
		cmd := exec.Command(bin, "600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		return cmd, done
	}
	accepts := func(images string) []string {
		var up []string
		for _, d := range nbdDrives {
			if c, err := net.Dial("unix", d.socket(images)); err == nil {
				c.Close()
				up = append(up, d.serial)
			}
		}
		return up
	}
	for _, c := range []struct {
		name string
		bin  string // the process the pid file names ("": no pid file)
		fail string
	}{
		{name: "qemu", bin: fake},
		{name: "not qemu", bin: sleep, fail: "is not QEMU"},
		{name: "no pid file", fail: "QEMU's pid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			images := filepath.Join(work, "images")
			serve := startNBDOn(t, work, images, filepath.Join(work, "no-qmp.sock"), nbdDrives, false, "")
			var done chan error
			if c.bin != "" {
				var cmd *exec.Cmd
				cmd, done = start(c.bin)
				if err := os.WriteFile(qemuPidFile(work), []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := serve(context.Background(), powerRequest{CutHost: true})
			if c.fail != "" {
				if err == nil || !strings.Contains(err.Error(), c.fail) {
					t.Errorf("err %v, want %q", err, c.fail)
				}
				if up := accepts(images); len(up) != len(nbdDrives) || hostCutAt(work) != "" {
					t.Errorf("a refused cut: servers up %v, cut noted %q; want every server up, nothing noted", up, hostCutAt(work))
				}
				if done != nil {
					select {
					case err := <-done:
						t.Errorf("the process the pid file names ended (%v): a refused cut kills nothing", err)
					default:
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "killed") {
					t.Errorf("QEMU ended with %v, want killed", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("QEMU still runs 10 s after the host's cut")
			}
			if up := accepts(images); len(up) != 0 {
				t.Errorf("nbdkit still serves %v after the host's cut", up)
			}
			if hostCutAt(work) == "" {
				t.Errorf("the cut is not noted in %s", filepath.Join(work, hostCutFile))
			}
			// A second request (a cut command run twice) cuts nothing more.
			if err := serve(context.Background(), powerRequest{CutHost: true}); err == nil || !strings.Contains(err.Error(), "cut already") {
				t.Errorf("a second cut of the host: %v, want \"cut already\"", err)
			}
		})
	}
}

// guestState is what the guest's processes wait in (those of fio, the
// suite and the cut command: state, wchan, kernel stack), each block
// device's I/O in flight, and the kernel's last messages: what a boot
// that never reached its cut was stuck on.
func guestState() string {
	var b strings.Builder
	b.WriteString("guest state, the cut not reached:\n")
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		comm, err := os.ReadFile(p + "/comm")
		name := strings.TrimSpace(string(comm))
		if err != nil || !(strings.HasPrefix(name, "fio") || strings.Contains(name, "suite") || strings.HasSuffix(name, ".test") || name == "sh" || name == "sleep") {
			continue
		}
		stat, _ := os.ReadFile(p + "/stat")
		wchan, _ := os.ReadFile(p + "/wchan")
		stack, _ := os.ReadFile(p + "/stack")
		f := strings.Fields(string(stat))
		state := ""
		if len(f) > 2 {
			state = f[2]
		}
		fmt.Fprintf(&b, "%s %s state %s wchan %s\n%s", filepath.Base(p), name, state, wchan, stack)
	}
	devs, _ := filepath.Glob("/sys/block/nvme*")
	for _, d := range devs {
		inflight, _ := os.ReadFile(d + "/inflight")
		stat, _ := os.ReadFile(d + "/stat")
		fmt.Fprintf(&b, "%s inflight %s stat %s", filepath.Base(d), strings.TrimSpace(string(inflight)), stat)
	}
	if out, err := exec.Command("dmesg").CombinedOutput(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		b.WriteString(strings.Join(lines[max(0, len(lines)-60):], "\n") + "\n")
	} else {
		fmt.Fprintf(&b, "dmesg: %v\n", err)
	}
	return b.String()
}
