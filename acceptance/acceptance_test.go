package acceptance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

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
