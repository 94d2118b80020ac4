package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
)

// A drive that disappeared mid-run is not read after the run (another
// drive may be at its path now): its health is lost and TestHealth fails
// it, saying why, live and in a replay of the recording; the other drive
// is read and judged (real nvme-cli 2.3 output, fixtures/nvme).
func TestAVanishedDriveFailsItsHealth(t *testing.T) {
	smart, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "nvme", "smart-log-v2.3-quoted-decimal.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	log := filepath.Join(dir, "nvme.log")
	out := filepath.Join(dir, "smart.json")
	require.NoError(t, os.WriteFile(out, smart, 0o644))
	fake := filepath.Join(dir, "nvme")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"$*\" >>"+log+"\ncat "+out+"\n"), 0o755))

	l, err := nvme.ParseSmartLog(smart)
	require.NoError(t, err)
	drives := []plan.Drive{{Info: device.Info{Path: "/dev/nvme2n1", Block: true}}, {Info: device.Info{Path: "/dev/nvme3n1", Block: true}}}
	m := NewMonitor(nvme.CLI{Binary: fake}, drives, specs.Health{}, nil)
	for i := range m.health { // as ReadHealth read them at setup
		m.health[i].Before, m.health[i].Last = l, l
		m.raw[fmt.Sprintf("%d.before", i)] = smart
	}
	why := "/dev/nvme3n1 disappeared during TestScaling/2_drives/128KB_Sequential_Write (noticed at 02:40:10): its device node /dev/nvme3n1 is gone"
	got := m.after(context.Background(), map[int]string{1: why})
	sent, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(sent), "smart-log /dev/nvme2n1 -o json\n", "the other drive is read")
	require.NotContains(t, string(sent), "/dev/nvme3n1", "nothing is read at the vanished drive's path")
	require.Contains(t, got[1].Lost, "/dev/nvme3n1: its health log could not be read after the run")
	require.Contains(t, got[1].Lost, why)

	judge := func(of []evidence.DriveHealth) []verdict.HealthDrive {
		hd, _ := verdict.Health(drives, of, specs.Health{})
		return hd
	}
	check := func(hd []verdict.HealthDrive, from string) {
		require.Len(t, hd, 2, from)
		require.Empty(t, hd[1].Skip, "%s: a vanished drive's health is not skipped", from)
		require.Len(t, hd[1].Checks, 1, from)
		require.Equal(t, verdict.LostCheck, hd[1].Checks[0].Name, from)
		require.Equal(t, health.Fail, hd[1].Checks[0].Verdict, from)
		require.Contains(t, hd[1].Checks[0].Message, why, from)
		require.NotEmpty(t, hd[0].Checks, "%s: the other drive is judged", from)
		for _, c := range hd[0].Checks {
			require.NotEqual(t, verdict.LostCheck, c.Name, from)
		}
	}
	check(judge(got), "live")

	// The recording keeps it: a replay fails the drive the same way.
	skips, lost, temps := m.skips()
	require.Equal(t, []string{"", got[1].Lost}, lost)
	rec := t.TempDir()
	require.NoError(t, m.keep(rec, false))
	r := &recording.Reader{Dir: rec, Drives: drives, Info: record.Run{HealthSkips: skips, HealthLost: lost, MaxTempK: temps}}
	replayed, why2 := r.Health(context.Background())
	require.Empty(t, why2)
	check(judge(replayed), "replay")
	require.False(t, strings.Contains(replayed[1].Skip, "no health log"), replayed[1].Skip)
}

// fileDrives are drives that are regular files, created empty in a
// directory of their own under the names given.
func fileDrives(t *testing.T, names ...string) []plan.Drive {
	t.Helper()
	dir := t.TempDir()
	var drives []plan.Drive
	for _, name := range names {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		drives = append(drives, plan.Drive{Info: device.Info{Path: p}})
	}
	return drives
}

// heldStandin is a Guard that holds nothing: the drives are regular
// files, checked for having disappeared by device.System.Gone.
type heldStandin struct{}

func (heldStandin) Recheck(device.Info) error { return nil }
func (heldStandin) Discard(string) error      { return nil }
func (heldStandin) Close() error              { return nil }

// A drive that disappeared mid-run is written to run.json's failures as
// it is noticed: a resume after a reboot that brings it back (matched by
// its identity) fails its remaining cells and its health with it, rather
// than measuring it afresh as if it had never gone.
func TestAVanishedDriveIsRecordedAsItHappens(t *testing.T) {
	rec, drives := t.TempDir(), fileDrives(t, "drive0.img", "drive1.img")
	r := &Runner{Drives: drives, Record: rec, Spec: &specs.Spec{}, Planner: &plan.Planner{}, Guard: heldStandin{}}
	r.init()
	require.NoError(t, r.rec.Start(record.Run{}))
	require.NoError(t, os.Remove(drives[1].Path))

	why := r.drives.vanished([]int{0, 1}, "during TestScaling/2_drives/128KB_Sequential_Write")
	require.Contains(t, why, drives[1].Path+" disappeared")
	data, err := os.ReadFile(filepath.Join(rec, "run.json"))
	require.NoError(t, err)
	var run record.Run
	require.NoError(t, json.Unmarshal(data, &run))
	require.Len(t, run.Failures, 1, "run.json: %s", data)
	f := run.Failures[0]
	require.Equal(t, 1, f.Drive)
	require.Equal(t, report.CauseDriveChanged, f.Cause)
	require.Contains(t, f.Message, "disappeared during TestScaling/2_drives/128KB_Sequential_Write")

	// Noticed again (by the end of the run): recorded once.
	r.drives.lost()
	require.Len(t, r.Failures(), 1)
}

// preparedWith is an executor that records the drives of each
// preparation step it is given and runs nothing.
type preparedWith struct{ drives *[][]int }

func (p preparedWith) Measure(context.Context, string, fiojob.Job, *Watch) ([]byte, error) {
	return nil, nil
}

func (p preparedWith) RawPath(string) string { return "" }

func (p preparedWith) Prepare(_ context.Context, st plan.Step, _ []plan.Drive, _ func(string, ...any), _ *Watch) (Prepared, error) {
	*p.drives = append(*p.drives, slices.Clone(st.Drives))
	return Prepared{}, nil
}

// A drive pulled late in a step, its node still there when that step
// ended (a guest's kernel removes a hot-unplugged controller seconds
// after the fact), is found gone before the next step: it is left out
// of that step, which goes on with the other drive, and it fails as
// disappeared, recorded so in run.json as one noticed during a step is.
func TestADriveGoneBeforeAStepIsRecordedAsDisappeared(t *testing.T) {
	rec, drives := t.TempDir(), fileDrives(t, "drive0.img", "drive1.img")
	spec, err := specs.Load("solidigm-d7-ps1010")
	require.NoError(t, err)
	var got [][]int
	r := &Runner{Drives: drives, Record: rec, Spec: spec, Planner: &plan.Planner{Spec: spec, Drives: drives}, Guard: heldStandin{}, Exec: preparedWith{&got}}
	r.init()
	require.NoError(t, r.rec.Start(record.Run{}))
	require.NoError(t, os.Remove(drives[1].Path))

	st := plan.Step{N: 3, Kind: plan.StepVerify, Name: "verify pass", Drives: []int{0, 1}}
	r.execStep(context.Background(), &st, func(string, ...any) {})
	require.Equal(t, [][]int{{0}}, got, "the step runs on the drive still there")
	fs := r.Failures()
	require.Len(t, fs, 1)
	require.Equal(t, 1, fs[0].Drive)
	require.Equal(t, report.CauseDriveChanged, fs[0].Cause)
	require.Contains(t, fs[0].Message, drives[1].Path+" disappeared before verify pass")
	require.Contains(t, r.drives.changed(1), "disappeared before verify pass")
}
