package qual

import (
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/absent"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/record"
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
	back := absent.Returning(s.Cfg.PowerCutHost, s.Cfg.Record, prior, b.absent)
	m, errs := match.DrivesReturning(s.Drives, present, back, prior, match.BootID(), s.Cfg.Record, resumeFix(s.Cfg.Record))
	if len(errs) > 0 {
		// Listed by loadResume with the run's other differences.
		b.matchErrs = errs
		return
	}
	drives, infos := make([]plan.Drive, len(m.Order)), make([]device.Info, len(m.Order))
	for i, j := range m.Order {
		if p, ok := m.Absent[i]; ok {
			var within time.Duration
			if s.Spec.PowerLoss != nil && !s.Cfg.DryRun { // a dry run does not wait
				within = s.Spec.PowerLoss.ReadyWithin
			}
			drives[i] = absent.Drive(prior, i, p, within, absent.Taken(s.Drives))
			infos[i] = drives[i].Info
			continue
		}
		drives[i], infos[i] = s.Drives[j], b.infos[j]
	}
	s.Drives, b.infos, b.matched = drives, infos, &m
	s.Warnings = append(s.Warnings, m.Warnings...)
}
