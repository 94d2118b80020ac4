package e2e

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// ocpStandin installs testdata/nvme-ocp-standin.sh as nvme-cli: SMART and
// C0 logs that follow the loop device's real sectors written, the media
// counter at twice the host's, and a bad-block increase after receipt.
func ocpStandin(t *testing.T) []string {
	t.Helper()
	fx := filepath.Join(acceptanceDir, "..", "fixtures", "nvme")
	id, err := os.ReadFile(filepath.Join(fx, "id-ctrl-solidigm-sbfpf2bu153t.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "id-ctrl.json"), id, 0o644))
	script, err := os.ReadFile(filepath.Join("testdata", "nvme-ocp-standin.sh"))
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "nvme"), script, 0o755))
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "NVME_STANDIN_DIR=" + dir, "NVME_STANDIN_FIXTURES=" + fx}
}

// The suite through the OCP stand-in: every writing step and cell reports
// WAF 2.00 (media bytes twice the host's), and the bad user NAND blocks
// that rose from 0 to 5 fail TestHealth naming the field and both values.
// The recording replays to the same verdicts and figures.
func TestOCPWriteAmplificationAndBadBlocks(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	dev := newLoop(t, 64<<20)
	r := runSuiteIn(t, ocpStandin(t), nil, "-spec="+healthSpec(t), "-drives="+dev, "-destructive")
	noFioLeft(t)
	name := strings.TrimPrefix(dev, "/dev/")
	assert.NotEqual(t, 0, r.Code, "a drive that grew bad blocks does not qualify")
	assert.Contains(t, r.Stdout, "--- FAIL: TestHealth/"+name+"/ocp_bad_user_blocks")
	h := healthOf(t, r)
	require.Contains(t, h, "ocp_bad_user_blocks")
	assert.Equal(t, report.Fail, h["ocp_bad_user_blocks"].Verdict)
	assert.Contains(t, h["ocp_bad_user_blocks"].Message, "Bad user nand blocks - Raw: 0 before, 5 after")
	for _, c := range []string{"ocp_bad_system_blocks", "ocp_uncorrectable_reads", "ocp_end_to_end_errors", "ocp_incomplete_shutdowns", "ocp_capacitor_health"} {
		assert.Equal(t, report.Pass, h[c].Verdict, "%s: %s", c, h[c].Message)
	}

	run := r.results(t)
	// The failed drive's error log is kept for its supplier, named in
	// results.json and summary.md; its controller has no telemetry.
	require.Len(t, run.Drives, 1)
	c := run.Drives[0].Failure
	require.NotNil(t, c, "a drive that failed TestHealth has its evidence captured; stderr:\n%s", r.Stderr)
	require.Len(t, c.Files, 1)
	assert.True(t, strings.HasSuffix(c.Files[0], filepath.Join("raw", "failure", "0.error-log.json")), c.Files[0])
	errLog, err := os.ReadFile(c.Files[0])
	require.NoError(t, err)
	assert.Contains(t, string(errLog), `"error_count":1`)
	require.Len(t, c.Notes, 1)
	assert.Contains(t, c.Notes[0], "no telemetry: NVMe status: Invalid Field in Command")
	var random, fill int
	for _, st := range run.Steps {
		if st.Kind != "precondition" && st.Kind != "fill" {
			continue
		}
		require.Len(t, st.WAF, 1, "step %d %s", st.N, st.Name)
		w := st.WAF[0]
		assert.Equal(t, dev, w.Drive)
		assert.Empty(t, w.Note, "step %d %s", st.N, st.Name)
		assert.InDelta(t, 2.0, w.WAF, 1e-9, "step %d %s: media %s, host %s", st.N, st.Name, w.MediaBytes, w.HostBytes)
		assert.NotEqual(t, "0", w.HostBytes)
		if st.Kind == "precondition" {
			random++
			t.Logf("step %d %s: WAF %s (media %s bytes, host %s bytes)", st.N, st.Name, w.String(), w.MediaBytes, w.HostBytes)
		} else {
			fill++
		}
	}
	assert.Positive(t, random, "a random-write preconditioning step reports its WAF")
	assert.Positive(t, fill, "the fill reports its WAF")
	for _, res := range run.Results {
		if res.Kind != "single" {
			continue
		}
		if res.Workload != "4KB Random Write" {
			require.Len(t, res.WAF, 1, res.Test)
			assert.Empty(t, res.WAF[0].MediaBytes, "a read cell has no WAF")
			assert.Contains(t, res.WAF[0].Latency, "inactive", "the latency monitor is reported inactive")
			continue
		}
		require.Len(t, res.WAF, 1, res.Test)
		assert.InDelta(t, 2.0, res.WAF[0].WAF, 1e-9, res.Test)
		assert.Contains(t, res.WAF[0].Latency, "inactive")
		// The host bytes are the cell's own: what fio wrote in it, to a
		// SMART data unit at either end (the stand-in's media counter is
		// twice the host's over any interval, so the WAF alone does not
		// tell a wrong interval).
		written := fioWritten(t, filepath.Join(r.Report, "raw", filepath.FromSlash(res.Test)+".json"))
		host, ok := new(big.Int).SetString(res.WAF[0].HostBytes, 10)
		require.True(t, ok, res.WAF[0].HostBytes)
		assert.InDelta(t, float64(written), float64(host.Int64()), 2*512000, "%s: host bytes %s, fio wrote %d", res.Test, host, written)
	}
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "| WAF |")
	assert.Contains(t, string(summary), "## Write amplification (OCP C0)")
	assert.Contains(t, string(summary), "| 2.00 |")
	assert.Contains(t, string(summary), dev+" failed: kept for its supplier: ")
	assert.Contains(t, string(summary), "0.error-log.json; no telemetry: ")
	junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
	require.NoError(t, err)
	assert.Contains(t, string(junit), "waf "+dev+": 2.00")

	// The recording replays to the same verdicts, health and WAF.
	replay := runSuite(t, nil, "-replay="+filepath.Join(r.Report, "raw"))
	assert.Equal(t, r.verdicts(t), replay.verdicts(t))
	assert.Equal(t, report.Fail, healthOf(t, replay)["ocp_bad_user_blocks"].Verdict)
	for _, res := range replay.results(t).Results {
		if res.Workload == "4KB Random Write" {
			require.Len(t, res.WAF, 1)
			assert.InDelta(t, 2.0, res.WAF[0].WAF, 1e-9)
		}
	}
}

// Without C0 (the health stand-in answers no ocp command), the drive's
// OCP checks are skipped saying why, never failed, and its cells say
// there is no WAF.
func TestOCPNoC0IsSkipped(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	same := []string{}
	r, _ := healthRun(t, healthLogs(t, "", same))
	h := healthOf(t, r)
	require.Contains(t, h, "ocp")
	assert.Equal(t, report.Skip, h["ocp"].Verdict)
	assert.Contains(t, h["ocp"].Message, "no OCP C0 log (")
	assert.Equal(t, 0, r.Code, "no C0 fails nothing: %s", r.Stdout)
}

// fioWritten is the bytes fio's JSON output at path says its jobs wrote.
func fioWritten(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out struct {
		Jobs []struct {
			Write struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(data, &out), path)
	var n int64
	for _, j := range out.Jobs {
		n += j.Write.IOBytes
	}
	require.Positive(t, n, path)
	return n
}
