//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// The combined replay of a fleet the brief's size must stay fast: 50 hosts,
// each with 24 drives of the scaling capacity and the 72 cells a full
// qualification of them records (8 single-drive cells and 8 workloads at
// each of the 8 scaling drive counts), judged in one
// `go test ./acceptance -args -replay=DIR1,...,DIR50`. The target is under
// 60 s and under 1 GiB on a 2-core machine. The recordings are synthetic
// (see writeFleet) and are written once, before the timed replays:
//
//	go test ./acceptance/internal/e2e -run='^$' -bench=FleetReplay -benchtime=1x
//
// s/replay is the suite's wall time per replay, cpu-s/replay the CPU time
// it used (user and system; steadier than wall time on a busy machine),
// MiB-peak the largest resident set it reached in any replay (getrusage's
// ru_maxrss, in KiB on Linux) and MiB-recorded the size of the fio outputs
// and run.json files replayed. Each replay must end as this fleet should:
// exit status 1, every TestFleet cell failed naming the slow drive's host,
// every other host QUALIFIED.
func BenchmarkFleetReplay(b *testing.B) {
	if suiteBin == "" {
		b.Skip("the acceptance suite was not built")
	}
	if _, err := os.Stat(suiteBin); err != nil {
		b.Skipf("the acceptance suite was not built: %v", err)
	}
	fl := writeFleet(b, filepath.Join(b.TempDir(), "fleet"), fleetHosts)
	var wall, cpu time.Duration
	var peakKiB int64
	runs := 0
	for b.Loop() {
		reportDir := filepath.Join(b.TempDir(), "report")
		ctx, cancel := context.WithTimeout(b.Context(), 15*time.Minute)
		cmd := exec.CommandContext(ctx, suiteBin, "-test.count=1", "-test.timeout=10m",
			"-replay="+strings.Join(fl.dirs, ","), "-report="+reportDir)
		cmd.Dir = acceptanceDir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		cancel()
		if cmd.ProcessState == nil {
			b.Fatalf("running the suite: %v", err)
		}
		used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		var rssKiB int64
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rssKiB = ru.Maxrss
		}
		b.Logf("replay %d: %.1f s, %.1f s CPU, %.0f MiB peak", runs+1, took.Seconds(), used.Seconds(), float64(rssKiB)/1024)
		wall, cpu, peakKiB = wall+took, cpu+used, max(peakKiB, rssKiB)
		b.StopTimer()
		checkFleetReplay(b, fl, cmd.ProcessState.ExitCode(), reportDir, out.String())
		if err := os.RemoveAll(reportDir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		runs++
	}
	b.ReportMetric(wall.Seconds()/float64(runs), "s/replay")
	b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s/replay")
	b.ReportMetric(float64(peakKiB)/1024, "MiB-peak")
	b.ReportMetric(float64(fl.bytes)/(1<<20), "MiB-recorded")
}

// checkFleetReplay fails b unless the replay ended as the fleet writeFleet
// made should: TestFleet failed (exit status 1), every fleet cell naming the
// slow drive as an outlier, and every other host's run QUALIFIED.
func checkFleetReplay(b *testing.B, fl fleetRecording, code int, reportDir, out string) {
	b.Helper()
	tail := out[max(0, len(out)-4000):]
	if code != 1 {
		b.Fatalf("the fleet replay exited %d, want 1 (TestFleet fails on the slow drive); its output ends:\n%s", code, tail)
	}
	data, err := os.ReadFile(filepath.Join(reportDir, "results.json"))
	if err != nil {
		b.Fatalf("results.json: %v; the replay's output ends:\n%s", err, tail)
	}
	var run report.Run
	if err := json.Unmarshal(data, &run); err != nil {
		b.Fatal(err)
	}
	if got, want := len(run.Hosts), len(fl.dirs); got != want {
		b.Fatalf("results.json has %d hosts, want %d", got, want)
	}
	for _, h := range run.Hosts {
		switch {
		case h.Name == fl.outlier && h.Verdict == report.Qualified:
			b.Errorf("host %s, whose drive is slow, is %s", h.Name, h.Verdict)
		case h.Name != fl.outlier && h.Verdict != report.Qualified:
			b.Errorf("host %s is %s, want %s", h.Name, h.Verdict, report.Qualified)
		}
	}
	cells := 0
	slow := fl.outlier + ":" + fl.slowPath
	for _, r := range run.Results {
		if r.Kind != report.KindFleet {
			continue
		}
		cells++
		named := false
		for _, d := range r.PerDrive {
			if d.Path == slow && strings.Contains(d.Error, "outlier") {
				named = true
			}
		}
		if r.Verdict != report.Fail || !named || !strings.Contains(r.Error, fl.outlier) {
			b.Errorf("%s: verdict %s, error %q: want fail with %s named an outlier", r.Test, r.Verdict, r.Error, slow)
		}
	}
	if want := len(fl.workloads); cells != want {
		b.Errorf("results.json has %d TestFleet cells, want %d (one per workload of %s)", cells, want, fl.capacity)
	}
	if got, want := len(run.Results)-cells, len(fl.dirs)*fl.cells; got != want {
		b.Errorf("results.json has %d host results, want %d (%d hosts × %d cells)", got, want, len(fl.dirs), fl.cells)
	}
}

const (
	// fleetHosts is the fleet the requirement names: 50 hosts × 24 drives.
	fleetHosts = 50
	// fleetOutlier is the host (1-based) whose first drive is slow, and
	// fleetSlow that drive's figures as a fraction of the template's.
	fleetOutlier = 37
	fleetSlow    = 0.80
	// fleetSpread is the most a host's drive is faster than the template
	// (pseudo-random per drive, 0 to 3 %). None is slower: the brief's
	// 1.92TB 128KB Sequential Read is only 0.04 % above its spec, so a
	// slower drive would fail that cell on its own host and the slow drive
	// would not be the fleet's one problem.
	fleetSpread = 0.03
)

// fleetRecording is what writeFleet wrote.
type fleetRecording struct {
	dirs      []string // one recorded run directory per host
	outlier   string   // the host whose first drive is slow
	slowPath  string   // that drive's path on its host
	capacity  string   // the capacity every drive is
	workloads []string // the workloads of that capacity
	cells     int      // the cells each host recorded
	bytes     int64    // the size of every file written
}

// writeFleet writes hosts synthetic recorded runs under dir, one directory
// each, as a live run's -record would leave them after qualifying 24 drives
// of the built-in spec's scaling capacity (1.92TB): run.json (format 2: the
// spec's text, the tests, the shared recordings and the host) and one fio
// output per measurement. Nothing is measured. Every fio output is the
// brief's reconstruction in fixtures/solidigm-d7-ps1010 with each drive's
// I/O counts (total_ios, io_bytes and fio's figures derived from them:
// io_kbytes, bw_bytes, bw, iops) scaled by that drive's factor, so the
// suite's IOPS and MB/s (Σ total_ios or io_bytes / runtime) scale with it;
// latencies stay the template's. An N-drive scaling output is the first N
// drives of the 24-drive one. Host h is "syn-h<h>"; its drive d is
// /dev/disk/by-id/nvme-SYNTH_h<h>_d<d> with serial SYNh<h>d<d>, and its
// factor is between 1 and 1 + fleetSpread, except drive 1 of host
// fleetOutlier: fleetSlow. run.json says the run is reconstructed, from
// synthetic variation of the brief.
//
// A live run's recordings of the same cells are larger, so this fleet is
// the smallest one of its size: the template is fio's plain json, where a
// live run records json+ (latency bins) with a status report every 30 s
// of a 70 s measurement before the final one (fio 3.33, 8 jobs on a file:
// 49 KB as json, 548 KB as recorded), and it has no steady-state records.
func writeFleet(b *testing.B, dir string, hosts int) fleetRecording {
	b.Helper()
	spec, err := specs.Load("solidigm-d7-ps1010")
	if err != nil {
		b.Fatal(err)
	}
	fixtures := filepath.Join(filepath.Dir(acceptanceDir), "fixtures", spec.Name)
	var tmplInfo record.Run
	readJSON(b, filepath.Join(fixtures, "run.json"), &tmplInfo)
	capacity, ok := spec.Capacity(spec.Scaling.Capacity)
	if !ok {
		b.Fatalf("%s scales no capacity", spec.File)
	}
	const drives = 24
	var counts []int
	for _, n := range spec.Scaling.Drives {
		if n <= drives {
			counts = append(counts, n)
		}
	}

	// Each cell's test, the template it is cut from and its drive count;
	// shared maps a 1-drive scaling cell that is the single-drive cell's
	// fio job (no scaling override) to it, as a live run records it.
	type cell struct {
		test   string
		tmpl   *fioTemplate
		drives int
	}
	var cells []cell
	shared := map[string]string{}
	fl := fleetRecording{capacity: capacity.Name}
	load := func(rel string) *fioTemplate {
		return loadFioTemplate(b, filepath.Join(fixtures, filepath.FromSlash(rel)))
	}
	for _, w := range spec.Workloads {
		if _, ok := capacity.Spec[w.Name]; ok {
			fl.workloads = append(fl.workloads, w.Name)
			test := "TestSingleDrive/" + capacity.Name + "/" + specs.SubtestName(w.Name)
			cells = append(cells, cell{test, load(test + ".json"), 1})
		}
	}
	for _, n := range counts {
		for _, name := range fl.workloads {
			test := fmt.Sprintf("TestScaling/%d_drives/%s", n, specs.SubtestName(name))
			_, override := spec.Scaling.Override[name]
			switch {
			case n == 1 && !override:
				shared[test] = "TestSingleDrive/" + capacity.Name + "/" + specs.SubtestName(name)
				cells = append(cells, cell{test: test})
			case n == 1:
				cells = append(cells, cell{test, load(test + ".json"), 1})
			default:
				cells = append(cells, cell{test, load(fmt.Sprintf("TestScaling/%d_drives/%s.json", drives, specs.SubtestName(name))), n})
			}
		}
	}
	fl.cells = len(cells)

	var buf bytes.Buffer
	for h := 1; h <= hosts; h++ {
		name := fmt.Sprintf("syn-h%03d", h)
		hostDir := filepath.Join(dir, name)
		rng := rand.New(rand.NewPCG(uint64(h), 0x5eed))
		info := record.Run{Format: record.Format, Spec: spec.Model, SpecName: spec.Name, SpecFile: spec.File,
			SpecSHA256: spec.SHA256(), SpecText: string(spec.Text), Mode: "record", FioVersion: tmplInfo.FioVersion,
			Precondition: plan.Full, Reconstructed: true,
			ReconstructedFrom: "synthetic: " + spec.Source + " (fixtures/" + spec.Name + "), each drive's I/O counts scaled",
			Shared:            shared,
			Host: host.Info{Hostname: name, MachineID: fmt.Sprintf("%032x", h), Kernel: "6.1.0-synthetic",
				CPUModel: "synthetic CPU", FioVersion: tmplInfo.FioVersion}}
		factors := make([]float64, drives)
		for d := range drives {
			info.Drives = append(info.Drives, report.Drive{
				Path:  fmt.Sprintf("/dev/disk/by-id/nvme-SYNTH_h%03d_d%02d", h, d+1),
				Model: spec.Model, Serial: fmt.Sprintf("SYNh%03dd%02d", h, d+1),
				Bytes: capacity.Bytes, Capacity: capacity.Name, NUMANode: -1,
			})
			factors[d] = 1 + fleetSpread*rng.Float64()
		}
		if h == fleetOutlier {
			factors[0] = fleetSlow
			fl.outlier, fl.slowPath = name, info.Drives[0].Path
		}
		for _, c := range cells {
			info.Tests = append(info.Tests, c.test)
			if c.tmpl == nil {
				continue
			}
			buf.Reset()
			if err := c.tmpl.render(&buf, c.drives, func(g int) (string, float64) { return info.Drives[g].Path, factors[g] }); err != nil {
				b.Fatalf("%s: %v", c.test, err)
			}
			fl.bytes += writeBytes(b, filepath.Join(hostDir, filepath.FromSlash(c.test)+".json"), buf.Bytes())
		}
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		fl.bytes += writeBytes(b, filepath.Join(hostDir, "run.json"), append(data, '\n'))
		fl.dirs = append(fl.dirs, hostDir)
	}
	return fl
}

func readJSON(b *testing.B, path string, v any) {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
}

func writeBytes(b *testing.B, path string, data []byte) int64 {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return int64(len(data))
}

// fioTemplate is one fio JSON output cut into its jobs, each with the
// places a host's drive changes.
type fioTemplate struct {
	path string
	data []byte
	jobs []fioJobText // in the output's order
}

// fioJobText is one job entry of a fioTemplate: data[start:end].
type fioJobText struct {
	start, end int
	group      int
	filename   [2]int     // the span of its filename's value, relative to start; zero when it has none
	dirs       []fioCount // its read, write and trim counts
}

// fioCount is one direction's counts in a job entry: the spans (relative
// to the job's start) of io_bytes, io_kbytes, bw_bytes, bw, iops and
// total_ios, and the values the scaled ones are computed from.
type fioCount struct {
	spans                      [6][2]int
	ioBytes, runtimeMs, totals int64
}

// fioCounts matches the counts of one direction of a job as fio prints
// them, in fio's order.
var fioCounts = regexp.MustCompile(`"io_bytes" : (\d+),\s+"io_kbytes" : (\d+),\s+"bw_bytes" : (\d+),\s+"bw" : (\d+),\s+"iops" : ([0-9.]+),\s+"runtime" : (\d+),\s+"total_ios" : (\d+),`)

var fioFilename = regexp.MustCompile(`"filename" : "([^"]*)"`)

func loadFioTemplate(b *testing.B, path string) *fioTemplate {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	t := &fioTemplate{path: path, data: data}
	key := bytes.Index(data, []byte(`"jobs" : [`))
	if key < 0 {
		b.Fatalf("%s: no jobs array", path)
	}
	base := key + len(`"jobs" : `)
	dec := json.NewDecoder(bytes.NewReader(data[base:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		b.Fatalf("%s: jobs is not an array (%v)", path, err)
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		var j struct {
			GroupID int `json:"groupid"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		end := base + int(dec.InputOffset())
		job := fioJobText{start: end - len(raw), end: end, group: j.GroupID}
		text := data[job.start:job.end]
		if m := fioFilename.FindSubmatchIndex(text); m != nil {
			job.filename = [2]int{m[2], m[3]}
		}
		for _, m := range fioCounts.FindAllSubmatchIndex(text, -1) {
			num := func(i int) int64 {
				n, err := strconv.ParseInt(string(text[m[2*i]:m[2*i+1]]), 10, 64)
				if err != nil {
					b.Fatalf("%s: %v", path, err)
				}
				return n
			}
			c := fioCount{ioBytes: num(1), runtimeMs: num(6), totals: num(7)}
			for k, i := range []int{1, 2, 3, 4, 5, 7} {
				c.spans[k] = [2]int{m[2*i], m[2*i+1]}
			}
			job.dirs = append(job.dirs, c)
		}
		if len(job.dirs) == 0 {
			b.Fatalf("%s: job %d has no I/O counts", path, len(t.jobs))
		}
		t.jobs = append(t.jobs, job)
	}
	return t
}

// render writes the output of the template's first drives groups (fio
// reporting groups 0 … drives−1): group g's jobs with drive(g)'s path and
// its I/O counts scaled by drive(g)'s factor.
func (t *fioTemplate) render(w *bytes.Buffer, drives int, drive func(g int) (path string, factor float64)) error {
	n := 0
	for n < len(t.jobs) && t.jobs[n].group < drives {
		n++
	}
	if n == 0 || t.jobs[n-1].group != drives-1 {
		return fmt.Errorf("%s has no %d reporting groups 0 … %d at its start", t.path, drives, drives-1)
	}
	w.Write(t.data[:t.jobs[0].start])
	for i, job := range t.jobs[:n] {
		if i > 0 {
			w.Write(t.data[t.jobs[i-1].end:job.start])
		}
		path, f := drive(job.group)
		type edit struct {
			span [2]int
			text string
		}
		var edits []edit
		if job.filename != [2]int{} {
			edits = append(edits, edit{job.filename, path})
		}
		for _, c := range job.dirs {
			if c.totals == 0 || c.runtimeMs == 0 {
				continue
			}
			ios := int64(math.Round(float64(c.totals) * f))
			ioBytes := c.ioBytes / c.totals * ios
			bwBytes := ioBytes * 1000 / c.runtimeMs
			for k, v := range []string{
				strconv.FormatInt(ioBytes, 10), strconv.FormatInt(ioBytes>>10, 10),
				strconv.FormatInt(bwBytes, 10), strconv.FormatInt(bwBytes>>10, 10),
				strconv.FormatFloat(float64(ios)*1000/float64(c.runtimeMs), 'f', 6, 64),
				strconv.FormatInt(ios, 10),
			} {
				edits = append(edits, edit{c.spans[k], v})
			}
		}
		text := t.data[job.start:job.end]
		at := 0
		for _, e := range edits {
			w.Write(text[at:e.span[0]])
			w.WriteString(e.text)
			at = e.span[1]
		}
		w.Write(text[at:])
	}
	w.Write(t.data[t.jobs[len(t.jobs)-1].end:])
	return nil
}
