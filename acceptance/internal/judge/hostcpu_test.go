package judge

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// fioFixture parses fixtures/fio/name, real fio 3.33 output (see its
// README; scale-24x8-pegged.json is an edited copy, as it says).
func fioFixture(t *testing.T, name string) *fiojob.Output {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "fixtures", "fio", name))
	require.NoError(t, err)
	out, err := fiojob.Parse(data)
	require.NoError(t, err)
	return out
}

// nodeCPUs is the cpus_allowed of the NUMA node of drive i on a two-socket
// host of 192 CPUs in 8 nodes of 24 (as the planner pins drives: each to
// its node's CPUs), for n drives; and the list of all the step's CPUs.
func nodeCPUs(n int) (each []string, all string) {
	for i := range n {
		node := i % 8
		each = append(each, fmt.Sprintf("%d-%d", 24*node, 24*node+23))
	}
	return each, "0-191"
}

func paths(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("/dev/nvme%dn1", i))
	}
	return out
}

// A cell below spec is host-bound when any fio job ran at 95 % of one CPU
// or more, whatever the other CPUs did: on a many-core host a pegged job
// averages to a small share of the CPUs it may use (the figure that used
// to decide), and so does a pegged drive's 8 jobs on its 24-CPU node.
// A cell whose jobs all had headroom is host-bound only when the CPUs
// were busy.
func TestHostBoundPerJob(t *testing.T) {
	each, all := nodeCPUs(24)
	for _, tt := range []struct {
		name    string
		fixture string
		drives  int
		numJobs int
		cpus    string
		n       int
		busy    float64
		want    []string // in the message, in order; nil: not host-bound
		not     []string
	}{
		// One synchronous job in tmpfs, 95.1 % of one CPU, on a 2-CPU host
		// whose other CPU idled: the cell the issue saw FAIL at 49.97 %.
		{name: "one pegged job, 2 CPUs half idle", fixture: "cpu-sync-tmpfs.json", drives: 1, numJobs: 1, cpus: "0-1", n: 2, busy: 0.48,
			want: []string{"fio's 1 job ran at 95.1 % of one CPU, at least 95 % (its user + system time over its runtime), on /dev/nvme0n1",
				"; the CPUs fio was allowed, 0-1 (2), were 48 % busy: the host, not the drive"}},
		// 24 drives × 8 jobs on their nodes' CPUs: drive 5's 8 jobs and 3
		// of drive 17's at 99.7 % of one CPU each, on a host 34 % busy.
		{name: "24 drives x 8 jobs, 11 pegged", fixture: "scale-24x8-pegged.json", drives: 24, numJobs: 8, cpus: all, n: 192, busy: 0.34,
			want: []string{"11 of fio's 192 jobs ran at 95 % of one CPU or more, the busiest at 99.7 % (user + system time over its runtime) on /dev/nvme5n1, CPUs 120-143",
				"were 34 % busy"}},
		// The same run as fio recorded it: every job below 1 % of a CPU.
		{name: "24 drives x 8 jobs, headroom", fixture: "scale-24x8.json", drives: 24, numJobs: 8, cpus: all, n: 192, busy: 0.34},
		// 3 drives × 8 jobs sharing 2 CPUs: each job a few % of one CPU,
		// the CPUs saturated: host-bound by the CPUs' figure alone.
		{name: "3 drives x 8 jobs on 2 busy CPUs", fixture: "cpu-3x8-tmpfs.json", drives: 3, numJobs: 8, cpus: "0-1", n: 2, busy: 0.99,
			want: []string{"fio's 24 jobs on CPUs 0-1 (2) were 99 % busy"}, not: []string{"of one CPU"}},
		{name: "3 drives x 8 jobs, headroom", fixture: "cpu-3x8-tmpfs.json", drives: 3, numJobs: 8, cpus: "0-1", n: 2, busy: 0.60},
		{name: "3 groups of 8 jobs on 2 busy CPUs", fixture: "cpu-3x8-tmpfs-group.json", drives: 3, numJobs: 8, cpus: "0-1", n: 2, busy: 0.99,
			want: []string{"fio's 24 jobs on CPUs 0-1 (2) were 99 % busy"}, not: []string{"of one CPU"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := fioFixture(t, tt.fixture)
			total := out.Total()
			cpus := each[:tt.drives]
			if tt.n == 2 {
				cpus = nil
			}
			h := HostCPU(tt.cpus, tt.n, tt.busy, total.CPUSeconds, total.Runtime.Seconds(), tt.numJobs*tt.drives,
				DrivesCPU(out, paths(tt.drives), cpus, tt.numJobs))
			require.NotNil(t, h)
			require.Len(t, h.PerDrive, tt.drives)
			got := HostBound(h)
			if tt.want == nil {
				assert.Empty(t, got, "JobMaxPct %.1f, FioPct %.1f", h.JobMaxPct, h.FioPct)
				assert.Less(t, h.JobMaxPct, float64(HostBoundPct))
				return
			}
			last := 0
			for _, w := range tt.want {
				i := strings.Index(got[last:], w)
				if !assert.GreaterOrEqual(t, i, 0, "%q\nin %q", w, got) {
					break
				}
				last += i + len(w)
			}
			for _, n := range tt.not {
				assert.NotContains(t, got, n)
			}
			assert.True(t, strings.HasSuffix(got, "give the drive more CPUs or a faster host"), got)
		})
	}
}

// The figures per drive: the busiest job, the jobs' mean (their CPU time
// over their runtime) and how many were at the limit. The figure:
// under the old rule the one pegged job read as its share of 2 CPUs.
func TestDrivesCPU(t *testing.T) {
	out := fioFixture(t, "cpu-sync-tmpfs.json")
	d := DrivesCPU(out, []string{"/dev/shm/f"}, nil, 1)
	require.Len(t, d, 1)
	assert.InDelta(t, 95.1, d[0].MaxPct, 1e-9) // usr_cpu 27.7 + sys_cpu 67.4
	assert.InDelta(t, 95.1, d[0].MeanPct, 1e-9)
	assert.Equal(t, report.DriveCPU{Drive: "/dev/shm/f", Jobs: 1, MaxPct: d[0].MaxPct, MeanPct: d[0].MeanPct, AtLimit: 1}, d[0])
	total := out.Total()
	h := HostCPU("0-1", 2, 0.5, total.CPUSeconds, total.Runtime.Seconds(), 1, d)
	assert.InDelta(t, 47.55, h.FioPct, 0.05, "the old figure: the job's share of both CPUs")
	assert.InDelta(t, 95.1, h.JobMaxPct, 1e-9)
	assert.Equal(t, 1, h.JobsAtLimit)

	pegged := fioFixture(t, "scale-24x8-pegged.json")
	each, _ := nodeCPUs(24)
	ds := DrivesCPU(pegged, paths(24), each, 8)
	require.Len(t, ds, 24)
	assert.Equal(t, 8, ds[5].AtLimit)
	assert.Equal(t, 3, ds[17].AtLimit)
	assert.InDelta(t, 99.7, ds[17].MaxPct, 1e-9)
	assert.Equal(t, "120-143", ds[5].CPUs)
	for i, x := range ds {
		assert.Equal(t, 8, x.Jobs, "drive %d", i)
		assert.False(t, x.Grouped)
	}

	// group_reporting: one entry per drive, its usr_cpu fio's mean over
	// the group's jobs, standing for all 8.
	group := fioFixture(t, "cpu-3x8-tmpfs-group.json")
	gs := DrivesCPU(group, paths(3), nil, 8)
	require.Len(t, gs, 3)
	for i, x := range gs {
		e := group.Jobs[i]
		assert.True(t, x.Grouped)
		assert.Equal(t, 8, x.Jobs)
		assert.InDelta(t, e.CPUPct, x.MaxPct, 1e-9)
		assert.InDelta(t, e.CPUPct, x.MeanPct, 1e-6)
	}
	// A group whose mean job is at the limit counts all its jobs, and the
	// message says it is a mean.
	g := &fiojob.Output{Jobs: []fiojob.JobResult{{GroupID: 0, CPUPct: 97.5, CPUSeconds: 8 * 0.975 * 60, RuntimeMs: 8 * 60000}}}
	gd := DrivesCPU(g, []string{"/dev/nvme3n1"}, []string{"24-47"}, 8)
	gh := HostCPU("24-47", 24, 0.36, 8*0.975*60, 60, 8, gd)
	assert.Equal(t, 8, gh.JobsAtLimit)
	assert.Contains(t, HostBound(gh), "fio's 8 jobs on /dev/nvme3n1, CPUs 24-47 ran at 97.5 % of one CPU each on average (group_reporting gives their mean")
}

// In a multi-drive cell a pegged job excuses only its own drive: of the
// 24-drive fixture's pegged drives (5, all 8 jobs; 17, 3 of them), a step
// short on drive 5 or 17 alone, or on both, is host-bound; one short on
// drive 9, whose jobs had headroom, is not, and neither is one short on
// drives 5 and 9. A step short only in its total counts any drive's jobs.
func TestHostBoundForTheShortDrives(t *testing.T) {
	out := fioFixture(t, "scale-24x8-pegged.json")
	total := out.Total()
	each, all := nodeCPUs(24)
	h := HostCPU(all, 192, 0.34, total.CPUSeconds, total.Runtime.Seconds(), 192, DrivesCPU(out, paths(24), each, 8))
	for _, tt := range []struct {
		short []string
		want  string // "" not host-bound
	}{
		{nil, "on /dev/nvme5n1, CPUs 120-143"},
		{[]string{"/dev/nvme5n1"}, "on /dev/nvme5n1, CPUs 120-143"},
		{[]string{"/dev/nvme17n1"}, "the busiest at 99.7 % (user + system time over its runtime) on /dev/nvme17n1"},
		{[]string{"/dev/nvme5n1", "/dev/nvme17n1"}, "11 of fio's 192 jobs"},
		{[]string{"/dev/nvme9n1"}, ""},
		{[]string{"/dev/nvme5n1", "/dev/nvme9n1"}, ""},
		{[]string{"/dev/nvme99n1"}, ""},
	} {
		got := HostBoundFor(h, tt.short)
		if tt.want == "" {
			assert.Empty(t, got, "short %v", tt.short)
			continue
		}
		assert.Contains(t, got, tt.want, "short %v", tt.short)
	}
	// The CPUs' own figure is the step's: it counts whichever drive fell short.
	busy := HostCPU(all, 192, 0.97, total.CPUSeconds, total.Runtime.Seconds(), 192, DrivesCPU(out, paths(24), each, 8))
	assert.Contains(t, HostBoundFor(busy, []string{"/dev/nvme9n1"}), "were 97 % busy")
}

// A drive whose jobs outnumber its CPUs (24 drives on one 96-CPU socket
// give each 4 CPUs for its 8 jobs): split puts two jobs on each CPU, so a
// pegged CPU reads 49.5 % per job and no job is at the limit on its own,
// while the step's other CPUs keep the node's figure low. The drive's jobs
// together used 99 % of its 4 CPUs: host-bound, for that drive. With 8
// CPUs for its 8 jobs the same figures are jobs at half a CPU each, with
// headroom. The fio output is built here: 8 job entries of group 0, each
// usr_cpu + sys_cpu 49.5 over a 60 s job_runtime.
func TestHostBoundJobsSharingCPUs(t *testing.T) {
	var out fiojob.Output
	for range 8 {
		out.Jobs = append(out.Jobs, fiojob.JobResult{GroupID: 0, CPUPct: 49.5, CPUSeconds: 0.495 * 60, RuntimeMs: 60000})
	}
	for _, tt := range []struct {
		cpus string
		want string // "" not host-bound
	}{
		{"0-3", "fio's 8 jobs on /dev/nvme3n1 shared its CPUs 0-3, more than one a CPU, and used 99.0 % of them (user + system time over their runtime), at least 95 %"},
		{"0-7", ""},
		{"", ""},
	} {
		d := DrivesCPU(&out, []string{"/dev/nvme3n1"}, []string{tt.cpus}, 8)
		h := HostCPU("0-95", 96, 0.30, 8*0.495*60, 60, 8, d)
		got := HostBoundFor(h, []string{"/dev/nvme3n1"})
		if tt.want == "" {
			assert.Empty(t, got, "cpus %q", tt.cpus)
			continue
		}
		assert.Contains(t, got, tt.want, "cpus %q", tt.cpus)
		assert.InDelta(t, 99.0, d[0].SharePct, 1e-9)
		assert.Empty(t, HostBoundFor(h, []string{"/dev/nvme3n1", "/dev/nvme4n1"}), "a short drive without figures is not excused")
	}
}
