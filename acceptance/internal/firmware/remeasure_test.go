package firmware

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A cell slower after the activation than its tolerance allows fails the
// step, naming the cell and both figures; one within it does not.
func TestAddRemeasured(t *testing.T) {
	within := Remeasure{Test: "TestSingleDrive/c/a", Metric: "iops", Before: 1000, After: 960, Tolerance: 0.05}
	slower := Remeasure{Test: "TestSingleDrive/c/b", Metric: "iops", Before: 1000, After: 900, Tolerance: 0.05}
	within.Compare()
	slower.Compare()
	assert.False(t, within.Regressed)
	assert.True(t, slower.Regressed)

	r := Result{Drive: "/dev/x", Verdict: Pass, Message: "passed"}
	AddRemeasured(&r, []Remeasure{within})
	assert.Equal(t, Pass, r.Verdict)
	AddRemeasured(&r, []Remeasure{slower})
	assert.Equal(t, Fail, r.Verdict)
	assert.Equal(t, "/dev/x: slower after the activation: TestSingleDrive/c/b: 900 iops after against 1000 before (-10.0 %, tolerance 5 %)", r.Message)
	assert.Len(t, r.Remeasured, 2)

	failed := Remeasure{Test: "t", Error: "no job file"}
	failed.Compare()
	assert.True(t, failed.Regressed, "a cell that could not be measured again is not taken as kept")
}

// The job run again writes no log into the cell's recording.
func TestRerunnable(t *testing.T) {
	job := "[global]\nrw=read\nwrite_iops_log=/rec/x\nwrite_bw_log=/rec/x\nlog_avg_msec=1000\nper_job_logs=0\n[drive0]\nfilename=/dev/a\n"
	assert.Equal(t, "[global]\nrw=read\n[drive0]\nfilename=/dev/a\n", rerunnable(job))
}
