package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The health tests run the suite with testdata/nvme-standin.sh as nvme-cli:
// it serves smart-log.N.json on the Nth read of a drive. A run of
// testdata/health.toml reads each drive's log once before the run, before
// each preparation step, before and after each of its two measurements,
// and once after the run: reads 1 (before), 2-5 (before the purge, the
// fill, the verify pass and the random preconditioning), 6-7 (4KB Random
// Write), 8-9 (4KB Random Read), 10 (after). The logs are the reconstructed nvme-cli v2.4 fixture
// fixtures/nvme/smart-log-v2.4-above-2-64.json with fields changed by each
// test, and the identity is the real id-ctrl fixture of a D7-PS1010.

// healthLogs writes the stand-in's files: logs[i] is read i+1, each the
// base fixture with its replacements ("old" → "new" pairs).
func healthLogs(t *testing.T, idCtrl string, logs ...[]string) []string {
	t.Helper()
	base, err := os.ReadFile(filepath.Join(acceptanceDir, "..", "fixtures", "nvme", "smart-log-v2.4-above-2-64.json"))
	require.NoError(t, err)
	id, err := os.ReadFile(filepath.Join(acceptanceDir, "..", "fixtures", "nvme", "id-ctrl-solidigm-sbfpf2bu153t.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	if idCtrl != "" {
		id = []byte(strings.Replace(string(id), `"fr":"6CV10100"`, idCtrl, 1))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "id-ctrl.json"), id, 0o644))
	for i, repl := range logs {
		text := string(base)
		for j := 0; j+1 < len(repl); j += 2 {
			require.Contains(t, text, repl[j])
			text = strings.Replace(text, repl[j], repl[j+1], 1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "smart-log."+strconv.Itoa(i+1)+".json"), []byte(text), 0o644))
	}
	script, err := os.ReadFile(filepath.Join("testdata", "nvme-standin.sh"))
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "nvme"), script, 0o755))
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "NVME_STANDIN_DIR=" + dir}
}

func healthSpec(t *testing.T) string { return testdataFile(t, "health.toml") }

// healthRun runs testdata/health.toml on a fresh loop device with the
// stand-in nvme-cli.
func healthRun(t *testing.T, env []string) (result, string) {
	t.Helper()
	dev := newLoop(t, 64<<20)
	r := runSuiteIn(t, env, nil, "-spec="+healthSpec(t), "-drives="+dev, "-destructive")
	noFioLeft(t)
	return r, dev
}

func healthOf(t *testing.T, r result) map[string]report.HealthCheck {
	t.Helper()
	out := map[string]report.HealthCheck{}
	for _, h := range r.results(t).Health {
		out[h.Check] = h
	}
	return out
}

// media_errors rising during the run fails TestHealth/<drive>/media_errors
// with before and after in the message, and the run does not qualify.
func TestHealthMediaErrorsRise(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	same := []string{}
	env := healthLogs(t, "", same, same, same, same, same, same, same, same, []string{`"media_errors":0`, `"media_errors":3`})
	r, dev := healthRun(t, env)
	name := strings.TrimPrefix(dev, "/dev/")
	assert.NotEqual(t, 0, r.Code, "a drive whose media errors rose does not qualify")
	assert.Contains(t, r.Stdout, "--- FAIL: TestHealth/"+name+"/media_errors")
	h := healthOf(t, r)
	require.Contains(t, h, "media_errors")
	assert.Equal(t, report.Fail, h["media_errors"].Verdict)
	assert.Contains(t, h["media_errors"].Message, "0 before, 3 after")
	assert.Equal(t, report.Pass, h["critical_warning"].Verdict)
	assert.Equal(t, report.Pass, h["firmware"].Verdict, "6CV10100 is in the spec's allow-list")
	for _, res := range r.results(t).Results {
		assert.Equal(t, report.Pass, res.Verdict, "%s: the cells themselves pass: %s", res.Test, res.Error)
	}
	summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "## Health")
	assert.Contains(t, string(summary), "health: NOT QUALIFIED")
}

// A critical warning before the run refuses the drive, naming the bits,
// before anything is written to it.
func TestHealthCriticalWarningRefuses(t *testing.T) {
	runParallel(t) // refusals on loop devices of its own; nothing it checks is timed
	env := healthLogs(t, "", []string{`"critical_warning":0`, `"critical_warning":4`})
	dev := newLoop(t, 64<<20)
	before := testenv.SHA256(t, dev)
	r := runSuiteIn(t, env, nil, "-spec="+healthSpec(t), "-drives="+dev, "-destructive")
	assert.Equal(t, 2, r.Code)
	assert.Contains(t, r.Stderr, dev)
	assert.Contains(t, strings.ToLower(r.Stderr), "reliability")
	assert.Equal(t, before, testenv.SHA256(t, dev), "a refused drive is left byte for byte unchanged")
	assert.NoFileExists(t, filepath.Join(r.Report, "results.json"))
}

// A thermal-management transition during one cell makes that cell, and
// only it, INCONCLUSIVE; a firmware outside the allow-list fails its check.
func TestHealthThermalAndFirmware(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	same := []string{}
	hot := []string{`"thm_temp1_trans_count":3`, `"thm_temp1_trans_count":5`}
	env := healthLogs(t, `"fr":"9ZZ99999"`, same, same, same, same, same, same, hot, hot, hot, hot)
	r, dev := healthRun(t, env)
	assert.NotEqual(t, 0, r.Code)
	v := r.verdicts(t)
	assert.Equal(t, report.Inconclusive, v["TestSingleDrive/64MiB/4KB_Random_Write"], "the cell during which the drive throttled")
	assert.Equal(t, report.Pass, v["TestSingleDrive/64MiB/4KB_Random_Read"], "the cell after it")
	for _, res := range r.results(t).Results {
		if res.Workload == "4KB Random Write" {
			assert.Equal(t, report.CauseThrottled, res.Cause)
			assert.Contains(t, res.Error, "thermally throttled during the cell")
			assert.Contains(t, res.Error, "thm_temp1_trans_count 3 → 5")
		}
	}
	h := healthOf(t, r)
	assert.Equal(t, report.Fail, h["firmware"].Verdict)
	assert.Contains(t, h["firmware"].Message, "9ZZ99999")
	assert.Contains(t, r.Stdout, "--- FAIL: TestHealth/"+strings.TrimPrefix(dev, "/dev/")+"/firmware")

	// The recording replays to the same verdicts, health checks included.
	raw := filepath.Join(r.Report, "raw")
	replay := runSuite(t, nil, "-replay="+raw)
	assert.Equal(t, v, replay.verdicts(t))
	assert.Equal(t, h["firmware"].Verdict, healthOf(t, replay)["firmware"].Verdict)
}

// Without the stand-in, a loop device has no health log: TestHealth skips
// it, saying why.
func TestHealthSkipsLoopDevices(t *testing.T) {
	runParallel(t) // it mostly waits on fio
	dev := newLoop(t, 64<<20)
	if _, err := exec.LookPath("nvme"); err != nil {
		t.Log("nvme-cli is not installed: the skip says so")
	}
	r := runSuite(t, []string{"-test.run=TestSingleDrive/64MiB/4KB_Random_Read|TestHealth"},
		"-spec="+healthSpec(t), "-drives="+dev, "-destructive", "-precondition=none")
	assert.Contains(t, r.Stdout, "--- SKIP: TestHealth/"+strings.TrimPrefix(dev, "/dev/"))
	assert.Contains(t, r.Stdout, "health checks need")
	h := r.results(t).Health
	require.Len(t, h, 1)
	assert.Equal(t, report.Skip, h[0].Verdict)
}

// qosSpec is testdata/health.toml with a p99.99 read latency limit.
func qosSpec(t *testing.T, limitUs int) string {
	t.Helper()
	data, err := os.ReadFile(healthSpec(t))
	require.NoError(t, err)
	text := string(data) + "\n[capacity.qos.\"4KB Random Read\"]\nread_p99_99_us = " + strconv.Itoa(limitUs) + "\n"
	path := filepath.Join(t.TempDir(), "qos.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// A p99.99 limit below what a loop device does fails the cell with the
// latency message; one far above it passes. summary.md shows the
// percentile columns, live and replayed.
func TestQoSLimits(t *testing.T) {
	dev := newLoop(t, 64<<20)
	run := []string{"-test.run=TestSingleDrive/64MiB/4KB_Random_(Read|Write)$"}
	tight := runSuite(t, run, "-spec="+qosSpec(t, 1), "-drives="+dev, "-destructive")
	noFioLeft(t)
	v := tight.verdicts(t)
	assert.Equal(t, report.Fail, v["TestSingleDrive/64MiB/4KB_Random_Read"])
	for _, res := range tight.results(t).Results {
		if res.Workload == "4KB Random Read" {
			assert.Equal(t, report.CauseLatency, res.Cause)
			assert.Regexp(t, `4KB Random Read: read p99\.99 latency [0-9,]+ µs > limit 1 µs`, res.Error)
			require.Len(t, res.QoS, 1)
			require.NotNil(t, res.Read)
			assert.LessOrEqual(t, res.Read.P50, res.Read.P99)
		}
	}
	loose := runSuite(t, run, "-spec="+qosSpec(t, 10_000_000), "-drives="+dev, "-destructive")
	for _, res := range loose.results(t).Results {
		assert.Equal(t, report.Pass, res.Verdict, "%s: %s", res.Test, res.Error)
	}
	for _, r := range []result{loose, runSuite(t, nil, "-replay="+filepath.Join(loose.Report, "raw"))} {
		summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
		require.NoError(t, err)
		assert.Contains(t, string(summary), "| p50 µs | p99 µs | p99.9 µs | p99.99 µs | p99.999 µs |")
	}
}

// A drive that arrives with 8,766 power-on hours (the fixture's) fails
// TestReceipt/<drive>/power_on_hours against max_power_on_hours = 100,
// naming the figure, and the run does not qualify though every cell
// passes; a replay judges the recorded log again. A new drive (12 hours)
// passes.
func TestReceiptUsedDrive(t *testing.T) {
	t.Parallel() // its subtests take the slots (runParallel), not it
	base, err := os.ReadFile(healthSpec(t))
	require.NoError(t, err)
	spec := filepath.Join(t.TempDir(), "receipt.toml")
	require.NoError(t, os.WriteFile(spec, append(base, "\n[receipt]\nmax_power_on_hours = 100\n"...), 0o644))
	for _, tt := range []struct {
		name  string
		hours string
		want  string
	}{
		{"used", `"power_on_hours":8766`, report.Fail},
		{"new", `"power_on_hours":12`, report.Pass},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runParallel(t) // each on its own loop device and health logs
			log := []string{`"power_on_hours":8766`, tt.hours}
			env := healthLogs(t, "", log, log, log, log, log, log, log, log, log)
			dev := newLoop(t, 64<<20)
			r := runSuiteIn(t, env, nil, "-spec="+spec, "-drives="+dev, "-destructive")
			noFioLeft(t)
			name := strings.TrimPrefix(dev, "/dev/")
			receipt := map[string]report.HealthCheck{}
			for _, c := range r.results(t).Receipt {
				receipt[c.Check] = c
			}
			require.Contains(t, receipt, "power_on_hours")
			assert.Equal(t, tt.want, receipt["power_on_hours"].Verdict, receipt["power_on_hours"].Message)
			assert.Equal(t, report.Skip, receipt["data_written"].Verdict, "no limit set: reported, not judged")
			for _, res := range r.results(t).Results {
				assert.Equal(t, report.Pass, res.Verdict, "%s: the cells themselves pass: %s", res.Test, res.Error)
			}
			if tt.want == report.Pass {
				assert.Equal(t, 0, r.Code, r.Stdout)
				assert.Contains(t, r.Stdout, "--- PASS: TestReceipt/"+name+"/power_on_hours")
				return
			}
			assert.NotEqual(t, 0, r.Code, "a used drive does not qualify")
			assert.Contains(t, r.Stdout, "--- FAIL: TestReceipt/"+name+"/power_on_hours")
			assert.Contains(t, receipt["power_on_hours"].Message, "8,766 h on receipt, above the limit of 100 h")
			summary, err := os.ReadFile(filepath.Join(r.Report, "summary.md"))
			require.NoError(t, err)
			assert.Contains(t, string(summary), "## Receipt inspection")
			assert.Contains(t, string(summary), "receipt: NOT QUALIFIED")
			junit, err := os.ReadFile(filepath.Join(r.Report, "junit.xml"))
			require.NoError(t, err)
			assert.Contains(t, string(junit), `name="`+name+`/`)
			assert.Contains(t, string(junit), `classname="TestReceipt"`)

			replay := runSuite(t, nil, "-replay="+filepath.Join(r.Report, "raw"))
			assert.NotEqual(t, 0, replay.Code)
			assert.Contains(t, replay.Stdout, "--- FAIL: TestReceipt/")
		})
	}
}

type midRunWarningTest struct {
	name   string
	read   int    // the read of the 64 MiB drive's log that first shows the warning
	when   string // where the error says it was read
	write  string // the verdict of that drive's 4KB Random Write
	filled bool   // whether the fill still wrote to it
}

// Reads of the 64 MiB drive: 1 at setup, 2 before the purge, 3 before the
// fill, 4 before the verify pass, 5 before the random preconditioning, 6-7
// around 4KB Random Write, 8-9 around 4KB Random Read.
var midRunWarningTests = []midRunWarningTest{
	// Raised during 4KB Random Write: that cell keeps its figure, the
	// next one is not measured.
	{"during a cell", 7, "after TestSingleDrive/64MiB/4KB_Random_Write", report.Pass, true},
	// Raised during the purge: nothing more is written, not even the fill.
	{"during preparation", 3, "before sequential fill (1 × 128 KiB write pass)", report.Fail, false},
}

// A critical warning that appears mid-run stops writes to that drive: its
// remaining cells fail naming the warning without being measured, while
// the other drive's cells are measured and pass. nvme-cli is the stand-in
// (QEMU's smart_critical_warning can be set live through QMP qom-set, but
// the guest harness has no QMP channel yet).
func TestCriticalWarningMidRunStopsThatDrive(t *testing.T) {
	t.Parallel() // its subtests take the slots (runParallel), not it
	for _, tt := range midRunWarningTests {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			runParallel(t) // each on its own loop devices and health logs
			midRunWarning(t, tt)
		})
	}
}

func midRunWarning(t *testing.T, tt midRunWarningTest) {
	env := healthLogs(t, "", []string{}) // id-ctrl and a clean log for the other drive
	small, big := newLoop(t, 64<<20), newLoop(t, 96<<20)
	dir := strings.TrimPrefix(env[1], "NVME_STANDIN_DIR=")
	own := filepath.Join(dir, strings.ReplaceAll(small, "/", "_"))
	require.NoError(t, os.Mkdir(own, 0o755))
	clean, err := os.ReadFile(filepath.Join(dir, "smart-log.1.json"))
	require.NoError(t, err)
	readOnly := strings.Replace(string(clean), `"critical_warning":0`, `"critical_warning":8`, 1)
	for i := 1; i <= tt.read; i++ {
		text := string(clean)
		if i == tt.read {
			text = readOnly
		}
		require.NoError(t, os.WriteFile(filepath.Join(own, "smart-log."+strconv.Itoa(i)+".json"), []byte(text), 0o644))
	}
	r := runSuiteIn(t, env, nil, "-spec="+testdataFile(t, "health-two.toml"), "-drives="+small+","+big, "-destructive")
	noFioLeft(t)
	assert.NotEqual(t, 0, r.Code)
	run := r.results(t)
	res := byTest(run)
	w, rd := res["TestSingleDrive/64MiB/4KB_Random_Write"], res["TestSingleDrive/64MiB/4KB_Random_Read"]
	assert.Equal(t, tt.write, w.Verdict, "4KB Random Write: %s", w.Error)
	assert.Equal(t, report.Fail, rd.Verdict)
	assert.Equal(t, report.CauseCriticalWarning, rd.Cause)
	assert.Contains(t, rd.Error, small+" raised critical_warning 0x08: media is read-only, read "+tt.when+": nothing more is written to it")
	assert.Zero(t, rd.Actual, "not measured")
	for _, test := range []string{"TestSingleDrive/96MiB/4KB_Random_Write", "TestSingleDrive/96MiB/4KB_Random_Read"} {
		assert.Equal(t, report.Pass, res[test].Verdict, "%s: the other drive goes on: %s", test, res[test].Error)
	}
	for _, st := range run.Steps {
		if st.Kind == "fill" {
			assert.Equal(t, tt.filled, slices.Contains(st.Drives, small), "the fill wrote to %s: %v", small, st.Drives)
			assert.Contains(t, st.Drives, big)
		}
	}
	assert.Contains(t, r.Stdout, "--- FAIL: TestSingleDrive/64MiB/4KB_Random_Read")
	assert.Contains(t, r.Stdout, "--- FAIL: TestVerdict/64MiB")
	assert.Contains(t, r.Stdout, "--- PASS: TestVerdict/96MiB")
}

// A temperature critical warning (bit 0x02) that appears mid-run is the
// chassis's airflow first: the cell during which it appeared is
// INCONCLUSIVE, naming it, and the drive goes on. Cleared before the next
// cell, that cell is judged on its figure; set through the drive's
// remaining cells, each is INCONCLUSIVE, none FAILs, and nothing stops
// writing to the drive. Reads of the 64 MiB drive as in
// midRunWarningTests: 6-7 around 4KB Random Write, 8-9 around 4KB Random
// Read. (Whether a loop device meets the spec's figures depends on how
// loaded the host is, so the judged cell's verdict is not asserted.)
func TestTemperatureWarningMidRun(t *testing.T) {
	runParallel(t) // it mostly waits on fio's steady-state rounds
	const during = ": temperature critical warning after the cell: critical_warning 0x02: temperature is outside a threshold (composite 85 °C)"
	const stays = ": temperature critical warning before and after the cell: critical_warning 0x02"
	for _, tt := range []struct {
		name  string
		clear int // the first read that no longer shows the bit; 0: never
	}{
		{"transient", 8},
		{"stays set", 0},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			env := healthLogs(t, "", []string{})
			small, big := newLoop(t, 64<<20), newLoop(t, 96<<20)
			dir := strings.TrimPrefix(env[1], "NVME_STANDIN_DIR=")
			own := filepath.Join(dir, strings.ReplaceAll(small, "/", "_"))
			require.NoError(t, os.Mkdir(own, 0o755))
			clean, err := os.ReadFile(filepath.Join(dir, "smart-log.1.json"))
			require.NoError(t, err)
			hot := strings.Replace(strings.Replace(string(clean), `"critical_warning":0`, `"critical_warning":2`, 1), `"temperature":310`, `"temperature":358`, 1)
			for i := 1; i <= 10; i++ {
				text := string(clean)
				if i >= 7 && (tt.clear == 0 || i < tt.clear) {
					text = hot
				}
				require.NoError(t, os.WriteFile(filepath.Join(own, "smart-log."+strconv.Itoa(i)+".json"), []byte(text), 0o644))
			}
			r := runSuiteIn(t, env, nil, "-spec="+testdataFile(t, "health-two.toml"), "-drives="+small+","+big, "-destructive")
			noFioLeft(t)
			res := byTest(r.results(t))
			w, rd := res["TestSingleDrive/64MiB/4KB_Random_Write"], res["TestSingleDrive/64MiB/4KB_Random_Read"]
			assert.Equal(t, report.Inconclusive, w.Verdict, "4KB Random Write: %s", w.Error)
			assert.Contains(t, w.Error, small+during)
			assert.NotZero(t, w.Actual, "measured")
			assert.NotZero(t, rd.Actual, "the drive goes on: 4KB Random Read is measured")
			if tt.clear != 0 {
				assert.NotContains(t, rd.Error, "temperature critical warning", "cleared: judged on its figure")
				assert.NotEqual(t, report.CauseThrottled, rd.Cause)
			} else {
				assert.Equal(t, report.Inconclusive, rd.Verdict, "4KB Random Read: %s", rd.Error)
				assert.Contains(t, rd.Error, small+stays)
			}
			for _, test := range []string{"TestSingleDrive/96MiB/4KB_Random_Write", "TestSingleDrive/96MiB/4KB_Random_Read"} {
				assert.NotZero(t, res[test].Actual, "%s: the other drive is measured", test)
				assert.NotContains(t, res[test].Error, "temperature", test)
			}
			assert.NotContains(t, r.Stdout, "nothing more is written to it")
			assert.NotContains(t, r.Stdout, "--- FAIL: TestSingleDrive/64MiB/4KB_Random_Write")
		})
	}
}
