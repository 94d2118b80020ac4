package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/specs"
)

// Render gives summary.md a table row per point and direction, the
// target's verdict naming its bound, a saturated point's note, and one
// chart per sweep, linked.
func TestRender(t *testing.T) {
	pts := []report.Result{point(1, 500, 900), point(4, 1900, 2100), open(4000, 2000, 9000)}
	for i := range pts {
		pts[i].Capacity, pts[i].Workload = "1.92TB", "RR"
	}
	pts[2].Test = "TestLatency/1.92TB/RR/rate_iops_4000"
	at := specs.AtLatency{MinIOPS: 1800, Limit: specs.LatencyLimit{Dir: "read", Percentile: 99, Limit: 2500 * time.Microsecond, Key: "read_p99_us"}}
	target, _ := Judge("TestLatency/1.92TB/RR", specs.Capacity{Name: "1.92TB"}, specs.Workload{Name: "RR"}, at, pts, 0)
	md, charts := Render(&report.Run{Results: append(pts, target)})
	for _, want := range []string{
		"## Latency at load",
		"**PASS** (`TestLatency/1.92TB/RR`): IOPS at read p99 ≤ 2,500 µs: 1,900 ≥ min_iops 1,800",
		"| iodepth 4 | 1,900 | 0.0 | read | 1,050 | 2,100 |",
		"| 4,000 IOPS asked | 2,000 |",
		"saturated: 2,000 of 4,000 IOPS asked (< 99 %), not a latency figure",
		"(charts/sweep-1.92TB-RR.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Render() lacks %q:\n%s", want, md)
		}
	}
	if len(charts) != 1 || len(charts["sweep-1.92TB-RR.svg"]) == 0 {
		t.Errorf("Render() charts = %d, want sweep-1.92TB-RR.svg", len(charts))
	}
	if md, charts := Render(&report.Run{}); md != "" || charts != nil {
		t.Errorf("Render() of a run without sweeps = %q, %v; want nothing", md, charts)
	}
}

// A sweep without a target says so in its verdict row, not "IOPS at :".
func TestRenderNoTarget(t *testing.T) {
	pts := []report.Result{point(1, 500, 900)}
	pts[0].Capacity, pts[0].Workload = "1.92TB", "RR"
	target, _ := NoTarget("TestLatency/1.92TB/RR", specs.Capacity{Name: "1.92TB"}, specs.Workload{Name: "RR"}, pts)
	md, _ := Render(&report.Run{Results: append(pts, target)})
	if want := "**PASS** (`TestLatency/1.92TB/RR`): points measured; no [capacity.at_latency] target to judge them by"; !strings.Contains(md, want) {
		t.Errorf("Render() lacks %q:\n%s", want, md)
	}
}
