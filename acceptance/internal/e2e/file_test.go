package e2e

import (
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// newTargetFile makes a regular-file target of size bytes whose first MiB
// is random, so that "unchanged" means something. As root the file is
// on an ext4 file system of its own, on a loop device, which the harness
// caps for the suite as it caps a loop target (cappedDevices): on the
// machine's own disk the file's fio wrote as fast as the disk went,
// taking its time from every test beside it (the three file-target
// tests: 30 CPU-seconds, two thirds of them the kernel's; 16 capped).
func newTargetFile(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// Room for the file and ext4's own blocks.
		dir = testenv.Ext4Dir(t, size+size/8+64<<20)
	}
	return targetFileIn(t, dir, size)
}

// targetFileIn makes newTargetFile's file in dir.
func targetFileIn(t *testing.T, dir string, size int64) string {
	t.Helper()
	path := filepath.Join(dir, "target.img")
	head := make([]byte, 1<<20)
	_, _ = rand.Read(head)
	require.NoError(t, os.WriteFile(path, head, 0o644))
	require.NoError(t, os.Truncate(path, size))
	return path
}

// loopUnder is the loop device that holds the file system the file at
// path is on, "" when that is no loop device (a disk, a tmpfs): the
// device the kernel can hold a file target's I/O at.
func loopUnder(path string) string {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return ""
	}
	num := uint64(st.Dev) // int32 on macOS, where the package must build
	uevent, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/uevent", unix.Major(num), unix.Minor(num)))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(uevent), "\n") {
		name, ok := strings.CutPrefix(l, "DEVNAME=")
		if !ok || !strings.HasPrefix(name, "loop") {
			continue
		}
		// The node must be the device the file system is on, not one
		// a static /dev names alike.
		var dev unix.Stat_t
		if unix.Stat("/dev/"+name, &dev) == nil && dev.Mode&unix.S_IFMT == unix.S_IFBLK && dev.Rdev == st.Dev {
			return "/dev/" + name
		}
	}
	return ""
}

// A regular file is a target like a drive: refused without -destructive
// (it is not empty), measured with it. Needs fio; as root, also a loop
// device and an ext4 mount (newTargetFile).
func TestRegularFileTarget(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	testenv.MustHaveFio(t)
	file := newTargetFile(t, 1<<30) // the spec's 1GiB; sparse past its first MiB
	before := testenv.SHA256(t, file)

	r := runSuite(t, nil, "-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, file)
	assert.Contains(t, r.Stderr, "-destructive")
	assert.Equal(t, before, testenv.SHA256(t, file), "a refused run leaves the file unchanged")
	assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))

	r = runSuite(t, []string{"-test.run=TestSingleDrive/1GiB/4KB_Random_(Read|Write)$"},
		"-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB", "-destructive")
	noFioLeft(t)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.NotContains(t, r.Stderr, "not comparable", "a 1 GiB file is a 1GiB drive")
	v := r.verdicts(t)
	assert.Equal(t, map[string]string{
		"TestIntegrity/" + filepath.Base(file):  report.Pass,
		"TestSingleDrive/1GiB/4KB_Random_Write": report.Pass,
		"TestSingleDrive/1GiB/4KB_Random_Read":  report.Pass,
	}, v)
	// The read cell was selected with its twin, and the preparation ran once.
	prep, _ := filepath.Glob(filepath.Join(r.Report, "raw", "prepare", "*.json"))
	assert.Len(t, prep, 3, "one fill, its verify pass and one 4 KiB random preconditioning: %v", prep)
	// Preparation steps are recorded as fio's plain json, measurements as
	// json+ (latency bins).
	for _, p := range prep {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(data), `"bins"`, "%s holds json+ latency bins", p)
	}
	cell, err := os.ReadFile(filepath.Join(r.Report, "raw", "TestSingleDrive", "1GiB", "4KB_Random_Read.json"))
	require.NoError(t, err)
	assert.Contains(t, string(cell), `"bins"`, "a measurement is recorded as json+")
	assert.Contains(t, r.Stdout, "step 2 of 6: sequential fill (1 × 128 KiB write pass) on "+file)
}

// A plan longer than go test's -timeout is refused before anything runs,
// saying which -timeout to use.
func TestTimeoutTooShortIsRefused(t *testing.T) {
	// Its checks are of verdicts and recordings, not of speed.
	runParallel(t)
	testenv.MustHaveFio(t)
	// Refused before fio starts: a file on the machine's disk will do.
	file := targetFileIn(t, t.TempDir(), 1<<30)
	before := testenv.SHA256(t, file)
	r := runSuite(t, []string{"-test.timeout=5s"}, "-spec="+loopSpec(t), "-drives="+file, "-capacity=1GiB", "-destructive")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "parsing -timeout: the plan takes about")
	assert.Contains(t, r.Stderr, "run with -timeout=10m0s")
	assert.Equal(t, before, testenv.SHA256(t, file))
	assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))
}

// junitSuite is the part of the suite's junit.xml read here.
type junitSuite struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Skipped  int `xml:"skipped,attr"`
	Cases    []struct {
		Class     string    `xml:"classname,attr"`
		Name      string    `xml:"name,attr"`
		Skipped   *struct{} `xml:"skipped"`
		Failure   *struct{} `xml:"failure"`
		SystemOut string    `xml:"system-out"`
	} `xml:"testcase"`
}

// make junit's run: gotestsum shows go test's verdicts on the terminal,
// without ATTR lines, and the suite writes junit.xml itself: one testcase
// per cell with its group as the class, the figures in system-out, and a
// passing Verdict testcase per gate.
func TestJUnitHasOneTestcasePerCell(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	if testing.Short() {
		t.Skip("runs go test under gotestsum")
	}
	dir := filepath.Join(t.TempDir(), "report")
	// make junit's command but for -vet=off: go vet ./... vets the suite,
	// and go test's own vet ran again over the 340-odd packages it
	// imports, for their facts (23 CPU-seconds with a cold build cache).
	cmd := exec.Command("go", "tool", "gotestsum", "--format", "testname",
		"--", "-count=1", "-vet=off", "./acceptance", "-args", "-report="+dir)
	cmd.Dir = filepath.Dir(acceptanceDir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.NotContains(t, string(out), "=== ATTR", "the terminal shows no ATTR lines")
	data, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	require.NoError(t, err)
	var js junitSuite
	require.NoError(t, xml.Unmarshal(data, &js))
	assert.Equal(t, 32+16+5, js.Tests, "32 single-drive cells, 8 scaling cells at 1 and 24 drives, 4 capacity verdicts and the scaling verdict")
	assert.Zero(t, js.Failures)
	assert.Zero(t, js.Skipped)
	cells := map[string]string{}
	for _, c := range js.Cases {
		assert.Nil(t, c.Failure, c.Class+"/"+c.Name)
		cells[c.Class+"/"+c.Name] = c.SystemOut
	}
	rr, ok := cells["TestSingleDrive/1.92TB/4KB_Random_Read"]
	require.True(t, ok, "testcase TestSingleDrive/1.92TB/4KB_Random_Read")
	for _, line := range []string{"verdict: pass", "spec: 2350000", "unit: IOPS", "fio version: fio-3.28"} {
		assert.Contains(t, rr, line+"\n")
	}
	assert.Contains(t, cells, "Verdict/1.92TB")
	assert.Contains(t, cells, "Verdict/scaling")
}

// A file target made by newTargetFile is capped through the loop device
// under its file system, once however it is named; a file on the
// machine's disk or a tmpfs is not, and a loop device given as a drive
// is capped itself.
func TestFileTargetsAreCapped(t *testing.T) {
	runParallel(t)
	testenv.MustHaveRoot(t)
	file := newTargetFile(t, 64<<20)
	loop := loopUnder(file)
	require.NotEmpty(t, loop, "%s is on no loop device", file)
	src, err := exec.Command("findmnt", "-n", "-o", "SOURCE", "--target", file).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(src)), loop, "the device %s's file system is mounted from", file)
	link := filepath.Join(t.TempDir(), "link.img")
	require.NoError(t, os.Symlink(file, link))
	assert.Equal(t, []string{loop}, cappedDevices([]string{"-spec=x", "-drives=" + file + "," + link}))

	plain := filepath.Join(t.TempDir(), "plain.img")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))
	if l := loopUnder(plain); l == "" {
		assert.Empty(t, cappedDevices([]string{"-drives=" + plain}), "a file on the machine's own file system")
	}
	if shm, err := os.CreateTemp("/dev/shm", "drivequal-test-"); err == nil {
		t.Cleanup(func() { os.Remove(shm.Name()) })
		shm.Close()
		assert.Empty(t, cappedDevices([]string{"-drives=" + shm.Name()}), "a file on a tmpfs")
	}
	dev := testenv.Loop(t, 1<<20)
	assert.Equal(t, []string{dev, loop}, cappedDevices([]string{"-drives=" + dev + "," + file}))
}
