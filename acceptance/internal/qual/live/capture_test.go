package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/capture"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// captureStandin is an nvme-cli whose error-log answers only once every
// one of n drives has asked for its own: a capture that reads the drives
// one after the other has its first read killed at capture.Timeout.
const captureStandin = `#!/bin/sh
dir=${CAPTURE_DIR:?}
case "$1" in
error-log)
	touch "$dir/asked.$(echo "$2" | tr / _)"
	i=0
	while [ "$(ls "$dir" | grep -c '^asked\.')" -lt "$CAPTURE_N" ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && exit 3
		sleep 0.1
	done
	echo '{"errors":[{"error_count":1}]}'
	;;
*)
	echo "NVMe status: Invalid Field in Command(0x4002)" >&2
	exit 2
	;;
esac
`

// The failed drives are read at once, so that 24 failed drives hold the
// run up no longer than one; and what is kept is listed in run.json with
// its sha256, as every recorded file is, so that an edit is caught.
func TestCaptureFailuresReadsTheDrivesAtOnceAndHashesWhatItKeeps(t *testing.T) {
	const n = 4
	bin, state, rec := t.TempDir(), t.TempDir(), t.TempDir()
	script := filepath.Join(bin, "nvme")
	require.NoError(t, os.WriteFile(script, []byte(captureStandin), 0o755))
	t.Setenv("CAPTURE_DIR", state)
	t.Setenv("CAPTURE_N", "4")
	old := capture.Timeout
	capture.Timeout = 20 * time.Second
	t.Cleanup(func() { capture.Timeout = old })

	drives, failed := nvmeDrives(n)
	r := &Runner{Drives: drives, Record: rec, Spec: &specs.Spec{}, Planner: &plan.Planner{}}
	r.Monitor = NewMonitor(nvme.CLI{Binary: script}, drives, specs.DefaultHealth(), nil)
	r.init()
	require.NoError(t, r.rec.Start(record.Run{Drives: []report.Drive{{Path: drives[0].Path}, {Path: drives[1].Path}, {Path: drives[2].Path}, {Path: drives[3].Path}}}))

	caps := r.CaptureFailures(t.Context(), failed)
	require.Len(t, caps, n)
	data, err := os.ReadFile(filepath.Join(rec, "run.json"))
	require.NoError(t, err)
	var run record.Run
	require.NoError(t, json.Unmarshal(data, &run))
	for d := range n {
		c := caps[d]
		require.Len(t, c.Files, 1, "drive %d: %+v", d, c)
		rel, err := filepath.Rel(rec, c.Files[0])
		require.NoError(t, err)
		sum, err := record.Hash(c.Files[0])
		require.NoError(t, err)
		assert.Equal(t, sum, run.Files[filepath.ToSlash(rel)], "run.json lists %s with its sha256", rel)
		assert.Contains(t, c.Notes[0], "no telemetry: NVMe status: Invalid Field in Command")
		require.NotNil(t, run.Drives[d].Failure, "run.json's drives table names drive %d's capture, for a replay", d)
		assert.Equal(t, c, *run.Drives[d].Failure)
	}
}

// A drive that disappeared mid-run is not read for its supplier after
// the run: another drive, or none, may be at its path now, and its error
// log would be kept as the failed drive's. The capture says why it was
// not read; the other failed drive is read.
func TestCaptureFailuresDoesNotReadAVanishedDrivesPath(t *testing.T) {
	bin, rec := t.TempDir(), t.TempDir()
	log := filepath.Join(bin, "nvme.log")
	script := filepath.Join(bin, "nvme")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"$*\" >>"+log+"\necho '{\"errors\":[]}'\n"), 0o755))
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Block: true}}, {Info: device.Info{Path: "/dev/nvme1n1", Block: true}}}
	r := &Runner{Drives: drives, Record: rec, Spec: &specs.Spec{}, Planner: &plan.Planner{}}
	r.Monitor = NewMonitor(nvme.CLI{Binary: script}, drives, specs.DefaultHealth(), nil)
	r.init()
	require.NoError(t, r.rec.Start(record.Run{Drives: []report.Drive{{Path: drives[0].Path}, {Path: drives[1].Path}}}))
	why := "/dev/nvme1n1 disappeared during TestScaling/2_drives/128KB_Sequential_Write (noticed at 02:40:10): its device node /dev/nvme1n1 is gone"
	r.drives.breakWith(1, unusable{cause: report.CauseDriveChanged, text: why}, true)

	caps := r.CaptureFailures(t.Context(), []int{0, 1})
	sent, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(sent), "/dev/nvme0n1", "the other failed drive is read")
	assert.NotContains(t, string(sent), "/dev/nvme1n1", "nothing is read at the vanished drive's path")
	require.Contains(t, caps, 1)
	assert.Empty(t, caps[1].Files)
	require.Len(t, caps[1].Notes, 1)
	assert.Contains(t, caps[1].Notes[0], why)
}

// A capture the interrupted run made is kept by the resume: the drive it
// read is not read again and its files are not overwritten (the error log
// read nearest the failure is the supplier's evidence), run.json's drives
// table names it again, and a drive the interrupted run did not capture
// is read as usual.
func TestCaptureFailuresKeepsTheInterruptedRunsCapture(t *testing.T) {
	bin, rec := t.TempDir(), t.TempDir()
	log := filepath.Join(bin, "nvme.log")
	script := filepath.Join(bin, "nvme")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"$*\" >>"+log+"\necho '{\"errors\":[{\"error_count\":9}]}'\n"), 0o755))
	drives, _ := nvmeDrives(2)
	earlier := filepath.Join(rec, "failure", "0.error-log.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(earlier), 0o755))
	require.NoError(t, os.WriteFile(earlier, []byte(`{"errors":[{"error_count":1}]}`), 0o644))
	prior := report.Capture{Files: []string{earlier}, Notes: []string{"no telemetry: NVMe status: Invalid Field in Command(0x4002)"}}
	r := &Runner{Drives: drives, Record: rec, Spec: &specs.Spec{}, Planner: &plan.Planner{},
		Resume: &Resume{Dir: rec, Prior: record.Run{Drives: []report.Drive{{Path: drives[0].Path, Failure: &prior}, {Path: drives[1].Path}}}}}
	r.Monitor = NewMonitor(nvme.CLI{Binary: script}, drives, specs.DefaultHealth(), nil)
	r.init()
	require.NoError(t, r.rec.Start(record.Run{Drives: []report.Drive{{Path: drives[0].Path}, {Path: drives[1].Path}}}))

	caps := r.CaptureFailures(t.Context(), []int{0, 1})
	sent, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.NotContains(t, string(sent), drives[0].Path, "the drive the interrupted run captured is not read again")
	assert.Contains(t, string(sent), drives[1].Path, "the other failed drive is read")
	assert.Equal(t, prior, caps[0])
	data, err := os.ReadFile(earlier)
	require.NoError(t, err)
	assert.JSONEq(t, `{"errors":[{"error_count":1}]}`, string(data), "the earlier capture is not overwritten")
	var run record.Run
	data, err = os.ReadFile(filepath.Join(rec, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &run))
	require.NotNil(t, run.Drives[0].Failure, "run.json names the kept capture")
	assert.Equal(t, prior, *run.Drives[0].Failure)
	sum, err := record.Hash(earlier)
	require.NoError(t, err)
	assert.Equal(t, sum, run.Files["failure/0.error-log.json"], "listed with its sha256")
	require.NotNil(t, run.Drives[1].Failure)
}
