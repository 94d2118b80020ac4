package live

import (
	"context"
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/ocp"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
)

// ocpRun is the runner's OCP work (write amplification, latency
// monitor; package ocp), kept apart from its other concerns.
type ocpRun struct{ *Runner }

// receiptOCP reads drive i's OCP logs on receipt, before its SMART log
// (see ReadHealth, ocp.Logs.Receipt), kept as health/<i>.c0-before.json.
func (m *Monitor) receiptOCP(ctx context.Context, i int) {
	h, raw := m.ocp.Receipt(ctx, m.nvme, i, m.drives[i].Path)
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.Skip != "" {
		m.health[i].OCP.Skip = h.Skip
	} else {
		m.health[i].OCP.Before, m.health[i].OCP.Last = h.Before, h.Last
	}
	m.raw[fmt.Sprintf("%d.c0-before", i)] = raw
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
			m.ocp.Forget(i)
		}
	}
}

// resumedOCP takes drive i's C0 log as read on receipt from the
// interrupted run recorded in dir, as resumed does its SMART log: the C0
// checks after the run judge the whole run. version is the nvme-cli
// version that run recorded (the one that printed the log).
func (m *Monitor) resumedOCP(dir, version string, i int) {
	data, err := recording.ReadHealth(dir, i, "c0-before")
	if err != nil {
		return
	}
	c0, err := nvme.ParseOCPSmart(data, version)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil && m.ocp.C0(i) {
		m.health[i].OCP.Before = c0
		m.raw[fmt.Sprintf("%d.c0-before", i)] = data
	}
}

// afterOCP reads drive i's C0 log after the run (health/<i>.c0-after.json).
func (m *Monitor) afterOCP(ctx context.Context, i int) {
	m.ocp.Init(ctx, m.nvme)
	if !m.ocp.C0(i) {
		return
	}
	c0, raw, lost := m.ocp.After(ctx, m.nvme, m.drives[i].Path)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.raw[fmt.Sprintf("%d.c0-after", i)] = raw
	if lost != "" {
		m.health[i].OCP.Lost = lost
		return
	}
	m.health[i].OCP.Last, m.health[i].OCP.Read = c0, true
}

// readOCP reads the OCP logs of drives (ocp.Logs.Read).
func (m *Monitor) readOCP(ctx context.Context, drives []int, latency bool) ocp.Reading {
	return m.ocp.Read(ctx, m.nvme, func(d int) string { return m.drives[d].Path }, drives, latency)
}

// judged is what the run's write amplification is judged by.
func (o ocpRun) judged() ocp.Run {
	r := o.Runner
	return ocp.Run{Drives: r.Drives, Spec: r.Spec, Skip: func(d int) string {
		if d < len(r.Monitor.health) {
			return r.Monitor.health[d].OCP.Skip
		}
		return ""
	}}
}

// ocpBeforeStep reads the logs a step's write amplification is taken
// from, for a step that writes.
func (o ocpRun) ocpBeforeStep(ctx context.Context, st plan.Step) ocp.Reading {
	if !ocp.StepWrites(st.Kind) {
		return ocp.Reading{}
	}
	return o.Monitor.readOCP(ctx, st.Drives, false)
}

// ocpAfterStep keeps the step's write amplification for its report entry
// (see stepWAF) and tells the operator.
func (o ocpRun) ocpAfterStep(ctx context.Context, st plan.Step, before ocp.Reading, logf func(string, ...any)) {
	if !ocp.StepWrites(st.Kind) {
		return
	}
	w := o.Monitor.ocp.WAFs(o.judged(), st.Drives, before, o.Monitor.readOCP(ctx, st.Drives, false), true, false)
	if len(w) == 0 {
		return
	}
	o.Monitor.ocp.KeepStep(st.N, w)
	for _, x := range w {
		o.lines.progress(logf, "%s: %s: write amplification: %s", st.Name, x.Drive, x.String())
	}
}

// stepWAF is the write amplification ocpAfterStep kept for step n.
func (o ocpRun) stepWAF(n int) []waf.WAF {
	if o.Monitor == nil {
		return nil
	}
	return o.Monitor.ocp.StepWAF(n)
}

// cellOCP is the cell's write amplification (a cell that writes) and
// latency monitor readings, and what the C0 log's thermal throttling
// events say for the heat rule ("" when nothing).
func (o ocpRun) cellOCP(st plan.Step, owner plan.Cell, before, after ocp.Reading) ([]waf.WAF, string) {
	j := o.judged()
	return o.Monitor.ocp.WAFs(j, st.Drives, before, after, owner.Workload.Writes(), true), ocp.Throttled(j, st.Drives, before, after)
}

// recordWAF writes test's write amplification sidecar (<test>.ocp.json).
func (o ocpRun) recordWAF(test string, w []waf.WAF, logf func(string, ...any)) {
	if len(w) == 0 || o.Record == "" {
		return
	}
	if err := record.WriteJSON(o.Record, test, record.OCPExt, w); err != nil {
		logf("%s: %v", o.Record, err)
	}
}
