// Package record owns the layout of a recorded run, the directory a live
// run writes with -record and a replay reads.
//
// The directory holds run.json (Run), and beside each test's fio output
// <test>.json the sidecars that let a replay judge it as the live run did
// (<test>.status.json, how fio failed; .steady.json, the steady-state
// evidence of its drives; .thermal.json, a throttling or temperature
// warning during it; .link.json, its drives' PCIe links; .cpu.json, the
// load of the CPUs fio ran on). Preparation steps (fill, verify pass,
// random preconditioning, top-up) are kept under prepare/, as fio's plain
// json (PrepareFormat); nvme-cli's health outputs under health/.
package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/drivequal/drivequal/acceptance/internal/device/fabric"
	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
	"os"
	"path/filepath"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device/identity"
	"github.com/drivequal/drivequal/acceptance/internal/host"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/fiojob"
)

// PrepareFormat is the output format fio is asked for in preparation
// steps, whose stdout is kept under prepare/. What judges them reads each
// report's I/O counts, runtime and errors (the steady-state rounds, the
// progress lines, a failed step, the verify pass), never latency, so they
// are recorded without json+'s clat_ns bins: a random step's status
// reports, six a round per drive, are then a quarter of the bytes. A
// measurement (<test>.json) stays json+, whose bins its latency
// percentiles and QoS limits are judged from. Recordings made before
// hold json+ under prepare/ too; fiojob.Parse and fiojob.WatchStatus read
// both.
const PrepareFormat = fiojob.FormatJSON

// Format is the version of run.json this code writes. Format 1 (no
// "format" key) had no spec text and no list of tests; format 2 had no
// drive identities, no boot id, no sha256 of its files and no mark of
// its end.
const Format = 3

// Run is run.json, written at the start of a recorded run and read by a
// replay: what the recorded outputs were measured on and how.
type Run struct {
	Format int `json:"format"`
	// Spec is the spec's model; SpecName, SpecFile, SpecSHA256 and SpecText
	// are the spec the run was made with, in full, so that a replay judges
	// with it (format 2).
	Spec       string `json:"spec"`
	SpecName   string `json:"spec_name,omitempty"`
	SpecFile   string `json:"spec_file,omitempty"`
	SpecSHA256 string `json:"spec_sha256,omitempty"`
	SpecText   string `json:"spec_text,omitempty"`

	Mode         string `json:"mode"`
	FioVersion   string `json:"fio_version"`
	Precondition string `json:"precondition"`
	// Reconstructed says no drive was measured: the outputs were built from
	// the figures of ReconstructedFrom (a publication).
	Reconstructed     bool           `json:"reconstructed,omitempty"`
	ReconstructedFrom string         `json:"reconstructed_from,omitempty"`
	Drives            []report.Drive `json:"drives"`
	// AnyModel says which NVMe drives -any-model let the run judge
	// against a spec whose models they are not (report.Run.AnyModel): a
	// replay with that spec says it too.
	AnyModel string `json:"any_model,omitempty"`
	// Tests lists the cells this run measured, in order, each added once its
	// output is on disk (format 2). A replay judges these and no other file
	// in the directory, so that files left by an older run are never judged.
	Tests []string `json:"tests,omitempty"`
	// Unmeasured lists the cells this run failed without measuring them
	// because a drive failed a verify pass: a replay fails them the same
	// way, from the recorded verify pass.
	Unmeasured []string `json:"unmeasured,omitempty"`
	// Shared maps a test to the test whose recording it shares: a
	// single-drive cell and the 1-drive scaling cell that is the same fio
	// job on the same drive are measured once (format 2).
	Shared map[string]string `json:"shared,omitempty"`
	// Steady holds each random preconditioning and top-up step's
	// steady-state verdict per drive, as the steps finish (format 2).
	Steady []report.Steady `json:"steady_state,omitempty"`
	// HealthSkips says, by drive, why its health was not read ("" when
	// it was: nvme-cli's outputs are under health/); MaxTempK is each
	// drive's highest composite temperature read during the run.
	HealthSkips []string `json:"health_skips,omitempty"`
	// HealthLost says, by drive, why a drive whose health was read at
	// setup has none after the run (it disappeared mid-run): its health
	// fails, in a replay as live. Absent when no drive's was lost.
	HealthLost []string `json:"health_lost,omitempty"`
	MaxTempK   []int    `json:"max_temp_k,omitempty"`
	// Host is the machine the run was recorded on (format 2).
	Host host.Info `json:"host,omitzero"`
	// Verify lists the verify passes run so far, each once its output is
	// on disk under prepare/: a replay judges TestIntegrity from them.
	Verify []Verify `json:"verify,omitempty"`
	// Devices is each drive's device number ("259:0"; "" for a regular
	// file) and Runtime the -runtime the run was made with ("" for the
	// spec's): what -resume checks besides the drives and the spec.
	Devices []string `json:"devices,omitempty"`
	Runtime string   `json:"runtime,omitempty"`
	// LBASizes is each drive's logical block size in bytes (0 for a
	// regular file): a namespace formatted to another since was erased.
	LBASizes []int `json:"lba_sizes,omitempty"`
	// Started is when the run first started (RFC 3339): a resume keeps
	// it, and its own start is in its entry of Resumptions. It is the date
	// the run's charts name; absent in recordings made before it.
	Started string `json:"started,omitempty"`
	// Resumptions lists each -resume of the run, in order.
	Resumptions []report.Resumption `json:"resumptions,omitempty"`

	// Identities is what each drive is, whatever its path or device
	// number: what -resume matches the given drives by (format 3).
	Identities []identity.Identity `json:"identities,omitempty"`
	// BootID is the kernel's boot id (/proc/sys/kernel/random/boot_id)
	// when the drives were last inspected: device numbers compare only
	// within one boot (format 3).
	BootID string `json:"boot_id,omitempty"`
	// Files is the sha256 (hex) of every file the recording lists, by
	// path relative to its directory with slashes, each added as the
	// file lands: a replay and a resume name any file changed since
	// (format 3).
	Files map[string]string `json:"files,omitempty"`
	// Finished is when the run (or its last resumption) ran to its end
	// (RFC 3339); "" while it runs and when it was interrupted (format 3).
	Finished string `json:"finished,omitempty"`
	// Failures lists each drive's failures in the order they happened,
	// each written (atomically) before anything else is written to that
	// drive: a critical warning raised mid-run, a read-back that failed
	// (a mismatch, or fio's I/O error reading the drive back), a fill or
	// preconditioning error. A drive with one is disqualified for the rest
	// of the run: a replay and every resume fail its remaining cells with
	// its first failure.
	Failures []DriveFailure `json:"failures,omitempty"`
	// WrittenSinceReadBack is, by drive, whether a purge, fill or
	// sanitize reached it since its last read-back that passed: set
	// before the step starts (a controller-wide format's or sanitize's
	// sibling namespaces too), cleared when a verify pass reads the drive
	// back whole. A resume does not trust an older read-back of a drive
	// marked so: it purges and fills it again.
	WrittenSinceReadBack []bool `json:"written_since_read_back,omitempty"`
	// SanitizeSent lists the controllers ("/dev/nvme0") a sanitize was
	// sent to whose end the run has not yet seen in the sanitize log:
	// a resume waits for that sanitize through the log rather than
	// sending another (the drive would answer "in progress").
	SanitizeSent []string `json:"sanitize_sent,omitempty"`
	// Samples is what a fixed sample of each drive's blocks held after
	// the last step that read or wrote it (package device/sample): what
	// a resume reads again before it trusts any recorded state of the
	// drive. Absent in recordings made before it.
	Samples *Samples `json:"data_samples,omitempty"`
	// PurgeAfter is the read-back of the purge at the end the run asked
	// for (TestPurge: "sample" or "full"; -purge-after or the spec's
	// [purge] verify), kept by every resume: a replay or resume fails a
	// drive without a verdict in purge.json. "" when none was asked.
	PurgeAfter string `json:"purge_after,omitempty"`
	// PurgeDrives is the drives (indices into Drives) whose purge at the
	// end the run asked for (go test's -run selects TestPurge/<drive> of
	// each on its own); absent (every drive) in recordings made before it.
	PurgeDrives []int `json:"purge_drives,omitempty"`
	// Firmware is each firmware step the run asked for (TestFirmware:
	// -firmware, -firmware-back), kept by every resume: a replay or a
	// resume fails a drive of a step without its verdict in
	// firmware.json. Absent when none was asked.
	Firmware []FirmwareAsked `json:"firmware,omitempty"`
}

// FirmwareAsked is one firmware step a run asked for: its image and the
// drives it activates it on.
type FirmwareAsked struct {
	// Step is "activate" (-firmware) or "back" (-firmware-back).
	Step string `json:"step"`
	// Image is the image's path as given, Bytes its size and SHA256 its
	// sha256 (hex) when it was asked for ("" when it did not read).
	Image  string `json:"image"`
	Bytes  int64  `json:"image_bytes"`
	SHA256 string `json:"image_sha256"`
	// Drives are the indices (in Drives) of the drives it activates the
	// image on.
	Drives []int `json:"drives"`
}

// DriveFailure is one failure of one drive, recorded as it happened.
type DriveFailure struct {
	// Drive is the drive's index in Drives; Path is its path then.
	Drive int    `json:"drive"`
	Path  string `json:"path"`
	// Cause is the report cause the drive's remaining cells fail with:
	// report.CauseCriticalWarning, CauseIntegrity (a mismatch),
	// CauseReadBack (fio's I/O error reading the fill back) or
	// CausePreparation (a purge, fill or preconditioning error).
	Cause string `json:"cause"`
	// Step names what failed or when it was seen: a plan step ("3 verify:
	// verify pass") or a cell ("after TestSingleDrive/1.92TB/...").
	Step string `json:"step,omitempty"`
	// Test is the cell measured while the failure arose (a critical
	// warning read right after it), "" for one outside a cell.
	Test    string `json:"test,omitempty"`
	Message string `json:"message"`
	// At is when the failure was seen, RFC 3339 in UTC.
	At string `json:"at"`
	// Resume is the resumption that saw it; 0 for the run itself.
	Resume int `json:"resume,omitempty"`
}

// FailureOf is drive i's first recorded failure, the one that
// disqualified it; ok is false for a drive without one.
func (r Run) FailureOf(i int) (f DriveFailure, ok bool) {
	for _, f := range r.Failures {
		if f.Drive == i {
			return f, true
		}
	}
	return DriveFailure{}, false
}

// Written reports whether drive i is marked written since its last
// read-back.
func (r Run) Written(i int) bool {
	return i < len(r.WrittenSinceReadBack) && r.WrittenSinceReadBack[i]
}

// Verify is one verify pass as recorded: where fio's output is, and the
// drives it read, in the order of the job's targets.
type Verify struct {
	Step int    `json:"step"`
	Name string `json:"name"`
	// Raw is fio's stdout, relative to the recording's directory
	// ("prepare/003-verify_pass.json"); its stderr and status sit beside
	// it (.stderr, .status.json), as for every recorded run.
	Raw    string        `json:"raw"`
	Drives []VerifyDrive `json:"drives"`
	// Pattern is the fill's fio verify_pattern the pass compared every
	// byte with (its magic, the fill's id unique to the run, the block's
	// offset); empty in recordings that checked fio's verify header.
	Pattern string `json:"pattern,omitempty"`
	// Resume is the resumption whose plan ran the pass (its steps
	// numbered from 1 again); 0 for the run itself.
	Resume int `json:"resume,omitempty"`
	// Running says the pass was listed before fio started and had not
	// ended when run.json was last written: a pass whose output is not
	// on disk was killed mid-read, and is judged from what fio wrote to
	// its stderr until then (a mismatch it names still fails the drive).
	Running bool `json:"running,omitempty"`
}

// VerifyDrive is one drive of a verify pass.
type VerifyDrive struct {
	Path   string `json:"path"`
	Target string `json:"target"` // the filename fio read, which its errors name
	// Bytes is what the fill wrote and the pass must read back.
	Bytes   int64 `json:"bytes"`
	LBASize int   `json:"lba_size,omitempty"`
	// Gone says why the drive was gone when the pass ended (its device
	// node or sysfs entry removed: pulled, or its controller reset). What
	// fio read of a drive gone mid-pass is no evidence of its media
	// either way: a read of it completes with no bytes, and fio compares
	// a buffer the read never filled. Such a pass fails the drive as
	// disappeared, never as a mismatch; one it read back whole still
	// passes.
	Gone string `json:"gone,omitempty"`
}

// ReadVerify reads a recorded verify pass from dir: fio's stdout and
// stderr, and how fio failed when it did (nil when it exited 0). Each is
// read as Open allows (inside dir, a regular file, within its limit).
func ReadVerify(dir string, v Verify) (stdout, stderr []byte, failure *Failure, err error) {
	base := strings.TrimSuffix(v.Raw, OutputExt)
	stdout, err = ReadFileLimit(dir, base+OutputExt, MaxOutput)
	if err != nil {
		return nil, nil, nil, err
	}
	stderr, err = ReadFile(dir, base+StderrExt)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	data, err := ReadFile(dir, base+StatusExt)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return stdout, stderr, nil, nil
	case err != nil:
		return nil, nil, nil, err
	}
	failure = &Failure{}
	if err := json.Unmarshal(data, failure); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(base+StatusExt)), err)
	}
	return stdout, stderr, failure, nil
}

// MaxTemp is the highest composite temperature (K) recorded for drive i.
func (r Run) MaxTemp(i int) int {
	if i < len(r.MaxTempK) {
		return r.MaxTempK[i]
	}
	return 0
}

// ErrNotRecorded says a replay has no output for a measurement.
var ErrNotRecorded = errors.New("no recorded fio output")

// Failure is how a measurement ended when fio did not succeed: kept
// as <test>.status.json beside its output, so that a replay judges the
// output as the live run did.
type Failure struct {
	// Interrupted says the run was stopped (Ctrl-C, SIGTERM, the -timeout)
	// rather than fio failing on its own.
	Interrupted bool   `json:"interrupted"`
	Message     string `json:"error"`
}

func (f *Failure) Error() string { return f.Message }

// Extensions of a test's files: its fio output and the sidecars.
const (
	OutputExt  = ".json"
	JobExt     = ".fio"
	StderrExt  = ".stderr"
	StatusExt  = ".status.json"
	SteadyExt  = ".steady.json"
	ThermalExt = ".thermal.json"
	LinkExt    = ".link.json"
	CPUExt     = ".cpu.json"
	// OCPExt is a cell's write amplification and latency monitor
	// readings ([]waf.WAF).
	OCPExt = ".ocp.json"
	// LogExt is fio's per-second IOPS and bandwidth logs of a cell or of
	// a preparation step (prepare/NNN-name.log.gz), packed into one gzip
	// file (package timelog).
	LogExt = ".log.gz"
)

// Base is the path of test's files in dir without an extension:
// DIR/TestSingleDrive/1.92TB/4KB_Random_Read.
func Base(dir, test string) string { return filepath.Join(dir, filepath.FromSlash(test)) }

// Forget removes what a run recorded for test in dir: its output, job file,
// stderr and every sidecar. A stale status would make a passing rerun
// replay as failed.
func Forget(dir, test string) error {
	for _, ext := range Exts {
		if err := os.Remove(Base(dir, test) + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the older recording of %s: %w", test, err)
		}
	}
	return nil
}

// WriteJSON writes v as test's sidecar ext in dir.
func WriteJSON(dir, test, ext string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	path := Base(dir, test) + ext
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return report.WriteFileAtomic(path, append(data, '\n'))
}

// ReadJSON reads test's sidecar ext in dir into v, as Open allows;
// found is false when there is none.
func ReadJSON(dir, test, ext string, v any) (found bool, err error) {
	path := Base(dir, test) + ext
	data, err := ReadFile(dir, test+ext)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// Thermal is a <test>.thermal.json: why the cell is not judged. Throttled
// says a drive throttled on heat during it; CriticalWarning, that a
// drive's temperature critical warning bit was set before or after it
// (absent in recordings made before it).
type Thermal struct {
	Throttled       string `json:"throttled"`
	CriticalWarning string `json:"critical_warning,omitempty"`
}

// CPU is a <test>.cpu.json: the CPUs fio's jobs were allowed and how busy
// they were over the measurement (/proc/stat), as a fraction 0-1; Pinned,
// each target's cpus_allowed in the job's order ("" unpinned), which the
// plan of a replay, made on another host or none, cannot know (absent in
// recordings made before it).
type CPU struct {
	CPUs   string   `json:"cpus"`
	N      int      `json:"n"`
	Busy   float64  `json:"busy"`
	Pinned []string `json:"pinned,omitempty"`
}

// Link is a <test>.link.json: the drives whose PCIe link (their own, or
// one above it on the way to the root port) was below what the cell
// needs, around its measurement; Unknown, the links sysfs did not know,
// which were not judged (absent in recordings made before it).
type Link struct {
	Degraded string `json:"degraded"`
	Unknown  string `json:"unknown,omitempty"`
	// Shared are the links above the drives that two or more of the
	// cell's drives share (a switch's uplink), as they trained; absent in
	// recordings made before it, whose cells are judged without them.
	Shared []SharedLink `json:"shared,omitempty"`
	// Fabric are the cell's NVMe over Fabrics drives, each with the
	// network interface towards its target and what it carried during
	// the measurement; absent for PCIe drives and older recordings.
	Fabric []fabric.Path `json:"fabric,omitempty"`
}

// SharedLink is one PCIe link that several of a cell's drives reach
// their root port through: Where names it ("switch port 0000:09:00.0"),
// Speed (GT/s per lane) and Width (lanes) are as it trained, and Drives
// are the cell's drives below it.
type SharedLink = pcie.SharedLink
