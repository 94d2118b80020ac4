package fiojob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FillVerify is how the fill marks every block and the verify pass checks
// it: fio's verify=pattern, every byte of the block compared with
// FillPattern's.
const FillVerify = "pattern"

// PatternMagic is the first 8 bytes of every FillPattern, in hex
// ("DQFILL01"),
// PatternIDBytes the length of the fill's id after it, and PatternBytes
// one repetition of the pattern: magic, id, then the block's byte offset
// (fio's %o, 8 bytes) — repeated through every block.
const (
	PatternMagic   = "445146494c4c3031"
	PatternIDBytes = 8
	PatternBytes   = 24
)

// FillPattern is fio's verify_pattern for a fill whose id is id (unique
// to the run and the fill): "0x" magic, id, then %o, the block's offset.
// A block of another fill (another run, or an earlier fill of this run)
// differs from byte 8 of the block; a block written for another offset
// from byte 16.
func FillPattern(id uint64) string {
	return fmt.Sprintf("0x%s%016x%%o", PatternMagic, id)
}

// PassID is the id pass (from 1) of the fill whose id is id writes: id
// with its last two bytes (bytes 14 and 15 of the pattern) replaced by the
// pass number, capped at 65,535. A drive that kept an earlier pass's
// blocks and dropped the last pass's then differs from the last pass's
// pattern at byte 14 or 15, in the fill's id.
func PassID(id uint64, pass int) uint64 {
	return id&^0xffff | uint64(min(max(pass, 0), 0xffff))
}

// Fill returns the sequential fill used to precondition targets: 128 KiB
// sequential writes at queue depth 32, one job per target, over the whole
// target (or Target.Size bytes of it), passes times; the bytes past the
// last whole 128 KiB block, when Target.Size is set, by a second job of
// the target's group at a smaller block (Job.Tail). Every block holds
// the pattern of its pass (fio verify=pattern, written and not read back):
// the last pass FillPattern(PassID(id, passes)), the passes before it
// FillPattern(PassID(id, 1)) (Job.EarlierPattern), so that VerifyPass
// reads back what the last pass wrote, and no other pass or fill writes
// it. The first pass of every fill of id writes what Fill(targets, 1, id)
// writes.
func Fill(targets []Target, passes int, id uint64) Job {
	var earlier string
	if passes > 1 {
		earlier = FillPattern(PassID(id, 1))
	}
	return Job{
		Verify:         FillVerify,
		VerifyPattern:  FillPattern(PassID(id, passes)),
		EarlierPattern: earlier,
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
		Tail:           true,
		Targets:        targets,
	}
}

// ReadBackQueue is the blocks a read-back keeps in flight per drive, over
// all its jobs: 48 × 128 KiB, 6 MiB of fio's buffers a drive (144 MiB for
// 24 drives), as deep a queue as a sequential read needs.
const ReadBackQueue = 48

// VerifyPass returns the read pass that checks every byte fill wrote: a
// sequential read of the same targets (rw=read, the fill's verify and
// verify_pattern) in which fio compares each block with the pattern as it
// completes, so its memory does not grow with the drive; each target's
// whole blocks are split between jobs jobs on disjoint ranges (Job.Split)
// on the target's CPUs, its tail read as the fill wrote it. A job stops at
// its first mismatch and fio names it on stderr (file, offset, length, the
// first differing byte of the block, what it read there and what it
// wanted); the other jobs are read to the end.
func VerifyPass(fill Job, jobs int) Job {
	v := fill
	v.Name = "verify"
	v.RW = "read"
	v.Loops = 1
	v.EarlierPattern = "" // what the last pass wrote, no other
	v.Split = max(jobs, 1)
	// fio holds iodepth buffers of bs per job: ReadBackQueue blocks a
	// drive whatever its jobs, so that memory is bounded by the drives.
	v.IODepth = max(1, (ReadBackQueue+v.Split-1)/v.Split)
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
	"rw": true, "readwrite": true, "randrw": true, "trimwrite": true, "randtrimwrite": true,
}

// IsTrim reports whether fio's rw pattern rw trims (trim, randtrim,
// trimwrite, randtrimwrite).
func IsTrim(rw string) bool { return strings.Contains(rw, "trim") }

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
		bad("rw %q is not one of read, write, trim, randread, randwrite, randtrim, rw, readwrite, randrw, trimwrite, randtrimwrite", j.RW)
	}
	if j.RateIOPS < 0 || j.ThinkTime < 0 || j.BufferCompressPercentage < 0 || j.BufferCompressPercentage > 100 {
		bad("rate_iops and thinktime must not be negative, buffer_compress_percentage must be 0..100")
	}
	if strings.ContainsAny(j.BSSplit+j.RateProcess, "\n\r ") {
		bad("bssplit and rate_process must be one word")
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
	if j.Verify != "" && !j.Writes() && (j.Runtime > 0 || j.RW != "read") {
		bad("a read that verifies must be rw=read and not time based")
	}
	for _, p := range []string{j.VerifyPattern, j.EarlierPattern} {
		if strings.ContainsAny(p, "\n\r\"' ") {
			bad("verify_pattern %q holds a quote, a space or a line break", p)
		}
	}
	if j.EarlierPattern != "" && (j.VerifyPattern == "" || !j.Writes() || j.Runtime > 0 || j.Loops < 2) {
		bad("an earlier loops' pattern needs a verify_pattern and a job that writes more than one loop, not time based")
	}
	if (j.Tail || j.Split > 1) && j.BS > 0 {
		for i, t := range j.Targets {
			if t.Size > 0 && t.Size < j.BS {
				bad("target %d (%s): size %d is less than one %d-byte block", i, t.Path, t.Size, j.BS)
			}
		}
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
		if strings.ContainsAny(t.BWLog, "\n\r:") {
			bad("target %d (%s): bandwidth log %q holds a line break or a ':'", i, t.Path, t.BWLog)
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
	if j.BSSplit != "" {
		kv("bssplit", j.BSSplit)
	}
	if j.RateIOPS > 0 {
		kv("rate_iops", strconv.FormatInt(j.RateIOPS, 10))
		if j.RateProcess != "" {
			kv("rate_process", j.RateProcess)
		}
	}
	if j.ThinkTime > 0 {
		// fio reads a thinktime without a unit as microseconds.
		kv("thinktime", strconv.FormatInt(max(j.ThinkTime.Microseconds(), 1), 10))
	}
	if j.BufferCompressPercentage > 0 {
		kv("buffer_compress_percentage", strconv.Itoa(j.BufferCompressPercentage))
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
		loops := j.Loops
		if j.lastLoopApart() {
			// The last loop only: the earlier loops have sections of
			// their own (EarlierPattern).
			loops = 1
		}
		kv("loops", strconv.Itoa(loops))
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
		if j.VerifyPattern != "" {
			kv("verify_pattern", j.VerifyPattern)
		}
		if j.Writes() {
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
		secs := j.sections(t)
		if j.lastLoopApart() {
			// The earlier loops' sections first (fio's wait_for names a
			// section defined before it), then the last loop's, each
			// waiting for the earlier loops over the same range.
			earlier := secs
			secs = nil
			for _, sec := range earlier {
				sec.loops, sec.pattern = j.Loops-1, j.EarlierPattern
				secs = append(secs, sec)
			}
			for _, sec := range earlier {
				sec.waitFor = SectionName(i) + sec.suffix
				sec.suffix += ".last"
				secs = append(secs, sec)
			}
		}
		for _, sec := range secs {
			b.WriteString("\n[")
			b.WriteString(SectionName(i) + sec.suffix)
			b.WriteString("]\n")
			kv("filename", EscapeFilename(t.Path))
			if sec.bs > 0 {
				kv("bs", strconv.FormatInt(sec.bs, 10))
			}
			if sec.offset > 0 {
				kv("offset", strconv.FormatInt(sec.offset, 10))
			}
			if sec.size > 0 {
				kv("size", strconv.FormatInt(sec.size, 10))
			}
			if sec.suffix == "" {
				kv("new_group", "1")
			}
			if sec.loops > 0 {
				kv("loops", strconv.Itoa(sec.loops))
			}
			if sec.pattern != "" {
				kv("verify_pattern", sec.pattern)
			}
			if sec.waitFor != "" {
				kv("wait_for", sec.waitFor)
			}
			if t.IOPSLog != "" {
				kv("write_iops_log", t.IOPSLog)
			}
			if t.BWLog != "" {
				kv("write_bw_log", t.BWLog)
			}
			if t.CPUs != "" {
				kv("cpus_allowed", t.CPUs)
				kv("cpus_allowed_policy", "split")
			}
		}
	}
	return b.String()
}

// section is one fio job section of a target: its name's suffix after
// SectionName ("" for the first, which starts the target's group), and
// its block size, offset and size when they differ from the job's; for
// the loops before the last (Job.EarlierPattern), their loops and
// pattern, and for the last loop the section it waits for.
type section struct {
	suffix           string
	bs, offset, size int64
	loops            int
	pattern, waitFor string
}

// lastLoopApart reports whether the loops before the last have sections
// of their own (EarlierPattern), so that [global] runs the last loop only.
func (j Job) lastLoopApart() bool {
	return j.EarlierPattern != "" && j.Loops > 1 && j.Runtime <= 0
}

// sections divides target t between the job's sections: one over the
// whole target, or (Split) Split ranges of whole BS blocks, and (Tail) the
// bytes past the last whole block at TailBS.
func (j Job) sections(t Target) []section {
	if (!j.Tail && j.Split <= 1) || t.Size <= 0 || j.BS <= 0 {
		return []section{{size: t.Size}}
	}
	blocks := t.Size / j.BS
	n := int64(max(j.Split, 1))
	n = max(min(n, blocks), 1)
	per := (blocks + n - 1) / n
	var out []section
	for k, off := int64(0), int64(0); off < blocks; k, off = k+1, off+per {
		sec := section{offset: off * j.BS, size: min(per, blocks-off) * j.BS}
		if k > 0 {
			sec.suffix = "." + strconv.FormatInt(k, 10)
		}
		out = append(out, sec)
	}
	if tail := t.Size - blocks*j.BS; j.Tail && tail > 0 {
		out = append(out, section{suffix: ".tail", bs: TailBS(tail), offset: blocks * j.BS, size: tail})
	}
	return out
}

// TailBS is the block size that covers tail bytes: the largest power of
// two that divides them (8,192 for the 90,112 bytes past the last 128 KiB
// block of IDEMA capacities), so that a drive's tail, a multiple of its
// logical block, is written and read in whole logical blocks.
func TailBS(tail int64) int64 { return tail & -tail }

// Writes reports whether the job changes what the targets hold: it writes
// or trims.
func (j Job) Writes() bool { return j.RW != "read" && j.RW != "randread" }

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
