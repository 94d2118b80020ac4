package recording

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/google/go-cmp/cmp"
)

// A replay's plan is made without the recorded host's CPUs: the CPUs each
// target was pinned to come from the cell's CPU sidecar, when it names a
// CPU list for each; a list that is none, or one too many or too few,
// leaves the plan's targets as they are.
func TestReadTakesTheRecordedPinning(t *testing.T) {
	const test = "TestSingleDrive/1.92TB/4KB_Random_Read"
	job := fiojob.Job{Targets: []fiojob.Target{{Path: "/dev/nvme0n1"}, {Path: "/dev/nvme1n1"}}}
	for _, tc := range []struct {
		name   string
		pinned []string
		want   []string
	}{
		{"recorded", []string{"0-15", "16-31"}, []string{"0-15", "16-31"}},
		{"recorded, one unpinned", []string{"", "3,1,2"}, []string{"", "1-3"}},
		{"before pinned was recorded", nil, []string{"", ""}},
		{"one list for two targets", []string{"0-15"}, []string{"", ""}},
		{"no CPU list", []string{"0-15", "16-31; rm -rf /"}, []string{"", ""}},
		{"more CPUs than Linux numbers", []string{"0-15", strings.Repeat("0-9999,", 1000) + "0"}, []string{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(test)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(test)+record.OutputExt), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := record.WriteJSON(dir, test, record.CPUExt, record.CPU{CPUs: "0-31", N: 32, Busy: 0.5, Pinned: tc.pinned}); err != nil {
				t.Fatal(err)
			}
			m := Read(t.Context(), Files{Dir: dir}, plan.Cell{Test: test}, job)
			var got []string
			for _, tg := range m.Job.Targets {
				got = append(got, tg.CPUs)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets' CPUs (-want +got):\n%s", diff)
			}
			if m.CPU.N != 32 {
				t.Errorf("the sidecar's CPUs: %+v", m.CPU)
			}
		})
	}
	if job.Targets[0].CPUs != "" {
		t.Errorf("Read changed its caller's job: %+v", job.Targets)
	}
}
