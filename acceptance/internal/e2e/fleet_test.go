package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// Two hosts' live runs (DRIVEQUAL_HOSTNAME names them) replayed as one
// fleet: each run's cells keep their verdicts, TestFleet cells appear, and
// the drive made slow is named as the fleet's outlier with its host. The
// slow drive is made by editing host-b's recording of 4KB Random Read:
// its total_ios divided by 10 (fio's IOPS is total_ios / runtime).
func TestFleetOfTwoHosts(t *testing.T) {
	// Two cells are enough for a fleet: the one made slow, and one left alone.
	run := []string{"-test.run=TestSingleDrive/1GiB/(4KB_Random_Read|128KB_Sequential_Read)$"}
	var dirs []string
	for _, h := range []string{"host-a", "host-b"} {
		// On a tmpfs: two devices on the machine's disk, measured seconds
		// apart, can differ by more than the fleet's tolerance.
		dev := tmpfsLoop(t, 256<<20, 257<<20)
		r := runSuiteIn(t, []string{"DRIVEQUAL_HOSTNAME=" + h}, run, "-spec="+loopSpec(t), "-drives="+dev, "-destructive", "-capacity=1GiB")
		noFioLeft(t)
		require.Equal(t, h, r.results(t).Host.Hostname, "results.json names the host")
		dirs = append(dirs, filepath.Join(r.Report, "raw"))
	}
	slow := filepath.Join(dirs[1], "TestSingleDrive", "1GiB", "4KB_Random_Read.json")
	data, err := os.ReadFile(slow)
	require.NoError(t, err)
	ios := regexp.MustCompile(`"total_ios" : ([1-9][0-9]*)`)
	edited := ios.ReplaceAllStringFunc(string(data), func(m string) string {
		n, _ := strconv.Atoi(ios.FindStringSubmatch(m)[1])
		return `"total_ios" : ` + strconv.Itoa(n/10)
	})
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(slow, []byte(edited), 0o644))

	alone := runSuite(t, nil, "-replay="+dirs[1]).verdicts(t)
	both := runSuite(t, nil, "-replay="+strings.Join(dirs, ","))
	res := both.results(t)
	require.Len(t, res.Hosts, 2)
	for _, r := range res.Results {
		switch {
		case r.Kind == report.KindFleet:
		case r.Host == "host-b":
			test := strings.Replace(r.Test, "/host-b/", "/", 1)
			require.Contains(t, alone, test)
			assert.Equal(t, alone[test], r.Verdict, "%s keeps its verdict in the fleet", r.Test)
		}
	}
	var fleet, alike *report.Result
	for i, r := range res.Results {
		switch r.Test {
		case "TestFleet/1GiB/4KB_Random_Read":
			fleet = &res.Results[i]
		case "TestFleet/1GiB/128KB_Sequential_Read":
			alike = &res.Results[i]
		}
	}
	require.NotNil(t, fleet, "a TestFleet cell per capacity and workload")
	assert.Equal(t, report.Fail, fleet.Verdict)
	assert.Contains(t, fleet.Error, "host-b:/dev/loop")
	assert.Contains(t, both.Stdout, "--- FAIL: TestFleet/1GiB/4KB_Random_Read")
	require.NotNil(t, alike)
	assert.Equal(t, 0.5, alike.Tolerance, "the fleet's tolerance is loop.toml's scaling tolerance, though no scaling cell ran")
	for _, r := range []*report.Result{fleet, alike} {
		t.Logf("%s: spread %.1f %%: %+v", r.Test, r.Spread*100, r.PerDrive)
	}
	assert.Equal(t, report.Pass, alike.Verdict, "the drives agree on the cell left alone (within loop.toml's 50 %%): %s %+v", alike.Error, alike.PerDrive)
	assert.Contains(t, both.Stdout, "--- PASS: TestFleet/1GiB/128KB_Sequential_Read")
	summary, err := os.ReadFile(filepath.Join(both.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Fleet")
	assert.Contains(t, string(summary), "(limit 50.00 %)", "each fleet row shows the spread's limit")
	assert.FileExists(t, filepath.Join(both.Report, "charts", "fleet.svg"))
	junit, err := os.ReadFile(filepath.Join(both.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), `name="4KB_Random_Read" classname="TestFleet/1GiB"`)
	assert.Contains(t, string(junit), `classname="TestSingleDrive/host-b/1GiB"`, "each host's cells under its name, as go test names them")

	// A run judged by another spec is refused with the other runs, both
	// specs named.
	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.CopyFS(other, os.DirFS(dirs[0])))
	info, err := os.ReadFile(filepath.Join(other, "run.json"))
	require.NoError(t, err)
	edit := strings.NewReplacer(`"spec_name": "loop"`, `"spec_name": "loop-edited"`, `loop.toml"`, `loop-edited.toml"`,
		`"spec_text": "#`, `"spec_text": "# edited for this test\n#`)
	require.NoError(t, os.WriteFile(filepath.Join(other, "run.json"), []byte(edit.Replace(string(info))), 0o644))
	refused := runSuite(t, nil, "-replay="+dirs[0]+","+other)
	assert.Equal(t, 2, refused.Code)
	assert.Contains(t, refused.Stderr, "testdata/loop.toml", "the spec of one run")
	assert.Contains(t, refused.Stderr, "testdata/loop-edited.toml", "and of the other")
	assert.NoDirExists(t, refused.Report, "a refused fleet replay writes nothing")
}
