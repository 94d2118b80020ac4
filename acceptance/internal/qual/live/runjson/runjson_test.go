package runjson

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A sidecar that cannot be written (here the steady-state one, its path
// taken by a directory) is said, and the cell's other findings are still
// kept beside its recording: a replay judges the heat, the PCIe links
// and the CPU load the live run saw.
func TestASidecarThatFailsKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	const test = "TestSingleDrive/1.92TB/4KB_Random_Read"
	blocked := record.Base(dir, test) + record.SteadyExt
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "taken"), 0o755))
	r := &Recorder{dir: dir}
	errs := r.Sidecars(test, []report.Steady{{Drive: "/dev/nvme0n1", Attained: true}},
		record.Thermal{Throttled: "/dev/nvme0n1: throttled"},
		record.Link{Degraded: "/dev/nvme0n1: x2"}, &record.CPU{CPUs: "0-95", N: 96, Busy: 0.2})
	require.Len(t, errs, 1, "the steady-state sidecar's failure is said")
	var th record.Thermal
	found, err := record.ReadJSON(dir, test, record.ThermalExt, &th)
	require.NoError(t, err)
	require.True(t, found, "the heat findings are kept")
	require.Equal(t, "/dev/nvme0n1: throttled", th.Throttled)
	var l record.Link
	found, err = record.ReadJSON(dir, test, record.LinkExt, &l)
	require.NoError(t, err)
	require.True(t, found, "the PCIe findings are kept")
	var cpu record.CPU
	found, err = record.ReadJSON(dir, test, record.CPUExt, &cpu)
	require.NoError(t, err)
	require.True(t, found, "the CPU load is kept")
	require.Equal(t, 96, cpu.N)
}

// A cell is listed in run.json with the sha256 of each of its files; a
// rewrite of run.json that fails rolls the listing back, so that the next
// rewrite does not list the cell whose listing failed.
func TestRecordedListsWithHashesAndRollsBack(t *testing.T) {
	dir := t.TempDir()
	const a, b = "TestSingleDrive/64MiB/4KB_Random_Read", "TestSingleDrive/64MiB/4KB_Random_Write"
	for _, test := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Dir(record.Base(dir, test)), 0o755))
		require.NoError(t, os.WriteFile(record.Base(dir, test)+record.OutputExt, []byte(`{"jobs": []}`+test), 0o644))
		require.NoError(t, os.WriteFile(record.Base(dir, test)+record.JobExt, []byte("[global]\n"), 0o644))
	}
	r := &Recorder{dir: dir}
	require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))

	// run.json cannot be replaced: its path is taken by a directory.
	path := filepath.Join(dir, "run.json")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.MkdirAll(filepath.Join(path, "taken"), 0o755))
	require.Error(t, r.Recorded(a, ""))
	require.Empty(t, r.info.Tests, "the failed listing is rolled back")
	require.Empty(t, r.info.Files)

	require.NoError(t, os.RemoveAll(path))
	require.NoError(t, r.Recorded(b, ""))
	var onDisk record.Run
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &onDisk))
	require.Equal(t, []string{b}, onDisk.Tests, "only the cell whose listing was saved")
	want, err := record.Hash(record.Base(dir, b) + record.OutputExt)
	require.NoError(t, err)
	require.Equal(t, map[string]string{b + ".json": want, b + ".fio": onDisk.Files[b+".fio"]}, onDisk.Files)
	require.Len(t, onDisk.Files[b+".fio"], 64)
	changed, err := record.Check(dir, onDisk)
	require.NoError(t, err)
	require.Empty(t, changed)

	// Measured again: unlisted with its hashes first.
	require.NoError(t, r.Forget(b))
	require.Empty(t, r.info.Tests)
	require.Empty(t, r.info.Files)
}

// A step's files under prepare/ are listed with their sha256 once it
// ends; files already listed are not hashed again unless rewritten on
// purpose (the health logs at the end of a run).
func TestLanded(t *testing.T) {
	dir := t.TempDir()
	r := &Recorder{dir: dir}
	require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
	prep := filepath.Join(dir, "prepare")
	require.NoError(t, os.MkdirAll(prep, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prep, "002-fill.json"), []byte("fill"), 0o644))
	require.NoError(t, r.Landed("prepare", false))
	first := r.info.Files["prepare/002-fill.json"]
	require.NotEmpty(t, first)
	require.NoError(t, os.WriteFile(filepath.Join(prep, "002-fill.json"), []byte("edited"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(prep, "003-verify.json"), []byte("verify"), 0o644))
	require.NoError(t, r.Landed("prepare", false))
	require.Equal(t, first, r.info.Files["prepare/002-fill.json"], "a listed file is not hashed again")
	require.NotEmpty(t, r.info.Files["prepare/003-verify.json"])
	changed, err := record.Check(dir, r.info)
	require.NoError(t, err)
	require.Len(t, changed, 1)
	require.Equal(t, "prepare/002-fill.json", changed[0].Path)
	require.NoError(t, r.Landed("prepare", true))
	require.NotEqual(t, first, r.info.Files["prepare/002-fill.json"], "rehashed")
}

// A drive marked as being written keeps the mark until a sample after
// the step is recorded, unless the step may still be writing it; every
// rewrite keeps run.json's sha256 beside it.
func TestSampledClearsTheWritingMark(t *testing.T) {
	dir := t.TempDir()
	r := New(dir)
	require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
	require.NoError(t, r.Writing([]int{0, 1}, 2, "1 purge: discard"))
	p := sample.Print{Size: 2 * sample.RegionBytes, Offsets: sample.Offsets(2 * sample.RegionBytes), SHA256: []string{"a", "b"}}
	at := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	require.NoError(t, r.Sampled([]Sample{{Drive: 0, Print: p}, {Drive: 1, Print: p}}, 2, "1 purge: discard", true, at))
	require.NoError(t, r.Sampled([]Sample{{Drive: 0, Print: p}, {Drive: 1, Err: errors.New("EIO")}}, 2, "2 verify: verify pass", false, at))
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	require.NoError(t, err)
	var got record.Run
	require.NoError(t, json.Unmarshal(data, &got))
	require.NotNil(t, got.Samples)
	require.Len(t, got.Samples.Drives, 2)
	d0, d1 := got.Samples.Drives[0], got.Samples.Drives[1]
	require.Equal(t, "", d0.Writing, "read back after the purge ended")
	require.Equal(t, "1 purge: discard", d0.Wrote)
	require.Equal(t, "2 verify: verify pass", d0.After)
	require.Equal(t, "1 purge: discard", d1.Writing, "its sample did not read: the mark stays")
	require.Equal(t, "EIO", d1.Error)
	pr, ok := got.Samples.Print(0)
	require.True(t, ok)
	require.Equal(t, p, pr)
	_, ok = got.Samples.Print(1)
	require.False(t, ok)
	c, kept, err := record.CheckRun(dir)
	require.NoError(t, err)
	require.True(t, kept)
	require.Nil(t, c, "run.json as its sum file says")
}
