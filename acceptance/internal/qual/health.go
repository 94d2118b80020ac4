package qual

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// driveHealth is what the run knows of one drive's health: nvme-cli's
// SMART log before the run and its latest reading, its controller's
// identity, or why its health is not read.
type driveHealth struct {
	skip     string
	ctrl     nvme.Controller
	before   nvme.SmartLog
	last     nvme.SmartLog
	maxTempK int
}

// HealthDrive is one drive's TestHealth subtest: its checks, or why it
// has none.
type HealthDrive struct {
	Name   string // the subtest name: the drive's path without /dev/, "/" as "-" (disk-by-id-nvme-...)
	Path   string
	Skip   string
	Checks []health.Check
}

// healthFile is where a recorded run keeps nvme-cli's output for drive i:
// health/<i>.<what>.json (what: id-ctrl, before, after).
func (s *Suite) healthFile(dir string, i int, what string) string {
	return filepath.Join(dir, "health", fmt.Sprintf("%d.%s.json", i, what))
}

// readHealth reads every drive's SMART log and controller identity before
// the run, keeping nvme-cli's output for the recording. A drive with a
// critical warning is refused (the error names it); one nvme-cli cannot
// read (a loop device, a file, no nvme-cli) has its health skipped, saying
// why.
func (s *Suite) readHealth(ctx context.Context) []error {
	s.health = make([]driveHealth, len(s.Drives))
	s.healthRaw = map[string][]byte{}
	var errs []error
	for i, d := range s.Drives {
		h := &s.health[i]
		if !d.Block {
			h.skip = d.Path + " is a regular file: it has no health log"
			continue
		}
		out, err := s.nvme.Run(ctx, "smart-log", d.Path, "-o", "json")
		if err != nil {
			h.skip = noHealthLog(d.Path, err)
			continue
		}
		l, err := nvme.ParseSmartLog(out)
		if err != nil {
			h.skip = fmt.Sprintf("nvme smart-log %s printed what this drivequal cannot read (%v): its health is not checked", d.Path, err)
			continue
		}
		if err := health.Refuse(l); err != nil {
			errs = append(errs, fmt.Errorf("parsing -drives: %s: %w", d.Path, err))
			continue
		}
		h.before, h.last, h.maxTempK = l, l, l.Temperature
		s.healthRaw[fmt.Sprintf("%d.before", i)] = out
		if out, err := s.nvme.Run(ctx, "id-ctrl", d.Path, "-o", "json"); err == nil {
			if c, err := nvme.ParseIDCtrl(out); err == nil {
				h.ctrl = c
				s.healthRaw[fmt.Sprintf("%d.id-ctrl", i)] = out
			}
		}
	}
	return errs
}

// noHealthLog says why nvme-cli could not read path's health log.
func noHealthLog(path string, err error) string {
	if errors.Is(err, nvme.ErrNotInstalled) {
		return "nvme-cli is not installed (apt-get install nvme-cli): health checks need it"
	}
	var ce *nvme.CommandError
	why := err.Error()
	if errors.As(err, &ce) && ce.Stderr != "" {
		why = firstLineOf(ce.Stderr)
	}
	return fmt.Sprintf("nvme-cli cannot read %s's health log (%s): health checks need an NVMe drive", path, why)
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// writeHealthRecords keeps nvme-cli's outputs under the record directory.
func (s *Suite) writeHealthRecords() error {
	for name, out := range s.healthRaw {
		path := filepath.Join(s.Cfg.Record, "health", name+".json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := report.WriteFileAtomic(path, out); err != nil {
			return err
		}
	}
	return nil
}

// snapshot reads the SMART log of each of drives that has one, for the
// thermal rule around a cell; a drive whose read fails keeps its last.
func (s *Suite) snapshot(ctx context.Context, drives []int) map[int]nvme.SmartLog {
	out := map[int]nvme.SmartLog{}
	for _, d := range drives {
		if d >= len(s.health) || s.health[d].skip != "" {
			continue
		}
		l, err := s.nvme.SmartLog(ctx, s.Drives[d].Path)
		if err != nil {
			continue
		}
		h := &s.health[d]
		h.last, h.maxTempK = l, max(h.maxTempK, l.Temperature)
		out[d] = l
	}
	return out
}

// warned marks each drive of snap whose SMART log shows a critical
// warning bit it did not have at setup, other than the temperature bit
// (see hot): its remaining cells fail naming the warning, and nothing
// more is written to it; the other drives go on.
// when says where in the run the log was read ("before TestX", "after
// TestX"). It returns what it found, "" for nothing.
func (s *Suite) warned(snap map[int]nvme.SmartLog, when string) string {
	var why []string
	for d, l := range snap {
		msg, ok := health.NewWarning(s.health[d].before, l)
		if !ok {
			continue
		}
		text := fmt.Sprintf("%s raised %s, read %s: nothing more is written to it", s.Drives[d].Path, msg, when)
		s.mu.Lock()
		if s.broken == nil {
			s.broken = make([]unusableDrive, len(s.Drives))
		}
		if s.broken[d].text == "" {
			s.broken[d] = unusableDrive{cause: report.CauseCriticalWarning, text: text}
		}
		s.mu.Unlock()
		why = append(why, text)
	}
	slices.Sort(why)
	return strings.Join(why, "; ")
}

// hot says which drives had their temperature critical warning bit set
// in either of two snapshots around a cell (health.HotDuring), which makes
// the cell inconclusive; "" when none did. A drive whose bit clears goes
// on: its next cell is judged.
func (s *Suite) hot(before, after map[int]nvme.SmartLog) string {
	var why []string
	for d, b := range before {
		a, ok := after[d]
		if !ok {
			a = b
		}
		if msg, ok := health.HotDuring(b, a); ok {
			why = append(why, s.Drives[d].Path+": "+msg)
		}
	}
	slices.Sort(why)
	return strings.Join(why, "; ")
}

// throttled says which drives throttled on heat between two snapshots,
// as the spec's thermal_throttle rule counts it; "" when none did.
func (s *Suite) throttled(before, after map[int]nvme.SmartLog) string {
	var why []string
	for d, b := range before {
		a, ok := after[d]
		if !ok {
			continue
		}
		if msg, ok := health.Inconclusive(b, a, s.Spec.Health); ok {
			why = append(why, s.Drives[d].Path+": "+msg)
		}
	}
	return strings.Join(why, "; ")
}

// JudgeHealth reads every drive's SMART log after the run (a replay reads
// the recorded ones) and judges it against the reading before and the
// spec's [health] rules. The checks go to the report. A replay of a
// recording that holds no health logs at all returns none, and why.
func (s *Suite) JudgeHealth(ctx context.Context) ([]HealthDrive, string) {
	var out []HealthDrive
	if why := s.noHealthRecorded(); why != "" {
		return nil, why
	}
	if s.Cfg.Live() {
		for i := range s.Drives {
			if s.health[i].skip != "" {
				continue
			}
			o, err := s.nvme.Run(ctx, "smart-log", s.Drives[i].Path, "-o", "json")
			if err == nil {
				l, perr := nvme.ParseSmartLog(o)
				if perr == nil {
					s.health[i].last = l
					s.health[i].maxTempK = max(s.health[i].maxTempK, l.Temperature)
					s.mu.Lock()
					s.healthRaw[fmt.Sprintf("%d.after", i)] = o
					s.mu.Unlock()
					continue
				}
				err = perr
			}
			s.health[i].skip = fmt.Sprintf("reading %s's health log after the run failed: %v", s.Drives[i].Path, err)
		}
		s.mu.Lock()
		s.info.HealthSkips, s.info.MaxTempK = make([]string, len(s.Drives)), make([]int, len(s.Drives))
		for i, h := range s.health {
			s.info.HealthSkips[i], s.info.MaxTempK[i] = h.skip, h.maxTempK
		}
		if s.Cfg.Record != "" && !s.Cfg.DryRun {
			if err := s.saveRunInfo(); err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("rewriting run.json: %v", err))
			}
		}
		s.mu.Unlock()
		if s.Cfg.Record != "" && !s.Cfg.DryRun {
			if err := s.writeHealthRecords(); err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("keeping nvme-cli's outputs in %s: %v", s.Cfg.Record, err))
			}
		}
	} else {
		s.replayHealth()
	}
	var checks []report.HealthCheck
	for i, d := range s.Drives {
		if i >= len(s.health) {
			break
		}
		if !s.Cfg.Live() && strings.HasPrefix(d.Path, "recorded ") {
			continue
		}
		h := s.health[i]
		// A subtest name: a by-id path's slashes would make levels of it.
		hd := HealthDrive{Name: checkName(d.Path), Path: d.Path, Skip: h.skip}
		if h.skip == "" {
			hd.Checks = health.Judge(h.before, h.last, h.ctrl, h.maxTempK, s.Spec.Health)
			for _, c := range hd.Checks {
				checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Check: c.Name,
					Verdict: strings.ToLower(c.Verdict), Message: c.Message})
			}
		} else {
			checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Verdict: report.Skip, Message: h.skip})
		}
		out = append(out, hd)
	}
	s.keepChecks(func(r *report.Run) *[]report.HealthCheck { return &r.Health }, checks)
	return out, ""
}

// keepChecks sets the checks field of the report to checks and, in a
// fleet member, adds them to the fleet's report under the host's name.
func (s *Suite) keepChecks(field func(*report.Run) *[]report.HealthCheck, checks []report.HealthCheck) {
	s.mu.Lock()
	*field(s.Report) = checks
	s.mu.Unlock()
	if p := s.parent; p != nil {
		p.mu.Lock()
		for _, c := range checks {
			c.Drive = s.hostName + ":" + c.Drive
			*field(p.Report) = append(*field(p.Report), c)
		}
		p.mu.Unlock()
	}
}

// noHealthRecorded says why a replay has no health logs to judge; "" for
// a live run or a recording that kept them.
func (s *Suite) noHealthRecorded() string {
	if s.Cfg.Live() || len(s.info.HealthSkips) > 0 {
		return ""
	}
	r, _ := s.Exec.(Replay)
	if _, err := os.Stat(filepath.Join(r.Dir, "health")); err != nil {
		return "the recording holds no health logs (" + r.Dir + " has no health/ directory): it was recorded without them, or reconstructed"
	}
	return ""
}

// JudgeReceipt inspects every drive as it arrived: its SMART log read
// before anything was written (a replay reads the recorded one) against
// the spec's [receipt] limits. A drive without a health log is skipped,
// saying why; a replay of a recording without health logs returns none,
// and why.
func (s *Suite) JudgeReceipt() ([]HealthDrive, string) {
	if why := s.noHealthRecorded(); why != "" {
		return nil, why
	}
	var (
		out    []HealthDrive
		checks []report.HealthCheck
	)
	for i, d := range s.Drives {
		if !s.Cfg.Live() && strings.HasPrefix(d.Path, "recorded ") {
			continue
		}
		hd := HealthDrive{Name: checkName(d.Path), Path: d.Path}
		log, skip := s.receivedLog(i)
		if skip != "" {
			hd.Skip = skip
			checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Verdict: report.Skip, Message: skip})
		} else {
			hd.Checks = health.Receipt(log, s.Spec.Receipt)
			for _, c := range hd.Checks {
				checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Check: c.Name,
					Verdict: strings.ToLower(c.Verdict), Message: c.Message})
			}
		}
		out = append(out, hd)
	}
	s.keepChecks(func(r *report.Run) *[]report.HealthCheck { return &r.Receipt }, checks)
	return out, ""
}

// receivedLog is drive i's SMART log as read before the run, or why there
// is none.
func (s *Suite) receivedLog(i int) (nvme.SmartLog, string) {
	if s.Cfg.Live() {
		if i >= len(s.health) {
			return nvme.SmartLog{}, s.Drives[i].Path + ": its health log was not read"
		}
		return s.health[i].before, s.health[i].skip
	}
	r, _ := s.Exec.(Replay)
	data, err := os.ReadFile(s.healthFile(r.Dir, i, "before"))
	if err != nil {
		if i < len(s.info.HealthSkips) && s.info.HealthSkips[i] != "" {
			return nvme.SmartLog{}, s.info.HealthSkips[i]
		}
		return nvme.SmartLog{}, s.Drives[i].Path + ": no health log was recorded"
	}
	l, err := nvme.ParseSmartLog(data)
	if err != nil {
		return nvme.SmartLog{}, fmt.Sprintf("%s: the recorded health log does not parse: %v", s.Drives[i].Path, err)
	}
	return l, ""
}

// replayHealth reads the nvme-cli outputs a recorded run kept.
func (s *Suite) replayHealth() {
	r, _ := s.Exec.(Replay)
	s.health = make([]driveHealth, len(s.Drives))
	for i, d := range s.Drives {
		h := &s.health[i]
		read := func(what string) ([]byte, error) { return os.ReadFile(s.healthFile(r.Dir, i, what)) }
		before, err := read("before")
		if err != nil {
			h.skip = d.Path + ": no health log was recorded"
			if i < len(s.info.HealthSkips) && s.info.HealthSkips[i] != "" {
				h.skip = s.info.HealthSkips[i]
			}
			continue
		}
		after, err := read("after")
		if err != nil {
			h.skip = d.Path + ": the run recorded no health log after it (it was stopped before the end)"
			continue
		}
		b, err1 := nvme.ParseSmartLog(before)
		a, err2 := nvme.ParseSmartLog(after)
		if err := errors.Join(err1, err2); err != nil {
			h.skip = fmt.Sprintf("%s: the recorded health logs do not parse: %v", d.Path, err)
			continue
		}
		h.before, h.last, h.maxTempK = b, a, max(b.Temperature, a.Temperature, s.info.MaxTemp(i))
		if id, err := read("id-ctrl"); err == nil {
			h.ctrl, _ = nvme.ParseIDCtrl(id)
		}
	}
}

// recordThermal keeps a cell's heat findings beside its recording: why it
// throttled, and its drives' temperature critical warnings.
func (s *Suite) recordThermal(test, why, hot string) error {
	if why == "" && hot == "" {
		return nil
	}
	return record.WriteJSON(s.Cfg.Record, test, record.ThermalExt, record.Thermal{Throttled: why, CriticalWarning: hot})
}

// thermal reads a cell's recorded heat findings; "" for none.
func (r Replay) thermal(test string) (throttled, hot string) {
	var t record.Thermal
	if found, err := record.ReadJSON(r.Dir, test, record.ThermalExt, &t); !found || err != nil {
		return "", ""
	}
	return t.Throttled, t.CriticalWarning
}

// checkName is a drive's TestHealth and TestReceipt subtest name: its path
// without /dev/, slashes as "-" so that a by-id path is one level
// ("disk-by-id-nvme-X").
func checkName(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, "/dev/"), "/", "-")
}
