// Package report writes what a qualification run found: results.json,
// summary.md and one SVG chart per scaling workload. Every file is replaced
// atomically (written to a temporary file, then renamed).
package report

// Verdicts of a result.
const (
	Pass         = "pass"
	Fail         = "fail"
	Inconclusive = "inconclusive"
)

// Run is the whole report: results.json is this value as JSON.
type Run struct {
	Spec       string  `json:"spec"`   // the spec's model
	Source     string  `json:"source"` // where the spec's figures come from
	Mode       string  `json:"mode"`   // "live" or "replay"
	FioVersion string  `json:"fio_version"`
	// Precondition is the preconditioning the measurements had: full, quick or none.
	Precondition string   `json:"precondition"`
	Drives       []Drive  `json:"drives"`
	Results      []Result `json:"results"`
}

// Drive is one target's identity.
type Drive struct {
	Path     string `json:"path"`
	Model    string `json:"model"`
	Serial   string `json:"serial"`
	Firmware string `json:"firmware"`
	Bytes    int64  `json:"bytes"`
	Capacity string `json:"capacity,omitempty"` // the spec capacity it was matched to
	NUMANode int    `json:"numa_node"`          // -1 unknown
	CPUs     string `json:"cpus,omitempty"`     // cpus_allowed used in multi-drive runs
}

// Result is one subtest's outcome.
type Result struct {
	Test     string  `json:"test"` // "TestSingleDrive/1.92TB/4KB_Random_Read"
	Kind     string  `json:"kind"` // "single" or "scaling"
	Capacity string  `json:"capacity"`
	Workload string  `json:"workload"`
	Drives   int     `json:"drives"`
	Metric   string  `json:"metric"` // "iops" or "MBps" (10^6 bytes/s)
	Spec     float64 `json:"spec"`   // the single-drive spec value
	// Expected is what the cell is judged against before tolerance: the spec
	// for one drive, N × baseline for scaling.
	Expected  float64 `json:"expected"`
	Actual    float64 `json:"actual"`
	Ratio     float64 `json:"ratio"` // Actual / Expected
	Tolerance float64 `json:"tolerance"`
	Verdict   string  `json:"verdict"`
	Error     string  `json:"error"`
	// Raw is the recorded fio output, relative to the report directory's parent
	// or absolute; empty when none was kept.
	Raw      string        `json:"raw,omitempty"`
	PerDrive []DriveResult `json:"per_drive,omitempty"` // scaling only
	// Spread is (max − min) / mean of the per-drive actuals; scaling only.
	Spread float64 `json:"spread,omitempty"`
	// Latency percentiles of completion latency in microseconds, when fio gave bins.
	P99Us  float64 `json:"p99_us,omitempty"`
	P999Us float64 `json:"p99_9_us,omitempty"`
}

// DriveResult is one drive's share of a multi-drive result.
type DriveResult struct {
	Path    string  `json:"path"`
	Serial  string  `json:"serial"`
	Actual  float64 `json:"actual"`
	Ratio   float64 `json:"ratio"` // Actual / single-drive spec
	Verdict string  `json:"verdict"`
	Error   string  `json:"error,omitempty"`
}
