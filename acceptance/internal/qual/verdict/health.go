package verdict

import (
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// HealthDrive is one drive's TestHealth or TestReceipt subtest: its
// checks, or why it has none.
type HealthDrive struct {
	Name   string // the subtest name: the drive's path without /dev/, "/" as "-" (disk-by-id-nvme-...)
	Path   string
	Skip   string
	Checks []health.Check
}

// Health judges each drive's health over the run against the spec's
// [health] rules; the checks are also returned as the report keeps them.
func Health(drives []plan.Drive, of []evidence.DriveHealth, rules specs.Health) ([]HealthDrive, []report.HealthCheck) {
	return eachDrive(drives, func(i int) ([]health.Check, string) {
		if i >= len(of) {
			return nil, "" // not read: the drive is not reported
		}
		h := of[i]
		if h.Skip != "" {
			return nil, h.Skip
		}
		if h.Lost != "" {
			return []health.Check{{Name: LostCheck, Verdict: health.Fail, Message: h.Lost}}, ""
		}
		return append(health.Judge(h.Before, h.Last, h.Ctrl, h.MaxTempK, rules), ocpChecks(h.OCP, rules)...), ""
	}, len(of))
}

// LostCheck is the one health check of a drive that has no health log
// after the run (evidence.DriveHealth.Lost): TestHealth/<drive>/health_log
// fails.
const LostCheck = "health_log"

// Receipt judges each drive's SMART log as it arrived against the spec's
// [receipt] limits.
func Receipt(drives []plan.Drive, of []evidence.Received, limits specs.Receipt) ([]HealthDrive, []report.HealthCheck) {
	return eachDrive(drives, func(i int) ([]health.Check, string) {
		if of[i].Skip != "" {
			return nil, of[i].Skip
		}
		return health.Receipt(of[i].Log, limits), ""
	}, len(of))
}

// eachDrive judges the first n drives that are not placeholders with
// judge, which gives a drive's checks or why it has none.
func eachDrive(drives []plan.Drive, judge func(int) ([]health.Check, string), n int) ([]HealthDrive, []report.HealthCheck) {
	var (
		out    []HealthDrive
		checks []report.HealthCheck
	)
	for i, d := range drives {
		if i >= n {
			break
		}
		if d.Placeholder {
			continue
		}
		hd := HealthDrive{Name: CheckName(d.Path), Path: d.Path}
		hd.Checks, hd.Skip = judge(i)
		if hd.Skip != "" {
			checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Verdict: report.Skip, Message: hd.Skip})
		}
		for _, c := range hd.Checks {
			checks = append(checks, report.HealthCheck{Drive: d.Path, Serial: d.Serial, Check: c.Name,
				Verdict: strings.ToLower(c.Verdict), Message: c.Message})
		}
		out = append(out, hd)
	}
	return out, checks
}

// CheckName is a drive's TestHealth and TestReceipt subtest name: its path
// without /dev/, slashes as "-" so that a by-id path is one level
// ("disk-by-id-nvme-X").
func CheckName(path string) string {
	return strings.ReplaceAll(strings.TrimPrefix(path, "/dev/"), "/", "-")
}

// ocpChecks are the [health] ocp_* checks of a drive's C0 log over the
// run, or one skipped check saying why there are none; none for a
// recording made without C0 reads.
func ocpChecks(o evidence.OCPHealth, rules specs.Health) []health.Check {
	switch {
	case o.Lost != "":
		return []health.Check{{Name: "ocp", Verdict: health.Fail, Message: o.Lost}}
	case o.Skip != "":
		return []health.Check{{Name: "ocp", Verdict: health.Skip, Message: o.Skip + ": its OCP checks are skipped"}}
	case o.Read:
		return health.JudgeOCP(o.Before, o.Last, rules.OCP)
	}
	return nil
}
