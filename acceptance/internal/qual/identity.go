package qual

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/powertest"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// matchResume puts the given drives of a resumed run in the order of the
// recording it resumes, matched by identity; called once the drives are
// inspected, before their health is read or they are held. A recording
// that does not read, or records no identities, is left to loadResume to
// refuse. A recorded drive not found whose power-loss cycle the host's
// cut left pending, given at a path where nothing is (b.absent), did not
// come back: it takes its recorded place as a drive that is not there
// (plan.Drive.Absent), its own recorded description standing for it.
func (b *builder) matchResume() {
	s := b.s
	prior, found, err := recdir.ReadPrior(s.Cfg.Record)
	if !found || err != nil || prior.Format != record.Format || len(prior.Identities) != len(prior.Drives) || len(prior.Drives) == 0 {
		return
	}
	// The machine's other disks: a drive given is told from each of them
	// too, not only from the others given.
	var present []plan.Drive
	for _, p := range b.sys.Disks() {
		if info, err := b.sys.Inspect(p); err == nil {
			present = append(present, plan.Drive{Info: info})
		}
	}
	// Only after the host restarted: in the boot of the cut, the cut
	// did not happen and its cycles stay pending.
	boot := match.BootID()
	restarted := boot == "" || prior.BootID == "" || boot != prior.BootID
	back := match.Returning{Pending: func(i int) bool {
		return s.Cfg.PowerCutHost && restarted && (powertest.PendingHost(s.Cfg.Record, prior.Files, prior.Samples, i) || notBack(prior, i))
	}}
	for _, a := range b.absent {
		back.Paths = append(back.Paths, a.path)
	}
	m, errs := match.DrivesReturning(s.Drives, present, back, prior, match.BootID(), s.Cfg.Record, resumeFix(s.Cfg.Record))
	if len(errs) > 0 {
		// Listed by loadResume with the run's other differences.
		b.matchErrs = errs
		return
	}
	drives, infos := make([]plan.Drive, len(m.Order)), make([]device.Info, len(m.Order))
	for i, j := range m.Order {
		if p, ok := m.Absent[i]; ok {
			was := prior.Drives[i]
			// Named as its cycles are filed (its kernel name then),
			// unless a drive there has that name now (kernel names
			// shift after a reboot when a drive is missing).
			name := filepath.Base(p)
			if prior.Samples != nil && i < len(prior.Samples.Drives) && prior.Samples.Drives[i].PowerLoss != "" {
				name = prior.Samples.Drives[i].PowerLoss
			}
			if slices.ContainsFunc(s.Drives, func(d plan.Drive) bool { return d.Name == name }) {
				name += "-absent"
			}
			info := device.Info{Path: p, Name: name, Model: was.Model, Serial: was.Serial, Firmware: was.Firmware, Size: was.Bytes, NUMANode: -1}
			within := ""
			if s.Spec.PowerLoss != nil {
				within = " nor within ready_within " + s.Spec.PowerLoss.ReadyWithin.String()
			}
			drives[i] = plan.Drive{Info: info, Capacity: was.Capacity,
				Absent: powertest.AbsentPrefix(p) + fmt.Sprintf("nothing was at %s when the resume started%s (drive %d of the run, recorded at %s: %s)", p, within, i+1, was.Path, prior.Identities[i])}
			infos[i] = info
			continue
		}
		drives[i], infos[i] = s.Drives[j], b.infos[j]
	}
	s.Drives, b.infos, b.matched = drives, infos, &m
	s.Warnings = append(s.Warnings, m.Warnings...)
}

// stepNotBack is the step run.json's failure of a drive that did not
// come back names (resumePlan).
const stepNotBack = "the resume's setup"

// notBack says whether run.json records that recorded drive i did not
// come back after the host's power cut: a later resume without it goes
// on, the drive failed already.
func notBack(prior record.Run, i int) bool {
	for _, f := range prior.Failures {
		if f.Drive == i && f.Step == stepNotBack && f.Cause == report.CauseDriveChanged {
			return true
		}
	}
	return false
}
