package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
)

// ocpRun is the runner's OCP work (write amplification, latency
// monitor), kept apart from its other concerns.
type ocpRun struct{ *Runner }

// ocp is the runner's OCP work.
func (r *Runner) ocp() ocpRun { return ocpRun{r} }

// ocpState is what the Monitor knows of the drives' OCP logs: which have
// the extended SMART log (C0h) and an active latency monitor (C3h), read
// on receipt, and each step's write amplification until the report
// takes it.
type ocpState struct {
	mu      sync.Mutex
	once    sync.Once
	version string       // nvme-cli's, for OCPArgs
	c0      map[int]bool // the drive has C0
	c3      map[int]bool // the drive's latency monitor is active
	c3Why   map[int]string
	steps   map[int][]waf.WAF // by step number
}

func (o *ocpState) init(ctx context.Context, cli nvme.CLI) {
	o.once.Do(func() {
		o.c0, o.c3, o.c3Why, o.steps = map[int]bool{}, map[int]bool{}, map[int]string{}, map[int][]waf.WAF{}
		o.version, _ = cli.Version(ctx)
	})
}

// receiptOCP reads drive i's OCP logs on receipt, before its SMART log
// (see ReadHealth): its C0 log, kept as
// health/<i>.c0-before.json (a drive without one has the reason kept
// there, as an object with an "error" field), and whether its latency
// monitor is active.
func (m *Monitor) receiptOCP(ctx context.Context, i int) {
	m.ocp.init(ctx, m.nvme)
	dev := m.drives[i].Path
	c0, out, err := m.nvme.OCPSmartLog(ctx, dev, m.ocp.version)
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health[i]
	if err != nil {
		why := err.Error()
		var no *nvme.NoOCPLog
		if !errors.As(err, &no) {
			why = "no OCP C0 log (" + err.Error() + ")"
		}
		h.OCP.Skip = why
		m.raw[fmt.Sprintf("%d.c0-before", i)], _ = json.Marshal(map[string]string{"error": strings.TrimSuffix(strings.TrimPrefix(why, "no OCP C0 log ("), ")")})
	} else {
		h.OCP.Before, h.OCP.Last = c0, c0
		m.raw[fmt.Sprintf("%d.c0-before", i)] = out
		m.ocp.c0[i] = true
	}
	l, _, err := m.nvme.OCPLatencyLog(ctx, dev, m.ocp.version)
	switch {
	case err != nil:
		m.ocp.c3Why[i] = err.Error()
	case !l.Enabled():
		m.ocp.c3Why[i] = "latency monitor (C3) inactive: its feature status is 0"
	default:
		m.ocp.c3[i] = true
	}
}

// dropOCPOfSkipped forgets the OCP reads of drives whose health is not
// read at all (a loop device: nvme-cli cannot read it), so that their
// recording holds nothing of them.
func (m *Monitor) dropOCPOfSkipped() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.health {
		if m.health[i].Skip != "" {
			delete(m.raw, fmt.Sprintf("%d.c0-before", i))
			m.health[i].OCP = evidence.OCPHealth{}
			m.ocp.mu.Lock()
			delete(m.ocp.c0, i)
			delete(m.ocp.c3, i)
			m.ocp.mu.Unlock()
		}
	}
}

// resumedOCP takes drive i's C0 log as read on receipt from the
// interrupted run recorded in dir, as resumed does its SMART log: the C0
// checks after the run judge the whole run.
func (m *Monitor) resumedOCP(dir string, i int) {
	data, err := os.ReadFile(recording.HealthFile(dir, i, "c0-before"))
	if err != nil {
		return
	}
	c0, err := nvme.ParseOCPSmart(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil && m.hasC0(i) {
		m.health[i].OCP.Before = c0
		m.raw[fmt.Sprintf("%d.c0-before", i)] = data
	}
}

// afterOCP reads drive i's C0 log after the run (health/<i>.c0-after.json).
func (m *Monitor) afterOCP(ctx context.Context, i int) {
	m.ocp.init(ctx, m.nvme)
	if !m.hasC0(i) {
		return
	}
	c0, out, err := m.nvme.OCPSmartLog(ctx, m.drives[i].Path, m.ocp.version)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		// It gave C0 on receipt: a drive that no longer does is failed,
		// and a replay says the same (c0-after holds why).
		why := fmt.Sprintf("the OCP C0 log read on receipt could not be read after the run: %v", err)
		m.health[i].OCP.Lost = why
		m.raw[fmt.Sprintf("%d.c0-after", i)], _ = json.Marshal(map[string]string{"error": why})
		return
	}
	m.health[i].OCP.Last, m.health[i].OCP.Read = c0, true
	m.raw[fmt.Sprintf("%d.c0-after", i)] = out
}

func (m *Monitor) hasC0(i int) bool {
	m.ocp.mu.Lock()
	defer m.ocp.mu.Unlock()
	return m.ocp.c0[i]
}

// ocpReading is the drives' SMART and OCP logs at one moment, for those
// that have C0 (and C3).
type ocpReading struct {
	smart map[int]nvme.SmartLog
	c0    map[int]nvme.OCPSmart
	c3    map[int]nvme.OCPLatency
}

// OCPReadTimeout bounds each nvme-cli read of readOCP: a drive that does
// not answer is left out of that reading (its WAF says it could not be
// read) rather than holding up the cell.
var OCPReadTimeout = 30 * time.Second

// readOCP reads the SMART and C0 logs of each of drives that has C0, and
// with latency the C3 log of those whose latency monitor is active: all
// drives at once, each read bounded by OCPReadTimeout, so that a
// 24-drive step waits for the slowest drive's reads, not the sum of all.
func (m *Monitor) readOCP(ctx context.Context, drives []int, latency bool) ocpReading {
	m.ocp.init(ctx, m.nvme)
	r := ocpReading{smart: map[int]nvme.SmartLog{}, c0: map[int]nvme.OCPSmart{}, c3: map[int]nvme.OCPLatency{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, d := range drives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dev := m.drives[d].Path
			if m.hasC0(d) {
				s, err1 := boundedRead(ctx, func(ctx context.Context) (nvme.SmartLog, error) { return m.nvme.SmartLog(ctx, dev) })
				c, err2 := boundedRead(ctx, func(ctx context.Context) (nvme.OCPSmart, error) {
					c, _, err := m.nvme.OCPSmartLog(ctx, dev, m.ocp.version)
					return c, err
				})
				if err1 == nil && err2 == nil {
					mu.Lock()
					r.smart[d], r.c0[d] = s, c
					mu.Unlock()
				}
			}
			m.ocp.mu.Lock()
			active := m.ocp.c3[d]
			m.ocp.mu.Unlock()
			if latency && active {
				l, err := boundedRead(ctx, func(ctx context.Context) (nvme.OCPLatency, error) {
					l, _, err := m.nvme.OCPLatencyLog(ctx, dev, m.ocp.version)
					return l, err
				})
				if err == nil {
					mu.Lock()
					r.c3[d] = l
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return r
}

// boundedRead runs read with a context that ends after OCPReadTimeout.
func boundedRead[T any](ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, OCPReadTimeout)
	defer cancel()
	return read(ctx)
}

// wafs is each drive's write amplification between two readings, with
// its life at that WAF where the spec rates the drive's endurance, and,
// with latency, its latency monitor over the interval.
func (o ocpRun) wafs(drives []int, before, after ocpReading, writes, latency bool) []waf.WAF {
	r := o.Runner
	var out []waf.WAF
	for _, d := range drives {
		w := waf.WAF{Drive: r.Drives[d].Path}
		cb, ok1 := before.c0[d]
		ca, ok2 := after.c0[d]
		switch {
		case !r.Monitor.hasC0(d):
			// A drive without C0 says so once per cell; one without a
			// health log at all (a loop device, a file) says nothing.
			skip := ""
			if d < len(r.Monitor.health) {
				skip = r.Monitor.health[d].OCP.Skip
			}
			if skip == "" {
				continue
			}
			if writes {
				w.Note = skip
			}
		case !writes:
		case !ok1 || !ok2:
			w.Note = "no WAF: the C0 or SMART log could not be read around it"
		default:
			f := health.WriteAmplification(cb, ca, before.smart[d], after.smart[d])
			w.MediaBytes, w.HostBytes, w.WAF, w.Note = f.MediaBytes.String(), f.HostBytes.String(), f.Value, f.Note
			if f.Note != "" {
				w.WAF = 0
			} else if life, ok := health.Life(r.Spec.Endurance, uint64(r.Drives[d].Size), f, r.Spec.Endurance.RatedWAF); ok {
				w.LifeDriveWrites = life
			}
		}
		if latency {
			w.Latency = o.latencyOver(d, before, after)
		}
		if w.Note == "" && w.MediaBytes == "" && w.Latency == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// latencyOver says what drive d's latency monitor counted between two
// readings: each active bucket's increase, or why there is nothing.
func (o ocpRun) latencyOver(d int, before, after ocpReading) string {
	r := o.Runner
	r.Monitor.ocp.mu.Lock()
	why := r.Monitor.ocp.c3Why[d]
	r.Monitor.ocp.mu.Unlock()
	if why != "" {
		return why
	}
	b, ok1 := before.c3[d]
	a, ok2 := after.c3[d]
	if !ok1 || !ok2 {
		return "latency monitor (C3) not read around the cell"
	}
	var parts []string
	for i := range a.Active {
		x, y := b.Active[i], a.Active[i]
		parts = append(parts, fmt.Sprintf("bucket %d: read +%d, write +%d, trim +%d", i, y.Read-x.Read, y.Write-x.Write, y.Trim-x.Trim))
	}
	return "latency monitor (C3) active buckets: " + strings.Join(parts, "; ")
}

// stepWrites reports whether a preparation step writes to its drives.
func stepWrites(k plan.StepKind) bool {
	return k == plan.StepFill || k == plan.StepRandom || k == plan.StepTopUp
}

// ocpBeforeStep reads the logs a step's write amplification is taken
// from, for a step that writes.
func (o ocpRun) ocpBeforeStep(ctx context.Context, st plan.Step) ocpReading {
	r := o.Runner
	if !stepWrites(st.Kind) {
		return ocpReading{}
	}
	return r.Monitor.readOCP(ctx, st.Drives, false)
}

// ocpAfterStep keeps the step's write amplification for its report entry
// (see stepWAF) and tells the operator.
func (o ocpRun) ocpAfterStep(ctx context.Context, st plan.Step, before ocpReading, logf func(string, ...any)) {
	r := o.Runner
	if !stepWrites(st.Kind) {
		return
	}
	w := o.wafs(st.Drives, before, r.Monitor.readOCP(ctx, st.Drives, false), true, false)
	if len(w) == 0 {
		return
	}
	r.Monitor.ocp.mu.Lock()
	r.Monitor.ocp.steps[st.N] = w
	r.Monitor.ocp.mu.Unlock()
	for _, x := range w {
		r.lines.progress(logf, "%s: %s: write amplification: %s", st.Name, x.Drive, x.String())
	}
}

// stepWAF is the write amplification ocpAfterStep kept for step n.
func (o ocpRun) stepWAF(n int) []waf.WAF {
	r := o.Runner
	if r.Monitor == nil || r.Monitor.ocp.steps == nil {
		return nil
	}
	r.Monitor.ocp.mu.Lock()
	defer r.Monitor.ocp.mu.Unlock()
	w := r.Monitor.ocp.steps[n]
	delete(r.Monitor.ocp.steps, n)
	return w
}

// cellOCP is the cell's write amplification (a cell that writes) and
// latency monitor readings, and what the C0 log's thermal throttling
// events say for the heat rule ("" when nothing).
func (o ocpRun) cellOCP(st plan.Step, owner plan.Cell, before, after ocpReading) ([]waf.WAF, string) {
	r := o.Runner
	w := o.wafs(st.Drives, before, after, owner.Workload.Writes(), true)
	var hot []string
	for _, d := range st.Drives {
		b, ok1 := before.c0[d]
		a, ok2 := after.c0[d]
		if !ok1 || !ok2 {
			continue
		}
		if msg, ok := health.ThrottledOCP(b, a, r.Spec.Health); ok {
			hot = append(hot, r.Drives[d].Path+": "+msg)
		}
	}
	slices.Sort(hot)
	return w, strings.Join(hot, "; ")
}

// recordWAF writes test's write amplification sidecar (<test>.ocp.json).
func (o ocpRun) recordWAF(test string, w []waf.WAF, logf func(string, ...any)) {
	r := o.Runner
	if len(w) == 0 || r.Record == "" {
		return
	}
	if err := record.WriteJSON(r.Record, test, record.OCPExt, w); err != nil {
		logf("%s: %v", r.Record, err)
	}
}
