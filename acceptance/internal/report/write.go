package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/drivequal/drivequal/acceptance/internal/report/outfiles"
)

// File names inside a report directory.
const (
	ResultsFile = "results.json"
	SummaryFile = "summary.md"
	ChartsDir   = "charts"
)

// WriteFileAtomic replaces path with data atomically, and lists it as
// the run's when inside the tracked report directory (outfiles.WriteAtomic).
var WriteFileAtomic = outfiles.WriteAtomic

// Write writes results.json, summary.md and charts/<workload>.svg into dir,
// each atomically, creating dir if needed. results.json is written first, so
// that an error in a later file still leaves the results. Errors name the
// path that could not be written.
//
// Write is meant to be called again after every result, so that an
// interrupted run keeps what it finished; callers serialise calls that share
// r. A chart whose workload no longer has results is left in place.
func (r *Run) Write(dir string) error {
	js, err := r.JSON()
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, ResultsFile), err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, ResultsFile), js); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, SummaryFile), r.Summary()); err != nil {
		return err
	}
	charts, err := r.Charts()
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, ChartsDir), err)
	}
	names := make([]string, 0, len(charts))
	for name := range charts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := WriteFileAtomic(filepath.Join(dir, ChartsDir, name), charts[name]); err != nil {
			return err
		}
	}
	return nil
}

// JSON returns the run as indented JSON with a trailing newline: the content
// of results.json. Missing drive and result lists are written as [], not
// null. A number JSON cannot carry (NaN, ±Inf: a figure a recording
// overflowed) fails the result holding it (FailNonFinite), in r too, so
// that summary.md and junit.xml, written from r after it, say the same;
// elsewhere it is written as 0.
func (r *Run) JSON() ([]byte, error) {
	for i := range r.Results {
		FailNonFinite(&r.Results[i])
	}
	out := *r
	if out.Drives == nil {
		out.Drives = []Drive{}
	}
	if out.Results == nil {
		out.Results = []Result{}
	}
	Finite(&out)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&out); err != nil {
		return nil, fmt.Errorf("encoding results: %w", err)
	}
	return buf.Bytes(), nil
}
