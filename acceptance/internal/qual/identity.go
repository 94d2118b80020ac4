package qual

import (
	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/match"
	"github.com/drivequal/drivequal/acceptance/internal/qual/recdir"
	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// matchResume puts the given drives of a resumed run in the order of the
// recording it resumes, matched by identity; called once the drives are
// inspected, before their health is read or they are held. A recording
// that does not read, or records no identities, is left to loadResume to
// refuse.
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
	m, errs := match.DrivesAmong(s.Drives, present, prior, match.BootID(), s.Cfg.Record, resumeFix(s.Cfg.Record))
	if len(errs) > 0 {
		// Listed by loadResume with the run's other differences.
		b.matchErrs = errs
		return
	}
	drives, infos := make([]plan.Drive, len(m.Order)), make([]device.Info, len(m.Order))
	for i, j := range m.Order {
		drives[i], infos[i] = s.Drives[j], b.infos[j]
	}
	s.Drives, b.infos, b.matched = drives, infos, &m
	s.Warnings = append(s.Warnings, m.Warnings...)
}
