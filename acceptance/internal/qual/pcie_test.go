package qual

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// backplane is the device package's fake 24-drive, 128-CPU host
// (acceptance/internal/device/testdata/backplane.tree): four switches of
// six drives, nvme0-5 below switch port 0000:01:00.0, nvme6-11 below
// 0000:09:00.0, nvme12-17 below 0000:81:00.0, nvme18-23 below 0000:89:00.0,
// every link at 16.0 GT/s, x4 to a drive and x16 up.
func backplane(t testing.TB) device.System {
	t.Helper()
	return device.System{Root: testenv.BuildTree(t, filepath.Join("..", "device", "testdata", "backplane.tree"))}
}

// retrain rewrites the current link of PCI function fn in sys.
func retrain(t *testing.T, sys device.System, fn, speed string, width int) {
	t.Helper()
	var dir string
	require.NoError(t, filepath.WalkDir(filepath.Join(sys.Root, "sys", "devices"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == fn {
			dir = path
			return filepath.SkipAll
		}
		return err
	}))
	require.NotEmpty(t, dir, fn)
	if speed != "Unknown" {
		speed += " GT/s PCIe"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "current_link_speed"), []byte(speed+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "current_link_width"), []byte(strconv.Itoa(width)+"\n"), 0o644))
}

// uplink sets both ends of switch 1's uplink (its upstream port and the
// root port above it) to speed and width.
func uplink(t *testing.T, sys device.System, speed string, width int) {
	retrain(t, sys, "0000:09:00.0", speed, width)
	retrain(t, sys, "0000:00:02.0", speed, width)
}

func span(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// A single-drive cell on a drive whose switch uplink bounds it is
// INCONCLUSIVE naming the switch port and the drives below it, and the
// finding is recorded for a replay; the drives table shows the uplink. A
// link that reads Unknown leaves the cell judged and is in its evidence
// and the drives table.
func TestPCIeUplinkCell(t *testing.T) {
	for _, tt := range []struct {
		name    string
		setup   func(t *testing.T, sys device.System)
		want    [2]string
		error   string
		unknown string
		table   string
	}{
		{"uplink at x2", func(t *testing.T, sys device.System) { uplink(t, sys, "8.0", 2) }, [2]string{report.Inconclusive, report.CausePCIeLink},
			"/tmp/fake.img: PCIe link 8.0 GT/s x2 at switch port 0000:09:00.0 (upstream of 1 drive) of 16.0 GT/s x16", "",
			"16.0 GT/s x4 (of 16.0 GT/s x4); switch port 0000:09:00.0: 8.0 GT/s x2 (of 16.0 GT/s x16)"},
		{"uplink at its maximum, Gen3 x4", func(t *testing.T, sys device.System) { atMost(t, sys, "8.0", 4) }, [2]string{report.Inconclusive, report.CausePCIeLink},
			"/tmp/fake.img: PCIe link 8.0 GT/s x4 at switch port 0000:09:00.0 (upstream of 1 drive) of 8.0 GT/s x4: at its maximum, 3.94 GB/s, short of the 7.88 GB/s of one drive's 16.0 GT/s x4", "",
			"16.0 GT/s x4 (of 16.0 GT/s x4); switch port 0000:09:00.0: 8.0 GT/s x4 (of 8.0 GT/s x4)"},
		{"uplink unknown", func(t *testing.T, sys device.System) {
			retrain(t, sys, "0000:09:00.0", "Unknown", 16)
			retrain(t, sys, "0000:00:02.0", "Unknown", 16)
		}, [2]string{report.Pass, ""}, "",
			`/tmp/fake.img: PCIe link at switch port 0000:09:00.0 not checked: current_link_speed of 0000:09:00.0 reads "Unknown"`,
			`16.0 GT/s x4 (of 16.0 GT/s x4); switch port 0000:09:00.0: Unknown (current_link_speed of 0000:09:00.0 reads "Unknown")`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
			s := liveSuiteOf(t, exec, fakeSpec)
			s.runner.Sys = backplane(t)
			tt.setup(t, s.runner.Sys)
			s.Drives[0].Controller = "nvme7"
			c := s.SingleCells()[0].Cells[0]
			o, err := s.Run(context.Background(), c, t.Logf)
			require.NoError(t, err)
			require.Equal(t, tt.want, [2]string{o.Result.Verdict, o.Result.Cause}, o.Result.Error)
			assert.Contains(t, o.Result.Error, tt.error)
			var rec record.Link
			found, err := record.ReadJSON(exec.dir, c.Test, record.LinkExt, &rec)
			require.NoError(t, err)
			require.True(t, found)
			if tt.error != "" {
				assert.Contains(t, rec.Degraded, tt.error, "recorded for a replay to judge")
			}
			assert.Equal(t, tt.unknown, rec.Unknown, "the cell's evidence names the unknown link")
			assert.Contains(t, o.Message, tt.unknown, "and so does its message")
			(&builder{sys: s.runner.Sys, live: true, s: s}).reportDrives()
			require.Len(t, s.Report.Drives, 1)
			assert.Equal(t, "0000:0c:00.0", s.Report.Drives[0].PCI)
			assert.Equal(t, tt.table, s.Report.Drives[0].Link)
		})
	}
}

// A fabrics controller (its device link is nvme-fabrics' "ctl", no PCI
// function) has no PCIe path: the drives table leaves its link empty and
// the run goes on.
func TestFillReportDrivesFabrics(t *testing.T) {
	exec := &fakeExec{stdout: fixture(t, "randread-8jobs-group.json"), rounds: steadyRounds}
	s := liveSuiteOf(t, exec, fakeSpec)
	s.runner.Sys = device.System{Root: testenv.BuildTree(t, filepath.Join("..", "device", "testdata", "pcie.tree"))}
	s.Drives[0].Controller = "nvme2"
	require.NotPanics(t, (&builder{sys: s.runner.Sys, live: true, s: s}).reportDrives)
	require.Len(t, s.Report.Drives, 1)
	assert.Empty(t, s.Report.Drives[0].PCI)
	assert.Empty(t, s.Report.Drives[0].Link)
	o, err := s.Run(context.Background(), s.SingleCells()[0].Cells[0], t.Logf)
	require.NoError(t, err)
	assert.Equal(t, report.Pass, o.Result.Verdict, "no PCIe path: nothing bounds the cell: %s", o.Message)
}

// atMost sets both ends of switch 1's uplink to speed and width, current
// and maximum alike: a link that trained to all it can, in a slot (or
// behind a root port) narrower or slower than the switch.
func atMost(t *testing.T, sys device.System, speed string, width int) {
	t.Helper()
	uplink(t, sys, speed, width)
	for _, fn := range []string{"0000:09:00.0", "0000:00:02.0"} {
		var dir string
		require.NoError(t, filepath.WalkDir(filepath.Join(sys.Root, "sys", "devices"), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == fn {
				dir = path
				return filepath.SkipAll
			}
			return err
		}))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "max_link_speed"), []byte(speed+" GT/s PCIe\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "max_link_width"), []byte(strconv.Itoa(width)+"\n"), 0o644))
	}
}
