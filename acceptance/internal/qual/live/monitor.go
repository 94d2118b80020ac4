package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/ocp"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recording"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Monitor reads the drives' health through nvme-cli from setup to the
// end of the run: on receipt, around each step and cell, and after the
// run, keeping nvme-cli's outputs for the recording.
type Monitor struct {
	nvme   nvme.CLI
	drives []plan.Drive
	rules  specs.Health

	mu     sync.Mutex
	health []evidence.DriveHealth
	// raw is nvme-cli's outputs, by recording name ("0.before").
	raw map[string][]byte
	ocp ocp.Logs // the OCP logs (ocp.go)
	// peak, when set, is told each drive's new peak temperature (K) as
	// it is read, for run.json.
	peak func(d, kelvin int)
	// warnedAtSetup is, in a resumed run, why each drive that had a
	// critical warning at setup has it (see ReadHealthResumed).
	warnedAtSetup map[int]string
}

// ReadHealth reads every drive's SMART log and controller identity before
// the run. A drive with a critical warning is refused (the error names
// it); one nvme-cli cannot read (a loop device, a file, no nvme-cli) has
// its health skipped, saying why.
func ReadHealth(ctx context.Context, cli nvme.CLI, drives []plan.Drive, rules specs.Health) (*Monitor, []error) {
	return readHealth(ctx, cli, drives, rules, false)
}

// ReadHealthResumed is ReadHealth for a resumed run: a drive with a
// critical warning is not refused (the run has written to it already, so
// "nothing was written" would be false); it is read as any other, and the
// resumed run disqualifies it (the recording holds its warning as its
// failure, or the run records it at its start), while the other drives
// go on.
func ReadHealthResumed(ctx context.Context, cli nvme.CLI, drives []plan.Drive, rules specs.Health) (*Monitor, []error) {
	return readHealth(ctx, cli, drives, rules, true)
}

func readHealth(ctx context.Context, cli nvme.CLI, drives []plan.Drive, rules specs.Health, resumed bool) (*Monitor, []error) {
	m := NewMonitor(cli, drives, rules, nil)
	var errs []error
	for i, d := range drives {
		h := &m.health[i]
		if d.Absent != "" {
			h.Skip = d.Absent
			continue
		}
		if !d.Block {
			h.Skip = d.Path + " is a regular file: it has no health log"
			continue
		}
		// The OCP logs first: a controller that rejects them counts an
		// error log entry, which the SMART log read next then holds.
		m.receiptOCP(ctx, i)
		out, err := cli.Run(ctx, "smart-log", d.Path, "-o", "json")
		if err != nil {
			h.Skip = noHealthLog(d.Path, err)
			continue
		}
		l, err := nvme.ParseSmartLog(out)
		if err != nil {
			h.Skip = fmt.Sprintf("nvme smart-log %s printed what this drivequal cannot read (%v): its health is not checked", d.Path, err)
			continue
		}
		refuse := health.Refuse
		if resumed {
			// A drive over its temperature threshold is refused in a
			// resume too: it is let cool, not disqualified.
			refuse = health.RefuseResumed
		}
		if err := refuse(l); err != nil {
			errs = append(errs, fmt.Errorf("parsing -drives: %s: %w", d.Path, err))
			continue
		} else if resumed && l.CriticalWarning&^nvme.WarnTemperature != 0 {
			if m.warnedAtSetup == nil {
				m.warnedAtSetup = map[int]string{}
			}
			m.warnedAtSetup[i] = fmt.Sprintf("critical_warning 0x%02x: %s", l.CriticalWarning, strings.Join(nvme.DecodeCriticalWarning(l.CriticalWarning), ", "))
		}
		h.Before, h.Last, h.MaxTempK = l, l, l.Temperature
		m.raw[fmt.Sprintf("%d.before", i)] = out
		if out, err := cli.Run(ctx, "id-ctrl", d.Path, "-o", "json"); err == nil {
			if c, err := nvme.ParseIDCtrl(out); err == nil {
				h.Ctrl = c
				m.raw[fmt.Sprintf("%d.id-ctrl", i)] = out
			}
		}
	}
	m.dropOCPOfSkipped()
	return m, errs
}

// NewMonitor is a Monitor of drives through cli that knows their health
// so far (nil: nothing yet), judging heat by rules.
func NewMonitor(cli nvme.CLI, drives []plan.Drive, rules specs.Health, health []evidence.DriveHealth) *Monitor {
	if health == nil {
		health = make([]evidence.DriveHealth, len(drives))
	}
	return &Monitor{nvme: cli, drives: drives, rules: rules, health: health, raw: map[string][]byte{}}
}

// noHealthLog says why nvme-cli could not read path's health log.
func noHealthLog(path string, err error) string {
	if errors.Is(err, nvme.ErrNotInstalled) {
		return "nvme-cli is not installed (apt-get install nvme-cli): health checks need it"
	}
	var ce *nvme.CommandError
	why := err.Error()
	if errors.As(err, &ce) && ce.Stderr != "" {
		why, _, _ = strings.Cut(strings.TrimSpace(ce.Stderr), "\n")
	}
	return fmt.Sprintf("nvme-cli cannot read %s's health log (%s): health checks need an NVMe drive", path, why)
}

// snapshot reads the SMART log of each of drives that has one, for the
// thermal rule around a cell; a drive whose read fails keeps its last.
func (m *Monitor) snapshot(ctx context.Context, drives []int) map[int]nvme.SmartLog {
	out := map[int]nvme.SmartLog{}
	for _, d := range drives {
		if d >= len(m.health) || m.health[d].Skip != "" {
			continue
		}
		l, err := m.nvme.SmartLog(ctx, m.drives[d].Path)
		if err != nil {
			continue
		}
		m.mu.Lock()
		h := &m.health[d]
		higher := l.Temperature > h.MaxTempK
		h.Last, h.MaxTempK = l, max(h.MaxTempK, l.Temperature)
		m.mu.Unlock()
		if higher && m.peak != nil {
			m.peak(d, l.Temperature)
		}
		out[d] = l
	}
	return out
}

// warned lists each drive of snap whose SMART log shows a critical
// warning bit it did not have at setup, other than the temperature bit
// (see hot), with why, in the order of the drives' paths. when says
// where in the run the log was read ("before TestX", "after TestX").
func (m *Monitor) warned(snap map[int]nvme.SmartLog, when string) (drives []int, why []string) {
	for d, l := range snap {
		msg, ok := health.NewWarning(m.health[d].Before, l)
		if !ok {
			continue
		}
		drives = append(drives, d)
		why = append(why, fmt.Sprintf("%s raised %s, read %s: nothing more is written to it", m.drives[d].Path, msg, when))
	}
	order := make([]int, len(drives))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(why[a], why[b]) })
	sd, sw := make([]int, len(order)), make([]string, len(order))
	for i, k := range order {
		sd[i], sw[i] = drives[k], why[k]
	}
	return sd, sw
}

// hot says which drives had their temperature critical warning bit set
// in either of two snapshots around a cell (health.HotDuring), which makes
// the cell inconclusive; "" when none did. A drive whose bit clears goes
// on: its next cell is judged.
func (m *Monitor) hot(before, after map[int]nvme.SmartLog) string {
	var why []string
	for d, b := range before {
		a, ok := after[d]
		if !ok {
			a = b
		}
		if msg, ok := health.HotDuring(b, a); ok {
			why = append(why, m.drives[d].Path+": "+msg)
		}
	}
	slices.Sort(why)
	return strings.Join(why, "; ")
}

// throttled says which drives throttled on heat between two snapshots,
// as the spec's thermal_throttle rule counts it; "" when none did.
func (m *Monitor) throttled(before, after map[int]nvme.SmartLog) string {
	var why []string
	for d, b := range before {
		a, ok := after[d]
		if !ok {
			continue
		}
		if msg, ok := health.Inconclusive(b, a, m.rules); ok {
			why = append(why, m.drives[d].Path+": "+msg)
		}
	}
	return strings.Join(why, "; ")
}

// after reads every drive's SMART log after the run; a drive whose read
// fails has its health skipped, saying why. A drive in lost (by index:
// why it disappeared or changed mid-run) whose health was read at setup
// is not read again, whatever is at its path now (another drive, or
// none): its health is lost, saying why, and fails.
func (m *Monitor) after(ctx context.Context, lost map[int]string) []evidence.DriveHealth {
	for i := range m.drives {
		if m.health[i].Skip != "" {
			continue
		}
		if why := lost[i]; why != "" {
			m.mu.Lock()
			m.health[i].Lost = fmt.Sprintf("%s: its health log could not be read after the run, and was not: %s; a drive that vanished mid-run has no health to pass (its health log was last read before that)",
				m.drives[i].Path, why)
			m.mu.Unlock()
			continue
		}
		o, err := m.nvme.Run(ctx, "smart-log", m.drives[i].Path, "-o", "json")
		if err == nil {
			l, perr := nvme.ParseSmartLog(o)
			if perr == nil {
				m.mu.Lock()
				m.health[i].Last = l
				m.health[i].MaxTempK = max(m.health[i].MaxTempK, l.Temperature)
				m.raw[fmt.Sprintf("%d.after", i)] = o
				m.mu.Unlock()
				m.afterOCP(ctx, i)
				continue
			}
			err = perr
		}
		m.health[i].Skip = fmt.Sprintf("reading %s's health log after the run failed: %v", m.drives[i].Path, err)
	}
	return m.all()
}

func (m *Monitor) all() []evidence.DriveHealth {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.health)
}

// receipt is each drive's log as read before the run, or why there is none.
func (m *Monitor) receipt() []evidence.Received {
	out := make([]evidence.Received, len(m.drives))
	for i, d := range m.drives {
		if i >= len(m.health) {
			out[i].Skip = d.Path + ": its health log was not read"
			continue
		}
		out[i] = evidence.Received{Log: m.health[i].Before, Skip: m.health[i].Skip}
	}
	return out
}

// resumed takes the logs read on receipt from the interrupted run
// recorded in dir: the receipt inspection and the health checks after the
// run judge against them. nvmeVersion is the nvme-cli version that run
// recorded, which its OCP logs are read by.
func (m *Monitor) resumed(dir, nvmeVersion string) {
	for i := range m.health {
		m.resumedOCP(dir, nvmeVersion, i)
		data, err := recording.ReadHealth(dir, i, "before")
		if err != nil {
			continue
		}
		if l, err := nvme.ParseSmartLog(data); err == nil {
			m.mu.Lock()
			// The recording keeps the interrupted run's log as read on
			// receipt: the one written back after the run too.
			m.health[i].Before = l
			m.raw[fmt.Sprintf("%d.before", i)] = data
			m.mu.Unlock()
		}
	}
}

// keep writes nvme-cli's outputs under dir/health; with missing, only
// those dir does not hold yet.
func (m *Monitor) keep(dir string, missing bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, out := range m.raw {
		path := filepath.Join(dir, "health", name+".json")
		if _, err := os.Stat(path); missing && err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := report.WriteFileAtomic(path, out); err != nil {
			return err
		}
	}
	return nil
}

// setupWarnings is why each drive that had a critical warning (other than
// the temperature bit) at a resumed run's setup has it.
func (m *Monitor) setupWarnings() map[int]string { return m.warnedAtSetup }

// seedPeaks takes the peak temperatures (K) an interrupted run recorded:
// a resumed run's peak is the higher of theirs and its own.
func (m *Monitor) seedPeaks(maxTempK []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.health {
		if i < len(maxTempK) {
			m.health[i].MaxTempK = max(m.health[i].MaxTempK, maxTempK[i])
		}
	}
}

// skips, lost and maxTemps are what run.json keeps of the drives' health
// (lost is nil when no drive's health was lost).
func (m *Monitor) skips() (skips, lost []string, maxTempK []int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	skips, maxTempK = make([]string, len(m.drives)), make([]int, len(m.drives))
	for i, h := range m.health {
		skips[i], maxTempK[i] = h.Skip, h.MaxTempK
		if h.Lost != "" {
			if lost == nil {
				lost = make([]string, len(m.drives))
			}
			lost[i] = h.Lost
		}
	}
	return skips, lost, maxTempK
}
