package live

import (
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qual/live/runjson"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// recorder is the run's run.json (package runjson), by the names the
// runner's files call it by.
type recorder struct{ *runjson.Recorder }

func (r *recorder) update(f func(*record.Run)) error  { return r.Update(f) }
func (r *recorder) start(info record.Run) error       { return r.Start(info) }
func (r *recorder) recorded(test, owner string) error { return r.Recorded(test, owner) }
func (r *recorder) forget(test string) error          { return r.Forget(test) }
func (r *recorder) landed(sub string, rehash bool, skip ...string) error {
	return r.Landed(sub, rehash, skip...)
}
func (r *recorder) finished(at time.Time) error     { return r.Finished(at) }
func (r *recorder) unmeasured(tests []string) error { return r.Unmeasured(tests) }
func (r *recorder) resumptions() int                { return r.Resumptions() }
func (r *recorder) sidecars(test string, steady []report.Steady, thermal record.Thermal, link record.Link, cpu *record.CPU) []error {
	return r.Sidecars(test, steady, thermal, link, cpu)
}
func (r *recorder) failed(f record.DriveFailure) error           { return r.Failed(f) }
func (r *recorder) failures() []record.DriveFailure              { return r.Failures() }
func (r *recorder) written(drives []int, n int, mark bool) error { return r.Written(drives, n, mark) }
func (r *recorder) peak(d, n, kelvin int) error                  { return r.Peak(d, n, kelvin) }
func (r *recorder) sanitizing(devices []string, sent bool) error { return r.Sanitizing(devices, sent) }
func (r *recorder) failureOf(d int) (record.DriveFailure, bool)  { return r.FailureOf(d) }
