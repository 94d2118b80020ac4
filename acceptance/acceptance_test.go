package acceptance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/baseline"
	"github.com/drivequal/drivequal/acceptance/internal/health"
	"github.com/drivequal/drivequal/acceptance/internal/plan"
	"github.com/drivequal/drivequal/acceptance/internal/qual"
	"github.com/drivequal/drivequal/acceptance/internal/qual/verdict"
	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// TestReceipt inspects each drive as it arrived, before anything is
// written: its SMART log's power-on hours, data written and read, unsafe
// shutdowns, media errors and endurance used against the spec's [receipt]
// limits, TestReceipt/<drive>/<figure>; a figure with no limit is reported
// and skipped. A drive nvme-cli cannot read (a loop device, a file) is
// skipped, saying why.
func TestReceipt(t *testing.T) { eachRun(t, receiptOf) }

func receiptOf(t *testing.T, s *qual.Suite) {
	drives, why := s.JudgeReceipt()
	if why != "" {
		t.Skip(why)
	}
	checkDrives(t, drives)
}

// TestIntegrity judges each drive's verify pass: right after the last
// fill pass, before anything overwrites it, fio reads back every block the
// fill wrote, tail included, and compares every byte with the fill's
// pattern (unique to the run), all drives in one fio process.
// TestIntegrity/<drive> fails on any mismatch, saying what the drive
// returned and quoting fio (offset, byte) with the LBA; the drive's
// capacity is then NOT QUALIFIED and its remaining cells fail at once. It
// runs first: a live run executes the plan up to its last verify pass.
func TestIntegrity(t *testing.T) { eachRun(t, integrityOf) }

func integrityOf(t *testing.T, s *qual.Suite) {
	drives, why := s.JudgeIntegrity(runCtx, t.Logf)
	if why != "" {
		t.Skip(why)
	}
	for _, d := range drives {
		t.Run(d.Name, func(t *testing.T) {
			switch d.Verdict {
			case report.Pass:
				t.Log(d.Message)
			case report.Inconclusive:
				t.Skip("INCONCLUSIVE: " + d.Message)
			default:
				t.Error(d.Message)
			}
		})
	}
}

// TestSingleDrive judges one drive per capacity against each cell of the
// spec, in the plan's order so that preconditioning is shared. A fleet
// replay judges each host's run under its name:
// TestSingleDrive/<host>/<capacity>/<workload>.
func TestSingleDrive(t *testing.T) { eachRun(t, singleDrive) }

func singleDrive(t *testing.T, s *qual.Suite) {
	for _, cc := range s.SingleCells() {
		t.Run(cc.Capacity.Name, func(t *testing.T) {
			if cc.Skip != "" {
				t.Skip(cc.Skip)
			}
			for _, cell := range cc.Cells {
				t.Run(subtestName(cell.Test), func(t *testing.T) { judge(t, s, cell) })
			}
		})
	}
}

// TestScaling judges N drives measured together against N × one drive.
func TestScaling(t *testing.T) { eachRun(t, scaling) }

func scaling(t *testing.T, s *qual.Suite) {
	steps := s.ScalingCells()
	if len(steps) == 0 {
		t.Skipf("no scaling to judge: spec %s scales capacity %q, and no drive count of %v fits the drives given",
			s.Spec.Name, s.Spec.Scaling.Capacity, s.Spec.Scaling.Drives)
	}
	for _, st := range steps {
		t.Run(fmt.Sprintf("%d_drives", st.N), func(t *testing.T) {
			for _, cell := range st.Cells {
				t.Run(subtestName(cell.Test), func(t *testing.T) { judge(t, s, cell) })
			}
		})
	}
}

// TestLatency judges latency at load: each workload with a sweep
// (sweep_iodepth, sweep_rate_iops) is measured at each of its points, as a
// cell is, and TestLatency/<capacity>/<workload> judges the capacity's
// [capacity.at_latency] target: the highest IOPS among the points within
// its latency bound must reach its min_iops. Every point is a property.
func TestLatency(t *testing.T) { eachRun(t, latency) }

func latency(t *testing.T, s *qual.Suite) {
	targets := qual.LatencyTargets(s)
	if len(targets) == 0 {
		t.Skipf("no sweep to judge: no workload of spec %s has sweep_iodepth or sweep_rate_iops at a capacity of the drives", s.Spec.Name)
	}
	for _, cc := range targets {
		t.Run(cc.Name, func(t *testing.T) {
			for _, tg := range cc.Targets {
				t.Run(subtestName(tg.Test), func(t *testing.T) {
					if err := runCtx.Err(); err != nil {
						t.Fatalf("%s: not run: the run was stopped (%v)", tg.Workload.Name, stopReason(err))
					}
					o, err := qual.RunLatency(runCtx, s, tg, t.Logf)
					if err != nil {
						t.Error(err)
					}
					report1(t, o)
				})
			}
		})
	}
}

// TestFleet judges the hosts of a fleet replay (-replay=DIR1,DIR2,...) as
// one population: TestFleet/<capacity>/<workload> passes when every
// host's drive meets the spec and the drives agree within the fleet
// tolerance, naming each outlier by host, path and serial.
func TestFleet(t *testing.T) {
	if !run.Fleet {
		t.Skip("one run: give -replay=DIR1,DIR2,... to judge several hosts' runs as one fleet")
	}
	cells := run.JudgeFleet()
	var capacities []string
	for _, c := range cells {
		if !slices.Contains(capacities, c.Capacity) {
			capacities = append(capacities, c.Capacity)
		}
	}
	for _, capacity := range capacities {
		t.Run(capacity, func(t *testing.T) {
			for _, c := range cells {
				if c.Capacity != capacity {
					continue
				}
				t.Run(subtestName(c.Test), func(t *testing.T) {
					switch c.Verdict {
					case report.Pass:
						t.Log(c.Message)
					case report.Fail:
						t.Error(c.Message)
					default:
						t.Skip("INCONCLUSIVE: " + c.Message)
					}
				})
			}
		})
	}
}

// TestLot judges, by the spec's [lot] rule, the lot the drives were drawn
// from: TestLot/<capacity>/<workload> passes when the figures show at the
// rule's confidence that its coverage of the lot meets the cell's pass
// line (a tolerance bound), fails when they show it does not, and is
// INCONCLUSIVE otherwise, saying how many drives would decide. It judges
// every drive of each host's largest scaling step, or, for a capacity
// without scaling, the single-drive cells of a fleet's hosts.
func TestLot(t *testing.T) {
	if run.Spec == nil || run.Spec.Lot == nil {
		t.Skip("no [lot] table in the spec: add one (coverage, confidence) to judge the lot the drives come from")
	}
	cells := run.JudgeLot()
	var capacities []string
	for _, c := range cells {
		if !slices.Contains(capacities, c.Result.Capacity) {
			capacities = append(capacities, c.Result.Capacity)
		}
	}
	for _, capacity := range capacities {
		t.Run(capacity, func(t *testing.T) {
			for _, c := range cells {
				if c.Result.Capacity != capacity {
					continue
				}
				t.Run(subtestName(c.Result.Test), func(t *testing.T) {
					switch c.Result.Verdict {
					case report.Pass:
						t.Log(c.Message)
					case report.Fail:
						t.Error(c.Message)
					default:
						t.Skip("INCONCLUSIVE: " + c.Message)
					}
				})
			}
		})
	}
}

// TestPowerLoss cuts each drive's power while fio writes a pattern unique
// to the run and cycle, restores it, waits for the drive to return with
// the same identity within the spec's [power_loss] ready_within, and
// reads back every write it acknowledged: TestPowerLoss/<drive>/cycle_<k>
// fails naming the first lost range and what came back, or "did not
// return"; it is INCONCLUSIVE when a count of power losses the drive
// keeps (SMART unsafe shutdowns, OCP C0 PLP start count) did not
// rise. It needs the spec's [power_loss] and -power-cut=CMD with
// -power-restore=CMD (with -destructive); it runs
// after every cell.
func TestPowerLoss(t *testing.T) { eachRun(t, powerLossOf) }

func powerLossOf(t *testing.T, s *qual.Suite) {
	drives, why := qual.PowerLoss(s).Run(runCtx, logEscaped(t))
	if why != "" {
		t.Skip(why)
	}
	for _, d := range drives {
		t.Run(d.Name, func(t *testing.T) {
			for _, c := range d.Cycles {
				t.Run(fmt.Sprintf("cycle_%d", c.Cycle.Cycle), func(t *testing.T) {
					// A recording supplies the message: one line, shown as it is.
					msg := report.Escape(c.Message)
					switch c.Verdict.Verdict {
					case report.Pass:
						t.Log(msg)
					case report.Inconclusive:
						t.Skip("INCONCLUSIVE: " + msg)
					default:
						t.Error(msg)
					}
				})
			}
			if d.Skip != "" {
				t.Skip(d.Skip)
			}
		})
	}
}

// TestHealth judges each drive's health after the run against its health
// before it (nvme-cli's SMART log) and the spec's [health] rules:
// TestHealth/<drive>/<check>. A drive nvme-cli cannot read (a loop device,
// a file) is skipped, saying why.
func TestHealth(t *testing.T) {
	eachRun(t, healthOf)
	if err := run.WriteReport(); err != nil {
		t.Error(err)
	}
}

func healthOf(t *testing.T, s *qual.Suite) {
	qual.PowerLoss(s).AllowRecorded()
	drives, why := s.JudgeHealth(runCtx)
	if why != "" {
		t.Skip(why)
	}
	checkDrives(t, drives)
}

// TestFirmware activates -firmware's image on each drive under a 4 KiB
// random read/write load (and -firmware-back's after it):
// TestFirmware/<drive>/<step> fails when fio saw I/O stall beyond the
// spec's [firmware] max_stall, the new revision is not the one running
// (id-ctrl fr and the slot log's active slot), the identity changed, a
// write did not read back, or the revision is not in [health] firmware;
// the drive's capacity is then NOT QUALIFIED.
func TestFirmware(t *testing.T) {
	eachRun(t, func(t *testing.T, s *qual.Suite) {
		rs, why := qual.JudgeFirmware(runCtx, s, logEscaped(t))
		if why != "" {
			t.Skip(why)
		}
		for _, r := range rs {
			t.Run(verdict.IntegrityName(r.Drive)+"/"+r.Step, func(t *testing.T) {
				// A recording supplies the message: one line, shown as it is.
				switch r.Verdict {
				case report.Inconclusive:
					t.Skip("INCONCLUSIVE: " + report.Escape(r.Message))
				case report.Pass:
					t.Log(report.Escape(r.Message))
				default:
					t.Error(report.Escape(r.Message))
				}
			})
		}
	})
}

// TestPurge proves the purge at the end of the run (-purge-after, or the
// spec's [purge] verify): each drive, still holding the run's fill where
// the cells left it, is purged once more and read back, a sample or the
// whole drive. TestPurge/<drive> fails, naming the command and the LBAs,
// when a block of the fill remains or a read returns other than what the
// purge promises (zeros, the DLFEAT value, or for a crypto erase anything
// but the old data), or when the purge itself failed; the drive's
// capacity is then NOT QUALIFIED. A drive that held none of the fill
// before the purge shows no erase: INCONCLUSIVE, a skip like every other
// inconclusive test. It runs after TestHealth, which judges the drives as
// the cells left them.
func TestPurge(t *testing.T) {
	eachRun(t, func(t *testing.T, s *qual.Suite) {
		rs, why := qual.JudgePurge(runCtx, s, logEscaped(t))
		if why != "" {
			t.Skip(why)
		}
		for _, r := range rs {
			t.Run(verdict.IntegrityName(r.Drive), func(t *testing.T) {
				// A recording supplies the message: one line, shown as it is.
				switch r.Verdict {
				case report.Inconclusive:
					t.Skip("INCONCLUSIVE: " + report.Escape(r.Message))
				case report.Pass:
					t.Log(report.Escape(r.Message))
				default:
					t.Error(report.Escape(r.Message))
				}
			})
		}
	})
}

// TestVerdict is the gate, judged last: TestVerdict/<gate> for each
// capacity tested, then scaling, fleet, receipt and health, each passing
// only when QUALIFIED, so that go test's own PASS and FAIL lines agree with
// the exit status and the closing line. TestMain runs it whatever -run
// selects.
func TestVerdict(t *testing.T) {
	gates := run.Report.Gates()
	if len(gates) == 0 {
		t.Fatal(run.Report.ClosingLine())
	}
	for _, g := range gates {
		t.Run(g.Name, func(t *testing.T) {
			if g.Verdict != report.Qualified {
				t.Error(g.String())
				return
			}
			t.Log(g.String() + fmt.Sprintf(": %d of %d passed", g.Passed, g.Cells))
		})
	}
	if err := runCtx.Err(); err != nil {
		t.Errorf("the run was stopped (%s): what it did not measure is not qualified", stopReason(err))
	}
}

// checkDrives runs each drive's checks as subtests <drive>/<check>.
func checkDrives(t *testing.T, drives []verdict.HealthDrive) {
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
}

// eachRun runs f on the run's suite, or on each host's run of a fleet
// replay in a subtest named after the host.
func eachRun(t *testing.T, f func(*testing.T, *qual.Suite)) {
	if !run.Fleet {
		f(t, run.Members[0].Suite)
		return
	}
	for _, m := range run.Members {
		t.Run(m.Name, func(t *testing.T) { f(t, m.Suite) })
	}
}

// subtestName is the last element of a cell's test name.
func subtestName(test string) string { return test[strings.LastIndexByte(test, '/')+1:] }

func judge(t *testing.T, s *qual.Suite, cell plan.Cell) {
	if cell.Skip != "" {
		t.Skip(cell.Skip)
	}
	if err := runCtx.Err(); err != nil {
		// Listed as never reached, in every report, not left out.
		if err := qual.NotReached(runCtx, s, cell, stopReason(err)); err != nil {
			t.Error(err)
		}
		t.Fatalf("%s: not run: the run was stopped (%v)", cell.Workload.Name, stopReason(err))
	}
	o, err := s.Run(runCtx, cell, t.Logf)
	if err != nil {
		t.Error(err)
	}
	report1(t, o)
}

// report1 reports a judged cell's outcome: its properties, then its
// verdict row.
func report1(t *testing.T, o qual.Outcome) {
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

// TestBaseline compares every cell of the run with the same cell of the
// runs given with -baseline=DIR,...: TestBaseline/<capacity or
// N_drives>/<workload> fails (cause regressed) when the cell's figure, or
// a latency percentile, is worse than the baseline's beyond the spec's
// [baseline] tolerance, and is skipped as not comparable when a side's
// figure was bound by something other than the drive.
func TestBaseline(t *testing.T) {
	if len(run.Baselines) == 0 {
		t.Skip("no -baseline: give -baseline=DIR,... to compare this run with recorded runs")
	}
	cells := run.JudgeBaseline(runCtx)
	var groups []string
	for _, c := range cells {
		if g := strings.Split(c.Test, "/")[1]; !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		t.Run(g, func(t *testing.T) {
			for _, c := range cells {
				if strings.Split(c.Test, "/")[1] != g {
					continue
				}
				t.Run(subtestName(c.Test), func(t *testing.T) {
					msg := baseline.Row(c.Workload, c.Baseline.Metric)
					switch c.Verdict {
					case report.Pass:
						t.Log(msg)
					case report.Fail:
						t.Error(c.Error)
					default:
						t.Skip("INCONCLUSIVE: " + c.Error)
					}
				})
			}
		})
	}
}

// logEscaped is t.Logf with each line escaped (report.Escape): progress
// lines carry messages a recording supplies.
func logEscaped(t *testing.T) func(string, ...any) {
	return func(format string, args ...any) {
		t.Helper()
		t.Log(report.Escape(fmt.Sprintf(format, args...)))
	}
}
