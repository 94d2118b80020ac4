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
