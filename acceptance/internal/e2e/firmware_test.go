//go:build linux

package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/qual/fwrun"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// fwStandIn is an nvme-cli stand-in for one loop device: id-ctrl,
// fw-log, fw-download and fw-commit of that device only (QEMU 7.2's
// emulated controller implements neither Firmware Image Download nor
// Firmware Commit), everything else the real nvme-cli. Its state (the
// revision running, each slot's, the active slot) is in files of $FW_STATE.
// fw-commit stalls the drive's I/O for $FW_STALL seconds with the kernel's
// blk-throttle: the cgroup the suite (and so its fio) runs in is held to
// 1 read and 1 write a second on the device, then freed to $FW_FREE (the
// loopIOPS every suite's loop devices are held to); the I/O waits in
// the block layer on its real path to the loop device, and fio measures
// it. With $FW_KEEP_OLD set, the commit fills the slot but the old
// revision keeps running; with $FW_LOSE_WRITES, the activation loses what
// the drive held (zeros written over it, as a firmware that drops its
// write cache would), acknowledged writes included; with
// $FW_LOSE_BEFORE=N, it zeroes the first N MiB only, blocks written before
// the download (the known region, which the load never touches) and read
// back by nobody since; with $FW_SLOWER, the
// drive reads at most 20 times a second after the activation.
const fwStandIn = `#!/bin/sh
st="$FW_STATE"
dev=""
for a in "$@"; do case "$a" in /dev/*) dev="$a";; esac; done
if [ "$dev" != "$FW_DEV" ]; then exec "$FW_REAL" "$@"; fi
echo "$*" >> "$st/sent"
case "$1" in
id-ctrl)
	printf '{"vid":7,"mn":"Loop firmware","sn":"LOOPFW1","fr":"%s","oacs":0}\n' "$(cat "$st/fr")" ;;
fw-log)
	printf '{"%s":{"Active Firmware Slot (afi)":%s' "$dev" "$(cat "$st/afi")"
	for s in 1 2 3; do
		[ -f "$st/slot$s" ] && printf ',"Firmware Rev Slot %s":"1 (%s)"' "$s" "$(cat "$st/slot$s")"
	done
	printf '}}\n' ;;
fw-download)
	img=""; for a in "$@"; do case "$a" in --fw=*) img="${a#--fw=}";; esac; done
	cp "$img" "$st/downloaded" ;;
fw-commit)
	slot=""; for a in "$@"; do case "$a" in --slot=*) slot="${a#--slot=}";; esac; done
	head -c 8 "$st/downloaded" > "$st/slot$slot"
	echo "$FW_MAJMIN 1" > "$FW_CGROUP/blkio.throttle.read_iops_device"
	echo "$FW_MAJMIN 1" > "$FW_CGROUP/blkio.throttle.write_iops_device"
	sleep "$FW_STALL"
	echo "$FW_MAJMIN $FW_FREE" > "$FW_CGROUP/blkio.throttle.read_iops_device"
	echo "$FW_MAJMIN $FW_FREE" > "$FW_CGROUP/blkio.throttle.write_iops_device"
	if [ -n "$FW_LOSE_BEFORE" ]; then dd if=/dev/zero of="$dev" bs=1M count="$FW_LOSE_BEFORE" oflag=direct 2>/dev/null; fi
	if [ -n "$FW_LOSE_WRITES" ]; then dd if=/dev/zero of="$dev" bs=1M count=64 oflag=direct 2>/dev/null; fi
	if [ -n "$FW_SLOWER" ]; then echo "$FW_MAJMIN 20" > "$FW_CGROUP/blkio.throttle.read_iops_device"; fi
	if [ -z "$FW_KEEP_OLD" ]; then cp "$st/slot$slot" "$st/fr"; echo "$slot" > "$st/afi"; fi ;;
*) exec "$FW_REAL" "$@" ;;
esac
`

// fwRig is a loop device behind the stand-in, with a blkio cgroup the
// suite is started in.
type fwRig struct {
	dev, bin, state, cgroup, old, new string
	env                               []string
}

func newFWRig(t *testing.T) *fwRig {
	t.Helper()
	testenv.MustHaveRoot(t)
	return newFWRigOn(t, "")
}

// newFWRigOn is newFWRig on the loop device dev ("": a new one).
func newFWRigOn(t *testing.T, dev string) *fwRig {
	t.Helper()
	testenv.MustHaveRoot(t)
	blkio := "/sys/fs/cgroup/blkio"
	if _, err := os.Stat(filepath.Join(blkio, "blkio.throttle.read_iops_device")); err != nil {
		testenv.Skipf(t, "needs the cgroup v1 blkio throttle at %s to stall a loop device: %v", blkio, err)
	}
	real, err := exec.LookPath("nvme")
	if err != nil {
		testenv.Skipf(t, "needs nvme-cli: %v", err)
	}
	if dev == "" {
		dev = guardedLoop(t)
	}
	fi, err := os.Stat("/sys/class/block/" + strings.TrimPrefix(dev, "/dev/") + "/dev")
	require.NoError(t, err, fi)
	mm, err := os.ReadFile("/sys/class/block/" + strings.TrimPrefix(dev, "/dev/") + "/dev")
	require.NoError(t, err)
	cg, err := os.MkdirTemp(blkio, "drivequal-fw-")
	require.NoError(t, err)
	t.Cleanup(func() {
		// A task that has just exited leaves a cgroup a moment after:
		// rmdir says busy until then.
		var err error
		for i := 0; i < 100; i++ {
			if err = os.Remove(cg); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Errorf("removing the cgroup %s: %v", cg, err)
	})
	// Held to loopIOPS, as the suite's loop devices are (see runSuiteVia),
	// but for the stalls: the cell measured before and after the
	// activation then has the same ceiling, whatever the tests beside it
	// do (a loaded host still slows either: 159 to 395 MB/s seen, within
	// the spec's baseline tolerance of 0.8).
	majMin := strings.TrimSpace(string(mm))
	for _, f := range []string{"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"} {
		require.NoError(t, os.WriteFile(filepath.Join(cg, f), []byte(fmt.Sprintf("%s %d", majMin, loopIOPS)), 0))
	}
	r := &fwRig{dev: dev, bin: t.TempDir(), state: t.TempDir(), cgroup: cg, old: "FWOLD001", new: "FWNEW002"}
	require.NoError(t, os.WriteFile(filepath.Join(r.bin, "nvme"), []byte(fwStandIn), 0o755))
	for f, v := range map[string]string{"fr": r.old, "afi": "1", "slot1": r.old} {
		require.NoError(t, os.WriteFile(filepath.Join(r.state, f), []byte(v), 0o644))
	}
	r.env = []string{"PATH=" + r.bin + ":" + os.Getenv("PATH"), "FW_STATE=" + r.state, "FW_DEV=" + dev, "FW_REAL=" + real,
		"FW_CGROUP=" + cg, "FW_MAJMIN=" + majMin, "FW_FREE=" + strconv.Itoa(loopIOPS)}
	return r
}

// image writes a firmware image whose first 8 bytes are rev.
func (r *fwRig) image(t *testing.T, rev string) string {
	p := filepath.Join(t.TempDir(), rev+".bin")
	require.NoError(t, os.WriteFile(p, []byte(rev+strings.Repeat("\x00", 4088)), 0o644))
	return p
}

// run runs the suite's TestFirmware in the rig's cgroup, the stall given.
func (r *fwRig) run(t *testing.T, stall string, extraEnv []string, args ...string) result {
	t.Helper()
	return r.runSel(t, "TestFirmware", stall, extraEnv, args...)
}

// runSel is run with the tests sel selects.
func (r *fwRig) runSel(t *testing.T, sel, stall string, extraEnv []string, args ...string) result {
	t.Helper()
	env := append(append([]string{"FW_STALL=" + stall}, r.env...), extraEnv...)
	return runSuiteCtx(t.Context(), t, func(c *exec.Cmd) {
		require.NoError(t, os.WriteFile(filepath.Join(r.cgroup, "cgroup.procs"), []byte(fmt.Sprint(c.Process.Pid)), 0))
	}, env, []string{"-test.run=" + sel}, append([]string{"-spec=" + testdataFile(t, "firmware.toml"), "-drives=" + r.dev}, args...)...)
}

func (r *fwRig) sent(t *testing.T) string {
	b, _ := os.ReadFile(filepath.Join(r.state, "sent"))
	return string(b)
}

func hashDevice(t *testing.T, dev string) [32]byte {
	b, err := os.ReadFile(dev)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// What is real: the loop device and its backing file, the kernel's block
// layer and its blk-throttle (which holds the I/O), fio and the load it
// runs with its verify and latency logs, the suite and its report. What is
// stood in: nvme-cli's id-ctrl, fw-log, fw-download and fw-commit of the
// loop device, which has no NVMe controller.
//
// A 0.2 s stall passes max_stall = "5s" (and the step back passes too); an
// 8 s stall fails it naming the stall fio measured, at least 90 % of it,
// and a -resume and a -replay keep the failure; a commit that leaves the
// old revision running fails naming both revisions; without -destructive
// the run is refused before anything is sent and the drive is unchanged.
func TestFirmwareActivationUnderLoad(t *testing.T) {
	runParallel(t) // its stalls hold its own cgroup; the bounds allow a loaded host's lag
	r := newFWRig(t)
	img, back := r.image(t, r.new), r.image(t, r.old)
	name := strings.TrimPrefix(r.dev, "/dev/")

	before := hashDevice(t, r.dev)
	refused := r.run(t, "0.2", nil, "-firmware="+img)
	assert.NotEqual(t, 0, refused.Code)
	assert.Contains(t, refused.Stderr, "parsing -firmware: the activation runs under a write load on the drives, which is refused without -destructive: give -destructive")
	assert.NotContains(t, r.sent(t), "fw-", "no firmware command sent to the drive")
	assert.Equal(t, before, hashDevice(t, r.dev), "the refused run left the drive unchanged")

	noTable := runSuiteIn(t, r.env, []string{"-test.run=TestFirmware"}, "-spec="+testdataFile(t, "integrity.toml"), "-drives="+r.dev, "-destructive", "-firmware="+img)
	assert.Equal(t, 2, noTable.Code)
	assert.Contains(t, noTable.Stderr, "parsing -firmware: "+testdataFile(t, "integrity.toml")+" has no [firmware] table: add one with action, slot and max_stall")
	assert.NotContains(t, r.sent(t), "fw-", "no firmware command sent to the drive")
	assert.Equal(t, before, hashDevice(t, r.dev), "the refused run left the drive unchanged")

	dry := r.run(t, "0.2", nil, "-firmware="+img, "-firmware-back="+back, "-dry-run")
	require.Equal(t, 0, dry.Code, dry.Stderr)
	assert.Contains(t, dry.Stdout, "firmware activate: "+img+" (4096 bytes) to slot 2, activate-now (commit action 3)")
	assert.Contains(t, dry.Stdout, "firmware back: "+back+" (4096 bytes) to slot 2")

	ok := r.run(t, "0.2", nil, "-destructive", "-firmware="+img, "-firmware-back="+back, "-record="+filepath.Join(t.TempDir(), "raw"))
	noFioLeft(t)
	require.Equal(t, 0, ok.Code, "stdout:\n%s\nstderr:\n%s", ok.Stdout, ok.Stderr)
	_, err := os.Stat(filepath.Join(acceptanceDir, "local-write-0-verify.state"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the stopped load left fio's verify state in the suite's directory")
	res := byTest(ok.results(t))
	for _, step := range []string{"activate", "back"} {
		got := res["TestFirmware/"+name+"/"+step]
		require.NotNil(t, got.Firmware, step)
		assert.Equal(t, report.Pass, got.Verdict, got.Error)
		assert.Equal(t, report.KindFirmware, got.Kind)
		t.Logf("%s: 0.2 s stall applied, fio measured %.0f ms (latency %.0f ms, gap %.0f ms, %d samples)", step, got.Firmware.StallMS, got.Firmware.MaxLatencyMS, got.Firmware.GapMS, got.Firmware.IOs)
		// At least half the stall applied: fio saw it. Above it, the lag
		// of a loaded host (beside the rest of make test, 556 ms and
		// 2,472 ms of a 0.2 s stall), bounded by the PASS above (under
		// max_stall 5s).
		assert.GreaterOrEqual(t, got.Firmware.StallMS, 100.0, "the stall fio measured")
		assert.True(t, got.Firmware.Verified)
	}
	assert.Equal(t, r.new, res["TestFirmware/"+name+"/activate"].Firmware.After)
	assert.Equal(t, r.old, res["TestFirmware/"+name+"/back"].Firmware.After)
	summary, err := os.ReadFile(filepath.Join(ok.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Firmware activation under load\n\n- **PASS** TestFirmware/"+name+"/activate: "+r.dev+": FWOLD001 to FWNEW002")
	junit, err := os.ReadFile(filepath.Join(ok.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `classname="TestFirmware`)

	// An 8 s stall: FAIL, naming the stall fio measured. (Not longer: the
	// throttle lets a read and a write through each second, so that the
	// latency of the I/O fio has queued stops growing at about 11 s.)
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "fr"), []byte(r.old), 0o644))
	raw := filepath.Join(t.TempDir(), "raw")
	slow := r.run(t, "8", nil, "-destructive", "-firmware="+img, "-record="+raw)
	noFioLeft(t)
	assert.NotEqual(t, 0, slow.Code)
	s := byTest(slow.results(t))["TestFirmware/"+name+"/activate"]
	require.NotNil(t, s.Firmware)
	assert.Equal(t, report.Fail, s.Verdict)
	assert.Equal(t, report.CauseFirmware, s.Cause)
	t.Logf("8 s stall applied: fio measured %.0f ms (latency %.0f ms, gap %.0f ms)", s.Firmware.StallMS, s.Firmware.MaxLatencyMS, s.Firmware.GapMS)
	// At least 90 % of it; a stall of the host's own can add up to the
	// margin max_stall leaves.
	assert.GreaterOrEqual(t, s.Firmware.StallMS, 7200.0, "the stall fio measured, of the 8 s applied")
	assert.LessOrEqual(t, s.Firmware.StallMS, 13000.0, "the stall fio measured, of the 8 s applied")
	assert.Equal(t, max(s.Firmware.GapMS, s.Firmware.MaxLatencyMS), s.Firmware.StallMS, "the stall is fio's")
	assert.Contains(t, s.Error, fmt.Sprintf("I/O stalled %.0f ms", s.Firmware.StallMS))
	assert.Contains(t, s.Error, "over max_stall 5s")
	assert.Contains(t, slow.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	kept, err := os.ReadFile(filepath.Join(raw, fwrun.File))
	require.NoError(t, err)

	// The failure stays: a resume does not activate again, a replay
	// judges the recorded step.
	res2 := r.run(t, "0.2", nil, "-destructive", "-firmware="+img, "-record="+raw, "-resume")
	assert.NotEqual(t, 0, res2.Code)
	assert.Contains(t, res2.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	after, err := os.ReadFile(filepath.Join(raw, fwrun.File))
	require.NoError(t, err)
	assert.Equal(t, string(kept), string(after), "the resume kept the recorded step")
	rep := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, 1, rep.Code, rep.Stderr)
	assert.Contains(t, rep.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.Contains(t, rep.Stdout, "over max_stall 5s")

	// A resume without -firmware keeps the failure, sending nothing.
	sentBefore := strings.Count(r.sent(t), "fw-download")
	noFW := r.run(t, "0.2", nil, "-destructive", "-record="+raw, "-resume")
	assert.NotEqual(t, 0, noFW.Code, noFW.Stdout)
	assert.Contains(t, noFW.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.Contains(t, noFW.Stdout, "over max_stall 5s")
	assert.Equal(t, sentBefore, strings.Count(r.sent(t), "fw-download"), "the resume sent the drive no firmware command")

	// run.json vouches for firmware.json: a replay of an edited one says so.
	runJSON, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	sum := sha256.Sum256(after)
	assert.Contains(t, string(runJSON), fmt.Sprintf(`"firmware.json": "%x"`, sum))
	imgSum := sha256.Sum256([]byte(r.new + strings.Repeat("\x00", 4088)))
	assert.Contains(t, string(runJSON), fmt.Sprintf(`"image_sha256": "%x"`, imgSum), "run.json records the image asked")
	require.NoError(t, os.WriteFile(filepath.Join(raw, fwrun.File), []byte(strings.ReplaceAll(string(after), `"verdict": "fail"`, `"verdict": "pass"`)), 0o644))
	edited := runSuite(t, nil, "-replay="+raw)
	assert.Contains(t, edited.Stdout, "firmware.json (edited after recording")
	assert.Equal(t, 1, edited.Code)
	assert.Contains(t, edited.Stdout, "verdict pass contradicts its own stall", "a pass its own stall contradicts is refused")

	// A message a recording supplies reaches the log and summary.md
	// escaped: no escape sequence, no second line, no HTML tag.
	require.NoError(t, os.WriteFile(filepath.Join(raw, fwrun.File), []byte(strings.Replace(string(after), `"message": "`, `"message": "\u001b[2J\nX<script>`, 1)), 0o644))
	hostile := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, 1, hostile.Code)
	assert.NotContains(t, hostile.Stdout, "\x1b", "a raw escape in the test log")
	assert.Contains(t, hostile.Stdout, `\x1b[2J\nX<script>`)
	hs, err := os.ReadFile(filepath.Join(hostile.Report, "summary.md"))
	require.NoError(t, err)
	assert.NotContains(t, string(hs), "\x1b")
	assert.NotContains(t, string(hs), "<script>")
	assert.Contains(t, string(hs), `\x1b[2J X&lt;script>`)

	// firmware.json deleted, and its sha256 dropped from run.json: run.json
	// still records the activation asked, which fails without its verdict.
	require.NoError(t, os.Remove(filepath.Join(raw, fwrun.File)))
	var info map[string]any
	require.NoError(t, json.Unmarshal(runJSON, &info))
	delete(info["files"].(map[string]any), fwrun.File)
	dropped, err := json.Marshal(info)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(raw, "run.json"), dropped, 0o644))
	gone := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, 1, gone.Code, gone.Stdout)
	assert.Contains(t, gone.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.Contains(t, gone.Stdout, "run.json records firmware activate asked of this drive ("+img)
	assert.Contains(t, gone.Stdout, "holds no verdict for it")

	// A firmware.json alone is no recording.
	alone := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(alone, fwrun.File), []byte(strings.ReplaceAll(string(after), `"verdict": "fail"`, `"verdict": "pass"`)), 0o644))
	lone := runSuite(t, nil, "-replay="+alone)
	assert.Equal(t, 2, lone.Code, lone.Stdout)
	assert.Contains(t, lone.Stderr, "parsing -replay: "+alone+" holds no recorded outputs")

	// The commit leaves the old revision running.
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "fr"), []byte(r.old), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "afi"), []byte("1"), 0o644))
	stuck := r.run(t, "0.2", []string{"FW_KEEP_OLD=1"}, "-destructive", "-firmware="+img)
	assert.NotEqual(t, 0, stuck.Code)
	st := byTest(stuck.results(t))["TestFirmware/"+name+"/activate"]
	assert.Equal(t, report.Fail, st.Verdict)
	assert.Contains(t, st.Error, "still running FWOLD001 (id-ctrl fr) after the commit; the slot log's slot 2 holds FWNEW002")

	// The activation loses acknowledged writes: fio's verify finds them.
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "fr"), []byte(r.old), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "afi"), []byte("1"), 0o644))
	lost := r.run(t, "0.2", []string{"FW_LOSE_WRITES=1"}, "-destructive", "-firmware="+img)
	assert.NotEqual(t, 0, lost.Code)
	l := byTest(lost.results(t))["TestFirmware/"+name+"/activate"]
	require.NotNil(t, l.Firmware)
	assert.Equal(t, report.Fail, l.Verdict)
	assert.False(t, l.Firmware.Verified)
	assert.Contains(t, l.Error, "the load's writes did not all read back: fio job write: error")

	// The activation loses only blocks written before the download, which
	// no verify of the load reads: the read-back of the known region
	// written before the download finds them.
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "fr"), []byte(r.old), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "afi"), []byte("1"), 0o644))
	old := r.run(t, "0.2", []string{"FW_LOSE_BEFORE=2"}, "-destructive", "-firmware="+img)
	assert.NotEqual(t, 0, old.Code)
	o := byTest(old.results(t))["TestFirmware/"+name+"/activate"]
	require.NotNil(t, o.Firmware)
	assert.Equal(t, report.Fail, o.Verdict)
	assert.False(t, o.Firmware.Verified)
	assert.NotContains(t, o.Error, "the load's writes did not all read back")
	assert.Contains(t, o.Error, "the 16 MiB written before the download did not all read back after the commit: fio ")
	assert.Contains(t, o.Error, "bad pattern block offset")
}

// The run's one cell, measured before the activation, is measured again
// after it from its recorded job file: within the spec's [baseline]
// tolerance it passes; a drive that reads 20 times a second after the
// activation (the stand-in's throttle, left on) fails TestFirmware,
// naming the cell and both figures.
func TestFirmwareRemeasured(t *testing.T) {
	runParallel(t) // its stalls hold its own cgroup; the bounds allow a loaded host's lag
	r := newFWRig(t)
	img := r.image(t, r.new)
	name := strings.TrimPrefix(r.dev, "/dev/")
	cell := "TestSingleDrive/64MiB/128KB_Sequential_Read"
	sel := "TestSingleDrive|TestFirmware"

	dry := r.runSel(t, sel, "0.2", nil, "-firmware="+img, "-dry-run")
	require.Equal(t, 0, dry.Code, dry.Stderr)
	assert.Contains(t, dry.Stdout, "I/O stall ≤ 5s; 1 cell(s), the last each drive was measured in alone, measured just before the download and just after the commit")

	ok := r.runSel(t, sel, "0.2", nil, "-destructive", "-firmware="+img)
	noFioLeft(t)
	require.Equal(t, 0, ok.Code, "stdout:\n%s\nstderr:\n%s", ok.Stdout, ok.Stderr)
	got := byTest(ok.results(t))["TestFirmware/"+name+"/activate"]
	require.NotNil(t, got.Firmware)
	require.Len(t, got.Firmware.Remeasured, 1)
	m := got.Firmware.Remeasured[0]
	t.Logf("%s", m.Text())
	assert.Equal(t, cell, m.Test)
	// Before is measured just before the download, not taken from the
	// cell's figure earlier in the run.
	assert.Positive(t, m.Before)
	assert.FileExists(t, filepath.Join(ok.Report, "raw", "firmware", name, "remeasure-before", "128KB_Sequential_Read.json"))
	assert.FileExists(t, filepath.Join(ok.Report, "raw", "firmware", name, "remeasure-after", "128KB_Sequential_Read.json"))
	assert.Positive(t, m.After)
	assert.False(t, m.Regressed)

	require.NoError(t, os.WriteFile(filepath.Join(r.state, "fr"), []byte(r.old), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.state, "afi"), []byte("1"), 0o644))
	slow := r.runSel(t, sel, "0.2", []string{"FW_SLOWER=1"}, "-destructive", "-firmware="+img)
	noFioLeft(t)
	assert.NotEqual(t, 0, slow.Code)
	s := byTest(slow.results(t))["TestFirmware/"+name+"/activate"]
	require.NotNil(t, s.Firmware)
	require.Len(t, s.Firmware.Remeasured, 1)
	t.Logf("%s", s.Firmware.Remeasured[0].Text())
	assert.True(t, s.Firmware.Remeasured[0].Regressed)
	assert.Equal(t, report.Fail, s.Verdict)
	assert.Contains(t, s.Error, "slower after the activation: "+cell+": ")
}

// A drive whose activation failed is followed by its identity, not its
// path: its image detached and attached again at another loop number,
// a -resume with the same -firmware finds the drive ("drive 1 (recorded
// at /dev/loopA) is /dev/loopB"), sends it no firmware command, and
// keeps its failure under its new path, the message naming the old one;
// a replay judges the same. Real: the loop devices, their identity, the
// kernel's blk-throttle, fio; stood in: nvme-cli's firmware commands.
func TestFirmwareFollowsTheDrive(t *testing.T) {
	testenv.MustHaveLoop(t)
	dir := t.TempDir()
	img := sparseImage(t, dir, "fw.img", safetySize)
	raw := filepath.Join(dir, "raw")
	var old, fw string
	t.Run("recorded", func(t *testing.T) {
		old = testenv.Attach(t, img) // detached when this subtest ends
		fillRandom(t, old, safetySize)
		r := newFWRigOn(t, old)
		fw = filepath.Join(dir, r.new+".bin")
		require.NoError(t, os.WriteFile(fw, []byte(r.new+strings.Repeat("\x00", 4088)), 0o644))
		slow := r.run(t, "8", nil, "-destructive", "-firmware="+fw, "-record="+raw)
		noFioLeft(t)
		require.Equal(t, 1, slow.Code, "stdout:\n%s\nstderr:\n%s", slow.Stdout, slow.Stderr)
		require.Equal(t, report.Fail, byTest(slow.results(t))["TestFirmware/"+strings.TrimPrefix(old, "/dev/")+"/activate"].Verdict)
	})
	if t.Failed() {
		return
	}
	oldName := strings.TrimPrefix(old, "/dev/")
	// The freed number is taken (by this test, or by another running
	// beside it) so that the image comes back at another.
	filler := sparseImage(t, dir, "filler.img", safetySize)
	if out, err := exec.Command("flock", "-w", "60", testenv.LosetupLock, "losetup", old, filler).CombinedOutput(); err == nil {
		t.Cleanup(func() { _ = exec.Command("losetup", "-d", old).Run() })
	} else {
		t.Logf("%s taken since: %v: %s", old, err, out)
	}
	dev := testenv.Attach(t, img)
	require.NotEqual(t, old, dev)
	moved := newFWRigOn(t, dev)
	require.NoError(t, os.WriteFile(filepath.Join(moved.state, "fr"), []byte(moved.new), 0o644))
	name := strings.TrimPrefix(dev, "/dev/")
	res := moved.run(t, "0.2", nil, "-destructive", "-firmware="+fw, "-record="+raw, "-resume")
	noFioLeft(t)
	assert.Equal(t, 1, res.Code, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	assert.Contains(t, res.Stdout, "drive 1 (recorded at "+old+") is "+dev)
	assert.NotContains(t, moved.sent(t), "fw-download", "the resume flashed the drive again")
	got := byTest(res.results(t))
	a := got["TestFirmware/"+name+"/activate"]
	assert.Equal(t, report.Fail, a.Verdict)
	assert.Contains(t, a.Error, "[recorded at "+old+", this drive's path then] "+old+": I/O stalled")
	_, orphan := got["TestFirmware/"+oldName+"/activate"]
	assert.False(t, orphan, "a step reported under the drive's old path")
	rep := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, 1, rep.Code, rep.Stderr)
	assert.Contains(t, rep.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.NotContains(t, rep.Stdout, "TestFirmware/"+oldName+"/")
}

// A run killed during the activation (here in the commit's stall, as a
// hung reset or a lost host would leave it) keeps the step as started:
// a replay fails it as interrupted, naming the commands, and a -resume
// with the same -firmware fails it too and never flashes the drive
// again; the load it had started dies with it. Real: the suite killed
// by SIGKILL, the loop device, fio, the blk-throttle stall; stood in:
// nvme-cli's firmware commands.
func TestFirmwareInterrupted(t *testing.T) {
	runParallel(t) // its stalls hold its own cgroup; the bounds allow a loaded host's lag
	r := newFWRig(t)
	img := r.image(t, r.new)
	name := strings.TrimPrefix(r.dev, "/dev/")
	raw := filepath.Join(t.TempDir(), "raw")
	// The load the suite started, as it ran when the suite was killed.
	// It runs in the recording's firmware directory (not the suite's,
	// which ours matches): the test's own marker finds it.
	load := func(p proc) bool { return p.comm == "fio" && carries(p.env, t) }
	var loadPids []int
	start, killed := sigkillWhen(func() bool {
		if !strings.Contains(r.sent(t), "fw-commit") {
			return false
		}
		loadPids = fioProcesses(load)
		return true
	}, 2*time.Minute, "no fw-commit sent within 2 min")
	env := append([]string{"FW_STALL=3"}, r.env...)
	res := runSuiteCtx(t.Context(), t, func(c *exec.Cmd) {
		require.NoError(t, os.WriteFile(filepath.Join(r.cgroup, "cgroup.procs"), []byte(fmt.Sprint(c.Process.Pid)), 0))
		start(c)
	}, env, []string{"-test.run=TestFirmware"}, "-spec="+testdataFile(t, "firmware.toml"), "-drives="+r.dev, "-destructive", "-firmware="+img, "-record="+raw)
	require.NoError(t, <-killed, "stdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)
	require.Equal(t, -1, res.Code, "the suite ended by SIGKILL")
	// The stand-in's stall may have died with the suite: the drive's I/O
	// is let go, as a power cycle would.
	for _, f := range []string{"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"} {
		require.NoError(t, os.WriteFile(filepath.Join(r.cgroup, f), []byte(majmin(r)+" 0"), 0))
	}
	// The load died with the suite (its fio's death signal, its jobs
	// threads of that one process), once its I/O, released above, let it
	// exit: nothing the suite started writes the drive after it is gone.
	// Its pids seen before the kill count while any thread of theirs
	// lives (a killed fio's /proc entry no longer shows its marker).
	require.NotEmpty(t, loadPids, "no firmware load ran when the suite was killed")
	leftover := func() []int {
		left := fioProcesses(load)
		for _, pid := range loadPids {
			if alive(pid) && !contains(left, pid) {
				left = append(left, pid)
			}
		}
		return left
	}
	t.Cleanup(func() {
		for _, pid := range leftover() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); len(leftover()) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed suite's firmware load still runs 20 s after it: fio %v", leftover())
		}
	}
	counts := settled(t, r.dev)
	time.Sleep(time.Second)
	assert.Equal(t, counts, ioCounts(t, r.dev), "%s was written after the suite and its load were gone (sectors written, discarded)", r.dev)

	want := "interrupted during the activation: nvme fw-download " + r.dev + " --fw=" + img + "; nvme fw-commit " + r.dev + " --slot=2 --action=3"
	rep := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, 1, rep.Code, "stdout:\n%s\nstderr:\n%s", rep.Stdout, rep.Stderr)
	assert.Contains(t, rep.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.Contains(t, rep.Stdout, want)

	flashed := strings.Count(r.sent(t), "fw-download")
	again := r.run(t, "0.2", nil, "-destructive", "-firmware="+img, "-record="+raw, "-resume")
	noFioLeft(t)
	assert.Equal(t, 1, again.Code, "stdout:\n%s\nstderr:\n%s", again.Stdout, again.Stderr)
	assert.Contains(t, again.Stdout, "--- FAIL: TestFirmware/"+name+"/activate")
	assert.Contains(t, again.Stdout, want)
	assert.Equal(t, flashed, strings.Count(r.sent(t), "fw-download"), "the resume flashed the drive again")
}

// majmin is the rig's device's major:minor.
func majmin(r *fwRig) string {
	for _, e := range r.env {
		if v, ok := strings.CutPrefix(e, "FW_MAJMIN="); ok {
			return v
		}
	}
	return ""
}
