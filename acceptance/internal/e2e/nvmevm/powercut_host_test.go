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
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss/hostcut"
	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
)

// The whole host's power cut under QEMU: the powerloss-host boot runs
// TestPowerLoss with -power-cut-host on the three drive personalities of
// the powerloss boot (powerloss_test.go) at once, one cycle: every
// drive is written, the ledgers and state are saved and synced in the
// recording, and the cut command asks the host to cut ({"cut_host":
// true}), which SIGKILLs every nbdkit (their caches are lost) and QEMU.
// The boot ends there, without the guest's exit file, as the host
// expects (hostCutFile). Its reboot, powerloss-host-rebooted, boots the
// same images, each nbdkit started again with its personality, and runs
// the same command line with -resume, which judges every drive's cycle.
//
// Both boots share, beside their work directories, the drives' images
// and a state directory (9p, tag "persist", written through to the
// host's file: the guest mounts it without a cache, so a write and an
// fsync reach the host's file before they return) that holds the
// recording, the spec and the cut command, so that the reboot's command
// line is the first's.

func init() {
	configs = append(configs, config{
		name:    "powerloss-host",
		machine: hostCutMachine,
		power: func(t *testing.T, work, qmp string) powerFunc {
			return startNBDOn(t, work, hostCutShared(work), qmp, false)
		},
		tests:   []string{"TestGuestPowerLossHostCut"},
		timeout: 8 * time.Minute,
		reboot: &config{
			name:    "powerloss-host-rebooted",
			machine: hostCutMachine,
			power: func(t *testing.T, work, qmp string) powerFunc {
				return startNBDOn(t, work, hostCutShared(work), qmp, true)
			},
			tests:   []string{"TestGuestPowerLossHostResumed"},
			timeout: 8 * time.Minute,
		},
	})
}

// hostCutShared is the directory the two boots share beside their work
// directories (WORK/CONFIG): the drives' images, and the state directory.
func hostCutShared(work string) string {
	return filepath.Join(filepath.Dir(work), "powerloss-host-shared")
}

// hostCutMachine is the powerloss guest on the shared images, with its
// pid file (the host's cut kills it) and the state directory.
func hostCutMachine(images string) qemu.Machine {
	work := filepath.Dir(images)
	shared := hostCutShared(work)
	state := filepath.Join(shared, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		panic(err)
	}
	m := powerMachine(shared)
	m.Extra = append(m.Extra, "-pidfile", qemuPidFile(work),
		"-virtfs", "local,path="+state+",mount_tag="+persistTag+",security_model=none,multidevs=remap")
	return m
}

// hostCutState is what the first boot leaves for the reboot.
type hostCutState struct {
	Names  map[string]string // by serial: the suite's name of the drive
	BootID string            // the first boot's
}

var hostCutSerials = []string{serialPLP, serialVWC, serialLiar}

// hostCutFlushEvery is the host cut's flush_every: fio writes the three
// drives at once for 1 s, under TCG a few hundred writes a drive (the
// honest drive's jobs completed 223 writes together in the first run
// measured, fewer than a flush_every of 256 a job), so a flush every 32
// writes of a job has the honest drive keep its flushed writes and lose
// the last (up to 31 a job) it had not flushed.
const hostCutFlushEvery = 32

// hostCutArgs is the suite's command line in both boots (the reboot
// adds -resume): the state directory dir holds its report, spec and cut
// command.
func hostCutArgs(dir string) []string {
	var drives []string
	for _, s := range hostCutSerials {
		drives = append(drives, byID(s))
	}
	return []string{"-test.count=1", "-test.v=true", "-test.timeout=5m", "-report=" + filepath.Join(dir, "report"),
		"-spec=" + filepath.Join(dir, "powerloss.toml"), "-drives=" + strings.Join(drives, ","), "-capacity=32MiB",
		"-destructive", "-test.run=TestPowerLoss", "-power-cut=" + filepath.Join(dir, "power") + " cut-host", "-power-cut-host"}
}

// hostCutSuite runs the suite with args, its stdout to out and
// its stderr with it.
func hostCutSuite(t *testing.T, out io.Writer, args ...string) int {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Getenv(envSuite), args...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
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

// TestGuestPowerLossHostCut is the first boot: TestPowerLoss with the
// whole host's cut, plp = true, one cycle, on the protected, the honest
// volatile and the lying drive at once. It never returns: the cut
// command has the host kill QEMU. The suite's output goes to the boot's
// output as it comes (and to first.log in the state directory), so that
// what it said before the cut is on the host.
func TestGuestPowerLossHostCut(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	if err := os.WriteFile(filepath.Join(dir, "power"), []byte(powerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	powerSpecIn(t, dir, 1, true, "60s", hostCutFlushEvery)
	st := hostCutState{Names: map[string]string{}, BootID: bootID(t)}
	for _, s := range hostCutSerials {
		real, err := filepath.EvalSymlinks(byID(s))
		if err != nil {
			t.Fatal(err)
		}
		st.Names[s] = filepath.Base(real)
	}
	data, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, "cut.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	t.Logf("drives %v; the suite runs until the host cuts its power", st.Names)
	code := hostCutSuite(t, io.MultiWriter(os.Stdout, log), hostCutArgs(dir)...)
	t.Fatalf("the suite ended (exit %d) and the host's power was not cut", code)
}

// TestGuestPowerLossHostResumed is the reboot: what the first boot
// recorded before the cut is there (run.json lists every drive's cycle,
// pending, and its ledger and state), and the same command line with
// -resume judges the three drives' cycle from it, cutting nothing: the
// protected drive PASSes, on its data alone (QEMU's controller keeps no
// count of power losses; the cycle says the host restarted since the
// cut); the honest volatile cache FAILs (plp = true), having lost only
// writes completed after its last completed flush; the liar FAILs,
// having lost flushed writes.
func TestGuestPowerLossHostResumed(t *testing.T) {
	guest(t)
	dir := mountPersist(t)
	var st hostCutState
	data, err := os.ReadFile(filepath.Join(dir, "cut.json"))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		t.Fatalf("the first boot (TestGuestPowerLossHostCut) left nothing: %v", err)
	}
	if now := bootID(t); now == st.BootID {
		t.Fatalf("boot id %s is the first boot's: this is no reboot", now)
	}
	for _, s := range hostCutSerials {
		if real, err := filepath.EvalSymlinks(byID(s)); err != nil || filepath.Base(real) != st.Names[s] {
			t.Logf("%s is %q (%v) after the reboot, %s before", s, real, err, st.Names[s])
		}
	}
	first, _ := os.ReadFile(filepath.Join(dir, "first.log"))
	mustContain(t, string(first), "cycle 1: ", " on 3 drive(s), ledgers saved; cutting the host's power")
	rep := filepath.Join(dir, "report")
	raw := filepath.Join(rep, "raw")
	runJSON, err := os.ReadFile(filepath.Join(raw, "run.json"))
	if err != nil {
		t.Fatalf("the recording did not survive the cut: %v", err)
	}
	for _, s := range hostCutSerials {
		name := st.Names[s]
		for _, f := range []string{"cycle_1.json", "cycle_1/" + hostcut.StateFile, "cycle_1/" + hostcut.BeforeFile} {
			if !bytes.Contains(runJSON, []byte(`"powerloss/`+name+"/"+f+`"`)) {
				t.Errorf("run.json, as the cut left it, does not list powerloss/%s/%s", name, f)
			}
		}
		if c := powerCycle(t, raw, name, 1); c.NotRun != hostcut.Pending {
			t.Errorf("%s cycle 1 as the cut left it: not_run %q, want pending (%q)", name, c.NotRun, hostcut.Pending)
		}
	}

	var out bytes.Buffer
	start := time.Now()
	code := hostCutSuite(t, &out, append(hostCutArgs(dir), "-resume")...)
	stdout := out.String()
	t.Logf("suite -resume: exit %d in %s", code, time.Since(start).Round(100*time.Millisecond))
	os.WriteFile(filepath.Join(dir, "resumed.log"), out.Bytes(), 0o644)
	if code == 0 {
		t.Errorf("-resume: exit 0, want NOT QUALIFIED (two drives lost writes)\n%s", stdout)
	}
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, " acknowledged writes ") && !strings.Contains(l, "NOT QUALIFIED") {
			t.Log(strings.TrimSpace(l))
		}
	}
	plp, vwc, liar := st.Names[serialPLP], st.Names[serialVWC], st.Names[serialLiar]
	for _, name := range []string{plp, vwc, liar} {
		mustContain(t, stdout, name+": cycle 1: the host's power was cut after its writes; reading back")
	}
	mustContain(t, stdout,
		"--- PASS: TestPowerLoss/"+plp+"/cycle_1",
		"--- FAIL: TestPowerLoss/"+vwc+"/cycle_1",
		"--- FAIL: TestPowerLoss/"+liar+"/cycle_1",
		"acknowledged writes lost (every completed write: the spec promises power-loss protection (plp = true)); first lost range: LBA ",
		"; none of them before a completed flush: each was completed and not yet flushed",
		"of them before a completed flush, which a drive must keep whatever it promises",
		"the host restarted since the cut (another boot id)")
	if strings.Contains(stdout, "cutting the host's power") {
		t.Errorf("the resume cut the host again: its one cycle was cut already\n%s", stdout)
	}
	if c := powerCycle(t, raw, plp, 1); c.Acknowledged == 0 || c.LostWrites != 0 || c.Rule != powerloss.Completed.String() || !strings.Contains(c.NoCounters, "QEMU's emulated controller") {
		t.Errorf("protected: %+v, want acknowledged writes, every completed write kept, judged on its data (QEMU's controller)", c)
	}
	c := powerCycle(t, raw, vwc, 1)
	if c.LostWrites == 0 || c.LostFlushed == nil || *c.LostFlushed != 0 {
		t.Errorf("honest writeback, plp = true: %d lost, lost_flushed %v; want writes lost, none of them flushed", c.LostWrites, c.LostFlushed)
	}
	if flushed, ranges, _ := flushedLostEvery(t, raw, vwc, 1, hostCutFlushEvery); ranges == 0 || flushed != 0 {
		t.Errorf("honest writeback, plp = true: %d lost ranges, %d of them flushed writes (fio's logs); want lost ranges, none flushed", ranges, flushed)
	}
	c = powerCycle(t, raw, liar, 1)
	if c.LostFlushed == nil || *c.LostFlushed == 0 {
		t.Errorf("lying cache: %d lost, lost_flushed %v; want flushed writes among them", c.LostWrites, c.LostFlushed)
	}
	if flushed, ranges, _ := flushedLostEvery(t, raw, liar, 1, hostCutFlushEvery); flushed == 0 {
		t.Errorf("lying cache: %d lost ranges, none of them flushed writes (fio's logs); want flushed writes lost", ranges)
	}
}

// The host's cut, without a guest: {"cut_host": true} SIGKILLs every
// nbdkit of the boot (their sockets stop accepting) and the process
// QEMU's pid file names, and notes the cut in the work directory; a
// pid file that names no QEMU process, or none, refuses the cut,
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
			serve := startNBDOn(t, work, images, filepath.Join(work, "no-qmp.sock"), false)
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
		})
	}
}
