package fwrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A failed step is never replaced by a later pass of the same step; a
// passed one is, and other steps are added beside it.
func TestSaveKeepsAFailure(t *testing.T) {
	dir := t.TempDir()
	failed := firmware.Result{Drive: "/dev/a", Step: firmware.StepActivate, Verdict: firmware.Fail, Message: "stalled"}
	require.NoError(t, Save(dir, []firmware.Result{failed}))
	require.NoError(t, Save(dir, []firmware.Result{{Drive: "/dev/a", Step: firmware.StepActivate, Verdict: firmware.Pass}}))
	require.NoError(t, Save(dir, []firmware.Result{{Drive: "/dev/a", Step: firmware.StepBack, Verdict: firmware.Pass, Message: "one"}}))
	require.NoError(t, Save(dir, []firmware.Result{{Drive: "/dev/a", Step: firmware.StepBack, Verdict: firmware.Pass, Message: "two"}}))
	rs, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, rs, 2)
	assert.Equal(t, failed, rs[0])
	assert.Equal(t, "two", rs[1].Message)
}

// A failed step is a failed result of its drive's capacity, with its cause.
func TestReport(t *testing.T) {
	r := Report(firmware.Result{Drive: "/dev/nvme0n1", Step: firmware.StepBack, Verdict: firmware.Fail, Message: "m"}, []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1"}, Capacity: "1.92TB"}})
	assert.Equal(t, "TestFirmware/nvme0n1/back", r.Test)
	assert.Equal(t, "1.92TB", r.Capacity)
	assert.Equal(t, report.CauseFirmware, r.Cause)
	assert.Equal(t, "m", r.Error)
	assert.Equal(t, report.KindFirmware, r.Kind)
}
