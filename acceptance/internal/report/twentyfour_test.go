package report

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The summary of a 24-drive run of the built-in method on loop devices
// (fixtures/loop24, replayed; the junit package's testdata/runs/README.md
// says how): a table per step, short footnotes, each reason all drives of
// a step share said once per cell, and the whole under 60 KB.
func TestSummaryTwentyFourDrives(t *testing.T) {
	data, err := os.ReadFile("../junit/testdata/runs/loop24.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	got := r.Summary()
	golden(t, "summary-loop24.md", got)
	if len(got) >= 60_000 {
		t.Errorf("summary.md of a 24-drive run is %d bytes, want under 60 KB", len(got))
	}
	md := string(got)
	// Each inconclusive cell's footnote says its steady-state reason once.
	footnote := regexp.MustCompile(`(?m)^\[\^\d+\]: .*$`)
	var notSteady int
	for _, f := range footnote.FindAllString(md, -1) {
		switch n := strings.Count(f, "did not reach steady state"); {
		case n > 1:
			t.Errorf("footnote says a steady-state reason %d times: %s", n, f)
		case n == 1:
			notSteady++
		}
		if len(f) > 600 {
			t.Errorf("footnote of %d bytes: %s", len(f), f)
		}
	}
	var cells int
	for _, res := range r.Results {
		if res.Cause == CauseNotSteady {
			cells++
		}
	}
	if notSteady != cells || cells == 0 {
		t.Errorf("%d footnotes give a steady-state reason, want one for each of the %d cells", notSteady, cells)
	}
	// The 4KB step: all 24 drives missed for one reason, one row.
	if !strings.Contains(md, "| 24: loop0–loop23 | **not reached** within 20s | round 6 was not measured") {
		t.Errorf("the steady-state table does not say the 24 drives' shared reason in one row:\n%s", md)
	}
	if strings.Contains(md, "/dev/loop1,") {
		t.Error("summary.md lists the drives one by one")
	}
}
