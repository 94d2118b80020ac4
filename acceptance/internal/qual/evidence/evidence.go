// Package evidence is what a qualification's verdicts are judged from,
// whether a live run measures it now or a replay reads it from a
// recording.
//
// Evidence is the one seam between the two: the live runner (package
// live) and the recording reader (package recording) implement it, and
// the judging (package verdict) takes what it returns, never asking
// which of the two it came from.
package evidence

import (
	"context"
	"github.com/drivequal/drivequal/acceptance/internal/device/fabric"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
	"github.com/drivequal/drivequal/fiojob"
)

// Evidence yields what each test of a run judges.
type Evidence interface {
	// Cell is the measurement cell is judged from: a live run executes
	// its plan up to and including the cell's measurement, a replay
	// reads the cell's recording. logf receives progress lines.
	Cell(ctx context.Context, cell plan.Cell, logf func(string, ...any)) *Measured
	// ReadBacks are the verify passes TestIntegrity judges, each drive
	// on its last read-back: a live run executes its plan through its
	// last verify pass first. When there is none, it says why.
	ReadBacks(ctx context.Context, logf func(string, ...any)) ([]ReadBack, string)
	// Health is each drive's health before and after the run: a live run
	// reads it now. When a recording holds none, it says why.
	Health(ctx context.Context) ([]DriveHealth, string)
	// Receipt is each drive's SMART log as it arrived, before anything
	// was written. When a recording holds none, it says why.
	Receipt() ([]Received, string)
}

// Measured is what a cell is judged from: its fio output, or why it was
// not measured, and what was seen of its drives around it.
type Measured struct {
	// Skip, when set, says the cell has no evidence at all (a replay
	// that did not record it): its subtest is skipped.
	Skip string
	// NotRun, when set, says why the cell was not measured; Cause is
	// its report cause.
	NotRun, Cause string

	Stdout []byte
	RunErr error
	Raw    string // where the output is recorded
	Job    fiojob.Job
	// Steady is the steady-state evidence of the cell's drives.
	Steady []report.Steady
	// WAF is the write amplification (and latency monitor) of the cell's
	// drives that have the OCP logs.
	WAF []waf.WAF
	// Thermal, when set, says a drive throttled on heat during the
	// measurement; Hot, that a drive had its temperature critical
	// warning bit set before or after it.
	Thermal, Hot string
	// Link, when set, says a drive's PCIe link was below what the cell
	// needs before or after it; LinkUnknown names the links on the
	// drives' PCIe paths that sysfs does not know, which are not judged.
	Link, LinkUnknown string
	// Shared are the links two or more of the step's drives share, as
	// they trained.
	Shared []record.SharedLink
	// Fabric are the cell's NVMe over Fabrics drives and what their
	// network interfaces carried during the measurement.
	Fabric []fabric.Path
	// CPU is the CPUs fio was allowed and how busy they were during the
	// measurement (N 0: not read).
	CPU record.CPU
	// Recycle, when set, takes Stdout back once it is parsed (a
	// recording's read buffer).
	Recycle func([]byte)

	parsed   bool
	out      *fiojob.Output
	parseErr error
	groups   []fiojob.Result
	total    fiojob.Result
}

// NotMeasured is a cell that was not measured, and why.
func NotMeasured(why, cause string) *Measured { return &Measured{NotRun: why, Cause: cause} }

// Parse is fiojob.Parse of the measurement's stdout, parsed once. The
// stdout is let go then: a replay prefetches a run's cells of one kind
// at once, and a live 24-drive cell's json+ with its status reports is
// about 10 MB.
func (m *Measured) Parse() (*fiojob.Output, error) {
	if !m.parsed {
		m.out, m.parseErr = fiojob.Parse(m.Stdout)
		if m.Recycle != nil {
			// Parse's output refers to none of its input.
			m.Recycle(m.Stdout)
		}
		m.parsed, m.Stdout = true, nil
		if m.parseErr == nil {
			m.groups, m.total = m.out.Groups(), m.out.Total()
		}
	}
	return m.out, m.parseErr
}

// Groups and Total are the parsed output's Groups and Total, aggregated
// once with Parse.
func (m *Measured) Groups() []fiojob.Result { m.Parse(); return m.groups }

// Total is the parsed output's Total (see Groups).
func (m *Measured) Total() fiojob.Result { m.Parse(); return m.total }

// ReadBack is one verify pass to judge: the pass recorded in Dir, for the
// drives in Only (nil: every drive of the pass).
type ReadBack struct {
	Dir  string
	Pass record.Verify
	Only map[string]bool
	// Disappeared are the drives (by path) the run recorded as having
	// disappeared (run.json's failures of cause drive changed): a pass's
	// drive marked gone counts as gone only when it is one of them.
	Disappeared map[string]bool
}

// DriveHealth is one drive's health over the run: its SMART log before
// the run and the latest reading, its controller's identity and the
// hottest it was seen, or why its health is not judged (Skip) or why it
// has none to judge (Lost).
type DriveHealth struct {
	Skip string
	// Lost says why a drive whose health was read at setup has no health
	// log after the run: it disappeared, or changed, mid-run. Its health
	// fails: a drive that vanished has no health to pass.
	Lost     string
	Ctrl     nvme.Controller
	Before   nvme.SmartLog
	Last     nvme.SmartLog
	MaxTempK int
	// OCP is the drive's OCP C0 log over the run.
	OCP OCPHealth
}

// OCPHealth is a drive's OCP C0 log before and after the run: Read says
// both were read; Skip, when set, why its OCP checks are not made (no C0
// log); neither for a recording made without C0 reads.
type OCPHealth struct {
	Read bool
	Skip string
	// Lost, when set, says why the C0 log read on receipt could not be
	// read after the run: the drive stopped giving the log it gave, which
	// fails it (what it hides may be the bad blocks it grew).
	Lost         string
	Before, Last nvme.OCPSmart
}

// Received is one drive's SMART log as it arrived, or why there is none.
type Received struct {
	Log  nvme.SmartLog
	Skip string
}
