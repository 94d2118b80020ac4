package fiojob

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type fileTest struct {
	name string // golden file testdata/NAME.fio
	job  Job
}

var nvme = []Target{
	{Path: "/dev/nvme0n1", CPUs: "0-7"},
	{Path: "/dev/nvme1n1", CPUs: "8-15"},
}

// idema is two drives of the built-in spec's 1.92 TB capacity,
// 1,920,383,410,176 bytes: 14,651,363 blocks of 128 KiB and 90,112 bytes.
var idema = []Target{
	{Path: "/dev/nvme0n1", CPUs: "0-7", Size: 1920383410176},
	{Path: "/dev/nvme1n1", CPUs: "8-15", Size: 1920383410176},
}

var fileTests = []fileTest{
	{"random-read", Job{
		Name: "4KB Random Read", RW: "randread", BS: 4096, IODepth: 64, NumJobs: 8,
		RWMixRead: -1, IOEngine: "libaio", Direct: true,
		Runtime: 60 * time.Second, RampTime: 5 * time.Second, GroupReporting: true,
		Targets: nvme[:1],
	}},
	{"mixed-two-targets", Job{
		Name: "4KB Random Mixed Read Write 70/30", RW: "randrw", BS: 4096, IODepth: 64, NumJobs: 8,
		RWMixRead: 70, IOEngine: "libaio", Direct: true,
		Runtime: 60 * time.Second, Targets: nvme,
	}},
	{"sequential-read-ms", Job{
		Name: "128KB Sequential Read", RW: "read", BS: 128 << 10, IODepth: 128, NumJobs: 1,
		RWMixRead: 70, // ignored: not a mixed pattern
		IOEngine:  "libaio", Direct: true,
		Runtime: 1500 * time.Millisecond, RampTime: 250 * time.Microsecond,
		Targets: []Target{{Path: "/dev/disk/by-path/pci-0000:3b:00.0-nvme-1", Size: 1 << 30}},
	}},
	{"buffered-file", Job{
		Name: "smoke", RW: "randwrite", BS: 8192, IODepth: 1, NumJobs: 2, RWMixRead: -1,
		Loops: 3, Targets: []Target{{Path: "data.img", Size: 64 << 20}},
	}},
	{"application-keys", Job{
		Name: "App Mix", RW: "randtrimwrite", BS: 4096, BSSplit: "4096/60:16384/30:131072/10", IODepth: 16, NumJobs: 4,
		RWMixRead: -1, IOEngine: "libaio", Direct: true, RateIOPS: 2500, ThinkTime: 150 * time.Microsecond,
		BufferCompressPercentage: 50, Runtime: 10 * time.Second, Targets: nvme[:1],
	}},
	{"open-loop-point", Job{
		Name: "4KB Random Read", RW: "randread", BS: 4096, IODepth: 64, NumJobs: 8,
		RWMixRead: -1, IOEngine: "libaio", Direct: true, RateIOPS: 12500, RateProcess: "poisson",
		Runtime: 60 * time.Second, Targets: nvme[:1],
	}},
	{"fill", Fill(idema, 2, 0x0123456789abcdef)},
	{"verify", VerifyPass(Fill(idema, 2, 0x0123456789abcdef), 8)},
	{"precondition", RandomPrecondition(nvme, 4096, 30*time.Minute, "iops_slope:0.3%", 10*time.Minute)},
	{"precondition-no-steady", RandomPrecondition(nvme[:1], 8192, 90*time.Second, "", time.Minute)},
	{"precondition-logged", func() Job {
		j := RandomPrecondition([]Target{{Path: "/dev/nvme0n1", IOPSLog: "prepare/003-random.drive0"}}, 4096, time.Hour, "", 0)
		j.LogInterval = time.Minute
		return j
	}()},
}

func TestFile(t *testing.T) {
	for _, tt := range fileTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.job.Validate(); err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			got := tt.job.File()
			golden := filepath.Join("testdata", tt.name+".fio")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("File() mismatch for %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestFileParsesInFio has fio itself check every golden job file, all in
// one fio process (fio takes a noticeable fraction of a second to start).
func TestFileParsesInFio(t *testing.T) {
	fio := needFio(t)
	args := []string{"--parse-only"}
	for _, tt := range fileTests {
		p := filepath.Join(t.TempDir(), tt.name+".fio")
		if err := os.WriteFile(p, []byte(tt.job.File()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	if out, err := exec.Command(fio, args...).CombinedOutput(); err != nil {
		t.Fatalf("fio --parse-only rejects a File() output: %v\n%s", err, out)
	}
}

// TestFileGroupIDs checks, with real fio on two regular files, that the
// jobs of target i report groupid i with and without group_reporting.
func TestFileGroupIDs(t *testing.T) {
	fio := needFio(t)
	dir := t.TempDir()
	for _, grouped := range []bool{false, true} {
		job := Job{
			Name: "groupids", RW: "randread", BS: 4096, IODepth: 1, NumJobs: 2, RWMixRead: -1,
			IOEngine: "psync", Runtime: 200 * time.Millisecond, GroupReporting: grouped,
			Targets: []Target{
				{Path: filepath.Join(dir, "a:0"), Size: 1 << 20},
				{Path: filepath.Join(dir, "b"), Size: 1 << 20},
			},
		}
		var stderr bytes.Buffer
		cmd := exec.CommandContext(t.Context(), fio, "--output-format=json+", writeJobFile(t, job.File()))
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			t.Fatalf("group_reporting=%v: fio: %v\n%s", grouped, err, stderr.Bytes())
		}
		out, err := Parse(stdout)
		if err != nil {
			t.Fatal(err)
		}
		wantEntries := 4
		if grouped {
			wantEntries = 2
		}
		if len(out.Jobs) != wantEntries {
			t.Errorf("group_reporting=%v: %d job entries, want %d", grouped, len(out.Jobs), wantEntries)
		}
		for _, j := range out.Jobs {
			if want := SectionName(j.GroupID); j.Name != want {
				t.Errorf("group_reporting=%v: job %q has groupid %d, want the jobs of %s there",
					grouped, j.Name, j.GroupID, want)
			}
		}
		if g := out.Groups(); len(g) != 2 || g[0].GroupID != 0 || g[1].GroupID != 1 {
			t.Errorf("group_reporting=%v: Groups() = %d results, want groups 0 and 1", grouped, len(g))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a:0")); err != nil {
		t.Errorf("the escaped filename was not used as one file: %v", err)
	}
}

type validateTest struct {
	name string
	job  Job
	want []string // substrings of the error; none means valid
}

func validJob() Job {
	return Job{Name: "w", RW: "randread", BS: 4096, IODepth: 1, NumJobs: 1, RWMixRead: -1,
		Runtime: time.Second, Targets: []Target{{Path: "/dev/loop0"}}}
}

func with(f func(*Job)) Job {
	j := validJob()
	f(&j)
	return j
}

var validateTests = []validateTest{
	{"valid", validJob(), nil},
	{"loops instead of runtime", with(func(j *Job) { j.Runtime = 0; j.Loops = 1 }), nil},
	{"bs", with(func(j *Job) { j.BS = 0 }), []string{`job "w": bs must be > 0, got 0`}},
	{"iodepth", with(func(j *Job) { j.IODepth = 0 }), []string{"iodepth must be >= 1"}},
	{"numjobs", with(func(j *Job) { j.NumJobs = -1 }), []string{"numjobs must be >= 1"}},
	{"targets", with(func(j *Job) { j.Targets = nil }), []string{"no targets"}},
	{"no bound", with(func(j *Job) { j.Runtime = 0 }), []string{"neither runtime nor loops"}},
	{"rw", with(func(j *Job) { j.RW = "random" }), []string{`rw "random" is not one of`}},
	{"rwmixread", with(func(j *Job) { j.RWMixRead = 101 }), []string{"rwmixread must be"}},
	{"empty path", with(func(j *Job) { j.Targets = []Target{{}} }), []string{"target 0: empty path"}},
	{"newline path", with(func(j *Job) { j.Targets[0].Path = "a\n[x]" }), []string{"line break"}},
	{"every problem", with(func(j *Job) { j.BS = 0; j.IODepth = 0; j.Targets = nil }),
		[]string{"bs must be", "iodepth must be", "no targets"}},
}

func TestValidate(t *testing.T) {
	for _, tt := range validateTests {
		err := tt.job.Validate()
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Validate() = nil, want an error with %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %q, want it to contain %q", tt.name, err, w)
			}
		}
	}
}

type durationTest struct {
	in  time.Duration
	out string
}

var durationTests = []durationTest{
	{time.Second, "1"},
	{60 * time.Second, "60"},
	{1500 * time.Millisecond, "1500ms"},
	{time.Millisecond, "1ms"},
	{time.Microsecond, "1ms"},
	{1001 * time.Microsecond, "2ms"},
}

func TestFioDuration(t *testing.T) {
	for _, tt := range durationTests {
		if got := fioDuration(tt.in); got != tt.out {
			t.Errorf("fioDuration(%v) = %q, want %q", tt.in, got, tt.out)
		}
	}
}

type escapeTest struct{ in, out string }

var escapeTests = []escapeTest{
	{"/dev/nvme0n1", "/dev/nvme0n1"},
	{"/dev/disk/by-path/pci-0000:3b:00.0-nvme-1", `/dev/disk/by-path/pci-0000\:3b\:00.0-nvme-1`},
	{"a::b", `a\:\:b`},
}

func TestEscapeFilename(t *testing.T) {
	for _, tt := range escapeTests {
		if got := EscapeFilename(tt.in); got != tt.out {
			t.Errorf("EscapeFilename(%q) = %q, want %q", tt.in, got, tt.out)
		}
	}
}

type mixedTest struct {
	rw    string
	mixed bool
}

var mixedTests = []mixedTest{
	{"rw", true},
	{"readwrite", true},
	{"randrw", true},
	{"read", false},
	{"write", false},
	{"randread", false},
	{"randwrite", false},
	{"trimwrite", false},
	{"", false},
}

func TestIsMixed(t *testing.T) {
	for _, tt := range mixedTests {
		if got := IsMixed(tt.rw); got != tt.mixed {
			t.Errorf("IsMixed(%q) = %v, want %v", tt.rw, got, tt.mixed)
		}
	}
}
