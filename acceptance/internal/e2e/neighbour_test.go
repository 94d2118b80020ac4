//go:build linux

package e2e

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// pulledRun runs integrity.toml on two loop devices of safetySize, the
// second over a sparse image that pullingFio removes during the step
// named by during: the survivor, the pulled device and the run.
func pulledRun(t *testing.T, during string) (good, pulled string, r result) {
	t.Helper()
	testenv.MustHaveLoop(t)
	good = newLoop(t, safetySize)
	img := sparseImage(t, t.TempDir(), during+".img", safetySize)
	pulled = testenv.Attach(t, img, "--direct-io=on")
	r = runSuiteIn(t, pullingFio(t, pulled, img, during), nil, "-spec="+testdataFile(t, "integrity.toml"), "-drives="+good+","+pulled, "-destructive")
	return good, pulled, r
}

// pullingFio puts testdata/fio-pull.sh first in PATH as "fio": it runs
// the real fio for every step, and removes node (a loop device over img)
// during the step named by during ("after-fill", "readback" or "dying";
// see the script).
// The node is put back when t ends, so that the loop device can be
// detached.
func pullingFio(t *testing.T, node, img, during string) []string {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(node, &st))
	t.Cleanup(func() {
		if _, err := os.Stat(node); errors.Is(err, fs.ErrNotExist) {
			if err := unix.Mknod(node, unix.S_IFBLK|0o660, int(st.Rdev)); err != nil {
				t.Errorf("restoring %s: %v", node, err)
			}
		}
	})
	real, err := exec.LookPath("fio")
	require.NoError(t, err)
	real, err = filepath.Abs(real)
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join("testdata", "fio-pull.sh"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fio"), script, 0o755))
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "PULL_REAL=" + real,
		"PULL_NODE=" + node, "PULL_IMG=" + img, "PULL_DURING=" + during}
}

// A good drive never fails because its neighbour vanished: of two drives
// filled together, the second loses its device node once the fill has
// ended (as a drive pulled right after its last write), before the
// read-back of both. The survivor is still read back, passes, and its
// cells are measured; the neighbour's cells fail saying it disappeared,
// and nothing of the survivor is in run.json's failures.
func TestNeighbourPulledAfterTheFillSurvivorReadBack(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good := newLoop(t, safetySize)
	gone := newLoop(t, safetySize)
	r := runSuiteIn(t, pullingFio(t, gone, "", "after-fill"), nil, "-spec="+testdataFile(t, "integrity.toml"), "-drives="+good+","+gone, "-destructive")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "a drive vanished: the run is not qualified")
	got := byTest(r.results(t))
	integrity := "TestIntegrity/" + filepath.Base(good)
	assert.Contains(t, r.Stdout, "--- PASS: "+integrity, "the survivor is read back and passes")
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s, on the survivor: %s", test, got[test].Error)
	}
	for _, test := range []string{"TestScaling/2_drives/128KB_Sequential_Write", "TestScaling/2_drives/128KB_Sequential_Read"} {
		assert.Equal(t, report.Fail, got[test].Verdict, test)
		assert.Equal(t, report.CauseDriveChanged, got[test].Cause, test)
		assert.Contains(t, got[test].Error, gone, test)
	}
	run, ok := readRun(filepath.Join(r.Report, "raw"))
	require.True(t, ok)
	for _, f := range run.Failures {
		assert.NotEqual(t, good, f.Path, "a failure of the survivor in run.json: %+v", f)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
}

// A drive pulled during the read-back of two drives: its capacity drops
// to 0 (as the kernel sets a removed namespace's), so its reads from then
// on fail (those in flight on a loop device) or complete with no bytes
// (fio then compares buffers no read filled, "returned zeros", as the
// QEMU guest's NVMe namespaces do); its node is gone by the end of the
// pass. The survivor's
// read-back passes and its cells are measured; the pulled drive fails as
// disappeared during the step, and run.json holds that, not a failure of
// its media (a preparation error, a read-back error or mismatch), nor any
// failure of the survivor.
func TestNeighbourPulledDuringTheReadBack(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	good, gone, r := pulledRun(t, "readback")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code, "a drive vanished: the run is not qualified")
	assert.Contains(t, r.Stdout, "--- PASS: TestIntegrity/"+filepath.Base(good), "the survivor's read-back passes")
	assert.Contains(t, r.Stdout, gone+" disappeared during verify pass")
	got := byTest(r.results(t))
	for _, test := range []string{"TestSingleDrive/64MiB/128KB_Sequential_Write", "TestSingleDrive/64MiB/128KB_Sequential_Read"} {
		assert.Equal(t, report.Pass, got[test].Verdict, "%s, on the survivor: %s", test, got[test].Error)
	}
	// Its TestIntegrity, in the report and the bottom line, says it
	// disappeared; what fio compared of it is no mismatch of its media,
	// live or in a replay of the recording. (fio may have read it whole
	// before its capacity dropped: that read-back passes.)
	pulled := "TestIntegrity/" + filepath.Base(gone)
	assert.NotContains(t, r.Stdout, gone+" returned", "the bottom line or a cell names a mismatch of the pulled drive")
	raw := filepath.Join(r.Report, "raw")
	for name, res := range map[string]map[string]report.Result{"live": got, "a replay": byTest(runSuite(t, nil, "-replay="+raw).results(t))} {
		in := res[pulled]
		if in.Verdict == report.Pass && name == "live" {
			t.Logf("fio read %s back whole before its capacity dropped", gone)
		}
		if in.Verdict == report.Pass {
			continue
		}
		assert.Equal(t, report.Fail, in.Verdict, "%s: %s: %s", name, pulled, in.Error)
		assert.Equal(t, report.CauseDriveChanged, in.Cause, "%s: %s: %s", name, pulled, in.Error)
		assert.Contains(t, in.Error, gone+" disappeared during verify pass", name)
		if assert.NotNil(t, in.Integrity, name) {
			assert.Zero(t, in.Integrity.Mismatches, "%s: %s", name, pulled)
		}
	}
	run, ok := readRun(raw)
	require.True(t, ok)
	require.NotEmpty(t, run.Failures, "the pulled drive's failure is recorded")
	for _, f := range run.Failures {
		assert.NotEqual(t, good, f.Path, "a failure of the survivor in run.json: %+v", f)
		assert.Equal(t, report.CauseDriveChanged, f.Cause, "the pulled drive failed as disappeared, not as its media: %+v", f)
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
}

// A drive whose media fails and whose controller dies after (fio reads
// zeros at once, and the device goes 10 s after fio has ended): it went
// after fio's first failed read of it, so what fio read is its own. Its
// read-back fails as a mismatch of its media (cause data integrity),
// live and in a replay, beside its disappearance in run.json; the
// survivor passes.
func TestADrivesDeathAfterItsMismatchDoesNotExcuseIt(t *testing.T) {
	runParallel(t)
	good, dying, r := pulledRun(t, "dying")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "--- PASS: TestIntegrity/"+filepath.Base(good), "the survivor's read-back passes")
	assert.Contains(t, r.Stdout, dying+" went after fio's first failed read of it")
	raw := filepath.Join(r.Report, "raw")
	test := "TestIntegrity/" + filepath.Base(dying)
	for name, res := range map[string]map[string]report.Result{"live": byTest(r.results(t)), "a replay": byTest(runSuite(t, nil, "-replay="+raw).results(t))} {
		in := res[test]
		assert.Equal(t, report.Fail, in.Verdict, "%s: %s", name, in.Error)
		assert.Equal(t, report.CauseIntegrity, in.Cause, "%s: %s", name, in.Error)
		assert.Contains(t, in.Error, dying+" returned zeros", name)
	}
	run, ok := readRun(raw)
	require.True(t, ok)
	causes := map[string]bool{}
	for _, f := range run.Failures {
		assert.NotEqual(t, good, f.Path, "a failure of the survivor in run.json: %+v", f)
		causes[f.Cause] = true
	}
	assert.True(t, causes[report.CauseIntegrity], "run.json: the mismatch, the drive's own: %+v", run.Failures)
	assert.True(t, causes[report.CauseDriveChanged], "run.json: its disappearance: %+v", run.Failures)
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
}
