package report

// KindBaseline is a TestBaseline/<group>/<workload> result: a cell of this
// run compared with the same cell of earlier runs (-baseline=DIR,...).
const KindBaseline = "baseline"

// BaselineGate is the name of the gate over every TestBaseline cell.
const BaselineGate = "baseline"

// CauseRegressed is a TestBaseline cell's cause of failure: worse than the
// baseline by more than the tolerance, and significantly so (or by
// tolerance alone when the samples are too few for the test).
const CauseRegressed = "regressed"

// Comparison verdicts (Comparison.Verdict), as benchstat reads them.
const (
	Regressed = "regressed" // worse beyond the tolerance: the cell fails
	Worse     = "worse"     // significantly worse, within the tolerance
	Same      = "~"         // no difference the data can show
	Improved  = "improved"  // significantly better (or beyond the tolerance, with too few samples)
)

// Comparison is one figure of a cell compared with the baseline's: the
// cell's metric, or a latency percentile.
type Comparison struct {
	// Figure names what is compared: the cell's metric ("iops", "MBps",
	// "lat_us") or a latency percentile ("read_p99_us", "write_p99_99_us").
	Figure string `json:"figure"`
	// LowerIsBetter says a rise is the worse direction (latencies).
	LowerIsBetter bool   `json:"lower_is_better,omitempty"`
	Baseline      Sample `json:"baseline"`
	This          Sample `json:"this"`
	// Delta is This.Median / Baseline.Median − 1 (−0.10 is 10 % lower).
	Delta float64 `json:"delta"`
	// P is the two-sided Mann–Whitney U test's p-value of the two samples
	// (1 when they cannot be told apart at all).
	P float64 `json:"p"`
	// Tested says the samples are large enough for P to fall below Alpha;
	// when false the comparison is judged by Tolerance alone.
	Tested    bool    `json:"tested"`
	Alpha     float64 `json:"alpha"`
	Tolerance float64 `json:"tolerance"`
	// Verdict is Regressed, Worse, Same or Improved.
	Verdict string `json:"verdict"`
	// Note says why the test was not made ("1 sample", "n=3+3: too few
	// for p < 0.05").
	Note string `json:"note,omitempty"`
}

// Sample is one side's figures for a comparison: one per drive (a
// scaling step's drives, every host's drive) per recorded run, in the
// figure's unit (latencies in µs).
type Sample struct {
	N      int       `json:"n"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// BaselineResult is a cell's comparison with the baseline: its metric and
// each latency percentile both sides have. A compared result of this run
// carries it as "baseline", and so does its TestBaseline cell.
type BaselineResult struct {
	Test    string       `json:"test"` // the TestBaseline cell
	Metric  Comparison   `json:"metric"`
	Latency []Comparison `json:"latency,omitempty"`
}

// BaselineRun is one recorded run of the baseline side.
type BaselineRun struct {
	Dir          string   `json:"dir"`
	JudgedBy     *SpecRef `json:"judged_by"`
	Host         string   `json:"host,omitempty"`
	Firmware     []string `json:"firmware,omitempty"` // the drives' firmware revisions, distinct
	Models       []string `json:"models,omitempty"`   // the drives' models, distinct
	Cells        int      `json:"cells"`              // cells judged in it
	Compared     int      `json:"compared"`           // of those, cells this run has too
	Mode         string   `json:"mode,omitempty"`
	Precondition string   `json:"precondition,omitempty"`
}
