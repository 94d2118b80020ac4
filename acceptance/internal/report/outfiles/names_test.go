package outfiles_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/junit"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/outfiles"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
)

// Every file the reporter writes for the brief's replay (results.json,
// summary.md, junit.xml, index.html, each chart) is a name Ours allows,
// so that the next run removes it; the reporter's own names are Ours.
func TestOursIsEveryFileTheReporterWrites(t *testing.T) {
	t.Cleanup(outfiles.Untrack)
	for _, n := range []string{report.ResultsFile, report.SummaryFile, junit.File, page.File, report.ChartsDir + "/4KB_Random_Read.svg", report.LotChartFile, report.BaselineChartFile("1.92TB")} {
		if !outfiles.Ours(n) {
			t.Errorf("Ours(%q) = false, want true: the reporter writes it", n)
		}
	}
	data, err := os.ReadFile("../../junit/testdata/runs/brief.json")
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if _, err := outfiles.Track(dir); err != nil {
		t.Fatal(err)
	}
	for _, w := range []func(string, *report.Run) error{func(d string, r *report.Run) error { return r.Write(d) }, junit.Write, page.Write} {
		if err := w(dir, &r); err != nil {
			t.Fatal(err)
		}
	}
	written := map[string]bool{}
	for _, n := range outfiles.Written() {
		written[n] = true
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == outfiles.Manifest {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		n++
		if !written[filepath.ToSlash(rel)] {
			t.Errorf("the reporter wrote %s, not listed (Ours: %v)", rel, outfiles.Ours(filepath.ToSlash(rel)))
		}
		return nil
	})
	if err != nil || n < 12 {
		t.Errorf("walked %d files: %v", n, err)
	}
}
