// Package specs loads drive specs, the TOML files that say what a drive
// model must deliver and how it is measured.
//
// A spec holds a drive model's published figures (capacity × workload →
// IOPS, MB/s or latency, and latency limits), the health a drive must
// keep, and the method used to measure them. Built-in specs are embedded
// and loadable by name.
package specs

import (
	"github.com/drivequal/drivequal/specs/bssplit"
	"github.com/drivequal/drivequal/specs/modelglob"
	"time"
)

// Metric is the unit a workload is judged in.
type Metric string

const (
	// IOPS is I/O operations per second, reads and writes together.
	IOPS Metric = "iops"
	// MBps is megabytes per second, 10^6 bytes/s, reads and writes together.
	MBps Metric = "MBps"
	// LatUS is the mean completion latency (fio's clat) in microseconds,
	// over reads and writes together; lower is better.
	LatUS Metric = "lat_us"
)

// LowerIsBetter reports whether a smaller value of m is the better one
// (LatUS): a workload in such a metric meets its spec when actual ≤ spec ×
// (1 + tolerance), where IOPS and MBps need actual ≥ spec × (1 − tolerance).
func (m Metric) LowerIsBetter() bool { return m == LatUS }

// Spec is one drive model's spec, as loaded from TOML and validated.
type Spec struct {
	// Name is the built-in name ("solidigm-d7-ps1010") or the file's base
	// name without ".toml" for a spec loaded from a path.
	Name string
	// File is where the spec was read from, for messages.
	File string
	// Text is the spec's TOML as given to Parse.
	Text []byte

	Model  string
	Source string
	// Models are globs over the identify-controller model number of the
	// drives the spec is for ("SOLIDIGM SB5PH27X*"), in path.Match's
	// syntax except that * and ? match "/" too (see modelglob.Match); nil: any
	// model. See MatchesModel.
	Models []string
	// Endurance is the drive's rated endurance ([endurance]); zero: not
	// stated.
	Endurance Endurance

	Method       Method
	Precondition Precondition
	Health       Health
	Receipt      Receipt
	PCIe         PCIe
	Workloads    []Workload // in file order
	Capacities   []Capacity // in file order
	Scaling      Scaling
	Fleet        Fleet
	Baseline     Baseline
	// Lot is the [lot] rule: what the drives measured must show about
	// the lot they come from; nil without a [lot] table (no lot judgment).
	Lot *Lot
	// Purge is the [purge] table: the purge at the end of the run, read
	// back (TestPurge).
	Purge Purge
	// PowerLoss is the [power_loss] test; nil without the table.
	PowerLoss *PowerLoss
	// Firmware is the [firmware] table: the activation under load
	// (TestFirmware, with -firmware); nil without the table.
	Firmware *Firmware
}

// Firmware is the [firmware] table.
type Firmware struct {
	// Action is the commit: FirmwareActivateNow (commit action 3, no
	// reset) or FirmwareReplaceAtReset (action 1, then a controller reset).
	Action string
	// Slot is the firmware slot written, 1 to 7; 0 lets the controller
	// choose.
	Slot int
	// MaxStall is the longest I/O stall the activation may cause.
	MaxStall time.Duration
}

// Firmware commit actions ([firmware] action).
const (
	FirmwareActivateNow    = "activate-now"
	FirmwareReplaceAtReset = "replace-at-reset"
	DefaultFirmwareAction  = FirmwareActivateNow
)

// Purge is the [purge] table.
type Purge struct {
	// Verify is how the purge at the end of the run is read back:
	// "none" (no such purge unless -purge-after asks), "sample" (the first
	// and last GiB and 1 MiB extents adding to 1 % of the capacity) or
	// "full" (every byte).
	Verify string
}

// Purge read-backs ([purge] verify).
const (
	PurgeVerifyNone   = "none"
	PurgeVerifySample = "sample"
	PurgeVerifyFull   = "full"
)

// Method is how every workload is measured unless the workload overrides it.
type Method struct {
	Runtime   time.Duration // measured time per workload, after RampTime
	RampTime  time.Duration // time run before measuring; 0 for none
	IOEngine  string        // fio ioengine, e.g. "libaio"
	Direct    bool          // O_DIRECT
	Tolerance float64       // a single drive passes when actual >= spec*(1-Tolerance); in [0, 1)
}

// Precondition is how a drive is brought to a known state before measuring.
type Precondition struct {
	Purge      string // "format", "sanitize", "discard" or "none"
	FillPasses int    // sequential 128 KiB write passes over the whole drive; >= 0
	// RandomRuntime bounds one random-write preconditioning step (a write twin
	// run before random workloads). Steady state, when set, may end it earlier.
	RandomRuntime time.Duration
	// SteadyState is fio's steadystate criterion (e.g. "iops_slope:0.3%");
	// empty: run RandomRuntime in full.
	SteadyState string
	// SteadyStateDuration is fio's ss_dur: the window the criterion must hold.
	SteadyStateDuration time.Duration

	// The steady-state rule drivequal checks on every random
	// preconditioning step (SNIA PTS): fio's write IOPS averaged over
	// rounds of SteadyRound; over the last SteadyWindow rounds, max − min
	// ≤ SteadyRange × mean and the best-fit line's excursion ≤ SteadySlope
	// × mean. The step ends once every drive holds it, or at RandomRuntime.
	SteadyRound  time.Duration
	SteadyWindow int
	SteadyRange  float64 // fraction of the window mean
	SteadySlope  float64 // fraction of the window mean
	// IdleLimit: a drive with no writes for longer than this is topped up
	// with its write twin, for at most TopUpRuntime (less once steady state
	// holds again), before a random write or mixed measurement, since an
	// idle drive's garbage collection flatters the next write figure.
	IdleLimit    time.Duration
	TopUpRuntime time.Duration
}

// Workload is one row of the spec's table.
type Workload struct {
	Name    string // unique within the spec
	RW      string // fio rw: read write randread randwrite rw randrw
	BS      int64  // block size in bytes, a multiple of 512
	IODepth int    // per job, >= 1
	NumJobs int    // >= 1
	Metric  Metric
	// RWMixRead is the read percentage for rw and randrw (fio rwmixread);
	// -1 when not set (fio's default of 50 applies to mixed patterns).
	RWMixRead int
	// Precondition names the workload whose write twin preconditions this
	// one; empty means the default write-twin rule (see WriteTwin).
	Precondition string
	// Runtime overrides Method.Runtime for this workload when non-zero.
	Runtime time.Duration
	// BSSplit is fio's bssplit, issued instead of BS; nil: BS alone.
	BSSplit []bssplit.Share
	// RateIOPS is fio's rate_iops, per job; 0: no cap.
	RateIOPS int
	// ThinkTime is fio's thinktime; 0: none.
	ThinkTime time.Duration
	// BufferCompressPercentage is fio's buffer_compress_percentage; 0:
	// fio's random (incompressible) data.
	BufferCompressPercentage int
	// SweepIODepth are closed-loop sweep points (iodepth per job);
	// SweepRateIOPS open-loop ones (total IOPS over the jobs, Poisson
	// arrivals). Both nil: no sweep.
	SweepIODepth  []int
	SweepRateIOPS []int64
	// Line is the line of the workload's [[workload]] header in File, for messages.
	Line int
}

// Capacity is one capacity (one column of the spec's table).
type Capacity struct {
	Name  string
	Bytes int64 // user capacity in bytes
	// Spec maps a workload name to its spec value in that workload's metric.
	// A workload missing from this map is not measured at this capacity:
	// that is not an error, a brief need not publish every cell.
	Spec map[string]float64
	// QoS maps a workload name to its latency limits at this capacity
	// ([capacity.qos."NAME"]), read limits first, then by percentile. Only
	// workloads in Spec have limits; nil when there are none.
	QoS map[string][]LatencyLimit
	// AtLatency maps a workload name to its latency-at-load target at this
	// capacity ([capacity.at_latency."NAME"]); nil when there is none.
	AtLatency map[string]AtLatency
	// Line is the line of the capacity's [[capacity]] header in File, for messages.
	Line int
}

// LatencyLimit is an upper limit on one completion latency percentile of
// one direction of a workload: fio's clat percentile (or its maximum) must
// be ≤ Limit.
type LatencyLimit struct {
	Dir string // "read" or "write"
	// Percentile is 50, 99, 99.9, 99.99 or 99.999; 100 for the maximum.
	Percentile float64
	Limit      time.Duration // written in the spec in microseconds
	Key        string        // the spec's key, e.g. "read_p99_99_us", for messages
}

// Health is what a drive's SMART / health log and identify data must show
// ([health]). The defaults hold any healthy drive to its own ratings.
type Health struct {
	// PercentUsedMax is the highest percent_used (the vendor's estimate of
	// rated endurance used, in percent; it may exceed 100) allowed after
	// the run.
	PercentUsedMax int
	// Firmware lists the allowed firmware revisions (id-ctrl "fr"); empty
	// allows any.
	Firmware []string
	// MediaErrorsMaxIncrease and ErrLogEntriesMaxIncrease are how much
	// media_errors and num_err_log_entries may rise during the run.
	MediaErrorsMaxIncrease   uint64
	ErrLogEntriesMaxIncrease uint64
	// SpareMargin is in percentage points: avail_spare must stay ≥
	// spare_thresh + SpareMargin.
	SpareMargin int
	// TemperatureMarginC is in degrees Celsius (equal to kelvin): the
	// composite temperature must stay below WCTEMP − TemperatureMarginC.
	TemperatureMarginC int
	// ThermalThrottle is ThrottleInconclusive (a cell during which thermal
	// throttling counters rose is inconclusive) or ThrottleIgnore. It
	// counts the OCP C0 log's thermal throttling events too.
	ThermalThrottle string
	// OCP are the rules for the OCP extended SMART log (C0h) over the
	// run, judged where a drive has it.
	OCP OCPHealth
}

// OCPHealth limits how much the OCP C0 log's counters may rise during a
// run ("ocp_*_max_increase", default 0) and the lowest capacitor health
// allowed after it.
type OCPHealth struct {
	BadUserBlocksMaxIncrease       uint64
	BadSystemBlocksMaxIncrease     uint64
	UncorrectableReadsMaxIncrease  uint64
	EndToEndErrorsMaxIncrease      uint64 // end-to-end detected errors
	IncompleteShutdownsMaxIncrease uint64
	// CapacitorHealthMin is in percent; a drive reporting 65535 (no
	// capacitor) is not judged.
	CapacitorHealthMin int
}

// DefaultCapacitorHealthMin is ocp_capacitor_health_min's default: the C0
// log states no threshold, so a capacitor under 10 % of its health is
// taken as one that will not hold up a power loss.
const DefaultCapacitorHealthMin = 10

// Endurance is a drive's rated endurance, as its vendor states it: total
// petabytes written (PBW) or drive writes per day (DWPD) over
// WarrantyYears.
type Endurance struct {
	PBW, DWPD, WarrantyYears float64
	// RatedWAF is the write amplification the rating was stated at
	// (rated_waf; 0, unset, counts as 1: the rated bytes taken as media
	// writes); a workload's life scales by RatedWAF ÷ its WAF.
	RatedWAF float64
	Source   string
}

// RatedBytes is the bytes the drive is rated to take over its life at
// capacity bytes, and whether the spec says.
func (e Endurance) RatedBytes(capacity uint64) (float64, bool) {
	switch {
	case e.PBW > 0:
		return e.PBW * 1e15, true
	case e.DWPD > 0 && e.WarrantyYears > 0:
		return e.DWPD * float64(capacity) * 365 * e.WarrantyYears, true
	}
	return 0, false
}

// MatchesModel reports whether model (id-ctrl "mn", trimmed) matches one
// of the spec's model patterns (modelglob.Match); a spec without any matches
// every model.
func (s *Spec) MatchesModel(model string) bool {
	if len(s.Models) == 0 {
		return true
	}
	for _, p := range s.Models {
		if ok, _ := modelglob.Match(p, model); ok {
			return true
		}
	}
	return false
}

// Receipt is what a drive may show of its past when it arrives: the
// SMART / health log read before anything is written, against limits that
// tell a new drive from a used one. A nil limit is not set: the figure is
// reported, not judged.
type Receipt struct {
	// MaxPowerOnHours is in hours ("power_on_hours").
	MaxPowerOnHours *uint64
	// MaxDataWritten and MaxDataRead are in bytes ("data_units_written"
	// and "data_units_read" × 512,000).
	MaxDataWritten, MaxDataRead *uint64
	// MaxUnsafeShutdowns and MaxMediaErrors are counts.
	MaxUnsafeShutdowns, MaxMediaErrors *uint64
	// MaxPercentUsed is in percent of rated endurance ("percent_used").
	MaxPercentUsed *uint64
}

// PCIe is the link a spec's figures were measured on, when it states
// one: a drive whose link trained below it is not judged. Zero values are
// unset: the link is then judged against the device's own maximum.
type PCIe struct {
	// Speed is in GT/s per lane (16 for Gen4, 32 for Gen5); Width in lanes.
	Speed float64
	Width int
}

// Values of Health.ThermalThrottle.
const (
	ThrottleInconclusive = "inconclusive"
	ThrottleIgnore       = "ignore"
)

// Scaling is how N drives are judged against one.
type Scaling struct {
	Capacity  string  // the capacity name scaling runs on; empty: no scaling
	Drives    []int   // strictly ascending drive counts
	Baseline  string  // "spec" (N × spec value) or "single" (N × measured single drive)
	Tolerance float64 // in [0, 1)
	// Override holds per-workload changes for scaling runs, by workload name.
	Override map[string]Override
}

// Fleet is how many hosts' runs are judged as one population
// (-replay=DIR1,DIR2,...).
type Fleet struct {
	// Tolerance is the largest spread, (max − min) / median, of a
	// workload's figures across the fleet's drives, and how far a drive may
	// be worse than the median before it is named an outlier; in [0, 1).
	// It defaults to the scaling tolerance when that is above 0, else
	// DefaultScalingTolerance.
	Tolerance float64
}

// Baseline is how a run is compared with earlier runs (-baseline=DIR):
// the spec of the run being judged sets it.
type Baseline struct {
	// Tolerance is the largest drop, a fraction of the baseline's median
	// (a rise, for latencies), that is not a regression even when it is
	// significant; in [0, 1).
	Tolerance float64
	// LatencyTolerance is Tolerance for the latency percentiles compared
	// (p99, p99.99 per direction), which move more between runs than
	// throughput; Tolerance when unset. In [0, 1).
	LatencyTolerance float64
	// Alpha is the significance level of the two-sided Mann–Whitney U
	// test: a difference with p < Alpha is not noise; in (0, 1).
	Alpha float64
}

// Lot is how the lot a run's drives were drawn from is judged
// (TestLot): at least Coverage of its drives must meet each cell's pass
// line, shown with Confidence. Both are in (0, 1). Method is how the
// figures show it, fixed before they are seen: LotNormal (the default) or
// LotDistributionFree.
type Lot struct {
	Coverage   float64
	Confidence float64
	Method     string
}

// [lot] methods.
const (
	// LotNormal judges the figures by the one-sided normal tolerance
	// bound, mean − k·s (ISO 16269-6), assuming they are normal: a lot
	// whose figures Shapiro–Wilk finds not normal is not judged by it.
	LotNormal = "normal"
	// LotDistributionFree assumes no distribution: the lot is judged by
	// the Clopper–Pearson bounds of its share of passing drives.
	LotDistributionFree = "distribution-free"
	// DefaultLotMethod is the method of a [lot] table without one.
	DefaultLotMethod = LotNormal
)

// Override changes a workload for scaling runs; zero fields keep the workload's value.
type Override struct {
	IODepth int
	NumJobs int
}
