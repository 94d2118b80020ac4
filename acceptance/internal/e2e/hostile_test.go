//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// The hostile recordings here are built from fixtures/lot-6-drives, a
// real recording of seven loop devices, each edit said where it is made.

// hostileCopy copies fixtures/lot-6-drives to a directory named name and
// changes its run.json by edit.
func hostileCopy(t *testing.T, name string, edit func(*record.Run)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(acceptanceDir, "..", "fixtures", "lot-6-drives"))))
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var info record.Run
	require.NoError(t, json.Unmarshal(data, &info))
	edit(&info)
	data, err = json.MarshalIndent(info, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return dir
}

// limited is one run of the suite under a 4 GiB address-space limit
// (ulimit -v), with its peak resident memory and wall time.
type limited struct {
	result
	PeakMiB float64
	Took    time.Duration
}

// runLimited runs the suite as runSuite does, in bash under ulimit -v
// 4194304 (KiB): a replay that allocates past it fails, and the peak it
// reached is logged, never asserted against a clock.
func runLimited(t *testing.T, args ...string) limited {
	t.Helper()
	res := limited{result: result{Report: filepath.Join(t.TempDir(), "report")}}
	all := append([]string{"-test.count=1", "-test.v=true", "-report=" + res.Report}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", `ulimit -v 4194304; exec "$@"`, "bash", suiteBin}, all...)...)
	cmd.Dir = acceptanceDir
	cmd.Env = append(os.Environ(), marker(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res.Took = time.Since(start)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.PeakMiB = float64(ru.Maxrss) / 1024
	}
	t.Logf("suite %s under ulimit -v 4 GiB: exit %d, %.1f s, peak %.0f MiB", strings.Join(args, " "), res.Code, res.Took.Seconds(), res.PeakMiB)
	return res
}

// A recorded spec asking for a step of 2147483647 drives is refused at
// load, naming run.json and the spec's line, in a replay and in a fleet
// (the other host a real recording), under a 4 GiB address-space limit;
// before, a replay made one placeholder drive per count (8-10 GB) and
// was killed.
func TestHostileSpecRefusedUnderMemoryLimit(t *testing.T) {
	runParallel(t) // refusals of recordings: no drive, nothing timed
	huge := func(r *record.Run) {
		r.SpecText = strings.Replace(r.SpecText, "drives    = [1, 6]", "drives    = [2147483647]", 1)
		require.Contains(t, r.SpecText, "[2147483647]")
	}
	bad := hostileCopy(t, "huge", huge)
	line := regexp.QuoteMeta(filepath.Join(bad, "run.json")+": spec_text (") + `[^)]*\):\d+: scaling: drives: drive count 2147483647 is more than 1024`
	one := runLimited(t, "-replay="+bad)
	assert.Equal(t, 2, one.Code, "refused as bad input:\n%s", one.Stderr+one.Stdout)
	assert.Regexp(t, line, one.Stdout+one.Stderr)

	good := hostileCopy(t, "good", func(r *record.Run) { r.Host.Hostname, r.Host.MachineID = "lot-host-b", "0b" })
	fl := runLimited(t, "-replay="+good+","+bad)
	assert.Equal(t, 2, fl.Code, "refused as bad input:\n%s", fl.Stderr+fl.Stdout)
	assert.Regexp(t, line, fl.Stdout+fl.Stderr)
	assert.NoDirExists(t, fl.Report, "a refused fleet writes nothing")
}

// Three copies of one recording given to -replay=A,B,C are refused,
// naming the three; before, they were judged as hosts vm, vm#2, vm#3.
func TestCopiesRefused(t *testing.T) {
	runParallel(t) // refusals of recordings: no drive, nothing timed
	var dirs []string
	for _, n := range []string{"a", "b", "c"} {
		dirs = append(dirs, hostileCopy(t, n, func(*record.Run) {}))
	}
	r := runSuite(t, nil, "-replay="+strings.Join(dirs, ","))
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stdout+r.Stderr, "copies of one run: "+strings.Join(dirs, ", ")+" hold the same run.json")
}

// forged is what a hostile recording puts in a drive's model and its
// host's name: a newline, then a GitHub workflow command.
const forged = "\n::error title=forged::drive failed\n"

// A newline in a drive's model or the host's name reaches neither the
// test log as a line of its own nor a cell's verdict: the replay of the
// edited recording gives every cell the verdict the recording as made
// gives, and no line of the log is a workflow command. Before, t.Attr
// failed every cell whose drive model held the newline.
func TestNamesEscapedInTheLog(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	clean := runSuite(t, nil, "-replay="+hostileCopy(t, "clean", func(*record.Run) {}))
	dir := hostileCopy(t, "forged", func(r *record.Run) {
		r.Host.Hostname += forged
		for i := range r.Drives {
			r.Drives[i].Model += forged
			r.Drives[i].Serial = fmt.Sprintf("S%d%s", i, forged)
		}
	})
	r := runSuite(t, nil, "-replay="+dir)
	assert.Equal(t, clean.Code, r.Code)
	assert.Equal(t, clean.verdicts(t), r.verdicts(t), "each cell's verdict as the recording as made gives it")
	for _, l := range strings.Split(r.Stdout+r.Stderr, "\n") {
		assert.False(t, strings.HasPrefix(strings.TrimSpace(l), "::"), "a workflow command in the log: %q", l)
	}
	assert.Contains(t, r.Stdout, `loop\n::error title=forged::drive failed\n`, "the model, escaped")
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	for _, l := range strings.Split(string(junit), "\n") {
		assert.False(t, strings.HasPrefix(strings.TrimSpace(l), "::"), "a workflow command in junit.xml: %q", l)
	}
}

// retimed makes dir's copy of the recording read as another run: every
// fio output's start (timestamp_ms) k seconds later, on another machine
// named host. The figures are the copy's.
func retimed(t *testing.T, dir, host string, k int) {
	t.Helper()
	re := regexp.MustCompile(`"timestamp_ms" : ([0-9]+)`)
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") || strings.HasSuffix(path, "run.json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		edited := re.ReplaceAllStringFunc(string(data), func(m string) string {
			var n int64
			fmt.Sscan(re.FindStringSubmatch(m)[1], &n)
			return fmt.Sprintf(`"timestamp_ms" : %d`, n+int64(k)*1000)
		})
		return os.WriteFile(path, []byte(edited), 0o644)
	}))
	path := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var info record.Run
	require.NoError(t, json.Unmarshal(data, &info))
	info.Host.Hostname, info.Host.MachineID = host, fmt.Sprintf("%032x", k)
	data, err = json.MarshalIndent(info, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// fleet.yml's judge step (.ci/judge-fleet) given three hosts, one of
// whose recordings is hostile (its spec asks for a 2147483647-drive step),
// still writes the fleet's report of the other two, names the hostile
// host's refused run.json and line in refused.txt, summary.md and an
// annotation, and fails. Before, the one refusal left no report at all.
func TestJudgeFleetScriptLeavesOutAHostileHost(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	recordings := t.TempDir()
	for i, h := range []string{"stor-a", "stor-b", "stor-c"} {
		raw := filepath.Join(recordings, "drivequal-"+h, "raw")
		require.NoError(t, os.MkdirAll(filepath.Dir(raw), 0o755))
		require.NoError(t, os.Rename(hostileCopy(t, h, func(*record.Run) {}), raw))
		retimed(t, raw, h, i+1)
	}
	// stor-d's recording is a symlink to stor-a's: followed, stor-a's run
	// was judged twice, and the fleet was refused as holding a copy.
	require.NoError(t, os.MkdirAll(filepath.Join(recordings, "drivequal-stor-d"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(recordings, "drivequal-stor-a", "raw"), filepath.Join(recordings, "drivequal-stor-d", "raw")))
	hostile := filepath.Join(recordings, "drivequal-stor-c", "raw", "run.json")
	data, err := os.ReadFile(hostile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(hostile, []byte(strings.Replace(string(data), `drives    = [1, 6]`, `drives    = [2147483647]`, 1)), 0o644))

	report := filepath.Join(t.TempDir(), "fleet-report")
	cmd := exec.Command(filepath.Join(acceptanceDir, "..", ".ci", "judge-fleet"), recordings, report, "stor-a", "stor-b", "stor-c", "stor-d")
	cmd.Dir = acceptanceDir
	cmd.Env = append(os.Environ(), marker(t), "SUITE="+suiteBin+" -test.count=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "a fleet short of a host fails:\n%s", out)
	assert.Equal(t, 1, ee.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "::error title=host stor-c refused::")

	res := result{Report: report}.results(t)
	var hosts []string
	for _, h := range res.Hosts {
		hosts = append(hosts, h.Name)
	}
	assert.Equal(t, []string{"stor-a", "stor-b"}, hosts, "the fleet is judged without the hostile host")
	refusal := regexp.QuoteMeta(hostile+": spec_text (") + `[^)]*\):\d+: scaling: drives: drive count 2147483647 is more than 1024`
	refused, err := os.ReadFile(filepath.Join(report, "refused.txt"))
	require.NoError(t, err)
	assert.Regexp(t, `^stor-c: refused \(exit 2\):`, string(refused))
	assert.Regexp(t, refusal, string(refused))
	assert.Contains(t, string(refused), "stor-d: refused: "+filepath.Join(recordings, "drivequal-stor-d", "raw")+" is a symlink")
	summary, err := os.ReadFile(filepath.Join(report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Hosts left out of the fleet")
	assert.Regexp(t, refusal, string(summary))
	assert.FileExists(t, filepath.Join(report, "junit.xml"))
}
