package recording

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
	"github.com/drivequal/drivequal/specs"
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
		{"a CPU past the sidecar's", []string{"0-15", "16-32"}, []string{"", ""}},
		{"a CPU number past any", []string{"0", "9223372036854775807"}, []string{"", ""}},
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

// A CPU sidecar's CPUs are a CPU list of n CPUs, or the cell is judged
// without its CPUs' figures, as a live run that could not read them is:
// an edited list neither reaches a verdict's message nor hangs the judge.
func TestCheckedCPU(t *testing.T) {
	for _, tc := range []struct {
		in      record.CPU
		targets int
		want    record.CPU
	}{
		{record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", "3,2"}}, 2, record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", "2-3"}}},
		{record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", ""}}, 2, record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", ""}}},
		{record.CPU{CPUs: "0,1,2,3", N: 4, Busy: 0.5}, 1, record.CPU{CPUs: "0-3", N: 4, Busy: 0.5}},
		{record.CPU{CPUs: "0-3", N: 3, Busy: 0.5}, 1, record.CPU{}},
		{record.CPU{CPUs: "0-3 <script>", N: 4, Busy: 0.5}, 1, record.CPU{}},
		{record.CPU{CPUs: "9223372036854775807", N: 1, Busy: 0.5}, 1, record.CPU{}},
		// A CPU outside the sidecar's, CPUs of it no list names (a drive
		// pinned to fewer CPUs than fio had: "jobs sharing their CPUs"),
		// one list too many: no pinned lists.
		{record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", "4"}}, 2, record.CPU{CPUs: "0-3", N: 4, Busy: 0.5}},
		{record.CPU{CPUs: "0-15", N: 16, Busy: 0.5, Pinned: []string{"0"}}, 1, record.CPU{CPUs: "0-15", N: 16, Busy: 0.5}},
		{record.CPU{CPUs: "0-3", N: 4, Busy: 0.5, Pinned: []string{"0-1", "2-3"}}, 1, record.CPU{CPUs: "0-3", N: 4, Busy: 0.5}},
	} {
		if diff := cmp.Diff(tc.want, checkedCPU(tc.in, tc.targets)); diff != "" {
			t.Errorf("checkedCPU(%+v, %d) (-want +got):\n%s", tc.in, tc.targets, diff)
		}
	}
}

// Many lists, each of every CPU Linux numbers, are counted against the
// targets before any is read: judging the cell takes no time.
func TestCheckedCPUCountsFirst(t *testing.T) {
	lists := make([]string, 2000)
	for i := range lists {
		lists[i] = "0-65535"
	}
	done := make(chan record.CPU)
	go func() { done <- checkedCPU(record.CPU{CPUs: "0-3", N: 4, Pinned: lists}, 2) }()
	select {
	case c := <-done:
		if c.Pinned != nil {
			t.Errorf("pinned lists kept: %d", len(c.Pinned))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("2,000 pinned lists of 65,536 CPUs each were read before being counted")
	}
}

// A cell whose output is on disk but which run.json does not list was
// cut off between its files and its listing (a kill in that window): a
// resume does not keep it, and a replay does not judge it from its
// output either, but as the resume did: not measured, for its drive's
// failure when the drive failed, else as not recorded whole.
func TestUnlistedOutputIsNotJudged(t *testing.T) {
	const listed, cut = "TestSingleDrive/64MiB/W", "TestScaling/2_drives/W"
	dir := t.TempDir()
	for _, test := range []string{listed, cut} {
		p := filepath.Join(dir, filepath.FromSlash(test)+record.OutputExt)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	loops := []plan.Drive{{Info: device.Info{Path: "/dev/loop0"}}, {Info: device.Info{Path: "/dev/loop1"}}}
	planner := &plan.Planner{Spec: &specs.Spec{}, Runtime: time.Second, Drives: loops}
	read := func(info record.Run, test string, drives ...int) *evidence.Measured {
		r := &Reader{Dir: dir, Info: info, Drives: loops, Planner: planner, Cells: func() []plan.Cell { return nil }}
		return r.Cell(t.Context(), plan.Cell{Test: test, Drives: drives}, t.Logf)
	}
	info := record.Run{Format: 2, Tests: []string{listed}}
	if m := read(info, listed, 0); m.NotRun != "" || m.RunErr != nil {
		t.Errorf("%s, listed: not judged from its output: %+v", listed, m)
	}
	m := read(info, cut, 0, 1)
	if m.Cause != report.CauseNotRecorded || !strings.Contains(m.NotRun, "does not list it") {
		t.Errorf("%s, unlisted: %q (%s), want not recorded whole", cut, m.NotRun, m.Cause)
	}
	info.Failures = []record.DriveFailure{{Drive: 1, Path: "/dev/loop1", Cause: report.CauseIOError, Test: cut, Step: "a measurement (" + cut + ")", At: "2026-12-04T08:06:24Z", Message: "errno 5"}}
	m = read(info, cut, 0, 1)
	if m.Cause != report.CauseIOError || !strings.Contains(m.NotRun, "/dev/loop1 failed a measurement") {
		t.Errorf("%s, unlisted, its drive failed: %q (%s), want not measured for the drive's failure", cut, m.NotRun, m.Cause)
	}
	// Listed in files alone (its sha256), not in tests: not listed.
	files := record.Run{Format: 2, Tests: []string{listed}, Files: map[string]string{cut + record.OutputExt: "0"}}
	if m := read(files, cut, 0, 1); m.Cause != report.CauseNotRecorded {
		t.Errorf("%s, in files alone: %q (%s), want not recorded whole", cut, m.NotRun, m.Cause)
	}
	// No cell listed yet (killed at the first): none is judged from disk.
	if m := read(record.Run{Format: 3, Mode: "record"}, cut, 0, 1); m.Cause != report.CauseNotRecorded {
		t.Errorf("%s, nothing listed yet: %q (%s), want not recorded", cut, m.NotRun, m.Cause)
	}
	// A recording from before run.json listed its cells is read from disk.
	if m := read(record.Run{}, cut, 0, 1); m.NotRun != "" || m.RunErr != nil {
		t.Errorf("%s, no list: not judged from its output: %+v", cut, m)
	}
}
