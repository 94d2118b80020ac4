package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The hostile recordings are made by the tests from one real recording:
// a live run of the suite on a 64 MiB regular file with
// testdata/hostile.toml (two sequential cells, a fill and its verify
// pass, a 1-drive scaling step sharing the cells' recordings), each copy
// then edited the way a broken or compromised runner could.
const (
	hostileCap   = "64MiB"
	hostileRead  = "TestSingleDrive/" + hostileCap + "/128KB_Sequential_Read"
	hostileWrite = "TestSingleDrive/" + hostileCap + "/128KB_Sequential_Write"
	// canaryEnv is in the judge's environment, canaryFile in a file
	// beside the recording: neither may reach a report.
	canaryEnv  = "DRIVEQUAL_CANARY=env-7f3a91c2-not-for-reports"
	canaryFile = "CANARY-FILE-5d0c2e6b-outside-the-recording"
	// addressLimitKiB is the address space the replay of a hostile
	// recording runs in (ulimit -v): 4 GiB.
	addressLimitKiB = 4 << 20
)

// hostileCase is one hostile edit of the recording in dir; outside is a
// directory beside it holding canary.json, a valid fio output (the
// recording's own read cell) with the canary on its first line. want is
// what the replay must say, naming the file.
type hostileCase struct {
	name string
	edit func(t *testing.T, dir, outside string)
	want []string
	// refused says the replay is refused before it judges anything:
	// exit 2, no report.
	refused bool
}

var hostileCases = []hostileCase{
	{"cell output is a symlink to /proc/self/environ", func(t *testing.T, dir, _ string) {
		replaceWithSymlink(t, dir, hostileRead+".json", "/proc/self/environ")
	}, []string{hostileRead + ".json: is a symlink (to \"/proc/self/environ\")"}, false},
	{"cell output is a symlink to a file outside", func(t *testing.T, dir, outside string) {
		replaceWithSymlink(t, dir, hostileRead+".json", filepath.Join(outside, "canary.json"))
	}, []string{hostileRead + ".json: is a symlink"}, false},
	{"cell output is a hard link to a file outside", func(t *testing.T, dir, outside string) {
		// The canary's first line is not JSON: read, it was quoted into
		// the cell's error in every report.
		p := filepath.Join(dir, filepath.FromSlash(hostileRead)+".json")
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.WriteFile(filepath.Join(outside, "shadow"), []byte(canaryFile+":19000:0:99999:7:::\n"), 0o600))
		require.NoError(t, os.Link(filepath.Join(outside, "shadow"), p))
	}, []string{hostileRead + ".json: has 2 hard links"}, false},
	{"cell output is a FIFO", func(t *testing.T, dir, _ string) {
		p := filepath.Join(dir, filepath.FromSlash(hostileRead)+".json")
		require.NoError(t, os.Remove(p))
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}, []string{hostileRead + ".json: is a FIFO, not a regular file"}, false},
	{"cell output is a symlink to /dev/zero", func(t *testing.T, dir, _ string) {
		replaceWithSymlink(t, dir, hostileRead+".json", "/dev/zero")
	}, []string{hostileRead + ".json: is a symlink (to \"/dev/zero\")"}, false},
	{"cell output is a 2 GiB sparse file", func(t *testing.T, dir, _ string) {
		p := filepath.Join(dir, filepath.FromSlash(hostileRead)+".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		// A line of 2 GiB that starts as the recorded output: read whole
		// and quoted, it would be a report of gigabytes.
		require.NoError(t, os.WriteFile(p, bytes.TrimRight(data, "\n"), 0o644))
		require.NoError(t, os.Truncate(p, 2<<30))
	}, []string{hostileRead + ".json: holds 2147483648 bytes, above the 64 MiB a recording's fio output may hold"}, false},
	{"cell output of 2.2 million jobs just under the size limit", func(t *testing.T, dir, _ string) {
		// 29 bytes a job, a kilobyte and more each decoded: 64 MB
		// exhausted 4 GiB.
		p := filepath.Join(dir, filepath.FromSlash(hostileRead)+".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		i := bytes.Index(data, []byte(`"jobs" : [`))
		require.GreaterOrEqual(t, i, 0)
		i += len(`"jobs" : [`)
		jobs := bytes.Repeat([]byte(`{"jobname":"j","groupid":0},`+"\n"), 2_200_000)
		require.NoError(t, os.WriteFile(p, append(append(append([]byte(nil), data[:i]...), jobs...), data[i:]...), 0o644))
	}, []string{hostileRead + ".json: fio JSON object at line 1: 2200001 jobs, more than the 4096 fio runs at most"}, false},
	{"shared climbs out of the recording", func(t *testing.T, dir, outside string) {
		editRun(t, dir, func(m map[string]any) {
			m["shared"].(map[string]any)["TestScaling/1_drives/128KB_Sequential_Read"] = "../" + filepath.Base(outside) + "/canary"
		})
	}, []string{"climbs out of the recording", "canary.json"}, false},
	{"shared is an absolute path", func(t *testing.T, dir, outside string) {
		editRun(t, dir, func(m map[string]any) {
			m["shared"].(map[string]any)["TestScaling/1_drives/128KB_Sequential_Read"] = filepath.Join(outside, "canary")
		})
	}, []string{"is an absolute path, outside the recording", "canary.json"}, false},
	{"verify raw climbs out of the recording", func(t *testing.T, dir, outside string) {
		editRun(t, dir, func(m map[string]any) {
			m["verify"].([]any)[0].(map[string]any)["raw"] = "../" + filepath.Base(outside) + "/canary.json"
		})
	}, []string{"the verify pass's recording does not read", "climbs out of the recording"}, false},
	{"verify raw is an absolute path", func(t *testing.T, dir, outside string) {
		editRun(t, dir, func(m map[string]any) {
			m["verify"].([]any)[0].(map[string]any)["raw"] = filepath.Join(outside, "canary.json")
		})
	}, []string{"the verify pass's recording does not read", "is an absolute path, outside the recording"}, false},
	{"capacity name climbs out of the recording", func(t *testing.T, dir, outside string) {
		// The recorded spec's capacity is named so that its cells'
		// outputs would be read from beside the recording, where valid
		// outputs wait.
		name := "../../" + filepath.Base(outside)
		editRun(t, dir, func(m map[string]any) {
			m["spec_text"] = strings.ReplaceAll(m["spec_text"].(string), `"`+hostileCap+`"`, `"`+name+`"`)
			for _, d := range m["drives"].([]any) {
				d.(map[string]any)["capacity"] = name
			}
			var tests []any
			for _, tt := range m["tests"].([]any) {
				tests = append(tests, strings.ReplaceAll(tt.(string), hostileCap, name))
			}
			m["tests"] = tests
			shared := map[string]any{}
			for k, v := range m["shared"].(map[string]any) {
				shared[k] = strings.ReplaceAll(v.(string), hostileCap, name)
			}
			m["shared"] = shared
		})
		for _, w := range []string{hostileRead, hostileWrite} {
			data, err := os.ReadFile(filepath.Join(outside, "canary.json"))
			require.NoError(t, err)
			p := filepath.Join(outside, filepath.Base(w)+".json")
			require.NoError(t, os.WriteFile(p, data, 0o644))
		}
	}, []string{"climbs out of the recording", "128KB_Sequential_Read.json"}, false},
	{"run.json is a FIFO", func(t *testing.T, dir, _ string) {
		p := filepath.Join(dir, "run.json")
		require.NoError(t, os.Remove(p))
		require.NoError(t, syscall.Mkfifo(p, 0o644))
	}, []string{"parsing -replay: " + "%DIR%/run.json: is a FIFO, not a regular file"}, true},
	{"run.json is a symlink to a run.json outside", func(t *testing.T, dir, outside string) {
		require.NoError(t, os.Rename(filepath.Join(dir, "run.json"), filepath.Join(outside, "run.json")))
		require.NoError(t, os.Symlink(filepath.Join(outside, "run.json"), filepath.Join(dir, "run.json")))
	}, []string{"parsing -replay: " + "%DIR%/run.json: is a symlink"}, true},
	{"cell output missing", func(t *testing.T, dir, _ string) {
		require.NoError(t, os.Remove(filepath.Join(dir, filepath.FromSlash(hostileRead)+".json")))
	}, []string{"recorded output missing: " + "%DIR%/" + hostileRead + ".json"}, false},
}

// A replay of each hostile recording exits non-zero with an error that
// names the file, within the address-space limit and a generous hang
// guard, and neither the canary in its environment nor the canary file
// beside the recording appears in any report it writes.
func TestHostileRecordings(t *testing.T) {
	testenv.MustHaveFio(t)
	runParallel(t)
	base := recordHostile(t)
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			dir, outside := filepath.Join(top, "rec"), filepath.Join(top, "outside")
			require.NoError(t, os.CopyFS(dir, os.DirFS(base)))
			require.NoError(t, os.Mkdir(outside, 0o755))
			cell, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(hostileRead)+".json"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(outside, "canary.json"), append([]byte(canaryFile+"\n"), cell...), 0o644))
			c.edit(t, dir, outside)

			r, use := replayLimited(t, dir)
			t.Logf("replay: exit %d, %s wall, peak RSS %d MiB (address space limited to %d GiB)",
				r.Code, use.wall.Round(time.Millisecond), use.maxRSSKiB>>10, addressLimitKiB>>20)
			out := r.Stdout + r.Stderr
			if os.Getenv("HOSTILE_SHOW") != "" {
				t.Logf("%s", out)
			}
			assert.NotEqual(t, 0, r.Code, "a hostile recording never passes:\n%s", out)
			for _, w := range c.want {
				assert.Contains(t, out, strings.ReplaceAll(w, "%DIR%", dir), "the replay says what it refused, naming the file")
			}
			assert.NotContains(t, out, "fatal error: runtime: out of memory")
			if c.refused {
				assert.Equal(t, 2, r.Code, "refused before any cell")
				assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))
				return
			}
			for _, f := range []string{"results.json", "summary.md", "junit.xml"} {
				assert.FileExists(t, filepath.Join(r.Report, f), "the replay writes its report")
			}
			value := strings.SplitN(canaryEnv, "=", 2)[1]
			require.NoError(t, filepath.WalkDir(r.Report, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.NotContains(t, string(data), value, "%s holds the judge's environment", p)
				assert.NotContains(t, string(data), canaryFile, "%s holds a file from outside the recording", p)
				assert.Less(t, len(data), 16<<20, "%s stays small", p)
				return nil
			}))
		})
	}
}

// usage is what a replay cost.
type usage struct {
	wall      time.Duration
	maxRSSKiB int64
}

// replayLimited replays dir as the suite's child process in an address
// space of addressLimitKiB (bash's ulimit -v, then exec), with canaryEnv
// in its environment. The 60 s context only guards against a hang.
func replayLimited(t *testing.T, dir string) (result, usage) {
	t.Helper()
	res := result{Report: filepath.Join(t.TempDir(), "report")}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"-c", "ulimit -v " + strconv.Itoa(addressLimitKiB) + ` && exec "$0" "$@"`, suiteBin,
		"-test.count=1", "-test.v=true", "-replay=" + dir, "-report=" + res.Report}
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Dir = acceptanceDir
	cmd.Env = append(os.Environ(), canaryEnv, marker(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	u := usage{wall: time.Since(start)}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		t.Fatalf("the replay of %s did not end within 60 s (a hang):\n%s%s", dir, res.Stdout, res.Stderr)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.maxRSSKiB = ru.Maxrss
	}
	return res, u
}

// recordHostile records the real run the hostile recordings are made
// from, and checks that it replays QUALIFIED as recorded.
func recordHostile(t *testing.T) string {
	t.Helper()
	file := newTargetFile(t, 64<<20)
	raw := filepath.Join(t.TempDir(), "raw")
	r := runSuite(t, nil, "-spec="+testdataFile(t, "hostile.toml"), "-drives="+file, "-destructive", "-record="+raw)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	var info record.Run
	data, err := os.ReadFile(filepath.Join(raw, "run.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	require.Contains(t, info.Tests, hostileRead)
	require.Len(t, info.Verify, 1)
	require.Contains(t, info.Shared, "TestScaling/1_drives/128KB_Sequential_Read")
	r, _ = replayLimited(t, raw)
	require.Equal(t, 0, r.Code, "the recording as made replays QUALIFIED:\n%s%s", r.Stdout, r.Stderr)
	return raw
}

// replaceWithSymlink makes rel in dir a symlink to target.
func replaceWithSymlink(t *testing.T, dir, rel, target string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.Symlink(target, p))
}

// editRun rewrites run.json in dir through edit.
func editRun(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	edit(m)
	data, err = json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data, 0o644))
}
