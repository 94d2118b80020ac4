package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/brief"
	"github.com/drivequal/drivequal/acceptance/internal/browser"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
	"github.com/drivequal/drivequal/specs"
)

// fixturesDir is the brief's reconstructed recording.
func fixturesDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(acceptanceDir, "..", "fixtures", "solidigm-d7-ps1010")
}

// With no flags the suite replays the brief: every single-drive cell
// passes with the brief's "% of Spec", and the eight 24-drive scaling
// cells pass with the ratios of the brief's figures.
func TestDefaultReplayReproducesTheBrief(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	r := runSuite(t, nil)
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	run := r.results(t)
	assert.Equal(t, "replay", run.Mode)
	assert.Equal(t, "Solidigm D7-PS1010", run.Spec)
	// The figures are reconstructed from the brief: the run says that no
	// drive was measured, on the terminal and in every report.
	assert.True(t, run.Reconstructed)
	const measured = "replay of figures reconstructed from Solidigm D7-PS1010 performance brief, 2024, Tables 2-5; no drive was measured"
	assert.Contains(t, r.Stdout, "drivequal: QUALIFIED: 1.92TB, 3.84TB, 7.68TB, 15.36TB and scaling: 48 of 48 cells passed ("+measured+")")
	for _, gate := range []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB", "scaling"} {
		assert.Contains(t, r.Stdout, "--- PASS: TestVerdict/"+gate+" ")
	}

	data, err := brief.ReadData(filepath.Join(fixturesDir(t), "brief.toml"))
	require.NoError(t, err)
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	byTest := map[string]report.Result{}
	for _, res := range run.Results {
		byTest[res.Test] = res
	}
	single := 0
	for capy, cells := range data.Single {
		assert.Contains(t, string(summary), capy+": QUALIFIED** ("+measured+")")
		for w, c := range cells {
			res, ok := byTest["TestSingleDrive/"+capy+"/"+specs.SubtestName(w)]
			require.True(t, ok, "%s %s judged", capy, w)
			single++
			assert.Equal(t, report.Pass, res.Verdict)
			pct := fmt.Sprintf("%.2f %%", float64(c.Actual)/float64(c.Spec)*100)
			if c.PrintedPercent > 0 {
				assert.Equal(t, fmt.Sprintf("%.2f %%", c.PrintedPercent), pct, "%s %s: the brief's printed %% of Spec", capy, w)
			}
			assert.Contains(t, string(summary), "| "+w+" | ", capy)
			assert.Contains(t, string(summary), pct, "%s %s: %% of Spec to two decimals", capy, w)
		}
	}
	assert.Equal(t, 32, single)

	wantRatio := map[string]float64{
		"4KB Random Read": 1.018, "4KB Random Write": 1.000, "4KB Random Mixed Read Write 70/30": 1.020,
		"8KB Random Read": 0.948, "8KB Random Write": 1.000, "8KB Random Mixed Read Write 70/30": 1.024,
		"128KB Sequential Read": 0.994, "128KB Sequential Write": 1.037,
	}
	for w, want := range wantRatio {
		res, ok := byTest["TestScaling/24_drives/"+specs.SubtestName(w)]
		require.True(t, ok, w)
		assert.Equal(t, report.Pass, res.Verdict, w)
		assert.Equal(t, 24, res.Drives, w)
		assert.Len(t, res.PerDrive, 24, w)
		assert.Equal(t, want, math.Round(res.Ratio*1000)/1000, "%s: ratio to 24 × spec", w)
		chart := filepath.Join(r.Report, "charts", specs.SubtestName(w)+".svg")
		svg, err := os.ReadFile(chart)
		if assert.NoError(t, err, "chart for %s", w) {
			assert.True(t, bytes.Contains(svg, []byte("<svg")), chart)
		}
	}
	charts, _ := filepath.Glob(filepath.Join(r.Report, "charts", "*.svg"))
	assert.Len(t, charts, 8)
	// index.html beside summary.md, its path on the terminal; in
	// Chromium it reads QUALIFIED first, the four capacities on the first
	// screen, with nothing fetched and no error.
	pagePath := filepath.Join(r.Report, page.File)
	assert.Contains(t, r.Stdout, "\npage: "+pagePath+"\n")
	got := browser.Open(t, browser.Launch(t), pagePath)
	assert.Empty(t, got.Problems())
	assert.Equal(t, report.Qualified, got.Decision.Text)
	assert.True(t, got.Decision.OnScreen() && got.Gates.OnScreen(), "the decision and the verdicts are in the first screen")
	for _, c := range []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB"} {
		assert.Contains(t, got.Gates.Text, c+"QUALIFIED")
	}
	assert.Len(t, got.Charts, 8)
	rr := byTest["TestScaling/24_drives/8KB_Random_Read"]
	assert.Contains(t, rr.Error+scalingSection(string(summary), "8KB Random Read"), "below linear",
		"8KB Random Read passes within tolerance but is reported below linear")
}

// scalingSection is the part of summary.md about one scaling workload.
func scalingSection(summary, workload string) string {
	i := strings.Index(summary, "## Scaling")
	if i < 0 {
		return ""
	}
	s := summary[i:]
	j := strings.Index(s, "### "+workload+"\n")
	if j < 0 {
		return ""
	}
	s = s[j+1:]
	if k := strings.Index(s, "\n### "); k >= 0 {
		s = s[:k]
	}
	return s
}

// A recorded 24-drive run in which one drive delivered 20 % less than the
// others fails its cell and names that drive.
func TestReplayNamesTheSlowDrive(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixturesDir(t))))
	path := filepath.Join(dir, "TestScaling", "24_drives", "4KB_Random_Read.json")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	require.NoError(t, dec.Decode(&out))
	slowed := 0
	for _, j := range out["jobs"].([]any) {
		job := j.(map[string]any)
		if job["groupid"].(json.Number).String() != "5" {
			continue
		}
		read := job["read"].(map[string]any)
		for _, k := range []string{"io_bytes", "total_ios"} {
			n, err := read[k].(json.Number).Int64()
			require.NoError(t, err)
			read[k] = n * 8 / 10
		}
		slowed++
	}
	require.Equal(t, 8, slowed, "drive 6 of the recording has 8 jobs")
	edited, err := json.Marshal(out)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, edited, 0o644))

	r := runSuite(t, []string{"-test.run=TestScaling/24_drives/4KB_Random_Read$"}, "-replay="+dir)
	assert.NotEqual(t, 0, r.Code)
	res := r.results(t).Results
	require.Len(t, res, 1)
	assert.Equal(t, report.Fail, res[0].Verdict)
	assert.Contains(t, res[0].Error, "brief/1.92TB/06", "the slow drive is named")
	assert.Contains(t, res[0].Error, "below the median")
	assert.NotContains(t, res[0].Error, "brief/1.92TB/05")
	var slow report.DriveResult
	for _, d := range res[0].PerDrive {
		if d.Path == "brief/1.92TB/06" {
			slow = d
		}
	}
	assert.Equal(t, report.Fail, slow.Verdict)
	assert.InDelta(t, 0.8*57_400_000/24, slow.Actual, 2)
}

// A bad spec given with -dry-run is refused with every problem, each naming
// the file, the line and the key.
func TestBadSpecIsRefusedWithEveryProblem(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	bad, err := filepath.Abs(filepath.Join(acceptanceDir, "..", "specs", "testdata", "bad", "typo.toml"))
	require.NoError(t, err)
	r := runSuite(t, nil, "-spec="+bad, "-dry-run")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "typo.toml:14:")
	assert.Contains(t, r.Stderr, `unknown key "iodeph"`)
	assert.Contains(t, r.Stderr, "typo.toml:8:", "the missing iodepth is reported too")
	assert.NotContains(t, r.Stdout+r.Stderr, "panic:")
	assert.NoDirExists(t, r.Report, "a refused run writes nothing")
}

// A replay of a directory with no recordings, or one that judges nothing,
// must not pass: a typo in -replay would otherwise qualify nothing.
func TestReplayThatJudgesNothingFails(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	r := runSuite(t, nil, "-replay="+t.TempDir())
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "holds no recorded outputs")

	// -replay=report (the report directory) points at its raw/.
	report := t.TempDir()
	cell := filepath.Join(report, "raw", "TestSingleDrive", "1.92TB")
	require.NoError(t, os.MkdirAll(cell, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cell, "4KB_Random_Read.json"), []byte("{}"), 0o644))
	r = runSuite(t, nil, "-replay="+report)
	assert.NotEqual(t, 0, r.Code)
	raw := filepath.Join(report, "raw")
	assert.Contains(t, r.Stderr, "parsing -replay: "+report+" holds no recorded outputs, "+raw+" does: give -replay="+raw)

	r = runSuite(t, []string{"-test.run=TestNoSuchCell"}, "-replay="+fixturesDir(t))
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stdout, "drivequal: INCONCLUSIVE: nothing was judged")

	// A misspelt workload in -run is said, with the name meant.
	r = runSuite(t, []string{"-test.run=TestSingleDrive/1.92TB/4KB_Random_Reed"}, "-replay="+fixturesDir(t))
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, `drivequal: warning: -run: "4KB_Random_Reed" matches no workload of the spec, so TestSingleDrive/1.92TB/4KB_Random_Reed selects no cell; did you mean "4KB_Random_Read"?`)
	assert.Contains(t, r.Stdout, "--- FAIL: TestVerdict ", "the gate runs whatever -run selects")
	assert.NotRegexp(t, `(?m)^PASS$`, r.Stdout)
}

// With baseline = "single", N drives are judged against N × the measured
// single drive: the 1-drive scaling cell is its own baseline.
func TestReplayWithMeasuredBaseline(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	builtin, err := os.ReadFile(filepath.Join(acceptanceDir, "..", "specs", "solidigm-d7-ps1010.toml"))
	require.NoError(t, err)
	edited := strings.Replace(string(builtin), `baseline  = "spec"`, `baseline  = "single"`, 1)
	require.NotEqual(t, string(builtin), edited, "the built-in spec sets its baseline")
	spec := filepath.Join(t.TempDir(), "solidigm-single.toml")
	require.NoError(t, os.WriteFile(spec, []byte(edited), 0o644))

	r := runSuite(t, []string{"-test.run=TestScaling"}, "-spec="+spec, "-replay="+fixturesDir(t))
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	res := map[string]report.Result{}
	for _, x := range r.results(t).Results {
		res[x.Test] = x
	}
	one := res["TestScaling/1_drives/4KB_Random_Read"]
	assert.Equal(t, one.Actual, one.Expected)
	assert.Equal(t, 1.0, one.Ratio)
	all := res["TestScaling/24_drives/4KB_Random_Read"]
	assert.Equal(t, 24*2_409_894.0, all.Expected, "24 × the measured single drive")
	assert.InDelta(t, 57_400_000/(24*2_409_894.0), all.Ratio, 1e-9)
}

// A workload a capacity gives no figure for is a skipped cell that says
// why, not a missing one.
func TestCellWithoutFigureIsSkipped(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	builtin, err := os.ReadFile(filepath.Join(acceptanceDir, "..", "specs", "solidigm-d7-ps1010.toml"))
	require.NoError(t, err)
	var kept []string
	dropped, in384 := 0, false
	for _, l := range strings.Split(string(builtin), "\n") {
		if strings.HasPrefix(l, "name") {
			in384 = strings.Contains(l, `"3.84TB"`)
		}
		if in384 && strings.HasPrefix(l, `"8KB Random Write"`) {
			dropped++
			continue
		}
		kept = append(kept, l)
	}
	require.Equal(t, 1, dropped, "the 3.84TB table has an 8KB Random Write figure")
	spec := filepath.Join(t.TempDir(), "no-8k-write.toml")
	require.NoError(t, os.WriteFile(spec, []byte(strings.Join(kept, "\n")), 0o644))

	r := runSuite(t, []string{"-test.run=TestSingleDrive/3.84TB"}, "-spec="+spec, "-replay="+fixturesDir(t))
	require.Equal(t, 0, r.Code, "stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	assert.Contains(t, r.Stdout, "--- SKIP: TestSingleDrive/3.84TB/8KB_Random_Write")
	assert.Contains(t, r.Stdout, "gives no figure for 8KB Random Write at 3.84TB")
	assert.Len(t, r.results(t).Results, 7)
}

// Every problem of a command line is listed at once: the flags', the
// spec's and the drives'.
func TestEveryProblemAtOnce(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	missing := filepath.Join(t.TempDir(), "nvme9n9")
	r := runSuite(t, nil, "-runtime=soon", "-spec=no-such-drive", "-drives="+missing, "-destructive")
	assert.NotEqual(t, 0, r.Code)
	assert.Contains(t, r.Stderr, "refusing to run (3 problems)")
	assert.Contains(t, r.Stderr, `parsing -runtime: "soon" is not a duration`)
	assert.Contains(t, r.Stderr, `parsing -spec: loading spec "no-such-drive"`)
	assert.Contains(t, r.Stderr, "parsing -drives: "+missing+": does not exist")
}

// The 24-drive loop-device recording (fixtures/loop24) replays to the
// results the junit and report packages' 24-drive goldens are made from,
// and its terminal and JUnit read at that size: no line of 160 characters
// or more names drives one by one, no JUnit message passes 300.
func TestReplayTwentyFourDrives(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	r := runSuite(t, nil, "-replay="+filepath.Join(acceptanceDir, "..", "fixtures", "loop24"))
	require.NotEqual(t, 0, r.Code, "18 cells are inconclusive")
	got := r.results(t)
	data, err := os.ReadFile(filepath.Join(acceptanceDir, "internal", "junit", "testdata", "runs", "loop24.json"))
	require.NoError(t, err)
	var want report.Run
	require.NoError(t, json.Unmarshal(data, &want))
	require.Len(t, got.Results, len(want.Results))
	for i, w := range want.Results {
		g := got.Results[i]
		assert.Equal(t, [3]string{w.Test, w.Verdict, w.Error}, [3]string{g.Test, g.Verdict, g.Error})
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		// ATTR lines are go test's machine-readable attributes, which
		// gotestsum does not show; they keep every path.
		if !strings.HasPrefix(l, "=== ATTR") && strings.Contains(l, "/dev/loop0,/dev/loop1,") {
			t.Errorf("the terminal lists every drive: %.200s", l)
		}
	}
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`message="([^"]*)"`).FindAllStringSubmatch(string(junit), -1) {
		assert.LessOrEqual(t, utf8.RuneCountInString(html.UnescapeString(m[1])), 300, m[1])
	}
}

// A run into a -report directory holding an earlier run's files leaves
// none of them behind (a chart of a workload this run did not judge
// would read as its own), and removes nothing it did not write: a user's
// file beside them, and the recording kept under raw/, stay.
func TestRunRemovesAnEarlierRunsReport(t *testing.T) {
	runParallel(t) // replays: no drive, nothing timed
	rep := filepath.Join(t.TempDir(), "report")
	first := runSuite(t, nil, "-replay="+fixturesDir(t), "-report="+rep)
	require.Equal(t, 0, first.Code, first.Stderr)
	charts, _ := filepath.Glob(filepath.Join(rep, "charts", "*.svg"))
	require.Len(t, charts, 8, "the brief's scaling charts")
	mine := filepath.Join(rep, "charts", "my-own.svg")
	require.NoError(t, os.WriteFile(mine, []byte("<svg/>"), 0o644))
	recording := filepath.Join(rep, "raw", "run.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(recording), 0o755))
	require.NoError(t, os.WriteFile(recording, []byte("{}"), 0o644))

	// The second run judges no scaling step: it draws no scaling chart.
	second := runSuite(t, []string{"-test.run=TestSingleDrive"}, "-replay="+fixturesDir(t), "-report="+rep)
	require.Equal(t, 0, second.Code, second.Stderr)
	assert.Contains(t, second.Stdout, "drivequal: removed 8 files an earlier run wrote in "+rep+": charts/", "the earlier run's files this run did not write again")
	for _, c := range charts {
		assert.NoFileExists(t, c, "the earlier run's chart")
	}
	assert.FileExists(t, mine, "a user's own file stays")
	assert.FileExists(t, recording, "a recording in the report directory stays")
	res := second.results(t)
	for _, r := range res.Results {
		assert.NotEqual(t, report.KindScaling, r.Kind, "results.json is the second run's")
	}
	assert.FileExists(t, filepath.Join(rep, "summary.md"))
	assert.FileExists(t, filepath.Join(rep, "junit.xml"))
}
