package timelog

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
	"github.com/drivequal/drivequal/fiojob"
)

// fio numbers the logs of a multi-drive job file by its jobs, clones
// included, across every target (drive0's jobs 1-2, drive1's 3-4): Pack
// finds each target's under its own prefix, keeps them in one gzip file
// and removes fio's; Read gives each drive its own series, its jobs
// summed, and the bandwidth log agrees with the IOPS log at 4 KiB a
// block.
func TestPackRealFio(t *testing.T) {
	fio := testenv.MustHaveFio(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "TestScaling", "2_drives", "4KB_Random_Write")
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	var targets []fiojob.Target
	for i := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("drive%d.img", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 64<<20); err != nil {
			t.Fatal(err)
		}
		pre := base + "." + fiojob.SectionName(i)
		targets = append(targets, fiojob.Target{Path: p, Size: 64 << 20, IOPSLog: pre, BWLog: pre})
	}
	job := fiojob.Job{Name: "w", RW: "randwrite", BS: 4096, IODepth: 1, NumJobs: 2, RWMixRead: -1, IOEngine: "psync",
		Runtime: 3 * time.Second, LogInterval: Interval, GroupReporting: true, Targets: targets}
	if err := job.Validate(); err != nil {
		t.Fatal(err)
	}
	jobFile := base + ".fio"
	if err := os.WriteFile(jobFile, []byte(job.File()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := (fiojob.Runner{Binary: fio}).Run(context.Background(), jobFile); err != nil {
		t.Fatalf("fio: %v: %s", err, stderr)
	}
	for _, name := range []string{".drive0_iops.1.log", ".drive0_iops.2.log", ".drive1_iops.3.log", ".drive1_bw.4.log"} {
		if _, err := os.Stat(base + name); err != nil {
			t.Errorf("fio wrote no %s: %v", name, err)
		}
	}
	wrote, err := Pack(base+record.LogExt, targets, Interval)
	if err != nil || !wrote {
		t.Fatalf("Pack = %v, %v; want true, nil", wrote, err)
	}
	if left, _ := filepath.Glob(base + ".drive*"); len(left) > 0 {
		t.Errorf("Pack left fio's logs: %v", left)
	}
	logs, err := Read(dir, "TestScaling/2_drives/4KB_Random_Write"+record.LogExt)
	if err != nil {
		t.Fatal(err)
	}
	if logs.Interval != time.Second || len(logs.Targets) != 2 {
		t.Fatalf("Read = interval %v, %d targets; want 1s, 2", logs.Interval, len(logs.Targets))
	}
	for i, pts := range logs.Targets {
		if len(pts) < 2 || len(pts) > 4 {
			t.Errorf("drive %d: %d points from a 3 s run at 1 s, want 2 to 4", i, len(pts))
		}
		for _, p := range pts {
			if p.IOPS <= 0 {
				continue
			}
			// fio truncates each job's figures to integers (KiB/s, IOPS).
			if r := p.BytesPerSec / (p.IOPS * 4096); r < 0.99 || r > 1.01 {
				t.Errorf("drive %d at %v: %.0f B/s for %.0f IOPS of 4 KiB, ratio %.3f", i, p.At, p.BytesPerSec, p.IOPS, r)
			}
		}
	}
}

// A job that failed before fio wrote any log leaves nothing to pack.
func TestPackNothing(t *testing.T) {
	dir := t.TempDir()
	wrote, err := Pack(filepath.Join(dir, "x"+record.LogExt), []fiojob.Target{{Path: "/dev/x", IOPSLog: filepath.Join(dir, "x.drive0")}}, Interval)
	if wrote || err != nil {
		t.Errorf("Pack with no log = %v, %v; want false, nil", wrote, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x"+record.LogExt)); err == nil {
		t.Error("Pack wrote a file with no log in it")
	}
}

type parseTest struct {
	name, in, err string
}

var parseTests = []parseTest{
	{"not ours", "1000, 5, 1, 0, 0\n", "1: not a drivequal fio log"},
	{"other header", "# something else\n", `1: "# something else" is not a drivequal fio log's first line`},
	{"bad section", header + "\n# interval_ms 1000\n## target 0 lat job 1\n", `3: "## target 0 lat job 1" is not a section`},
	{"too many targets", header + "\n# interval_ms 1000\n## target 5000 iops job 1\n", "3: "},
	{"no section", header + "\n# interval_ms 1000\n1000, 5, 1, 0, 0\n", "3: a sample before its interval and section"},
	{"bad interval", header + "\n# interval_ms 0\n", "2: interval \"0\""},
	{"bad value", header + "\n# interval_ms 1000\n## target 0 iops job 1\n1000, -5, 1, 0, 0\n", "4: value \"-5\""},
	{"bad direction", header + "\n# interval_ms 1000\n## target 0 iops job 1\n1000, 5, 7, 0, 0\n", "4: direction \"7\""},
	{"far future", header + "\n# interval_ms 1000\n## target 0 iops job 1\n999999999999, 5, 1, 0, 0\n", "4: time"},
	{"short line", header + "\n# interval_ms 1000\n## target 0 iops job 1\n1000, 5\n", "4: \"1000, 5\" has 2 fields"},
}

// A packed log that is not one is refused naming its line.
func TestParseErrors(t *testing.T) {
	for _, tt := range parseTests {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: Parse() = %v, want an error containing %q", tt.name, err, tt.err)
		}
	}
}

// Each target's jobs are summed a window, read and write together, a
// sample counted in the window its time falls nearest to.
func TestParseSums(t *testing.T) {
	in := header + "\n# interval_ms 1000\n" +
		"## target 1 iops job 1\n999, 100, 1, 0, 0\n2037, 110, 1, 0, 0\n" +
		"## target 1 iops job 2\n1001, 50, 0, 0, 0\n2000, 60, 1, 0, 0\n" +
		"## target 1 bw job 1\n999, 400, 1, 0, 0\n"
	logs, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Point{{At: time.Second, IOPS: 150, BytesPerSec: 400 * 1024}, {At: 2 * time.Second, IOPS: 170}}
	if len(logs.Targets) != 2 || len(logs.Targets[0]) != 0 || fmt.Sprint(logs.Targets[1]) != fmt.Sprint(want) {
		t.Errorf("Parse() = %v, want [[] %v]", logs.Targets, want)
	}
}

// A packed log is read only as record.Open allows: a symlink out of
// the recording is refused, not followed.
func TestReadRefusesSymlink(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "x.log.gz"), gz(t, header+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "x.log.gz"), filepath.Join(dir, "x.log.gz")); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir, "x.log.gz"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("Read(symlink) = %v, want a refusal naming the symlink", err)
	}
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// PrepareBefore is what a 30-minute random step on 24 drives recorded
// under prepare/ before its per-second logs were kept: its fio output
// with six status reports a 1-minute round, about 6.5 KB a drive and
// report (docs/results.md, Recorded size): 180 × 24 × 6,500 bytes.
const PrepareBefore = 180 * 24 * 6500

// The recording of a 24-drive random step of 30 minutes stays within 32
// MB with its per-second logs: 24 drives × 4 jobs (fio's 4 a drive in a
// random preconditioning) × 1,800 s, IOPS and bandwidth, as fio writes
// them (times a few ms off the second, values around a drive's 100k
// IOPS shared by its jobs, ±5 %), packed as the recording keeps them.
func TestSize24Drives30Minutes(t *testing.T) {
	testenv.SkipUnderRace(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(48, 24))
	var targets []fiojob.Target
	job := 0
	for d := range 24 {
		pre := filepath.Join(dir, fmt.Sprintf("005-random.drive%d", d))
		targets = append(targets, fiojob.Target{IOPSLog: pre, BWLog: pre})
		for range 4 {
			job++
			var iops, bw strings.Builder
			at := 0
			for range 1800 {
				at += 1000 + rng.IntN(40)
				v := 25000 * (0.95 + 0.1*rng.Float64())
				fmt.Fprintf(&iops, "%d, %d, 1, 0, 0\n", at, int(v))
				fmt.Fprintf(&bw, "%d, %d, 1, 0, 0\n", at, int(v*4))
			}
			for kind, s := range map[string]string{"iops": iops.String(), "bw": bw.String()} {
				if err := os.WriteFile(fmt.Sprintf("%s_%s.%d.log", pre, kind, job), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	dst := filepath.Join(dir, "005-random"+record.LogExt)
	if _, err := Pack(dst, targets, Interval); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	total := PrepareBefore + fi.Size()
	t.Logf("24 drives, 30 min: per-second logs %d bytes packed; the step records %d bytes before, %d after", fi.Size(), PrepareBefore, total)
	if total > 32e6 {
		t.Errorf("a 24-drive 30-minute random step records %d bytes with its logs, above 32 MB", total)
	}
	logs, err := Read(dir, filepath.Base(dst))
	if err != nil {
		t.Fatal(err)
	}
	if len(logs.Targets) != 24 || len(logs.Targets[23]) < 1790 {
		t.Errorf("read back %d drives, the last of %d points; want 24 of about 1,800", len(logs.Targets), len(logs.Targets[23]))
	}
}

// A log whose sections each jump to the last window at 1 ms a window
// (one line "604800,1,0,0" a target) would grow 604,800 windows a target
// for a line each: across MaxTargets targets, hundreds of GB. Its gaps
// are refused once they pass one window a line plus the slack, naming the
// line; a real 24-drive, 8-hour log (a window a line) and one gap of a
// week in a single drive's log still read.
func TestParseRefusesGapBomb(t *testing.T) {
	testenv.SkipUnderRace(t)
	var b strings.Builder
	b.WriteString(header + "\n# interval_ms 1\n")
	for i := range 8 { // the second is refused; eight keep the test's memory small without the fix
		fmt.Fprintf(&b, "## target %d iops job 1\n604800,1,0,0\n", i)
	}
	logs, err := Parse(strings.NewReader(b.String()))
	if err == nil {
		n := 0
		for _, p := range logs.Targets {
			n += len(p)
		}
		t.Fatalf("Parse(gap bomb) read %d windows, want an error", n)
	}
	if !strings.Contains(err.Error(), "line 6:") || !strings.Contains(err.Error(), "gap") {
		t.Errorf("Parse(gap bomb) = %v, want an error naming line 6 and the gap", err)
	}

	week := header + "\n# interval_ms 1000\n## target 0 iops job 1\n1000, 5, 1, 0, 0\n604800000, 7, 1, 0, 0\n"
	if logs, err := Parse(strings.NewReader(week)); err != nil || len(logs.Targets[0]) != MaxPoints {
		t.Errorf("Parse(one drive, a week's gap) = %v, want %d windows", err, MaxPoints)
	}

	var real strings.Builder
	real.WriteString(header + "\n# interval_ms 1000\n")
	for d := range 24 {
		fmt.Fprintf(&real, "## target %d iops job 1\n", d)
		for s := 1; s <= 8*3600; s++ {
			fmt.Fprintf(&real, "%d, 100, 1, 0, 0\n", s*1000)
		}
	}
	logs, err = Parse(strings.NewReader(real.String()))
	if err != nil || len(logs.Targets) != 24 || len(logs.Targets[23]) != 8*3600 {
		t.Errorf("Parse(24 drives, 8 hours) = %v, want 24 drives of %d windows", err, 8*3600)
	}
}
