package live

import (
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/live/progress"
	"github.com/drivequal/drivequal/fiojob"
)

// lines is the run's progress lines (package progress), by the names the
// runner's files call them by.
type lines struct{ *progress.Lines }

func (s *lines) progressLine(st plan.Step, elapsed time.Duration, p fiojob.Progress) string {
	return s.ProgressLine(st, elapsed, p)
}
func (s *lines) progress(logf func(string, ...any), format string, args ...any) {
	s.Progress(logf, format, args...)
}
func (s *lines) drivesLine(drives []int) string                  { return s.DrivesLine(drives) }
func (s *lines) stepLine(st plan.Step) string                    { return s.StepLine(st) }
func (s *lines) measureLine(st plan.Step, names []string) string { return s.MeasureLine(st, names) }
