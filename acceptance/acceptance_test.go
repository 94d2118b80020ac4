package acceptance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/qual"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// TestSingleDrive judges one drive per capacity against each cell of the
// spec, in the plan's order so that preconditioning is shared.
func TestSingleDrive(t *testing.T) {
	for _, cc := range suite.SingleCells() {
		t.Run(cc.Capacity.Name, func(t *testing.T) {
			if cc.Skip != "" {
				t.Skip(cc.Skip)
			}
			for _, cell := range cc.Cells {
				t.Run(subtestName(cell.Test), func(t *testing.T) { judge(t, cell) })
			}
		})
	}
}

// TestScaling judges N drives measured together against N × one drive.
func TestScaling(t *testing.T) {
	steps := suite.ScalingCells()
	if len(steps) == 0 {
		t.Skipf("no scaling to judge: spec %s scales capacity %q, and no drive count of %v fits the drives given",
			suite.Spec.Name, suite.Spec.Scaling.Capacity, suite.Spec.Scaling.Drives)
	}
	for _, st := range steps {
		t.Run(fmt.Sprintf("%d_drives", st.N), func(t *testing.T) {
			for _, cell := range st.Cells {
				t.Run(subtestName(cell.Test), func(t *testing.T) { judge(t, cell) })
			}
		})
	}
}

// TestHealth judges each drive's health after the run against its health
// before it (nvme-cli's SMART log) and the spec's [health] rules:
// TestHealth/<drive>/<check>. A drive nvme-cli cannot read (a loop device,
// a file) is skipped, saying why.
func TestHealth(t *testing.T) {
	drives, why := suite.JudgeHealth(runCtx)
	if why != "" {
		t.Skip(why)
	}
	for _, d := range drives {
		t.Run(d.Name, func(t *testing.T) {
			if d.Skip != "" {
				t.Skip(d.Skip)
			}
			for _, c := range d.Checks {
				t.Run(c.Name, func(t *testing.T) {
					switch c.Verdict {
					case health.Fail:
						t.Error(c.Message)
					case health.Skip:
						t.Skip(c.Message)
					default:
						t.Log(c.Message)
					}
				})
			}
		})
	}
	if err := suite.WriteReport(); err != nil {
		t.Error(err)
	}
}

// subtestName is the last element of a cell's test name.
func subtestName(test string) string { return test[strings.LastIndexByte(test, '/')+1:] }

func judge(t *testing.T, cell qual.Cell) {
	if cell.Skip != "" {
		t.Skip(cell.Skip)
	}
	if err := runCtx.Err(); err != nil {
		t.Fatalf("%s: not run: the run was stopped (%v)", cell.Workload.Name, stopReason(err))
	}
	o, err := suite.Run(runCtx, cell, t.Logf)
	if err != nil {
		t.Error(err)
	}
	if o.Skip != "" {
		t.Skip(o.Skip)
	}
	// The cell's figures as testcase properties (go test's JSON, which
	// gotestsum writes into its JUnit).
	for _, a := range o.Attrs {
		t.Attr(a[0], a[1])
	}
	// The verdict row once, nothing around it: the figures are in the
	// report's junit.xml, results.json and summary.md.
	switch o.Result.Verdict {
	case report.Inconclusive:
		t.Skip("INCONCLUSIVE: " + o.Message)
	case report.Pass:
		t.Log(o.Message)
	default:
		t.Error(o.Message)
	}
}

func stopReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the -timeout is near"
	}
	return "interrupted"
}
