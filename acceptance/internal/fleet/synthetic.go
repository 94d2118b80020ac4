package fleet

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/stats"
	"github.com/drivequal/drivequal/specs"
)

// Synthetic returns synthetic runs, made up in memory and measured on no
// drive: hosts hosts ("syn-h001", …), each with drives drives of spec's
// scaling capacity (its first capacity when it scales none). Each run
// holds what a full qualification of those drives records: one
// TestSingleDrive result per workload the capacity has a figure for,
// and one TestScaling result per workload and per scaling drive count up
// to drives, with every drive's share. With the built-in spec and 24
// drives that is 8 + 8 × 8 = 72 results per run.
//
// Every figure is between the spec and 6 % better than it (pseudo-random,
// the same on every call), so every cell passes; tests and benchmarks
// change the results they need to. A nil spec is the built-in
// solidigm-d7-ps1010; Synthetic panics if that cannot be loaded.
func Synthetic(hosts, drives int, spec *specs.Spec) []Run {
	if spec == nil {
		var err error
		if spec, err = specs.Load("solidigm-d7-ps1010"); err != nil {
			panic(fmt.Sprintf("fleet: loading the built-in spec: %v", err))
		}
	}
	capacity := spec.Capacities[0]
	for _, c := range spec.Capacities {
		if c.Name == spec.Scaling.Capacity {
			capacity = c
		}
	}
	var workloads, capacities []string
	for _, w := range spec.Workloads {
		workloads = append(workloads, w.Name)
	}
	for _, c := range spec.Capacities {
		capacities = append(capacities, c.Name)
	}
	var counts []int
	for _, n := range spec.Scaling.Drives {
		if n <= drives {
			counts = append(counts, n)
		}
	}
	stol := spec.Scaling.Tolerance
	if stol <= 0 {
		stol = report.DefaultDriveTolerance
	}

	runs := make([]Run, hosts)
	for h := range runs {
		rng := rand.New(rand.NewPCG(uint64(h)+1, 0x5eed))
		// better is a figure between the spec and 6 % better than it.
		better := func(metric specs.Metric, v float64) float64 {
			f := 1 + 0.06*rng.Float64()
			if metric.LowerIsBetter() {
				return v / f
			}
			return v * f
		}
		name := fmt.Sprintf("syn-h%03d", h+1)
		rep := &report.Run{
			Spec: spec.Model, Source: spec.Source, Mode: "live", FioVersion: "fio-3.36", Precondition: "full",
			Workloads: workloads, Capacities: capacities,
			Scaling:  &report.Scaling{Capacity: capacity.Name, Baseline: spec.Scaling.Baseline, Tolerance: stol, Drives: counts},
			JudgedBy: &report.SpecRef{Model: spec.Model, File: spec.File, SHA256: spec.SHA256(), Recorded: true},
		}
		for d := range drives {
			rep.Drives = append(rep.Drives, report.Drive{
				Path:   fmt.Sprintf("/dev/disk/by-id/nvme-SYNTH_h%03d_d%02d", h+1, d+1),
				Model:  spec.Model,
				Serial: fmt.Sprintf("SYNh%03dd%02d", h+1, d+1),
				Bytes:  capacity.Bytes, Capacity: capacity.Name, NUMANode: -1,
			})
		}
		for _, w := range spec.Workloads {
			sv, ok := capacity.Spec[w.Name]
			if !ok || drives == 0 {
				continue
			}
			actual := better(w.Metric, sv)
			rep.Results = append(rep.Results, report.Result{
				Test: "TestSingleDrive/" + capacity.Name + "/" + specs.SubtestName(w.Name), Kind: report.KindSingle,
				Capacity: capacity.Name, Workload: w.Name, Drives: 1, Metric: string(w.Metric),
				Spec: sv, Expected: sv, Actual: actual, Ratio: actual / sv,
				Tolerance: spec.Method.Tolerance, Verdict: report.Pass,
			})
		}
		for _, n := range counts {
			for _, w := range spec.Workloads {
				sv, ok := capacity.Spec[w.Name]
				if !ok {
					continue
				}
				res := report.Result{
					Test: "TestScaling/" + strconv.Itoa(n) + "_drives/" + specs.SubtestName(w.Name), Kind: report.KindScaling,
					Capacity: capacity.Name, Workload: w.Name, Drives: n, Metric: string(w.Metric),
					Spec: sv, Expected: float64(n) * sv, Tolerance: stol, Verdict: report.Pass,
				}
				for _, d := range rep.Drives[:n] {
					a := better(w.Metric, sv)
					res.Actual += a
					res.PerDrive = append(res.PerDrive, report.DriveResult{Path: d.Path, Serial: d.Serial, Actual: a, Ratio: a / sv, Verdict: report.Pass})
				}
				res.Ratio = res.Actual / res.Expected
				var vals []float64
				for _, d := range res.PerDrive {
					vals = append(vals, d.Actual)
				}
				st := stats.Of(vals)
				res.Spread, res.Min, res.Median, res.Max = st.Spread(), st.Min, st.Median, st.Max
				rep.Results = append(rep.Results, res)
			}
		}
		runs[h] = Run{
			Host: host.Info{Hostname: name, MachineID: fmt.Sprintf("%032x", h+1), Kernel: "6.1.0-synthetic",
				CPUModel: "synthetic CPU", FioVersion: "fio-3.36"},
			Dir:    name,
			Report: rep,
		}
	}
	return runs
}
