package nvmevm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The interruptions a multi-hour run meets, on emulated NVMe under the
// guest kernel's driver and the real nvme-cli: a reboot that numbers the
// controllers the other way round, a media error during the read-back,
// a critical warning raised mid-run; each followed by a kill and -resume.
// Each scenario has drives of its own (see machine), a 32 MiB and a
// 48 MiB one, each its own capacity of the spec, so that every cell names
// its drive.

const (
	cellW32 = "TestSingleDrive/32MiB/128KB_Sequential_Write"
	cellR32 = "TestSingleDrive/32MiB/128KB_Sequential_Read"
	cellW48 = "TestSingleDrive/48MiB/128KB_Sequential_Write"
	cellR48 = "TestSingleDrive/48MiB/128KB_Sequential_Read"
)

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

// suiteAt runs the suite like runSuite, with the report in rep, and kills
// it with SIGKILL, as the OOM killer or a hard cancel would, as soon as
// stop (polled every 20 ms with the recording's run.json; nil: never)
// returns true.
func suiteAt(t *testing.T, rep string, stop func(record.Run) bool, args ...string) runAt {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cmdline.ModuleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "nvme.log")
	all := append([]string{"-test.count=1", "-test.v=true", "-test.timeout=5m", "-report=" + rep}, args...)
	cmd := exec.Command(os.Getenv(envSuite), all...)
	cmd.Dir = filepath.Join(root, "acceptance")
	cmd.Env = append(os.Environ(), "DRIVEQUAL_NVME_LOG="+log)
	var stdout, stderr bytes.Buffer
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
				if run, ok := readRun(filepath.Join(rep, "raw")); ok && stop(run) {
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
	}
	how := fmt.Sprintf("exit %d", r.Code)
	if killed {
		how = "killed"
	}
	t.Logf("suite %s: %s in %s", strings.Join(args, " "), how, time.Since(start).Round(100*time.Millisecond))
	return r
}

// readRun reads the recording's run.json; false while it is not there or
// not whole.
func readRun(raw string) (record.Run, bool) {
	var run record.Run
	b, err := os.ReadFile(filepath.Join(raw, "run.json"))
	if err != nil || json.Unmarshal(b, &run) != nil {
		return run, false
	}
	return run, true
}

// results reads the run's results.json.
func (r runAt) results(t *testing.T) (report.Run, map[string]report.Result) {
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
	return run, by
}

// verdictIs fails t unless test's verdict in by is want, with its error.
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

// swapState is what the first boot of TestGuestSwappedReboot leaves for
// the second in the work directory (swapDir/killed.json).
type swapState struct {
	A, B string            // the kernel paths of drives A and B in the first boot
	Kept []string          // the cells run.json listed when the run was killed
	Sums map[string]string // their files' sha256
}

func twoArgs(t *testing.T, drives string) []string {
	return []string{"-spec=" + specFile(t, "two.toml"), "-drives=" + drives, "-destructive"}
}

// TestGuestSwappedReboot is the first boot of the swapped-order reboot: a
// run on drives A (32 MiB) and B (48 MiB), given by their by-id links, is
// killed with SIGKILL once run.json lists its first cell; what it kept is
// written to the work directory, and TestQEMU boots the guest again with
// the two controllers in each other's PCI slot (TestRebootedSwapped).
func TestGuestSwappedReboot(t *testing.T) {
	guest(t)
	a, b := drive(t, serialSwapA), drive(t, serialSwapB)
	dir := filepath.Join(os.Getenv(envWork), swapDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "report")
	r := suiteAt(t, rep, func(run record.Run) bool { return len(run.Tests) >= 1 },
		twoArgs(t, byID(serialSwapA)+","+byID(serialSwapB))...)
	if !r.killed {
		t.Fatalf("the run ended (exit %d) before its first cell was recorded\n%s", r.Code, r.output())
	}
	run, _ := readRun(filepath.Join(rep, "raw"))
	st := swapState{A: a, B: b, Kept: run.Tests, Sums: sums(t, filepath.Join(rep, "raw"), run.Tests)}
	if len(st.Sums) == 0 {
		t.Fatalf("run.json lists %q but no file of it is in the recording", run.Tests)
	}
	data, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, "killed.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %q; %s is %s, %s is %s", run.Tests, serialSwapA, a, serialSwapB, b)
}

// TestRebootedSwapped is the second boot: the controllers of A and B are
// in each other's PCI slot, so the kernel paths of the first boot now name
// the other drive, while the by-id links follow their drives. -resume with
// the by-id links continues the killed run (and is killed once it recorded
// one more cell); -resume again with the new kernel paths, in the kernel's
// order (B first), finishes it: every cell is judged and passes, the
// first run's cells are kept byte for byte and not measured again.
func TestRebootedSwapped(t *testing.T) {
	guest(t)
	dir := filepath.Join(os.Getenv(envWork), swapDir)
	var st swapState
	data, err := os.ReadFile(filepath.Join(dir, "killed.json"))
	if err != nil {
		t.Fatalf("the first boot left nothing: %v", err)
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

	r1 := suiteAt(t, rep, func(run record.Run) bool {
		return len(run.Resumptions) >= 1 && len(run.Tests) > len(st.Kept)
	}, append(twoArgs(t, byID(serialSwapA)+","+byID(serialSwapB)), "-resume")...)
	if !r1.killed {
		t.Fatalf("-resume with the by-id links ended (exit %d) before it recorded a cell\n%s", r1.Code, r1.output())
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
	run, by := r2.results(t)
	for _, c := range []string{cellW32, cellR32, cellW48, cellR48} {
		verdictIs(t, by, c, report.Pass, "judged in the resumed run")
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
	mustContain(t, r2.Stdout, "drivequal: QUALIFIED")
}

// TestGuestReadBackMediaError: the 32 MiB drive's namespace fails every
// read of one sector (blkdebug, an Unrecovered Read Error to the kernel's
// driver and an I/O error to fio) during the read-back of its fill. Its
// read-back fails, naming the error, its cells fail unmeasured, and the
// 48 MiB drive's cells are measured and pass. The run is killed after the
// neighbour's first cell; the sector is then made readable (an nvme flush
// ends the rule, as a marginal block that a second try reads), and
// -resume keeps the drive disqualified: its recorded failure is not
// washed out by a read-back that would now pass. Its error log is in the
// recording and named in results.json.
func TestGuestReadBackMediaError(t *testing.T) {
	guest(t)
	bad, peer := drive(t, serialBad), drive(t, serialBadPeer)
	rep := filepath.Join(t.TempDir(), "report")
	raw := filepath.Join(rep, "raw")
	args := twoArgs(t, bad+","+peer)
	r1 := suiteAt(t, rep, func(run record.Run) bool { return slices.Contains(run.Tests, cellW48) }, args...)
	if !r1.killed {
		t.Errorf("the run ended (exit %d) before the neighbour's first cell was recorded", r1.Code)
	}
	_, by := r1.results(t)
	integ := integrityName(bad)
	for _, c := range []string{cellW32, cellR32} {
		verdictIs(t, by, c, report.Fail, "its drive's read-back failed")
	}
	verdictIs(t, by, cellW48, report.Pass, "the neighbour goes on")
	if t.Failed() {
		t.Fatalf("the first run:\n%s", r1.output())
	}

	// The sector reads again once the namespace has been flushed.
	if out, err := exec.Command("nvme", "flush", bad, "-n", "1").CombinedOutput(); err != nil {
		t.Fatalf("nvme flush %s: %v: %s", bad, err, out)
	}
	if out, err := exec.Command("dd", "if="+bad, "of=/dev/null", "bs=4096", fmt.Sprintf("skip=%d", badSector/8), "count=1", "iflag=direct").CombinedOutput(); err != nil {
		t.Fatalf("sector %d of %s still fails after the flush: %v: %s", badSector, bad, err, out)
	}

	r2 := suiteAt(t, rep, nil, append(args, "-resume")...)
	if r2.Code == 0 || r2.Code == 2 {
		t.Errorf("-resume: exit %d, want the run NOT QUALIFIED (1), not refused and not qualified\n%s", r2.Code, r2.output())
	}
	run, by := r2.results(t)
	verdictIs(t, by, integ, report.Fail, "the read-back that failed before the kill stays failed")
	if res, ok := by[integ]; ok && !strings.Contains(res.Error, bad) {
		t.Errorf("%s: error %q does not name %s", integ, res.Error, bad)
	}
	for _, c := range []string{cellW32, cellR32} {
		verdictIs(t, by, c, report.Fail, "its drive stays disqualified")
	}
	for _, c := range []string{cellW48, cellR48, integrityName(peer)} {
		verdictIs(t, by, c, report.Pass, "the neighbour qualifies")
	}
	mustContain(t, r2.Stdout, "--- FAIL: TestVerdict/32MiB", "--- PASS: TestVerdict/48MiB")

	// The vendor's evidence: the drive's error log, read when it failed.
	var logs []string
	filepath.WalkDir(raw, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), "error-log") {
			rel, _ := filepath.Rel(raw, p)
			logs = append(logs, rel)
		}
		return nil
	})
	results, _ := os.ReadFile(filepath.Join(rep, "results.json"))
	named := false
	for _, l := range logs {
		named = named || bytes.Contains(results, []byte(filepath.Base(l)))
	}
	if !named {
		t.Errorf("no nvme error-log of %s in the recording named in results.json (error-log files: %q)", bad, logs)
	}
	_ = run
}

// TestGuestCriticalWarningMidRun: the host sets the 32 MiB drive's
// critical warning to 0x08 (media read-only) over QMP once its first cell
// is recorded. Every later cell of that drive fails naming the warning,
// the random ones included (whose preconditioning the drive no longer
// gets: a disqualifying cause outranks "not preconditioned"), and the
// 48 MiB drive goes on. The run is killed after the neighbour's random
// write cell;
// -resume is not refused for the warning (it was raised mid-run and is in
// the recording), keeps the warned drive's cells failed and measures the
// neighbour's remaining cells, which pass.
func TestGuestCriticalWarningMidRun(t *testing.T) {
	guest(t)
	warned, peer := drive(t, serialWarnMid), drive(t, serialWarnPeer)
	rep := filepath.Join(t.TempDir(), "report")
	args := []string{"-spec=" + specFile(t, "warn.toml"), "-drives=" + warned + "," + peer, "-destructive"}
	const (
		w32, rw32, rr32 = "TestSingleDrive/32MiB/128KB_Sequential_Write", "TestSingleDrive/32MiB/4KB_Random_Write", "TestSingleDrive/32MiB/4KB_Random_Read"
		w48, rw48, rr48 = "TestSingleDrive/48MiB/128KB_Sequential_Write", "TestSingleDrive/48MiB/4KB_Random_Write", "TestSingleDrive/48MiB/4KB_Random_Read"
	)
	var reqErr error
	set := false
	r1 := suiteAt(t, rep, func(run record.Run) bool {
		if !set && slices.Contains(run.Tests, w32) {
			set = true
			if reqErr = ask("warn", hostRequest{Controller: "warnmid", Warning: 0x08}); reqErr != nil {
				return true
			}
		}
		return slices.Contains(run.Tests, rw48)
	}, args...)
	if reqErr != nil {
		t.Fatal(reqErr)
	}
	if !set || !r1.killed {
		t.Fatalf("warning set: %v; the run ended (exit %d) before the neighbour's first cell was recorded\n%s", set, r1.Code, r1.output())
	}
	want := warned + " raised critical_warning 0x08"
	check := func(when string, by map[string]report.Result) {
		t.Helper()
		for _, c := range []string{rw32, rr32} {
			res := by[c]
			if res.Verdict != report.Fail || res.Cause != report.CauseCriticalWarning || !strings.Contains(res.Error, want) {
				t.Errorf("%s: %s: %s (%s: %s), want fail (%s) naming %q", when, c, res.Verdict, res.Cause, res.Error, report.CauseCriticalWarning, want)
			}
		}
	}
	_, by := r1.results(t)
	check("the live run", by)
	verdictIs(t, by, w48, report.Pass, "the neighbour goes on")
	verdictIs(t, by, rw48, report.Pass, "the neighbour goes on")
	t.Logf("the live run:\n%s", r1.Stdout)
	if out, err := exec.Command("nvme", "smart-log", warned, "-o", "json").Output(); err != nil || !bytes.Contains(out, []byte(`"critical_warning":8`)) {
		t.Errorf("nvme smart-log %s after the QMP request: %v\n%s", warned, err, out)
	}

	r2 := suiteAt(t, rep, nil, append(args, "-resume")...)
	if r2.Code == 0 || r2.Code == 2 {
		t.Errorf("-resume: exit %d, want NOT QUALIFIED (1): not refused, the warned drive not qualified\n%s", r2.Code, r2.output())
	}
	_, by = r2.results(t)
	check("the resumed run", by)
	for _, c := range []string{w48, rw48, rr48} {
		verdictIs(t, by, c, report.Pass, "the resume goes on with the neighbour")
	}
	mustContain(t, r2.Stdout, "measuring "+rr48+" ", "--- FAIL: TestVerdict/32MiB", "--- PASS: TestVerdict/48MiB")
}

// ask is request without a testing.T, for a goroutine of the test.
func ask(name string, r hostRequest) error {
	dir := filepath.Join(os.Getenv(envWork), reqDir)
	b, _ := json.Marshal(r)
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name+".json")); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ans, err := os.ReadFile(filepath.Join(dir, name+".done")); err == nil {
			if string(ans) != "ok" {
				return fmt.Errorf("the host could not %+v: %s", r, ans)
			}
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the host did not answer request %s (%+v) within 30 s", name, r)
}

// TestGuestNoOCPLog: QEMU 7.2's controller has no OCP extended SMART log
// (C0): a live run on two of its namespaces says so for each drive, "no
// OCP C0 log (...)", and still qualifies.
func TestGuestNoOCPLog(t *testing.T) {
	guest(t)
	a, b := drive(t, serialFormat), drive(t, serialBadPeer)
	rep := filepath.Join(t.TempDir(), "report")
	r := suiteAt(t, rep, nil, twoArgs(t, a+","+b)...)
	if r.Code != 0 {
		t.Errorf("exit %d, want 0\n%s", r.Code, r.output())
	}
	mustContain(t, r.Stdout, "drivequal: QUALIFIED")
	summary, _ := os.ReadFile(filepath.Join(rep, "summary.md"))
	text := r.output() + string(summary)
	for _, d := range []string{a, b} {
		found := false
		for _, l := range strings.Split(text, "\n") {
			found = found || (strings.Contains(l, "no OCP C0 log (") && strings.Contains(l, filepath.Base(d)))
		}
		if !found {
			t.Errorf("no line says %s has no OCP C0 log (\"no OCP C0 log (...)\")", d)
		}
	}
	if got := r.sent("ocp"); len(got) < 2 {
		t.Errorf("nvme-cli's ocp smart-add-log was sent %d times (%q), want at least once per drive", len(got), got)
	}
}
