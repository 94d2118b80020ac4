package report

import (
	"encoding/json"
	"os"
	"testing"
)

// The summary of a run compared with a baseline: the junit package's
// golden run against the brief (testdata/runs/README.md there says how it
// was made), whose 24-drive 4KB Random Write was dropped by 10 %.
func TestSummaryBaselineGolden(t *testing.T) {
	data, err := os.ReadFile("../junit/testdata/runs/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary-baseline.md", r.Summary())
}
