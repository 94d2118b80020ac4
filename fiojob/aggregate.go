package fiojob

import (
	"fmt"
	"sort"
	"syscall"
	"time"
)

// Aggregate combines jobs the way fio combines the jobs of a reporting group
// (stat.c, sum_thread_stats and the group run stats):
//
//   - io_bytes and total_ios are summed per direction;
//   - a direction's runtime is the longest runtime of that direction among
//     the jobs, and Result.Runtime the longest of any direction;
//   - a direction's IOPS is Σ total_ios / its runtime in seconds, and its
//     BWBytes Σ io_bytes / its runtime (bytes per second);
//   - Result.IOPS adds read, write and trim (a trim workload's trims are its
//     I/Os); Result.BytesPerSec adds read and write (a trim moves no data);
//   - CPUSeconds, the jobs' user and system CPU time, is summed;
//   - the mean latency is weighted by each job's sample count, and the
//     percentiles come from the merged json+ bins, never from averaging
//     percentiles.
//
// fio's per-job "iops" is total_ios × 1000 / runtime (ms), where total_ios and
// runtime both exclude ramp_time: fio resets the job's counters when the ramp
// ends. The recorded fixtures show this: fixtures/fio/randread-8jobs-nogroup.json
// (ramp_time=1) has, for every job, iops == total_ios*1000/runtime to fio's
// printed precision. So recomputing IOPS from total_ios and runtime gives
// fio's own figure for one job and for a group_reporting group.
func Aggregate(jobs []JobResult) Result {
	r := Result{Jobs: len(jobs), GroupID: -1}
	var read, write, trim dirAcc
	for i, j := range jobs {
		if i == 0 {
			r.GroupID = j.GroupID
		} else if j.GroupID != r.GroupID {
			r.GroupID = -1
		}
		read.add(j.Read)
		write.add(j.Write)
		trim.add(j.Trim)
		r.CPUSeconds += j.CPUSeconds
		if j.Error != 0 {
			who := "job " + Quote(j.Name)
			if j.Hostname != "" {
				who += " on " + Clip(j.Hostname)
			}
			r.Errors = append(r.Errors, fmt.Sprintf("%s: errno %d (%s)", who, j.Error, syscall.Errno(j.Error).Error()))
		}
	}
	r.Read, r.Write, r.Trim = read.result(), write.result(), trim.result()
	r.Runtime = time.Duration(max(r.Read.RuntimeMs, r.Write.RuntimeMs, r.Trim.RuntimeMs)) * time.Millisecond
	r.IOPS = r.Read.IOPS + r.Write.IOPS + r.Trim.IOPS
	r.BytesPerSec = r.Read.BWBytes + r.Write.BWBytes
	return r
}

// Groups aggregates the jobs of each fio reporting group, in ascending
// groupid order. With job files from Job.File, group i is target i.
func (o *Output) Groups() []Result {
	byGroup := map[int][]JobResult{}
	for _, j := range o.Jobs {
		byGroup[j.GroupID] = append(byGroup[j.GroupID], j)
	}
	ids := make([]int, 0, len(byGroup))
	for id := range byGroup {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	rs := make([]Result, len(ids))
	for i, id := range ids {
		rs[i] = Aggregate(byGroup[id])
	}
	return rs
}

// Total aggregates every job of the run.
func (o *Output) Total() Result { return Aggregate(o.Jobs) }

type dirAcc struct {
	d      Direction
	latSum float64 // Σ mean × N, ns
	// bins is the merged bins. While one job has bins (a group of one
	// job: group_reporting, or one job a target), it is that job's map,
	// shared rather than copied (nothing writes a Direction's Bins); own
	// is set once bins is a map of its own.
	bins map[int64]int64
	own  bool
}

func (a *dirAcc) add(d Direction) {
	a.d.IOBytes += d.IOBytes
	a.d.TotalIOs += d.TotalIOs
	a.d.RuntimeMs = max(a.d.RuntimeMs, d.RuntimeMs)
	a.d.LatN += d.LatN
	a.latSum += d.LatMeanNs * float64(d.LatN)
	switch {
	case len(d.Bins) == 0:
	case a.bins == nil:
		a.bins = d.Bins
	default:
		if !a.own {
			m := make(map[int64]int64, max(len(a.bins), len(d.Bins)))
			for k, c := range a.bins {
				m[k] = c
			}
			a.bins, a.own = m, true
		}
		for k, c := range d.Bins {
			a.bins[k] += c
		}
	}
}

func (a *dirAcc) result() Direction {
	d := a.d
	if d.RuntimeMs > 0 {
		sec := float64(d.RuntimeMs) / 1000
		d.IOPS = float64(d.TotalIOs) / sec
		d.BWBytes = float64(d.IOBytes) / sec
	}
	if d.LatN > 0 {
		d.LatMeanNs = a.latSum / float64(d.LatN)
	}
	if len(a.bins) > 0 {
		d.Bins = a.bins
		d.setPercentiles()
	}
	return d
}
