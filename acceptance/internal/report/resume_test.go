package report

import (
	"strings"
	"testing"
)

// A resumed run's plan numbers its steps from 1 again, so its
// steady-state rows name the resume: step 1 of the resume is not step 1
// of the run, and two drives that missed steady state in each are not
// one row.
func TestSummarySteadyStepsOfAResume(t *testing.T) {
	r := fixedRun()
	miss := Steady{Step: 1, Kind: "precondition", Twin: "4KB Random Write", Note: "no report closed a round", BoundSeconds: 40}
	first, resumed := miss, miss
	first.Drive, resumed.Drive, resumed.Resume = "/dev/loop0", "/dev/loop1", 1
	r.SteadyState = []Steady{
		first,
		resumed,
		{Step: 12, Kind: "precondition", Twin: "4KB Random Write", Drive: "/dev/loop0", Attained: true, Seconds: 10, Window: 5, RoundSeconds: 2},
	}
	s := string(r.Summary())
	for _, want := range []string{
		"| 1 | precondition | 4KB Random Write | /dev/loop0 | **not reached** within 40s | no report closed a round |",
		"| resume 1, step 1 | precondition | 4KB Random Write | /dev/loop1 | **not reached** within 40s | no report closed a round |",
		"| 12 | precondition | 4KB Random Write | /dev/loop0 | reached in 10s |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, s[strings.Index(s, "## Steady state"):])
		}
	}
}

// A drive read back by a resume's verify pass says so: step 3 of the
// resume is not step 3 of the run.
func TestSummaryIntegrityStepOfAResume(t *testing.T) {
	r := fixedRun()
	r.Results = append(r.Results,
		Result{Test: "TestIntegrity/loop0", Kind: KindIntegrity, Capacity: "1.92TB", Workload: "Data integrity", Drives: 1, Verdict: Pass,
			Integrity: &Integrity{Drive: "/dev/loop0", Step: 3, BytesVerified: 268_525_568, BytesWritten: 268_525_568, Checksum: "pattern"}},
		Result{Test: "TestIntegrity/loop1", Kind: KindIntegrity, Capacity: "1.92TB", Workload: "Data integrity", Drives: 1, Verdict: Pass,
			Integrity: &Integrity{Drive: "/dev/loop1", Step: 3, Resume: 1, BytesVerified: 268_525_568, BytesWritten: 268_525_568, Checksum: "pattern"}})
	s := string(r.Summary())
	for _, want := range []string{
		"- /dev/loop0: **PASS**: 268,525,568 bytes read back as written (pattern of every block, step 3)\n",
		"- /dev/loop1: **PASS**: 268,525,568 bytes read back as written (pattern of every block, resume 1, step 3)\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, s[strings.Index(s, "## Data integrity"):])
		}
	}
}
