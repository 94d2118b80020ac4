package qual

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// The hostile fleets below are built from fixtures/lot-6-drives, a real
// recording, each edit said where it is made.

// rewriteRun changes dir's run.json by f.
func rewriteRun(t *testing.T, dir string, f func(*record.Run)) {
	t.Helper()
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var info record.Run
	require.NoError(t, json.Unmarshal(data, &info))
	f(&info)
	data, err = json.MarshalIndent(info, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// lotOutputs are the fio outputs fixtures/lot-6-drives holds.
var lotOutputs = []string{lotRead, lotWrite, "TestSingleDrive/32MiB/128KB_Sequential_Read", "TestSingleDrive/32MiB/128KB_Sequential_Write",
	"TestSingleDrive/64MiB/128KB_Sequential_Read", "TestSingleDrive/64MiB/128KB_Sequential_Write"}

// anotherRun makes the copy of a recording in dir read as another run:
// every fio output started k seconds later (its timestamp_ms, the one
// thing two runs of the same figures never share), on another machine
// (machine-id k) named hostname. The figures are the copy's.
func anotherRun(t *testing.T, dir, hostname string, k int) {
	t.Helper()
	for _, test := range lotOutputs {
		path := filepath.Join(dir, filepath.FromSlash(test)+".json")
		require.True(t, retime(t, path, time.Duration(k)*time.Second), "%s has no timestamp_ms", path)
	}
	rewriteRun(t, dir, func(r *record.Run) { r.Host.Hostname, r.Host.MachineID = hostname, fmt.Sprintf("%032x", k) })
}

// setupFleetOf sets up a fleet replay of dirs judged by their recorded
// spec, as -replay=DIR1,DIR2,... does.
func setupFleetOf(t *testing.T, dirs ...string) (*Run, []error, string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report")
	cfg := &cmdline.Config{Spec: "solidigm-d7-ps1010", Replay: dirs[0], Replays: dirs, Report: report, Root: moduleRoot(t), Precondition: plan.Full}
	s, errs := Setup(context.Background(), cfg, 0, device.System{}, fiojob.Runner{})
	return s, errs, report
}

func joined(errs []error) string { return errors.Join(errs...).Error() }

// Three copies of one recording given to -replay=A,B,C are refused,
// naming the three; before, they were judged as hosts vm, vm#2, vm#3 and
// TestLot counted 18 drives from 6.
func TestFleetRefusesCopies(t *testing.T) {
	a, b, c := lotCopy(t, "a"), lotCopy(t, "b"), lotCopy(t, "c")
	s, errs, rep := setupFleetOf(t, a, b, c)
	require.Nil(t, s)
	require.NotEmpty(t, errs)
	msg := joined(errs)
	assert.Contains(t, msg, "copies of one run: "+a+", "+b+", "+c+" hold the same run.json (sha256 ")
	assert.NoDirExists(t, rep, "a refused fleet writes nothing")

	// The copies' hostnames edited: their run.json differ, their fio
	// outputs do not.
	rewriteRun(t, b, func(r *record.Run) { r.Host.Hostname = "lot-host-b" })
	rewriteRun(t, c, func(r *record.Run) { r.Host.Hostname = "lot-host-c" })
	_, errs, _ = setupFleetOf(t, a, b, c)
	require.NotEmpty(t, errs)
	assert.Regexp(t, regexp.QuoteMeta("copies of one run: "+a+", "+b+", "+c+" hold the same fio output Test")+`.*which no two runs print`, joined(errs))
}

// A drive by its serial and model on two hosts of a fleet (two runs of
// other figures, both recording drive 1 as serial PHA-COPY) is refused,
// naming both runs and the drive's path on each.
func TestFleetRefusesADriveOnTwoHosts(t *testing.T) {
	a, b := lotCopy(t, "a"), lotCopy(t, "b")
	anotherRun(t, b, "lot-host-b", 1)
	s, errs, _ := setupFleetOf(t, a, b)
	require.Empty(t, errs, "two runs of other drives are a fleet")
	require.Len(t, s.Members, 2)
	for _, dir := range []string{a, b} {
		rewriteRun(t, dir, func(r *record.Run) { r.Drives[1].Serial = "PHA-COPY" })
	}
	_, errs, _ = setupFleetOf(t, a, b)
	require.NotEmpty(t, errs)
	assert.Contains(t, joined(errs), "a drive in two runs: drive serial PHA-COPY model loop is in "+a+" (/dev/loop25) and "+b+" (/dev/loop25)")

	// The same machine in the same boot on the same drive paths: one
	// run, or its drives measured twice.
	a, b = lotCopy(t, "a2"), lotCopy(t, "b2")
	anotherRun(t, b, "lot-host-b", 1)
	for _, dir := range []string{a, b} {
		rewriteRun(t, dir, func(r *record.Run) {
			r.Host.MachineID, r.BootID = "0123456789abcdef0123456789abcdef", "5f0c1d6e-0a39-4b8e-9d55-3c5a8e1e2b7a"
		})
	}
	_, errs, _ = setupFleetOf(t, a, b)
	require.NotEmpty(t, errs)
	assert.Contains(t, joined(errs), "one machine, one boot, the same drives: "+a+", "+b+" were recorded on one machine (machine-id 0123456789abcdef0123456789abcdef)")
}

// A host whose recorded spec asks for a 2147483647-drive step is refused
// at load, naming run.json and the spec's line, before any host's
// outputs are read: the other host's cell output is a FIFO, which a read
// would wait on for ever.
func TestFleetChecksSpecsBeforeOutputs(t *testing.T) {
	a, b := lotCopy(t, "a"), lotCopy(t, "b")
	anotherRun(t, b, "lot-host-b", 1)
	rewriteRun(t, b, func(r *record.Run) {
		require.Contains(t, r.SpecText, "drives    = [1, 6]")
		r.SpecText = strings.Replace(r.SpecText, "drives    = [1, 6]", "drives    = [2147483647]", 1)
	})
	// a lists the FIFO with a sha256 (run.json format 3), which its
	// replay checks as it sets up: a hash of it would wait for ever.
	const cell = "TestSingleDrive/64MiB/128KB_Sequential_Read.json"
	fifo := filepath.Join(a, filepath.FromSlash(cell))
	require.NoError(t, os.Remove(fifo))
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	rewriteRun(t, a, func(r *record.Run) { r.Format, r.Files = 3, map[string]string{cell: strings.Repeat("0", 64)} })
	_, errs, _ := setupFleetOf(t, a, b)
	require.NotEmpty(t, errs)
	assert.Regexp(t, regexp.QuoteMeta(filepath.Join(b, "run.json")+": spec_text (")+`[^)]*\):\d+: scaling: drives: drive count 2147483647 is more than 1024`, joined(errs))
}

// Host directories are named by a slug unique across the fleet: hosts
// "vm", "vm" and "vm#2" (which go test would see as the second "vm") get
// three reports, and "..", "." and "" land under hosts/, never above it.
// A name longer than a directory name may be (255 bytes) is cut, and two
// such names alike in their first 64 bytes still get two directories:
// before, the fleet's report directory could not be made and no report
// of any host was written.
func TestFleetHostDirectoriesAreUnique(t *testing.T) {
	var dirs []string
	long := strings.Repeat("a", 300)
	for i, name := range []string{"vm", "vm", "vm#2", "..", ".", "", long + "1", long + "2"} {
		dir := lotCopy(t, "h"+string(rune('a'+i)))
		anotherRun(t, dir, name, i+1)
		dirs = append(dirs, dir)
	}
	s, errs, rep := setupFleetOf(t, dirs...)
	require.Empty(t, errs)
	seen := map[string]bool{}
	names := map[string]bool{}
	for _, m := range s.Members {
		rel, err := filepath.Rel(filepath.Join(rep, "hosts"), m.Suite.Cfg.Report)
		require.NoError(t, err)
		assert.False(t, strings.Contains(rel, "/") || rel == "." || rel == ".." || strings.HasPrefix(rel, "."), "host %q: report in hosts/%s", m.Name, rel)
		assert.False(t, seen[rel], "host %q: hosts/%s is another host's", m.Name, rel)
		assert.False(t, names[m.Name], "host name %q twice", m.Name)
		assert.LessOrEqual(t, len(rel), 80, "host %q: hosts/%s", m.Name, rel)
		assert.NoError(t, os.MkdirAll(m.Suite.Cfg.Report, 0o755))
		seen[rel], names[m.Name] = true, true
	}
	assert.Len(t, seen, len(dirs))
}

// A cell whose recorded latency mean overflows to +Inf (lat_ns mean
// 1e308 over its I/Os, judged as a lat_us workload) fails with that
// figure named, and results.json, summary.md and junit.xml are written;
// before, none of the three was.
func TestNonFiniteFigureIsTheCellsError(t *testing.T) {
	dir := lotCopy(t, "inf")
	path := filepath.Join(dir, "TestSingleDrive", "32MiB", "128KB_Sequential_Read.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`("lat_ns" : \{[^}]*?"mean" : )[0-9.e+]+`)
	require.Regexp(t, re, string(data))
	require.NoError(t, os.WriteFile(path, []byte(re.ReplaceAllString(string(data), "${1}1.0e308")), 0o644))
	// The recording's spec, its read workload judged by mean latency.
	spec, err := os.ReadFile(filepath.Join(moduleRoot(t), "fixtures", "lot-6-drives", "lot.toml"))
	require.NoError(t, err)
	text := regexp.MustCompile(`(name\s*=\s*"128KB Sequential Read"[^\[]*?metric\s*=\s*)"MBps"`).ReplaceAllString(string(spec), `${1}"lat_us"`)
	require.Contains(t, text, `"lat_us"`)
	specPath := filepath.Join(t.TempDir(), "lat.toml")
	require.NoError(t, os.WriteFile(specPath, []byte(text), 0o644))

	s, run := judgeLotRun(t, specPath, dir)
	res, ok := run.results["TestSingleDrive/32MiB/128KB_Sequential_Read"]
	require.True(t, ok)
	assert.Equal(t, report.Fail, res.Verdict)
	assert.Equal(t, report.CauseBadRecording, res.Cause)
	assert.Contains(t, res.Error, "actual +Inf")
	for _, f := range []string{"results.json", "summary.md", "junit.xml"} {
		assert.FileExists(t, filepath.Join(s.Cfg.Report, f))
	}
	var back report.Run
	js, err := os.ReadFile(filepath.Join(s.Cfg.Report, "results.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &back))
	junit, err := os.ReadFile(filepath.Join(s.Cfg.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), "actual +Inf")
	assert.NotEqual(t, report.Qualified, back.Overall().Verdict)
}

// timestampMS is where a fio output says when it started.
var timestampMS = regexp.MustCompile(`"timestamp_ms" : ([0-9]+)`)

// retime moves the fio output at path by d (its timestamp_ms): the
// figures of another run, not a copy; false when it has no timestamp_ms.
func retime(t *testing.T, path string, d time.Duration) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := timestampMS.ReplaceAllStringFunc(string(data), func(m string) string {
		ms, err := strconv.ParseInt(timestampMS.FindStringSubmatch(m)[1], 10, 64)
		require.NoError(t, err)
		return `"timestamp_ms" : ` + strconv.FormatInt(ms+d.Milliseconds(), 10)
	})
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	return edited != string(data)
}
