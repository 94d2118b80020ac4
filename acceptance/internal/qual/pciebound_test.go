package qual

import (
	"context"
	"encoding/json"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// gen5Spec is a Gen5 x4 drive's figures at a 1GiB capacity (the sequential
// read is the D7-PS1010's 14,500 MB/s; the random read 1,000,000 IOPS,
// 4.1 GB/s a drive), scaled on 1 and 6 drives against the spec.
const gen5Spec = `model  = "Gen5"
source = "drivequal test data"

[method]
runtime = "1s"

[precondition]
purge          = "discard"
fill_passes    = 1
random_runtime = "2s"
steady_round   = "200ms"

[[workload]]
name    = "4KB Random Read"
rw      = "randread"
bs      = "4k"
iodepth = 4
numjobs = 8
metric  = "iops"

[[workload]]
name    = "128KB Sequential Read"
rw      = "read"
bs      = "128k"
iodepth = 32
numjobs = 1
metric  = "MBps"

[[capacity]]
name  = "1GiB"
bytes = 1073741824
[capacity.spec]
"4KB Random Read"       = 1_000_000
"128KB Sequential Read" = 14_500

[scaling]
capacity  = "1GiB"
drives    = [1, 6]
baseline  = "spec"
tolerance = 0.1
`

// gen5 retrains every link of sys to 32.0 GT/s, current and maximum: the
// backplane as a Gen5 host, each switch's x16 uplink 63.0 GB/s over six
// x4 drives of 15.8 GB/s each.
func gen5(t *testing.T, sys device.System) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(filepath.Join(sys.Root, "sys", "devices"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || (d.Name() != "current_link_speed" && d.Name() != "max_link_speed") {
			return err
		}
		return os.WriteFile(path, []byte("32.0 GT/s PCIe\n"), 0o644)
	}))
}

// outputs is a fakeExec whose measurement prints the output its step's
// owner has in out (fakeExec.stdout for the others), and keeps it as the
// live run records it.
type outputs struct {
	*fakeExec
	out map[string][]byte
}

func (o outputs) Measure(ctx context.Context, test string, job fiojob.Job, w *live.Watch) ([]byte, error) {
	if data, ok := o.out[test]; ok {
		o.stdout = data
	}
	stdout, err := o.fakeExec.Measure(ctx, test, job, w)
	if err == nil {
		if err := os.MkdirAll(filepath.Dir(o.RawPath(test)), 0o755); err != nil {
			return nil, err
		}
		err = os.WriteFile(o.RawPath(test), stdout, 0o644)
	}
	return stdout, err
}

// lotPaths are the drives of fixtures/lot-6-drives' 6-drive step.
func lotPaths(t *testing.T) []string {
	t.Helper()
	var info record.Run
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives", "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	var paths []string
	for _, d := range info.Drives {
		if d.Capacity == "64MiB" {
			paths = append(paths, d.Path)
		}
	}
	require.Len(t, paths, 6)
	return paths
}

// lotReadAt is the recorded 6-drive sequential read (fixtures/lot-6-drives)
// with each drive's figure set to mbps (edited: io_bytes scaled).
func lotReadAt(t *testing.T, mbps float64) []byte {
	t.Helper()
	dir := lotCopy(t, "edited")
	setDriveFigures(t, dir, lotRead, []float64{mbps, mbps, mbps, mbps, mbps, mbps})
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(lotRead)+".json"))
	require.NoError(t, err)
	return data
}

// gen5Suite is a live suite of gen5Spec on the backplane's switch 1 as a
// Gen5 host: six drives named as the recorded lot's (so that a replay of
// that recording can be judged with this run's PCIe findings), on
// controllers nvme6-nvme11, below switch port 0000:09:00.0.
func gen5Suite(t *testing.T, exec *fakeExec, out map[string][]byte) *Suite {
	t.Helper()
	spec, err := specs.Parse("gen5.toml", []byte(gen5Spec))
	require.NoError(t, err)
	dir := t.TempDir()
	exec.dir = filepath.Join(dir, "raw")
	paths := lotPaths(t)
	var drives []plan.Drive
	for i, p := range paths {
		drives = append(drives, plan.Drive{Info: device.Info{Path: p, Size: 1 << 30, NUMANode: -1, Controller: "nvme" + strconv.Itoa(6+i)}, Capacity: "1GiB"})
	}
	s := testSuite(t, spec, drives, outputs{exec, out}, exec.dir, dir, nil)
	s.runner.Sys = backplane(t)
	gen5(t, s.runner.Sys)
	return s
}

const (
	gen5Read   = "TestScaling/6_drives/128KB_Sequential_Read"
	gen5Random = "TestScaling/6_drives/4KB_Random_Read"
	gen5Hop    = "6 of this cell's drives share switch port 0000:09:00.0, 32.0 GT/s x16 (63.0 GB/s, 56.7 GB/s of data at 90 %): " +
		"87.0 GB/s asked at the spec's 14.5 GB/s a drive, 58.2 GB/s moved: the host's PCIe topology, not the drives, bounds this figure"
)

// A switch uplink at full speed that six Gen5 x4 drives share by design
// (x16, 63.0 GB/s) cannot carry their spec's 14.5 GB/s each: the 6-drive
// sequential read below spec with the uplink full (9.7 GB/s a drive, 58.2
// GB/s through it) is INCONCLUSIVE `pcie bound`, naming the link and the
// arithmetic, not a FAIL blaming the drives; the same cell at spec
// passes, and far below spec with the uplink far from full (3 GB/s a
// drive) still fails. The 4KB random read, 4.1 GB/s a drive, is judged
// (a FAIL below spec), as is a drive alone through the same uplink. A
// replay of the recording judges each the same.
func TestPCIeBoundCells(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mbps  float64
		want  [2]string
		error string
	}{
		{"below spec, the uplink full", 9_700, [2]string{report.Inconclusive, report.CausePCIeBound}, gen5Hop},
		{"at spec", 14_600, [2]string{report.Pass, ""}, ""},
		{"far below spec, the uplink not full", 3_000, [2]string{report.Fail, report.CauseBelowSpec}, "6 of 6 drives below spec 14,500 MB/s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExec{stdout: fixture(t, "seq-read-128k.json"), rounds: steadyRounds}
			s := gen5Suite(t, exec, map[string][]byte{
				gen5Read:                               lotReadAt(t, tt.mbps),
				gen5Random:                             fixture(t, "scale-6x8.json"),
				"TestSingleDrive/1GiB/4KB_Random_Read": fixture(t, "randread-8jobs-group.json"),
			})
			got := map[string]report.Result{}
			for _, c := range s.allCells() {
				if c.Skip != "" {
					continue
				}
				o, err := s.Run(context.Background(), c, t.Logf)
				require.NoError(t, err)
				got[c.Test] = o.Result
			}
			read := got[gen5Read]
			require.Equal(t, tt.want, [2]string{read.Verdict, read.Cause}, read.Error)
			assert.Contains(t, read.Error, tt.error)
			random := got[gen5Random]
			assert.Equal(t, [2]string{report.Fail, report.CauseBelowSpec}, [2]string{random.Verdict, random.Cause}, random.Error)
			assert.NotContains(t, random.Error, "share switch port")
			for _, one := range []string{"TestScaling/1_drives/128KB_Sequential_Read", "TestScaling/1_drives/4KB_Random_Read",
				"TestSingleDrive/1GiB/128KB_Sequential_Read", "TestSingleDrive/1GiB/4KB_Random_Read"} {
				r := got[one]
				assert.Equal(t, [2]string{report.Fail, report.CauseBelowSpec}, [2]string{r.Verdict, r.Cause}, r.Error)
			}

			var rec record.Link
			found, err := record.ReadJSON(exec.dir, gen5Read, record.LinkExt, &rec)
			require.NoError(t, err)
			require.True(t, found, "the shared uplink is kept for a replay")
			require.Len(t, rec.Shared, 1)
			assert.Equal(t, record.SharedLink{Where: "switch port 0000:09:00.0", Speed: 32, Width: 16, Drives: lotPaths(t)}, rec.Shared[0])
			found, err = record.ReadJSON(exec.dir, "TestSingleDrive/1GiB/128KB_Sequential_Read", record.LinkExt, &rec)
			require.NoError(t, err)
			assert.False(t, found, "a drive alone shares no link")

			// The recorded lot, its 6-drive read set to the same figures,
			// judged by the same spec with this run's link findings.
			dir := lotCopy(t, "replay")
			setDriveFigures(t, dir, lotRead, []float64{tt.mbps, tt.mbps, tt.mbps, tt.mbps, tt.mbps, tt.mbps})
			data, err := os.ReadFile(filepath.Join(exec.dir, filepath.FromSlash(gen5Read)+record.LinkExt))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(lotRead)+record.LinkExt), data, 0o644))
			text := strings.Replace(string(lotSpecText(t)), `"128KB Sequential Read"  = 100`, `"128KB Sequential Read"  = 14_500`, 1)
			_, replayed := judgeLotRun(t, writeSpec(t, text), dir)
			r := replayed.results[lotRead]
			require.Equal(t, tt.want, [2]string{r.Verdict, r.Cause}, r.Error)
			assert.Contains(t, r.Error, tt.error)
			if tt.want[0] != report.Pass {
				assert.Equal(t, read.Error, r.Error, "judged the same live and replayed")
			}
		})
	}
}

// lotSpecText is the spec fixtures/lot-6-drives was recorded with.
func lotSpecText(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives", "lot.toml"))
	require.NoError(t, err)
	return data
}

func writeSpec(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen5-lot.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// A recording made before shared links were kept (no "shared" in its
// link.json, or no link.json) judges its cells as it did: the recorded
// 6-drive read, below a 14,500 MB/s spec, fails.
func TestPCIeBoundOldRecording(t *testing.T) {
	dir := lotCopy(t, "old")
	setDriveFigures(t, dir, lotRead, []float64{9_700, 9_700, 9_700, 9_700, 9_700, 9_700})
	text := strings.Replace(string(lotSpecText(t)), `"128KB Sequential Read"  = 100`, `"128KB Sequential Read"  = 14_500`, 1)
	_, replayed := judgeLotRun(t, writeSpec(t, text), dir)
	r := replayed.results[lotRead]
	require.Equal(t, [2]string{report.Fail, report.CauseBelowSpec}, [2]string{r.Verdict, r.Cause}, r.Error)
}
