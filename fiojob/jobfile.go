package fiojob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FillVerify is the checksum the fill writes in fio's verify header of
// every block, and the verify pass checks.
const FillVerify = "crc32c"

// Fill returns the sequential fill used to precondition targets: 128 KiB
// sequential writes at queue depth 32, one job per target, over the whole
// target (or Target.Size bytes of it), passes times. Every block carries
// fio's verify header (FillVerify), so that VerifyPass can read back what
// the last pass wrote: fio reseeds each loop, so every pass writes the same
// blocks and the last one is what the drive holds.
func Fill(targets []Target, passes int) Job {
	return Job{
		Verify:         FillVerify,
		Name:           "fill",
		RW:             "write",
		BS:             128 << 10,
		IODepth:        32,
		NumJobs:        1,
		RWMixRead:      -1,
		IOEngine:       "libaio",
		Direct:         true,
		Loops:          passes,
		GroupReporting: true,
		Targets:        targets,
	}
}

// VerifyPass returns the read pass that checks every block fill wrote:
// the same job (the same sections, so the same seeds), run once with
// verify_only, which reads each block and checks its verify header
// (magic, length, offset, seed) and checksum. Each target's job stops at
// its first mismatch and fio names it (file, offset, length, and for a
// checksum the expected and received values) on stderr; the other targets
// are read to the end.
func VerifyPass(fill Job) Job {
	v := fill
	v.Name = "verify"
	v.Loops = 1
	v.VerifyOnly = true
	v.Targets = append([]Target(nil), fill.Targets...)
	return v
}

// RandomPrecondition returns a time-bounded random write at bs bytes per I/O,
// queue depth 32 × 4 jobs per target. When steady is not empty it is fio's
// steadystate criterion (e.g. "iops_slope:0.3%") and ssDur its window
// (ss_dur); fio then stops a target's jobs early once they are steady.
func RandomPrecondition(targets []Target, bs int64, runtime time.Duration, steady string, ssDur time.Duration) Job {
	j := Job{
		Name:           "precondition",
		RW:             "randwrite",
		BS:             bs,
		IODepth:        32,
		NumJobs:        4,
		RWMixRead:      -1,
		IOEngine:       "libaio",
		Direct:         true,
		Runtime:        runtime,
		GroupReporting: true,
		Targets:        targets,
	}
	if steady != "" {
		j.SteadyState = steady
		j.SteadyStateDuration = ssDur
	}
	return j
}

// validRW is every fio rw= value a Job may use.
var validRW = map[string]bool{
	"read": true, "write": true, "trim": true,
	"randread": true, "randwrite": true, "randtrim": true,
	"rw": true, "readwrite": true, "randrw": true, "trimwrite": true,
}

// IsMixed reports whether fio's rw pattern rw reads and writes in one job
// (rw, readwrite or randrw), so that rwmixread applies.
func IsMixed(rw string) bool {
	return rw == "rw" || rw == "readwrite" || rw == "randrw"
}

// isRandom reports whether rw picks random offsets.
func isRandom(rw string) bool { return strings.HasPrefix(rw, "rand") }

// Validate reports every problem of j that would make fio refuse it or run
// something other than intended, joined in one error.
func (j Job) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("job %q: "+format, append([]any{j.Name}, args...)...))
	}
	if !validRW[j.RW] {
		bad("rw %q is not one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite", j.RW)
	}
	if j.BS <= 0 {
		bad("bs must be > 0, got %d", j.BS)
	}
	if j.IODepth < 1 {
		bad("iodepth must be >= 1, got %d", j.IODepth)
	}
	if j.NumJobs < 1 {
		bad("numjobs must be >= 1, got %d", j.NumJobs)
	}
	if j.RWMixRead < -1 || j.RWMixRead > 100 {
		bad("rwmixread must be -1 (unset) or 0..100, got %d", j.RWMixRead)
	}
	if j.Runtime < 0 || j.RampTime < 0 || j.SteadyStateDuration < 0 {
		bad("runtime, ramp_time and ss_dur must not be negative")
	}
	if j.Loops < 0 {
		bad("loops must not be negative, got %d", j.Loops)
	}
	if j.Runtime <= 0 && j.Loops <= 0 {
		bad("neither runtime nor loops is set; the job would have no bound")
	}
	if strings.ContainsAny(j.IOEngine+j.SteadyState+j.Verify, "\n\r") {
		bad("ioengine, steadystate and verify must be one line")
	}
	if j.VerifyOnly && (j.Verify == "" || j.Runtime > 0) {
		bad("verify_only needs verify and a job that is not time based")
	}
	if len(j.Targets) == 0 {
		bad("no targets")
	}
	for i, t := range j.Targets {
		switch {
		case t.Path == "":
			bad("target %d: empty path", i)
		case strings.ContainsAny(t.Path, "\n\r"):
			bad("target %d: path %q holds a line break", i, t.Path)
		}
		if t.Size < 0 {
			bad("target %d (%s): size must not be negative, got %d", i, t.Path, t.Size)
		}
		if strings.ContainsAny(t.IOPSLog, "\n\r:") {
			bad("target %d (%s): iops log %q holds a line break or a ':'", i, t.Path, t.IOPSLog)
		}
		if strings.ContainsAny(t.CPUs, "\n\r") {
			bad("target %d (%s): cpus %q holds a line break", i, t.Path, t.CPUs)
		}
	}
	return errors.Join(errs...)
}

// SectionName is the fio job (section) name of target i in a job file made
// by File: "drive0", "drive1", ... It is also the jobname fio reports.
func SectionName(i int) string { return "drive" + strconv.Itoa(i) }

// File renders j as an fio job file. It has no side effects; call Validate
// first, since File writes whatever j holds.
//
// The [global] section holds the workload; each target gets its own section
// (see SectionName) with new_group, so that every fio job of target i reports
// groupid i, with or without group_reporting. (fio 3.33 was checked: new_group
// on the first section keeps it at groupid 0; every later new_group adds one.)
// All sizes are plain byte counts so that kb_base does not matter. Jobs run
// as threads (thread=1): one process holds them all, so interrupting or killing
// fio leaves no forked worker behind.
func (j Job) File() string {
	var b strings.Builder
	kv := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte('\n')
	}
	if j.Name != "" {
		b.WriteString("; ")
		b.WriteString(oneLine(j.Name))
		b.WriteByte('\n')
	}
	b.WriteString("[global]\n")
	if j.IOEngine != "" {
		kv("ioengine", j.IOEngine)
	}
	kv("direct", boolString(j.Direct))
	kv("thread", "1")
	kv("rw", j.RW)
	kv("bs", strconv.FormatInt(j.BS, 10))
	kv("iodepth", strconv.Itoa(j.IODepth))
	kv("numjobs", strconv.Itoa(j.NumJobs))
	if IsMixed(j.RW) && j.RWMixRead >= 0 {
		kv("rwmixread", strconv.Itoa(j.RWMixRead))
	}
	if isRandom(j.RW) {
		// Every block may be hit any number of times, and each run draws
		// fresh offsets instead of replaying the previous run's sequence.
		kv("norandommap", "1")
		kv("randrepeat", "0")
	}
	if j.Runtime > 0 {
		kv("time_based", "1")
		kv("runtime", fioDuration(j.Runtime))
		if j.RampTime > 0 {
			kv("ramp_time", fioDuration(j.RampTime))
		}
	} else if j.Loops > 0 {
		kv("loops", strconv.Itoa(j.Loops))
	}
	if j.SteadyState != "" {
		kv("steadystate", j.SteadyState)
		if j.SteadyStateDuration > 0 {
			kv("ss_dur", fioDuration(j.SteadyStateDuration))
		}
	}
	if j.LogInterval > 0 {
		kv("log_avg_msec", strconv.FormatInt(max(j.LogInterval.Milliseconds(), 1), 10))
	}
	if j.Verify != "" {
		kv("verify", j.Verify)
		if j.VerifyOnly {
			kv("verify_only", "1")
		} else {
			kv("do_verify", "0")
		}
		// No verify state files in fio's working directory when a job
		// stops early: the pass is judged from fio's output alone.
		kv("verify_state_save", "0")
	}
	if j.GroupReporting {
		kv("group_reporting", "1")
	}
	for i, t := range j.Targets {
		b.WriteString("\n[")
		b.WriteString(SectionName(i))
		b.WriteString("]\n")
		kv("filename", EscapeFilename(t.Path))
		if t.Size > 0 {
			kv("size", strconv.FormatInt(t.Size, 10))
		}
		kv("new_group", "1")
		if t.IOPSLog != "" {
			kv("write_iops_log", t.IOPSLog)
		}
		if t.CPUs != "" {
			kv("cpus_allowed", t.CPUs)
			kv("cpus_allowed_policy", "split")
		}
	}
	return b.String()
}

// EscapeFilename escapes path for fio's filename=, where an unescaped ':'
// separates several files: "/dev/disk/by-path/pci-0000:01:00.0-nvme-1"
// becomes "/dev/disk/by-path/pci-0000\:01\:00.0-nvme-1".
func EscapeFilename(path string) string {
	return strings.ReplaceAll(path, ":", `\:`)
}

// fioDuration renders d for fio time options: whole seconds as a plain
// integer (fio's default unit), anything else as integer milliseconds,
// rounded up so that a positive duration never becomes 0.
func fioDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10)
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return strconv.FormatInt(int64(ms), 10) + "ms"
}

func boolString(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}
