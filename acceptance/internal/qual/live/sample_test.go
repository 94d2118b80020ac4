package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/device/sample"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/specs"
)

// fillExec writes its step's drives (regular files) through, as a fill
// would, reading run.json as the step starts; err fails it after.
type fillExec struct {
	seenExec
	err error
}

func (e *fillExec) Prepare(_ context.Context, st plan.Step, drives []plan.Drive, _ func(string, ...any), _ *Watch) (Prepared, error) {
	data, err := os.ReadFile(filepath.Join(e.dir, "run.json"))
	if err == nil {
		_ = json.Unmarshal(data, &e.seen)
	}
	for _, d := range st.Drives {
		if err := os.WriteFile(drives[d].Path, bytes.Repeat([]byte{byte(st.N)}, int(drives[d].Size)), 0o644); err != nil {
			return Prepared{}, err
		}
	}
	return Prepared{}, e.err
}

// Each drive's data sample is in run.json from setup on; a step that
// writes a drive marks it being written before it starts, and the
// sample read after it replaces the mark, naming the step; a step that
// fails keeps the mark (what it left is not known to be whole), and a
// drive no step touched keeps its sample.
func TestSamplesRecordedAroundEachStep(t *testing.T) {
	dir := t.TempDir()
	size := int64(8 * sample.RegionBytes)
	var drives []plan.Drive
	for _, name := range []string{"a.img", "b.img"} {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, make([]byte, size), 0o644))
		drives = append(drives, plan.Drive{Info: device.Info{Path: p, Name: name, Size: size}})
	}
	for _, tt := range []struct {
		name    string
		err     error
		writing string // drive 0's mark after the step
	}{
		{"fill", nil, ""},
		{"fill fails", errors.New("fio: job drive0: errno 5 (Input/output error)"), "1 fill: sequential fill"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			exec := &fillExec{seenExec: seenExec{dir: dir}, err: tt.err}
			r := &Runner{Spec: &specs.Spec{}, Drives: drives, Planner: &plan.Planner{}, Exec: exec, Record: dir, Sink: nopSink{},
				Monitor: NewMonitor(nvme.CLI{}, drives, specs.Health{}, []evidence.DriveHealth{{Skip: "no log"}, {Skip: "no log"}}),
				Plan:    plan.Plan{Steps: []plan.Step{{N: 1, Kind: plan.StepFill, Name: "sequential fill", Drives: []int{0}}}}}
			for _, d := range drives {
				require.NoError(t, os.WriteFile(d.Path, make([]byte, size), 0o644))
			}
			require.NoError(t, r.Start(record.Run{Format: record.Format, Mode: "record"}))
			setup, ok := readRunJSON(t, dir)
			require.True(t, ok)
			for d := range drives {
				p, ok := setup.Samples.Print(d)
				require.True(t, ok, "drive %d sampled at setup", d)
				require.True(t, p.Zeros(), "drive %d blank at setup", d)
			}
			r.runTo(context.Background(), 0, t.Logf)
			seen := exec.seen.Samples.Drives
			require.Equal(t, "1 fill: sequential fill", seen[0].Writing, "marked before the fill's first write")
			require.Equal(t, "", seen[1].Writing, "drive 1 is not the step's")

			after, ok := readRunJSON(t, dir)
			require.True(t, ok)
			got := after.Samples.Drives
			require.Equal(t, tt.writing, got[0].Writing)
			require.Equal(t, "1 fill: sequential fill", got[0].Wrote)
			now, err := sample.Read(drives[0].Path, size, false)
			require.NoError(t, err)
			rec, _ := after.Samples.Print(0)
			require.Nil(t, sample.Compare(rec, now), "the sample recorded after the fill is what drive 0 holds")
			require.False(t, rec.Zeros())
			rec1, _ := after.Samples.Print(1)
			require.True(t, rec1.Zeros(), "drive 1 as it was")
			require.Equal(t, "", got[1].Wrote)
			require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7}, func() []int64 {
				var b []int64
				for _, o := range after.Samples.Offsets[size] {
					b = append(b, o/sample.RegionBytes)
				}
				return b
			}(), "the offsets, once for the drives' size")
		})
	}
}
