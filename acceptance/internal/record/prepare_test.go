package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/steady"
	"github.com/drivequal/drivequal/fiojob"
)

const fixtureDir = "../../../fixtures/fio"

// jsonPlusBins matches one json+ clat_ns (or lat_ns) bins object and the
// comma before it: fio prints it flat, one "latency ns" : count a line.
var jsonPlusBins = regexp.MustCompile(`,\s*"bins" : \{[^{}]*\}`)

// asPlainJSON is fio's json+ output data as fio's plain json prints the
// same run: json+ without its bins (TestPlainJSONIsJSONPlusWithoutBins).
func asPlainJSON(data []byte) []byte { return jsonPlusBins.ReplaceAll(data, nil) }

// A random preconditioning step recorded as json+ (every recording made
// before PrepareFormat) and the same step as plain json give the same
// steady-state rounds, verdicts and stopping report, and the same
// progress-line rates, report by report, while plain json is at most a
// third of the bytes of a loaded step: fixtures/fio/precondition-1m.json (the suite's own
// random preconditioning job at the PTS's 1-minute round, two loop
// devices, 43 status reports) and precondition-1m-starved.json (its
// reports up to 79 s apart).
func TestPrepareFormatSameSteadyState(t *testing.T) {
	// loose holds any drive within 150 % of its mean, as a loop device's
	// do, so that the run also stops: where it stops must agree too.
	loose := steady.Rule{Window: 5, MaxRange: 1.5, MaxExcursion: 1.5}
	for _, name := range []string{"precondition-1m", "precondition-1m-starved"} {
		t.Run(name, func(t *testing.T) {
			plus, err := os.ReadFile(filepath.Join(fixtureDir, name+".json"))
			require.NoError(t, err)
			plain := asPlainJSON(plus)
			require.NotContains(t, string(plain), `"bins"`)
			t.Logf("%s: %d bytes as json+, %d as plain json (%.1f %%)", name, len(plus), len(plain), 100*float64(len(plain))/float64(len(plus)))
			if name == "precondition-1m" {
				// Drives under load spread their latencies over hundreds of
				// bins a report. (A starved run's few I/Os fill few bins:
				// there plain json is about half.)
				require.LessOrEqual(t, 3*len(plain), len(plus), "plain json must be a third of json+ or less")
			}

			for _, rule := range []steady.Rule{steady.DefaultRule, loose} {
				a, aStop, aRates := track(t, plus, rule)
				b, bStop, bRates := track(t, plain, rule)
				require.Greater(t, len(aRates), 10, "status reports read")
				require.Equal(t, aStop, bStop, "the report that stops the step")
				require.Equal(t, aRates, bRates, "each report's rates (the progress lines)")
				// Unmeasured rounds are NaN, which Equal never equates:
				// compare them as printed (every digit of every float).
				require.Equal(t, fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b), "rounds and verdicts")
				for _, res := range a {
					require.NotEmpty(t, res.Rounds)
				}
			}

			// The final report judges the step the same way too.
			po, err := fiojob.Parse(plus)
			require.NoError(t, err)
			qo, err := fiojob.Parse(plain)
			require.NoError(t, err)
			for i, g := range po.Groups() {
				q := qo.Groups()[i]
				require.Equal(t, g.Runtime, q.Runtime)
				require.Equal(t, g.Write.TotalIOs, q.Write.TotalIOs)
				require.Equal(t, g.Write.IOBytes, q.Write.IOBytes)
				require.Equal(t, g.Errors, q.Errors)
			}
		})
	}
}

// track feeds data's status reports to a Tracker as a live step does:
// the reports until the one that stops it, and fio's final report after.
// It returns the drives' results, the report that stopped the step (0:
// none) and every report's per-drive IOPS and MB/s.
func track(t *testing.T, data []byte, rule steady.Rule) ([]steady.Result, int, [][]float64) {
	t.Helper()
	tr := steady.NewTracker(rule, time.Minute, 2)
	stopped := 0
	var rates [][]float64
	err := fiojob.WatchStatus(bytes.NewReader(data), func(p fiojob.Progress) {
		var r []float64
		for _, iv := range p.Interval {
			r = append(r, iv.IOPS(), iv.MBps())
		}
		rates = append(rates, r)
		if stopped == 0 && tr.Report(p) {
			stopped = p.N
		}
	})
	require.NoError(t, err)
	return tr.Results(), stopped, rates
}

// fio 3.33's plain json is its json+ without the bins: the same run
// printed both ways has the same keys everywhere else.
func TestPlainJSONIsJSONPlusWithoutBins(t *testing.T) {
	fio, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed")
	}
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	require.NoError(t, os.WriteFile(job, []byte(fiojob.RandomPrecondition(
		[]fiojob.Target{{Path: filepath.Join(dir, "target"), Size: 8 << 20}}, 4096, 2*time.Second, "", 0).File()), 0o644))
	keys := func(format string) []string {
		out, err := exec.CommandContext(t.Context(), fio, "--output-format="+format, "--status-interval=1", job).Output()
		require.NoError(t, err, "fio --output-format=%s", format)
		var last map[string]any
		require.NoError(t, fiojob.WatchStatus(bytes.NewReader(out), func(p fiojob.Progress) {}))
		// The final report is the last object; its keys, bins left out.
		i := bytes.LastIndex(out, []byte("\n{"))
		require.NoError(t, json.Unmarshal(out[i+1:], &last))
		return keyPaths("", last)
	}
	plus, plain := keys(fiojob.FormatJSONPlus), keys(fiojob.FormatJSON)
	require.Contains(t, plus, "/jobs[]/write/clat_ns/bins", "json+ has bins")
	require.Equal(t, slices.DeleteFunc(plus, func(k string) bool { return k == "/jobs[]/write/clat_ns/bins" }), plain)
}

// keyPaths lists the paths of v's object keys, sorted and once each; a
// bins object's own keys (latencies) are left out.
func keyPaths(at string, v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out = append(out, at+"/"+k)
			if k != "bins" && k != "percentile" {
				out = append(out, keyPaths(at+"/"+k, x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, keyPaths(at+"[]", x)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
