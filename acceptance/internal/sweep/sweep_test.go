package sweep

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/device"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual/evidence"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// sweepTarget is a 4 KB random-read sweep of two closed-loop points on
// drive 0, with target at (nil: none).
func sweepTarget(at *specs.AtLatency) Target {
	c := specs.Capacity{Name: "64MiB"}
	w := specs.Workload{Name: "RR", RW: "randread", BS: 4096}
	tg := Target{Test: "TestLatency/64MiB/RR", Capacity: c, Workload: w, At: at}
	for _, qd := range []int{1, 8} {
		pw := w
		pw.IODepth = qd
		tg.Points = append(tg.Points, plan.Cell{Kind: report.KindSweep, Test: tg.Test + "/iodepth_" + strconv.Itoa(qd), Capacity: c, Workload: pw, Drives: []int{0}})
	}
	return tg
}

// runSweep runs tg with each point's evidence from ev (by its last name)
// and the drives' failures, and returns the target and every result added.
func runSweep(t *testing.T, tg Target, ev map[string]*evidence.Measured, failures []record.DriveFailure) (Judged, []report.Result) {
	t.Helper()
	var added []report.Result
	r := verdict.Run{Spec: &specs.Spec{}, Drives: []plan.Drive{{Info: device.Info{Path: "/dev/nvme0n1", Serial: "S0"}}}}
	j, err := Run(context.Background(), tg, r, func() []record.DriveFailure { return failures },
		func(c plan.Cell) *evidence.Measured { return ev[c.Test[strings.LastIndexByte(c.Test, '/')+1:]] },
		func(res report.Result) error { added = append(added, res); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return j, added
}

// A sweep with no target whose point's recorded output is gone: the
// target FAILs with the point's cause, and is a result (the capacity's
// gate counts it), not a skip.
func TestNoTargetFailedPoint(t *testing.T) {
	ev := map[string]*evidence.Measured{
		"iodepth_1": evidence.NotMeasured("interrupted before it", report.CauseInterrupted),
		"iodepth_8": evidence.NotMeasured("recorded output missing: iodepth_8.json is not there", report.CauseNotRecorded),
	}
	j, added := runSweep(t, sweepTarget(nil), ev, nil)
	if j.Skip != "" || j.Result.Kind != report.KindLatency || j.Result.Verdict != report.Fail || j.Result.Cause != report.CauseNotRecorded ||
		!strings.Contains(j.Result.Error, "iodepth_8.json") {
		t.Errorf("Run = skip %q, %+v; want a latency result that FAILs, not recorded, naming iodepth_8.json", j.Skip, j.Result)
	}
	if n := len(added); n != 3 || added[2].Kind != report.KindLatency {
		t.Errorf("added %d results, want the 2 points then the target: %+v", n, added)
	}
}

// A planned point the recording does not hold is named, INCONCLUSIVE
// not recorded, and leaves the target INCONCLUSIVE.
func TestUnrecordedPointNamed(t *testing.T) {
	at := &specs.AtLatency{MinIOPS: 0, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	for _, target := range []*specs.AtLatency{nil, at} {
		tg := sweepTarget(target)
		tg.Missing = tg.Points[1:]
		tg.Points = tg.Points[:1]
		ev := map[string]*evidence.Measured{"iodepth_1": evidence.NotMeasured("interrupted before it", report.CauseInterrupted)}
		j, added := runSweep(t, tg, ev, nil)
		if len(added) != 3 || added[1].Test != "TestLatency/64MiB/RR/iodepth_8" || added[1].Verdict != report.Inconclusive || added[1].Cause != report.CauseNotRecorded {
			t.Fatalf("target %v: added %+v; want iodepth_8 reported INCONCLUSIVE, not recorded", target != nil, added)
		}
		if j.Result.Verdict != report.Inconclusive || !strings.Contains(j.Result.Error, "iodepth 8 (not recorded)") {
			t.Errorf("target %v: Run = %s %q; want INCONCLUSIVE naming iodepth 8", target != nil, j.Result.Verdict, j.Result.Error)
		}
	}
}

// A point measured after its drive raised a critical warning FAILs with
// it, as a cell does (verdict.PrecedeDrives), and so does its target.
func TestPointAfterDriveFailure(t *testing.T) {
	ev := map[string]*evidence.Measured{
		"iodepth_1": evidence.NotMeasured("interrupted before it", report.CauseInterrupted),
		"iodepth_8": evidence.NotMeasured("interrupted before it", report.CauseInterrupted),
	}
	f := []record.DriveFailure{{Drive: 0, Path: "/dev/nvme0n1", Cause: report.CauseCriticalWarning, Step: "a cell", Message: "available spare below threshold"}}
	at := &specs.AtLatency{MinIOPS: 100, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	j, added := runSweep(t, sweepTarget(at), ev, f)
	if added[0].Verdict != report.Fail || added[0].Cause != report.CauseCriticalWarning {
		t.Errorf("point = %s (%s), want FAIL critical warning", added[0].Verdict, added[0].Cause)
	}
	if j.Result.Verdict != report.Fail || j.Result.Cause != report.CauseCriticalWarning {
		t.Errorf("target = %s (%s) %q, want FAIL critical warning", j.Result.Verdict, j.Result.Cause, j.Result.Error)
	}
}

func TestNoTarget(t *testing.T) {
	pass := point(1, 500, 900)
	for _, tt := range []struct {
		name           string
		points         []report.Result
		verdict, cause string
	}{
		{"all measured", []report.Result{pass, point(8, 1900, 2000)}, report.Pass, ""},
		{"an inconclusive point", []report.Result{pass, with(point(8, 1900, 2000), func(p *report.Result) {
			p.Verdict, p.Cause, p.Error = report.Inconclusive, report.CauseThrottled, "throttled"
		})}, report.Inconclusive, report.CauseThrottled},
		{"a failed point", []report.Result{pass, with(point(8, 0, 0), func(p *report.Result) {
			p.Verdict, p.Cause, p.Error = report.Fail, report.CauseIOError, "RR: I/O error"
		})}, report.Fail, report.CauseIOError},
	} {
		res, msg := NoTarget("T", specs.Capacity{Name: "64MiB"}, specs.Workload{Name: "RR"}, tt.points)
		if res.Verdict != tt.verdict || res.Cause != tt.cause || msg == "" || (res.Verdict == report.Pass) != (res.Error == "") {
			t.Errorf("%s: NoTarget = %s (%s) %q %q, want %s (%s)", tt.name, res.Verdict, res.Cause, res.Error, msg, tt.verdict, tt.cause)
		}
	}
}
