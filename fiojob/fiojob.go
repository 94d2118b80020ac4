// Package fiojob is how drivequal uses fio, from the job file it writes to
// the figures it reads from fio's output.
//
// It builds fio job files, runs fio as a child process and parses and
// aggregates what it prints. Building a job file never starts a process.
package fiojob

import "time"

// Target is one drive (block device or regular file) a job runs on.
type Target struct {
	Path string // filename= for fio
	// Size limits the bytes of Path used (fio size=); 0 means the whole target.
	Size int64
	// CPUs is a cpus_allowed list ("0-7,16-23"); empty means no pinning.
	CPUs string
	// IOPSLog, when set, is the target's write_iops_log prefix: fio writes
	// each of its jobs' IOPS, averaged over Job.LogInterval, to
	// IOPSLog_iops.N.log (see IOPSLogFiles).
	IOPSLog string
	// BWLog, when set, is the target's write_bw_log prefix: fio writes
	// each of its jobs' bandwidth (KiB/s), averaged over Job.LogInterval,
	// to BWLog_bw.N.log (see LogFiles).
	BWLog string
}

// Job is one fio run: a workload applied to one or more targets at once.
// Each target gets its own job section and its own reporting group
// (new_group), so results can be split per target by group id.
type Job struct {
	Name      string
	RW        string // fio rw
	BS        int64  // block size in bytes
	IODepth   int
	NumJobs   int // clones per target
	RWMixRead int // read percentage for mixed patterns; -1 unset
	IOEngine  string
	Direct    bool
	// BSSplit is fio's bssplit ("4096/50:65536/50", sizes in bytes),
	// issued instead of BS when set; empty: BS only.
	BSSplit string
	// RateIOPS caps each job at this many IOPS (fio rate_iops, per job);
	// 0: no cap. RateProcess is fio's rate_process ("poisson" for an
	// open-loop arrival process); empty: fio's default (linear).
	RateIOPS    int64
	RateProcess string
	// ThinkTime is fio's thinktime: each job stalls this long after an
	// I/O completes before issuing the next; written in microseconds.
	ThinkTime time.Duration
	// BufferCompressPercentage is fio's buffer_compress_percentage: the
	// share (%) of each written buffer fio fills with a fixed pattern so
	// that it compresses to that level; 0: fio's default (random data).
	BufferCompressPercentage int
	// Runtime and RampTime make the job time_based when Runtime > 0.
	Runtime  time.Duration
	RampTime time.Duration
	// Loops, when > 0 and Runtime == 0, writes the whole target Loops times
	// (a sequential fill).
	Loops int
	// SteadyState is fio's steadystate= criterion; empty for none.
	SteadyState         string
	SteadyStateDuration time.Duration // ss_dur
	// LogInterval is fio's log_avg_msec for the targets' IOPS logs; 0 for
	// fio's default (a sample per I/O).
	LogInterval time.Duration
	// GroupReporting merges each target's clones into one result in fio's output.
	GroupReporting bool
	// Verify is fio's verify= method ("pattern", "crc32c"); empty for
	// none. A job that writes puts it in every block it writes and does
	// not read them back (do_verify=0); a job that only reads (rw=read)
	// checks every block as it reads it, keeping nothing in memory.
	Verify string
	// VerifyPattern is fio's verify_pattern= ("0x…%o"): what every block
	// holds with Verify "pattern", %o being the block's offset.
	VerifyPattern string
	// EarlierPattern, on a job that writes more than one loop, is what the
	// loops before the last write instead of VerifyPattern: each target
	// section is written Loops-1 times with it, then once more with
	// VerifyPattern by a section that waits for it (fio wait_for), so that
	// the target ends up holding the last loop's pattern and a drive that
	// kept an earlier loop's blocks does not read back as the last one's.
	EarlierPattern string
	// Tail covers the bytes of each target past its last whole BS block
	// (Target.Size must be set) with one more job in the target's group,
	// at the largest power-of-two block that divides them (TailBS): a
	// drive whose size is not a multiple of BS is written or read to its
	// last byte.
	Tail bool
	// Split, when > 1, divides each target's whole BS blocks between
	// Split jobs on disjoint ranges (Target.Size must be set), each its own
	// section in the target's group, sharing the target's CPUs.
	Split   int
	Targets []Target
}

// Direction is one I/O direction of a result (read, write or trim).
type Direction struct {
	IOBytes   int64   // bytes transferred
	TotalIOs  int64   // I/Os completed
	RuntimeMs int64   // fio's runtime for this direction, milliseconds
	IOPS      float64 // as fio reports it (per job) or as aggregated
	BWBytes   float64 // bytes per second, as fio reports it (per job) or as aggregated
	// Lat is completion-inclusive total latency (fio lat_ns).
	LatMeanNs float64
	LatN      int64 // samples behind LatMeanNs
	// Clat percentiles in nanoseconds merged from json+ bins; 0 when fio
	// printed no bins.
	P50Ns, P99Ns, P999Ns, P9999Ns float64
	// Bins is fio's json+ clat_ns bins: latency in ns → count.
	Bins map[int64]int64
}

// JobResult is one entry of fio's "jobs" (or "client_stats") array.
type JobResult struct {
	Name     string
	GroupID  int
	Hostname string // client/server mode only
	Error    int    // errno fio reports for the job; 0 for none
	// CPUSeconds is the CPU time, user and system, the job (or the
	// group_reporting group's jobs together) used: fio's usr_cpu +
	// sys_cpu, in % of job_runtime.
	CPUSeconds float64
	// CPUPct is fio's usr_cpu + sys_cpu: the job's user and system time
	// in % of its runtime (job_runtime), so 100 is one CPU all the time.
	// fio reads each job's time with getrusage(RUSAGE_THREAD), its own
	// thread's. A group_reporting entry sums its jobs' CPU time and their
	// runtimes, so its CPUPct is its jobs' mean, not their sum.
	CPUPct float64
	// RuntimeMs is fio's job_runtime: the job's runtime in ms (summed
	// over a group_reporting entry's jobs).
	RuntimeMs int64
	Read      Direction
	Write     Direction
	Trim      Direction
}

// Output is one parsed fio run.
type Output struct {
	Version string   // "fio-3.33"
	Notes   []string // lines fio printed before its JSON (notes, errors, headers)
	Jobs    []JobResult
}

// Result is an aggregate of several jobs: one target (group) or a whole run.
type Result struct {
	Jobs int
	// GroupID is the fio groupid shared by the jobs aggregated (the target
	// index for job files from Job.File); -1 when they span several groups
	// or there are none.
	GroupID int
	Read    Direction
	Write   Direction
	// Trim is the trims of a trim workload (rw randtrim, trimwrite, ...).
	Trim Direction
	// Runtime is the longest runtime of the jobs aggregated.
	Runtime time.Duration
	// CPUSeconds is the user and system CPU time of the jobs aggregated.
	CPUSeconds float64
	// IOPS is read + write + trim I/Os per second (fio reports trims only
	// for a workload that trims).
	IOPS float64
	// BytesPerSec is read + write bytes per second.
	BytesPerSec float64
	// Errors lists `job "NAME": errno N (TEXT)` for jobs that reported an
	// error (`job "NAME" on HOST: ...` in client/server mode).
	Errors []string
}

// MBps is the read + write bandwidth in MB/s (10^6 bytes per second).
func (r Result) MBps() float64 { return r.BytesPerSec / 1e6 }
