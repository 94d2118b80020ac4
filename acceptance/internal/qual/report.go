package qual

import (
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/runreport"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// outcome is a judged cell's subtest outcome: its verdict and the
// testcase's properties.
func (s *Suite) outcome(res report.Result, cell plan.Cell, fioVersion string) Outcome {
	return Outcome{Result: res, Message: res.Error, Attrs: runreport.Attrs(res, cell, s.Drives, fioVersion, s.Precondition)}
}
