package nvmevm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/powerloss"
)

// powerScript is the guest's -power-cut and -power-restore: `power cut
// SERIAL` and `power restore SERIAL` ask the host (a {"cut": SERIAL} or
// {"restore": SERIAL} request, see powerRequest) and wait for its answer,
// failing when it is an error; `power cut-host` asks it to cut the whole
// host ({"cut_host": true}), which it answers only when it cannot. A
// restore of the serial in DRIVEQUAL_QEMU_STAYS_OUT asks nothing: that
// controller does not come back.
const powerScript = `#!/bin/sh
set -eu
if [ "$1" = restore ] && [ "$2" = "${DRIVEQUAL_QEMU_STAYS_OUT:-}" ]; then
  echo "$2 stays out: not restored"
  exit 0
fi
req="$DRIVEQUAL_QEMU_WORK/requests/power-$$-$(date +%s%N)"
if [ "$1" = cut-host ]; then
  echo '{"cut_host": true}' >"$req.tmp"
else
  printf '{"%s": "%s"}\n' "$1" "$2" >"$req.tmp"
fi
mv "$req.tmp" "$req.json"
i=0
while [ ! -e "$req.reply" ]; do
  i=$((i + 1))
  if [ "$i" -gt 1800 ]; then
    echo "the host did not answer $1 $2 in 3 minutes" >&2
    exit 1
  fi
  sleep 0.1
done
cat "$req.reply"
echo
! grep -q '"error"' "$req.reply"
`

// powerSpec writes a spec whose [power_loss] cuts each drive cycles
// times, with plp, and gives it ready_within to come back: 24 MiB at
// risk, written in 4 KiB writes with a flush every powerFlushEvery
// writes of a job, the cut 500 ms after the first flushed writes. Each
// job writes 12 MiB, 3072 blocks; under TCG, each write held writeDelay
// by its nbdkit, the two jobs had completed 900-1,100 writes by the cut
// (measured; without the delay, up to about 1800 a job), and none twice: a
// block written again with the same data, once flushed, would read back
// intact however much of the cache a drive lost. max_cut_gap (the whole
// host's cut only) is 10 minutes: under TCG alone, fio's exit and the
// save and sync of the ledgers took 13.6 s, but beside the rest of make
// test 2 minutes 47 s (each fsync a write-through to the host's busy
// disk); nbdkit's cache, unlike a drive's, never writes out on its own
// while idle, so the gap hides nothing here. Not a drive's published
// figures.
func powerSpec(t *testing.T, cycles int, plp bool, ready string) string {
	t.Helper()
	return powerSpecIn(t, t.TempDir(), cycles, plp, ready, powerFlushEvery, "500ms")
}

// powerSpecIn writes powerSpec's spec in dir, with a flush every
// flushEvery writes of a job and cut_after cutAfter.
func powerSpecIn(t *testing.T, dir string, cycles int, plp bool, ready string, flushEvery int, cutAfter string) string {
	t.Helper()
	spec := fmt.Sprintf(`model  = "QEMU NVMe over nbdkit (power loss)"
source = "drivequal test data: the powerloss boot's drives"

[method]
runtime = "1s"

[precondition]
purge       = "format"
fill_passes = 1

[[workload]]
name    = "4KB Random Write"
rw      = "randwrite"
bs      = "4k"
iodepth = 16
numjobs = 1
metric  = "iops"

[[capacity]]
name  = "32MiB"
bytes = 33554432
[capacity.spec]
"4KB Random Write" = 1

[power_loss]
cycles       = %d
plp          = %v
cut_after    = %q
ready_within = %q
size         = "24m"
flush_every  = %d
max_cut_gap  = "10m"
`, cycles, plp, cutAfter, ready, flushEvery)
	p := filepath.Join(dir, "powerloss.toml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// powerRun's names: the suite names a drive given by its by-id link by
// the kernel name the link resolves to at the start of the run.
type powerNames map[string]string

func (n powerNames) of(serial string) string { return n[serial] }

// powerRun runs TestPowerLoss alone on the drives with serials (by their
// by-id links, which the drive that comes back has too), cutting and
// restoring through the host, its recording in the directory returned.
func powerRun(t *testing.T, spec string, env []string, serials ...string) (result, string, powerNames) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "power")
	if err := os.WriteFile(script, []byte(powerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var drives []string
	names := powerNames{}
	for _, s := range serials {
		drives = append(drives, byID(s))
		real, err := filepath.EvalSymlinks(byID(s))
		if err != nil {
			t.Fatal(err)
		}
		names[s] = filepath.Base(real)
	}
	rec := filepath.Join(t.TempDir(), "raw")
	r := runSuite(t, env, "-spec="+spec, "-drives="+strings.Join(drives, ","), "-capacity=32MiB", "-destructive",
		"-test.run=TestPowerLoss", "-record="+rec, "-power-cut="+script+" cut {serial}", "-power-restore="+script+" restore {serial}")
	return r, rec, names
}

// powerCycle reads cycle k of the drive named name from the recording.
func powerCycle(t *testing.T, rec, name string, k int) powerloss.Cycle {
	t.Helper()
	var c powerloss.Cycle
	data, err := os.ReadFile(filepath.Join(rec, "powerloss", name, fmt.Sprintf("cycle_%d.json", k)))
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		t.Fatalf("%s cycle %d: %v", name, k, err)
	}
	return c
}

// flushedLost counts the lost ranges of cycle k of the drive named name
// that hold a write fio completed before its job's last completed flush
// (read from fio's per-I/O logs in the recording), the ranges lost, and
// the writes to a block its job had written before in the cycle (which,
// of the same bytes, hide the loss of the second when the first was
// flushed).
func flushedLost(t *testing.T, rec, name string, k int) (flushed, ranges, rewrites int) {
	t.Helper()
	return flushedLostEvery(t, rec, name, k, powerFlushEvery)
}

// flushedLostEvery is flushedLost of a spec with a flush every
// flushEvery writes of a job.
func flushedLostEvery(t *testing.T, rec, name string, k, flushEvery int) (flushed, ranges, rewrites int) {
	t.Helper()
	c := powerCycle(t, rec, name, k)
	dir := filepath.Join(rec, "powerloss", name, fmt.Sprintf("cycle_%d", k))
	var acked []powerloss.Write
	for _, job := range []string{"sequential", "random"} {
		logs, _ := filepath.Glob(filepath.Join(dir, job+"_lat.*.log"))
		if len(logs) != 1 {
			t.Fatalf("%s: want one %s_lat.N.log, found %q", dir, job, logs)
		}
		f, err := os.Open(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		w, err := powerloss.ParseLatLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, x := range w {
			if seen[x.Offset] {
				rewrites++
			}
			seen[x.Offset] = true
		}
		// The cut ended every job with an error: only the writes before a
		// completed flush were flushed.
		acked = append(acked, powerloss.Job{Writes: w, FlushEvery: flushEvery}.Acknowledged(powerloss.Flushed)...)
	}
	for _, l := range c.Lost {
		for _, w := range acked {
			if w.Offset < l.Offset+l.Len && l.Offset < w.Offset+w.Len {
				flushed++
				break
			}
		}
	}
	t.Logf("%s cycle %d: %d writes completed, %d of them rewrites, %d acknowledged, %d lost in %d ranges, %d of the ranges flushed writes",
		name, k, c.Completed, rewrites, c.Acknowledged, c.LostWrites, len(c.Lost), flushed)
	return flushed, len(c.Lost), rewrites
}

// flushesServed counts the flushes the drive's nbdkit received (its log
// filter's log, in the work directory the guest shares).
func flushesServed(t *testing.T, id string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(os.Getenv(envWork), "images", id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), " Flush id=")
}

// qemuNoCount is what a cycle of QEMU's controller says of its counts.
const qemuNoCount = "no evidence the cut happened: QEMU NVMe Ctrl (PCI vendor 1b36, in sysfs too) is QEMU's emulated controller, which keeps no count of power losses"

// TestGuestPowerLossProtected: the protected drive (nbdkit's file plugin,
// no cache: a write nbdkit completed is in the image) passes three cycles
// with plp = true, each cut while fio writes and flushes, each cycle
// judged on its data alone, since QEMU's controller counts no unsafe
// shutdown: what it reports is checked here (0 before and after the
// three cuts). The controller QEMU emulates reports a volatile write
// cache, which the kernel writes back to, sending flushes.
func TestGuestPowerLossProtected(t *testing.T) {
	guest(t)
	ctrl := controllers(t, serialPLP)[0]
	dev := mustNamespace(t, ctrl, 1)
	if wc, _ := os.ReadFile("/sys/class/block/" + filepath.Base(dev) + "/queue/write_cache"); strings.TrimSpace(string(wc)) != "write back" {
		t.Errorf("%s: queue/write_cache %q, want write back (QEMU's controller reports a volatile write cache)", dev, wc)
	}
	r, rec, names := powerRun(t, powerSpec(t, 3, true, "60s"), nil, serialPLP)
	if r.Code != 0 {
		t.Errorf("exit %d\n%s", r.Code, r.output())
	}
	for k := 1; k <= 3; k++ {
		mustContain(t, r.Stdout, fmt.Sprintf("--- PASS: TestPowerLoss/%s/cycle_%d", names.of(serialPLP), k))
		c := powerCycle(t, rec, names.of(serialPLP), k)
		if c.Acknowledged == 0 || c.LostWrites != 0 || c.Rule != powerloss.Completed.String() || len(c.Counters) != 0 || !strings.Contains(c.NoCounters, "QEMU's emulated controller") {
			t.Errorf("cycle %d: %+v, want acknowledged writes, every completed write kept, and no counters (QEMU's)", k, c)
		}
	}
	mustContain(t, r.Stdout, qemuNoCount)
	// Each cut removed the controller, and each restore added a new one
	// (the kernel gives it another name, and its namespace another: the
	// by-id link follows it). What QEMU's controller reports after three
	// cuts: no unsafe shutdown, and a volatile write cache.
	if now := controllers(t, serialPLP); len(now) != 1 || now[0] == ctrl {
		t.Errorf("controllers with serial %s after three cuts: %v, want one other than %s (removed and added again)", serialPLP, now, ctrl)
	}
	dev, err := filepath.EvalSymlinks(byID(serialPLP))
	if err != nil {
		t.Fatal(err)
	}
	cli := nvme.CLI{Binary: os.Getenv("DRIVEQUAL_NVME_REAL")}
	if l, err := cli.SmartLog(context.Background(), dev); err != nil {
		t.Error(err)
	} else if n, _ := l.UnsafeShutdowns.Uint64(); n != 0 {
		t.Errorf("%s after three cuts: unsafe shutdowns %d; QEMU's controller was taken to count none", dev, n)
	}
	if c, err := cli.IDCtrl(context.Background(), dev); err != nil {
		t.Error(err)
	} else if !c.VolatileWriteCache() || c.VID != 0x1b36 || c.Model != "QEMU NVMe Ctrl" {
		t.Errorf("%s: vid %04x, model %q, vwc %d; want QEMU's controller (1b36, QEMU NVMe Ctrl) with a volatile write cache", dev, c.VID, c.Model, c.VWC)
	}
}

// TestGuestPowerLossVolatile: the honest volatile cache (nbdkit's cache
// filter, writeback: writes reach the image on a flush) and the lying
// one (cache=unsafe: flushes ignored).
//
// With plp = true, two cycles each, both FAIL: the honest drive lost
// only writes completed after its last completed flush (checked against
// fio's per-I/O logs, and said by the verdict), the liar flushed writes
// too. Two cycles, because
// a cut that comes after a flush completed and before any write did
// leaves the honest drive nothing unflushed to lose (about one cut in
// 250 at powerFlushEvery): it must lose writes in one of them. Without
// plp (each held to its flushed writes) the honest drive passes, and the
// liar FAILs, having lost writes that were flushed. A third drive, the
// protected one, cut in the same run and never added back, FAILs "did
// not return".
func TestGuestPowerLossVolatile(t *testing.T) {
	guest(t)
	flushesBefore := flushesServed(t, "vwc")
	r, rec, names := powerRun(t, powerSpec(t, 2, true, "60s"), nil, serialVWC, serialLiar)
	if r.Code == 0 {
		t.Errorf("plp = true: exit 0\n%s", r.output())
	}
	mustContain(t, r.Stdout, "--- FAIL: TestPowerLoss/"+names.of(serialVWC)+" (",
		"acknowledged writes lost (every completed write: the spec promises power-loss protection (plp = true)); first lost range: LBA ",
		"; none of them before a completed flush: each was completed and not yet flushed",
		"of them before a completed flush, which a drive must keep whatever it promises")
	if n := flushesServed(t, "vwc") - flushesBefore; n == 0 {
		t.Errorf("the honest drive's nbdkit received no flush during its cycles: the guest's flushes do not reach it")
	} else {
		t.Logf("the honest drive's nbdkit received %d flushes in its two cycles", n)
	}
	lost, rewrites := 0, 0
	for k := 1; k <= 2; k++ {
		flushed, ranges, again := flushedLost(t, rec, names.of(serialVWC), k)
		rewrites += again
		// The verdict says so too: none of the lost writes was flushed.
		if c := powerCycle(t, rec, names.of(serialVWC), k); c.LostWrites > 0 && (c.LostFlushed == nil || *c.LostFlushed != 0) {
			t.Errorf("honest writeback, plp = true, cycle %d: %d lost, lost_flushed %v; want 0 of them flushed", k, c.LostWrites, c.LostFlushed)
		}
		if flushed != 0 {
			t.Errorf("honest writeback, plp = true, cycle %d: %d lost ranges, %d of them flushed writes; want none flushed", k, ranges, flushed)
		}
		lost += ranges
		mustContain(t, r.Stdout, "--- FAIL: TestPowerLoss/"+names.of(serialLiar)+fmt.Sprintf("/cycle_%d", k))
		if flushed, ranges, _ := flushedLost(t, rec, names.of(serialLiar), k); flushed == 0 {
			t.Errorf("lying cache, plp = true, cycle %d: %d lost ranges, none of them flushed writes; want flushed writes lost", k, ranges)
		}
		if c := powerCycle(t, rec, names.of(serialLiar), k); c.LostFlushed == nil || *c.LostFlushed == 0 {
			t.Errorf("lying cache, plp = true, cycle %d: %d lost, lost_flushed %v; want flushed writes among them", k, c.LostWrites, c.LostFlushed)
		}
	}
	if lost == 0 {
		t.Errorf("honest writeback, plp = true: no write lost in two cycles; want the writes completed after the last flush lost (fio rewrote %d blocks before the cuts: a rewrite of flushed data hides a lost cache; if many, this host writes faster than the spec's size allows for)", rewrites)
	}

	env := []string{"DRIVEQUAL_QEMU_STAYS_OUT=" + serialPLP}
	r, rec, names = powerRun(t, powerSpec(t, 1, false, "30s"), env, serialVWC, serialLiar, serialPLP)
	if r.Code == 0 {
		t.Errorf("no plp: exit 0\n%s", r.output())
	}
	mustContain(t, r.Stdout, "--- PASS: TestPowerLoss/"+names.of(serialVWC)+"/cycle_1",
		"acknowledged writes read back intact (every write completed before the last completed flush: ",
		"--- FAIL: TestPowerLoss/"+names.of(serialLiar)+"/cycle_1",
		"acknowledged writes lost (every write completed before the last completed flush: ",
		"--- FAIL: TestPowerLoss/"+names.of(serialPLP)+"/cycle_1",
		"did not return after the power cut: "+byID(serialPLP)+" was not back within ready_within 30s")
	if c := powerCycle(t, rec, names.of(serialVWC), 1); c.Acknowledged == 0 || c.LostWrites != 0 {
		t.Errorf("honest writeback, no plp: %+v, want flushed writes, all kept", c)
	}
	if flushed, ranges, _ := flushedLost(t, rec, names.of(serialLiar), 1); ranges == 0 || flushed != ranges {
		t.Errorf("lying cache, no plp: %d lost ranges, %d of them flushed writes; want every lost range flushed", ranges, flushed)
	}
}

// powerFlushEvery is the spec's flush_every: the two jobs' flushes
// reach the drive about every 128 writes, so a cut lands in the half a
// write's time between a flush's completion and the next write's (when
// the honest drive holds nothing unflushed) about once in 250.
const powerFlushEvery = 256
