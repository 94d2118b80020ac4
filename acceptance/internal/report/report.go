// Package report holds what a qualification run found and writes it out as
// results.json, summary.md and charts.
//
// Run is the report: results.json is Run as JSON, its Gates decide the
// verdict the exit status follows, summary.md is rendered from it, and
// package chart draws its charts. Every file is replaced atomically
// (written to a temporary file, then renamed).
package report

import (
	"slices"

	"github.com/drivequal/drivequal/acceptance/internal/firmware"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/purgeproof"
	"github.com/drivequal/drivequal/acceptance/internal/report/bottomline"
	"github.com/drivequal/drivequal/acceptance/internal/report/chart"
	"github.com/drivequal/drivequal/acceptance/internal/report/hashes"
	"github.com/drivequal/drivequal/acceptance/internal/report/plain"
	"github.com/drivequal/drivequal/acceptance/internal/report/sweepfields"
	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
)

// Verdicts of a result.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// Kinds of a result.
const (
	KindSingle  = "single"  // one drive against the capacity's spec
	KindScaling = "scaling" // N drives against N × baseline
	KindFleet   = "fleet"   // every host's drive of a capacity, as one population
	// KindIntegrity is one drive's verify pass: every block the fill wrote
	// read back and checked. It counts in its capacity's gate.
	KindIntegrity = "integrity"
	KindPurge     = "purge" // TestPurge: a drive's purge at the end, read back; counts in its capacity's gate
	// KindSweep is one point of a latency-at-load sweep; KindLatency its TestLatency target.
	KindSweep, KindLatency = "sweep", "latency"
	KindFirmware           = "firmware" // TestFirmware: a drive's firmware activation under load; counts in its capacity's gate
)

// Verdicts of a gate (a capacity, or the scaling steps), as Gates returns them.
const (
	Qualified            = bottomline.Qualified
	NotQualified         = bottomline.NotQualified
	CapacityInconclusive = bottomline.Inconclusive
)

// DefaultDriveTolerance is the fraction below the median per-drive actual
// beyond which a drive in a multi-drive result is named as an outlier, when
// neither the result nor the run's scaling section gives a tolerance. It is
// the brief's "up to 10 % drive-to-drive variation".
const DefaultDriveTolerance = 0.10

// Run is the whole report: results.json is this value as JSON.
type Run struct {
	Spec       string `json:"spec"`   // the spec's model
	Source     string `json:"source"` // where the spec's figures come from
	Mode       string `json:"mode"`   // "live" or "replay"
	FioVersion string `json:"fio_version"`
	// Precondition is the preconditioning the measurements had: full, quick or none.
	Precondition string `json:"precondition"`
	// Started and Finished are when the run began and last wrote a result,
	// as RFC 3339 strings; empty when unknown.
	Started  string `json:"started,omitempty"`
	Finished string `json:"finished,omitempty"`
	// Workloads is the spec's workload order; summary tables follow it and
	// put any other workload after, in the order results name them.
	Workloads []string `json:"workloads,omitempty"`
	// Capacities is the spec's capacity order, likewise.
	Capacities []string `json:"capacities,omitempty"`
	Scaling    *Scaling `json:"scaling,omitempty"`
	// Reconstructed says the replayed figures were reconstructed from a
	// publication (ReconstructedFrom names it): no drive was measured.
	Reconstructed     bool   `json:"reconstructed,omitempty"`
	ReconstructedFrom string `json:"reconstructed_from,omitempty"`
	// JudgedBy is the spec the results were judged against.
	JudgedBy *SpecRef `json:"judged_by,omitempty"`
	// AnyModel, when set, says which NVMe drives were judged with
	// -any-model although their model is not one the spec names.
	AnyModel string   `json:"any_model,omitempty"`
	Drives   []Drive  `json:"drives"`
	Results  []Result `json:"results"`
	// SteadyState holds, for every random preconditioning and top-up step
	// and every drive of it, whether the drive reached steady state.
	SteadyState []Steady `json:"steady_state,omitempty"`
	// Steps is the plan of a live run as it ran: each step's estimated and
	// actual duration.
	Steps []Step `json:"steps,omitempty"`
	// Resumptions lists each -resume of an interrupted run, in order.
	Resumptions []Resumption `json:"resumptions,omitempty"`
	// Recording says, for a replay, how the recording's files compare
	// with the sha256 its run.json lists of each.
	Recording *hashes.Check `json:"recording,omitempty"`
	// Health holds every drive's health checks (nvme-cli's SMART log
	// before and after the run), or why its health was not read.
	Health []HealthCheck `json:"health,omitempty"`
	// Receipt holds every drive's receipt inspection: its SMART log as it
	// arrived, before anything was written, against the spec's [receipt]
	// limits; or why it was not read.
	Receipt []HealthCheck `json:"receipt,omitempty"`
	// PowerLoss holds every drive's power-loss cycles, judged.
	PowerLoss []HealthCheck `json:"power_loss,omitempty"`
	// Host is the machine the run was recorded on; Hosts, in a fleet
	// replay, every member run's host, in the order given.
	Host  *host.Info `json:"host,omitempty"`
	Hosts []Host     `json:"hosts,omitempty"`
	// Baseline lists the earlier runs this run was compared with
	// (-baseline=DIR,...), each with the spec that judged it.
	Baseline []BaselineRun `json:"baseline,omitempty"`
	// OverTime is summary.md's section of the charts over time and of
	// latency drawn so far, as package overtime words it; ChartHeading,
	// once a cell is judged, what every chart's title names besides what
	// it draws. Neither is in results.json.
	OverTime     string         `json:"-"`
	ChartHeading *chart.Heading `json:"-"`
}

// Host is one member run of a fleet replay.
type Host struct {
	Name string    `json:"name"` // unique in the fleet; drives are named <name>:<path>
	Info host.Info `json:"info"`
	// Verdict is the member run's own overall verdict.
	Verdict string `json:"verdict,omitempty"`
}

// HealthCheck is one health check of one drive; a drive whose health was
// not read has one entry with an empty Check and Verdict Skip.
type HealthCheck struct {
	Drive   string `json:"drive"`
	Serial  string `json:"serial,omitempty"`
	Check   string `json:"check"` // "media_errors", "critical_warning", ...
	Verdict string `json:"verdict"`
	Message string `json:"message"`
}

// Latency is a direction's completion latency percentiles in
// microseconds, merged from fio's json+ bins (each within 1/128 of the
// true value; see fiojob.QoS).
type Latency struct {
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p99_9_us"`
	P9999 float64 `json:"p99_99_us"`
	// P99999 needs 100,000 samples to differ from the maximum.
	P99999 float64 `json:"p99_999_us"`
	Max    float64 `json:"max_us"`
	Mean   float64 `json:"mean_us,omitempty"` // fio's mean total latency (lat); sweep points only
}

// Percentile is the latency at p (50, 99, 99.9, 99.99, 99.999; 100 is
// the maximum).
func (l Latency) Percentile(p float64) float64 {
	switch p {
	case 50:
		return l.P50
	case 99:
		return l.P99
	case 99.9:
		return l.P999
	case 99.99:
		return l.P9999
	case 99.999:
		return l.P99999
	}
	return l.Max
}

// QoSCheck is one latency limit of a cell, judged.
type QoSCheck = plain.Limit

// Steady is one drive's steady-state verdict in one random preconditioning
// (or top-up) step, by the SNIA PTS rule on the step's write IOPS per round.
type Steady struct {
	Step  int    `json:"step"`  // the step's number in the plan
	Name  string `json:"name"`  // "random preconditioning (4KB Random Write, ...)"
	Kind  string `json:"kind"`  // "precondition" or "top-up"
	Twin  string `json:"twin"`  // the write workload that preconditioned
	Drive string `json:"drive"` // the drive's path
	// Serial is the drive's serial number, which names it when a resume
	// after a reboot finds it at another path ("" in older recordings).
	Serial string `json:"serial,omitempty"`

	// Resume is the resumption whose plan ran the step (1 for the first
	// -resume, whose plan numbers its steps from 1 again); 0 for the run
	// itself.
	Resume int `json:"resume,omitempty"`
	// Attained says a window of Window rounds of the drive's own held the
	// rule and ended at most Window − 1 rounds before the step stopped
	// (steady.Rule.Hold).
	Attained bool `json:"attained"`
	// Seconds is the step's duration until steady state (or its end);
	// BoundSeconds its bound.
	Seconds      float64 `json:"seconds"`
	BoundSeconds float64 `json:"bound_seconds"`
	RoundSeconds float64 `json:"round_seconds"`
	Rounds       int     `json:"rounds"` // rounds seen
	Window       int     `json:"window"`
	// Mean is the window's mean IOPS; RangePct and ExcursionPct the
	// window's max − min and the best-fit line's excursion, in % of Mean,
	// against their limits.
	Mean              float64 `json:"mean_iops"`
	RangePct          float64 `json:"range_pct"`
	RangeLimitPct     float64 `json:"range_limit_pct"`
	ExcursionPct      float64 `json:"excursion_pct"`
	ExcursionLimitPct float64 `json:"excursion_limit_pct"`
	// Source says where the rounds came from: "fio iops log" or "fio
	// status reports".
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
	// FirstRound and LastRound number (from 1) the window judged: the
	// drive's latest that held the rule when it is recent enough to count
	// (Attained), else the last one; 0 when no window was judged (Note
	// says why).
	FirstRound int `json:"first_round,omitempty"`
	LastRound  int `json:"last_round,omitempty"`
	// StopRound is the round the step stopped at (its whole rounds, the
	// same for every drive of the step); HeldRound the last round of the
	// drive's latest window that held the rule, however long before the
	// stop, 0 when none did. A drive is steady when StopRound − HeldRound
	// ≤ Window − 1.
	StopRound int `json:"stop_round,omitempty"`
	HeldRound int `json:"held_round,omitempty"`
	// RoundIOPS is the mean IOPS of every whole round, in order from the
	// step's start; null for a round too few samples measured.
	RoundIOPS []*float64 `json:"round_iops,omitempty"`
}

// Step is one step of a live run's plan.
type Step struct {
	N      int      `json:"n"`
	Kind   string   `json:"kind"` // purge, fill, precondition, top-up, measure
	Name   string   `json:"name"`
	Drives []string `json:"drives"`
	// EstimatedSeconds is the plan's estimate (a bound for precondition
	// and top-up steps); ActualSeconds what it took; Skipped says why it
	// did not run.
	EstimatedSeconds float64 `json:"estimated_seconds"`
	ActualSeconds    float64 `json:"actual_seconds"`
	Skipped          string  `json:"skipped,omitempty"`
	// WAF is each drive's write amplification over the step, for a step
	// that writes, where the drive has the OCP C0 log.
	WAF []waf.WAF `json:"waf,omitempty"`
}

// Causes of a verdict other than pass.
const (
	CauseBelowSpec    = "below spec"          // measured, and short of the figure
	CauseFioFailed    = "fio failed"          // fio exited non-zero or reported job errors
	CausePreparation  = "preparation failed"  // a purge, fill or preconditioning step failed
	CauseDriveChanged = "drive changed"       // the drive is no longer the one set up
	CausePrecondition = "not preconditioned"  // measured with -precondition=quick or none
	CauseInterrupted  = "interrupted"         // stopped by Ctrl-C, SIGTERM or the -timeout
	CauseNoBaseline   = "no baseline"         // a measured baseline the run did not measure
	CauseNotRecorded  = "not recorded"        // a replay has no output for the cell
	CauseBadRecording = "bad recording"       // fio's output could not be read
	CauseNotSteady    = "not steady"          // a drive did not reach steady state before the cell
	CauseThrottled    = "thermal throttle"    // the drive throttled on heat, or had its temperature critical warning set, during the cell
	CauseLatency      = "latency above limit" // a latency percentile above the spec's limit
	CausePCIeLink     = "pcie link degraded"  // a drive's PCIe link was below what the cell needs
	CauseHostBound    = "host-bound"          // below spec while the CPUs fio ran on were saturated
	CausePCIeBound    = "pcie bound"          // below spec while a PCIe link the cell's drives share was full and could not carry what the spec asks of them
	// CauseTransportBound: below spec while a fabric drive's network
	// interface carried within 10 % of its speed (NVMe over Fabrics).
	CauseTransportBound  = "transport bound"
	CauseCriticalWarning = "critical warning" // the drive raised a critical warning mid-run: nothing more is written to it
	// CauseIntegrity: the drive returned data other than what was written.
	CauseIntegrity = "data integrity"
	// CauseReadBack: fio failed reading the drive's fill back (an I/O
	// error, a short read) without naming a mismatch: the drive is
	// disqualified as for a mismatch.
	CauseReadBack = "read-back failed"
	// CauseIOError: the drive answered an I/O of a measurement with an
	// error (an I/O, medium, protection or target error, a timeout, no
	// space): the drive is disqualified as for a failed read-back.
	CauseIOError  = "i/o error"
	CausePurge    = "purge not proven"    // the purge at the end failed, or its read-back found the fill or data it does not promise
	CauseFirmware = "firmware activation" // the activation under load stalled I/O beyond max_stall, left another revision running, changed the identity or lost a write
)

// NotTheDrivesCauses are the causes of an inconclusive result whose
// figure says what was outside the drive (the host's CPUs, the PCIe link
// or topology, the network of a fabric drive, the airflow) or what state
// the drive was not shown to be in (steady, preconditioned): such a
// figure is not the drive's, so the baseline leaves it out of its side
// and the lot counts it as missing.
var NotTheDrivesCauses = []string{CauseHostBound, CausePCIeLink, CauseThrottled,
	CauseNotSteady, CausePrecondition, CausePCIeBound, CauseTransportBound}

// NotTheDrives says r's figure is not its drive's: r is inconclusive for
// one of NotTheDrivesCauses.
func NotTheDrives(r Result) bool {
	return r.Verdict == Inconclusive && slices.Contains(NotTheDrivesCauses, r.Cause)
}

// Skip is a health check that was not made (the drive has no NVMe health
// log, or the spec sets no limit for it).
const Skip = "skip"

// SpecRef names a spec: its model, where it was read from and the sha256
// of its text.
type SpecRef struct {
	Model  string `json:"model"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Recorded says the spec is the one the recording was made with, read
	// from its run.json; false when -spec chose another.
	Recorded bool `json:"recorded,omitempty"`
}

// Scaling is how multi-drive results were judged.
type Scaling struct {
	Capacity string `json:"capacity"` // the capacity the drives are
	// Baseline is "spec" (expected = N × the capacity's spec value) or
	// "single" (expected = N × the measured single-drive actual).
	Baseline string `json:"baseline"`
	// Tolerance is the fraction a total may fall below expected and pass.
	Tolerance float64 `json:"tolerance"`
	Drives    []int   `json:"drives,omitempty"` // the drive counts run
}

// HostCPU is what the host's CPUs did while a cell was measured.
type HostCPU struct {
	// CPUs is the list fio's jobs were allowed ("0-7"; every online CPU
	// when they were not pinned), N how many that is.
	CPUs string `json:"cpus"`
	N    int    `json:"n"`
	// BusyPct is how busy those CPUs were over the measurement, from
	// /proc/stat, in % (100 = every one of them all the time); -1 when
	// it was not read.
	BusyPct float64 `json:"busy_pct"`
	// FioPct is fio's jobs' own user + system CPU time (usr_cpu, sys_cpu)
	// in % of those CPUs' time over the measurement.
	FioPct float64 `json:"fio_pct"`
	Jobs   int     `json:"jobs"`
	// JobMaxPct is the busiest fio job's own user + system time in % of
	// one CPU over its runtime (fio's usr_cpu + sys_cpu of its entry): a
	// job is one thread, so 100 is a job that never waited. With
	// group_reporting fio gives only a group's mean job.
	JobMaxPct float64 `json:"job_max_pct"`
	// JobsAtLimit counts the fio jobs at 95 % (judge.HostBoundPct) or more of one CPU
	// (every job of a group_reporting entry whose mean is).
	JobsAtLimit int `json:"jobs_at_limit"`
	// PerDrive is each drive's jobs' figures, in the cell's drive order.
	PerDrive []DriveCPU `json:"per_drive,omitempty"`
}

// DriveCPU is one drive's fio jobs' own CPU use during a cell.
type DriveCPU struct {
	Drive string `json:"drive"`
	CPUs  string `json:"cpus,omitempty"` // the drive's cpus_allowed; "" unpinned
	Jobs  int    `json:"jobs"`
	// MaxPct is its busiest job's user + system time in % of one CPU over
	// the job's runtime, MeanPct its jobs' mean, AtLimit how many were at
	// 95 % (judge.HostBoundPct) or more.
	MaxPct  float64 `json:"max_pct"`
	MeanPct float64 `json:"mean_pct"`
	AtLimit int     `json:"at_limit"`
	// Grouped says fio reported the drive's jobs as one group_reporting
	// entry: MaxPct is then their mean, the busiest job unknown.
	Grouped bool `json:"grouped,omitempty"`
	// SharePct, set when the drive's jobs outnumber its CPUs (so
	// cpus_allowed_policy=split put two or more on a CPU, and a pegged CPU
	// reads as a fraction of one per job), is its jobs' summed user +
	// system time in % of those CPUs' time.
	SharePct float64 `json:"share_pct,omitempty"`
}

// Drive is one target's identity.
type Drive struct {
	Path     string `json:"path"`
	Model    string `json:"model"`
	Serial   string `json:"serial"`
	Firmware string `json:"firmware"`
	Bytes    int64  `json:"bytes"`              // size in bytes
	Capacity string `json:"capacity,omitempty"` // the spec capacity it was matched to
	NUMANode int    `json:"numa_node"`          // -1 unknown
	CPUs     string `json:"cpus,omitempty"`     // cpus_allowed used in multi-drive runs
	// PCI and Link are an NVMe drive's PCI function and its PCIe link at
	// setup: "16.0 GT/s x4 (of 32.0 GT/s x4)", followed by each link above
	// it on the way to the root port that trained below its maximum,
	// carries less or reads Unknown ("; switch port 0000:01:00.0: 8.0
	// GT/s x8 (of 16.0 GT/s x16)").
	PCI  string `json:"pci,omitempty"`
	Link string `json:"pcie_link,omitempty"`
	// ModelCheck says how the drive's model was checked against the
	// spec's models: matched, judged anyway (-any-model), or not checked
	// (a loop device or regular file); "" in a replay.
	ModelCheck string `json:"model_check,omitempty"`
	// Failure is what was kept of a drive that failed anything, for its
	// supplier (nvme error-log, telemetry), and what could not be.
	Failure *Capture `json:"failure_capture,omitempty"`
	// Transport is how the host reaches an NVMe drive's controller
	// ("pcie", "tcp", "rdma", "fc"), Address the controller's address
	// ("traddr=10.0.0.2,trsvcid=4420" for a fabric) and Subsystem its NVM
	// subsystem's NQN. A fabric drive has no PCIe link: the network
	// carries its figures as well as the drive.
	Transport string `json:"transport,omitempty"`
	Address   string `json:"address,omitempty"`
	Subsystem string `json:"subsystem_nqn,omitempty"`
	// Paths are the paths of a namespace under native multipath, each
	// its hidden per-path device and controller ("nvme0c1n1 (nvme1, pcie
	// 0000:00:08.0, live)"); the suite writes only to the head device.
	Paths []string `json:"paths,omitempty"`
}

// Capture is the evidence read from a failed drive after the run: the
// files kept in the recording, and notes for what could not be read ("no
// telemetry: ...").
type Capture struct {
	Files []string `json:"files,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// Fabric says whether the drive is reached over NVMe over Fabrics.
func (d Drive) Fabric() bool { return d.Transport != "" && d.Transport != "pcie" }

// Result is one subtest's outcome.
type Result struct {
	// Host names the member run of a fleet replay the result is from.
	Host     string  `json:"host,omitempty"`
	Test     string  `json:"test"` // "TestSingleDrive/1.92TB/4KB_Random_Read"
	Kind     string  `json:"kind"` // "single" or "scaling"
	Capacity string  `json:"capacity"`
	Workload string  `json:"workload"`
	Drives   int     `json:"drives"`
	Metric   string  `json:"metric"` // "iops" or "MBps" (10^6 bytes/s)
	Spec     float64 `json:"spec"`   // the single-drive spec value, in Metric's unit
	// Expected is what the cell is judged against before tolerance: the spec
	// for one drive, N × baseline for scaling; in Metric's unit.
	Expected float64 `json:"expected"`
	Actual   float64 `json:"actual"` // measured, in Metric's unit
	Ratio    float64 `json:"ratio"`  // Actual / Expected
	// Tolerance is the fraction Actual may fall below Expected and pass.
	Tolerance float64 `json:"tolerance"`
	Verdict   string  `json:"verdict"`
	Error     string  `json:"error"`
	// Cause is the kind of a verdict other than pass (one of the Cause
	// constants): a JUnit failure's type, and how summary.md groups it.
	Cause string `json:"cause,omitempty"`
	// Raw is the recorded fio output, relative to the report directory's parent
	// or absolute; empty when none was kept.
	Raw      string        `json:"raw,omitempty"`
	PerDrive []DriveResult `json:"per_drive,omitempty"` // scaling only
	// Spread is (max − min) / median of the per-drive actuals of the
	// drives without an error, and Min, Median and Max are theirs: scaling
	// and fleet cells alike (stats.Summary.Spread), as the judge computed
	// them (the report renders, never recomputes).
	Spread float64 `json:"spread,omitempty"`
	Min    float64 `json:"min,omitempty"`
	Median float64 `json:"median,omitempty"`
	Max    float64 `json:"max,omitempty"`
	// Latency percentiles of completion latency in microseconds, when fio gave bins.
	P99Us  float64 `json:"p99_us,omitempty"`
	P999Us float64 `json:"p99_9_us,omitempty"`
	// Steady is the steady-state evidence of the cell's drives: the last
	// random preconditioning of each, and any top-up since (random cells).
	Steady []Steady `json:"steady_state,omitempty"`
	// WAF is each drive's write amplification over a cell that writes,
	// where the drive has the OCP C0 log.
	WAF []waf.WAF `json:"waf,omitempty"`
	// Read and Write are the cell's latency percentiles per direction
	// (all drives together), when fio gave bins and the direction ran.
	Read  *Latency `json:"read_latency,omitempty"`
	Write *Latency `json:"write_latency,omitempty"`
	// QoS is every latency limit the spec sets for the cell, judged.
	QoS []QoSCheck `json:"qos,omitempty"`
	// HostCPU is what the CPUs fio ran on did during the measurement.
	HostCPU *HostCPU `json:"host_cpu,omitempty"`
	// Baseline is the cell compared with the same cell of the baseline
	// runs (-baseline), when they have it.
	Baseline *BaselineResult `json:"baseline,omitempty"`
	// Integrity is what a verify pass found on the drive (KindIntegrity).
	Integrity *Integrity `json:"integrity,omitempty"`
	// Lot is a TestLot cell's judgment of the lot (KindLot).
	Lot *LotResult `json:"lot,omitempty"`
	// Purge is a TestPurge drive's purge and read-back (KindPurge).
	Purge             *purgeproof.Result `json:"purge,omitempty"`
	sweepfields.Point                    // a KindSweep point's load
	// Firmware is a TestFirmware step (KindFirmware).
	Firmware *firmware.Result `json:"firmware,omitempty"`
}

// Integrity is one drive's verify pass: the bytes read back and checked,
// and the first block that did not hold what was written.
type Integrity struct {
	Drive  string `json:"drive"`
	Serial string `json:"serial,omitempty"`
	Step   int    `json:"step"` // the verify step's number in the plan
	// Resume is the resumption whose plan ran the verify step; 0 for the
	// run itself.
	Resume int `json:"resume,omitempty"`
	// BytesVerified is what fio read and checked; BytesWritten what the
	// fill wrote (one pass).
	BytesVerified int64  `json:"bytes_verified"`
	BytesWritten  int64  `json:"bytes_written"`
	Checksum      string `json:"checksum"` // fio's verify=: "pattern" ("crc32c" in older recordings)
	// Mismatches counts the blocks fio reported; the first is described.
	Mismatches int `json:"mismatches"`
	// Offset and Length locate the first mismatched block in bytes; LBA
	// is its first logical block, of LBASize bytes.
	Offset  int64 `json:"offset,omitempty"`
	Length  int64 `json:"length,omitempty"`
	LBA     int64 `json:"lba,omitempty"`
	LBASize int   `json:"lba_size,omitempty"`
	// Check is what failed ("pattern"; in older recordings "crc32c", or
	// "verify" for the header); Expected and Received the byte (a
	// pattern) or the checksums fio printed; Fio its words.
	Check    string `json:"check,omitempty"`
	Expected string `json:"expected,omitempty"`
	Received string `json:"received,omitempty"`
	Fio      string `json:"fio,omitempty"`
	// Returned (a pattern mismatch) says what the block held: "zeros",
	// "data of an earlier write", "data written for another offset" or
	// "other data".
	Returned string `json:"returned,omitempty"`
}

// DriveResult is one drive's share of a multi-drive result.
type DriveResult struct {
	Path    string  `json:"path"`
	Serial  string  `json:"serial"`
	Actual  float64 `json:"actual"` // in the result's Metric unit
	Ratio   float64 `json:"ratio"`  // Actual / single-drive spec
	Verdict string  `json:"verdict"`
	Error   string  `json:"error,omitempty"`
	// Cause is the drive's own failure (run.json's failures: an I/O
	// error, a mismatch, a critical warning) that fails the step for this
	// drive; empty when none does.
	Cause string `json:"cause,omitempty"`
	// CPUs is the cpus_allowed list the drive's jobs were pinned to in
	// this step; empty when not pinned.
	CPUs string `json:"cpus,omitempty"`
	// Outlier says the drive is more than the tolerance below the median
	// of the drives without an error (as the judge found).
	Outlier bool `json:"outlier,omitempty"`
}
