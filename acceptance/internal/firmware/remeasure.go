package firmware

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drivequal/drivequal/fiojob"
)

// Remeasure is one cell measured again after the activation, against its
// figure before it in the same run (the -baseline rule within the run: a
// drop beyond the spec's [baseline] tolerance is a regression).
type Remeasure struct {
	Test      string  `json:"test"`
	Metric    string  `json:"metric"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	Tolerance float64 `json:"tolerance"`
	Regressed bool    `json:"regressed"`
	Error     string  `json:"error,omitempty"`
}

// Compare fills m's verdict: regressed when After is under Before × (1 −
// Tolerance), or when it could not be measured.
func (m *Remeasure) Compare() {
	m.Regressed = m.Error != "" || m.After < m.Before*(1-m.Tolerance)
}

// Text is m in a sentence.
func (m Remeasure) Text() string {
	if m.Error != "" {
		return fmt.Sprintf("%s could not be measured again: %s", m.Test, m.Error)
	}
	return fmt.Sprintf("%s: %.0f %s after against %.0f before (%+.1f %%, tolerance %.0f %%)", m.Test, m.After, m.Metric, m.Before, 100*(m.After/m.Before-1), 100*m.Tolerance)
}

// AddRemeasured adds ms to r and fails r, naming each, when one
// regressed.
func AddRemeasured(r *Result, ms []Remeasure) {
	r.Remeasured = append(r.Remeasured, ms...)
	var slower []string
	for _, m := range ms {
		if m.Regressed {
			slower = append(slower, m.Text())
		}
	}
	if len(slower) == 0 {
		return
	}
	if r.Verdict == Pass {
		r.Verdict, r.Message = Fail, r.Drive+": "
	} else {
		r.Message += "; "
	}
	r.Message += "slower after the activation: " + strings.Join(slower, "; ")
}

// rerunnable is a cell's recorded job file without the options that
// write logs, so that the run again writes nothing into the cell's
// recording.
func rerunnable(job string) string {
	var keep []string
	for _, l := range strings.Split(job, "\n") {
		k := strings.TrimSpace(l)
		if strings.HasPrefix(k, "write_") && strings.Contains(k, "_log") || strings.HasPrefix(k, "log_") || strings.HasPrefix(k, "per_job_logs") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// Measure runs the cell's recorded job file again (its logs left out) in
// dir and returns its figure: IOPS, or MB/s for "MBps".
func Measure(ctx context.Context, jobFile, metric, dir string) (float64, error) {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	job := filepath.Join(dir, filepath.Base(jobFile))
	if err := os.WriteFile(job, []byte(rerunnable(string(b))), 0o644); err != nil {
		return 0, err
	}
	out := strings.TrimSuffix(job, ".fio") + ".json"
	// fio in its own process group, interrupted then killed when ctx
	// ends, as every fio of the suite.
	data, stderr, err := fiojob.Runner{Format: fiojob.FormatJSON}.Run(ctx, job)
	if werr := os.WriteFile(out, data, 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return 0, fmt.Errorf("fio %s: %v: %s", job, err, firstLines(stderr, 3))
	}
	o, err := fiojob.Parse(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", out, err)
	}
	t := o.Total()
	if strings.EqualFold(metric, "MBps") {
		return t.BytesPerSec / 1e6, nil
	}
	return t.IOPS, nil
}
