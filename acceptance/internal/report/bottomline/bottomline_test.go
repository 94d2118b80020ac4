package bottomline

import (
	"strings"
	"testing"
)

func TestOf(t *testing.T) {
	cap1 := Gate{Name: "1.92TB", Verdict: Qualified, Cells: 8, Passed: 8}
	scaling := Gate{Name: "scaling", Verdict: Qualified, Cells: 16, Passed: 16}
	quick := Gate{Name: "1.92TB", Verdict: Inconclusive, Cells: 8, Inconclusive: 8, Cause: "not preconditioned", Subject: "4KB Random Read",
		Reason: "8 of 8 cells inconclusive; first: measured with -precondition=quick; rerun with -precondition=full to qualify"}
	below := Gate{Name: "3.84TB", Verdict: NotQualified, Cells: 8, Passed: 7, Failed: 1, Cause: "below spec", Subject: "4KB Random Read",
		Reason: "1 of 8 cells failed; first: 2,100,000 IOPS is below the spec of 3,100,000 IOPS"}
	for _, tc := range []struct {
		name string
		in   Input
		want Line
	}{
		{"qualified", Input{Gates: []Gate{cap1, scaling}, Precondition: "full"},
			Line{Qualified, "1.92TB and scaling met the vendor's figures in all 24 tests", "the drives may be accepted; keep this page with the order"}},
		{"reconstructed", Input{Gates: []Gate{cap1}, Precondition: "full", Reconstructed: true, From: "the brief."},
			Line{Qualified, "1.92TB met the vendor's figures in all 8 tests; these figures were copied from the brief, no drive was measured",
				"measure the drives themselves (make qualify DRIVES=...) before accepting them"}},
		{"smoke", Input{Gates: []Gate{quick}, Precondition: "quick"},
			Line{Inconclusive, "smoke test only: the drives were not preconditioned, so nothing can be qualified", "run without -precondition=quick"}},
		{"smoke none", Input{Gates: []Gate{quick}, Precondition: "none"},
			Line{Inconclusive, "smoke test only: the drives were not preconditioned, so nothing can be qualified", "run without -precondition=none"}},
		{"a failure outweighs a smoke test", Input{Gates: []Gate{quick, below}, Precondition: "quick"},
			Line{NotQualified, "3.84TB failed: the drives were slower than the vendor's published figures (4KB Random Read; 1 of 8 tests of 3.84TB)",
				"give this page to the drives' supplier"}},
		{"two gates failed", Input{Gates: []Gate{below, {Name: "scaling", Verdict: NotQualified, Cells: 2, Failed: 2, Cause: "i/o error", Subject: "4KB Random Read at 24 drives"}}},
			Line{NotQualified, "3.84TB and scaling failed: the drives were slower than the vendor's published figures (4KB Random Read; 1 of 8 tests of 3.84TB)",
				"give this page to the drives' supplier"}},
		{"not steady", Input{Gates: []Gate{{Name: "scaling", Verdict: Inconclusive, Cells: 16, Inconclusive: 6, Cause: "not steady", Subject: "4KB Random Write at 24 drives"}}, Precondition: "full"},
			Line{Inconclusive, "scaling could not be judged: the drives had not settled to their lasting speed before they were measured (4KB Random Write at 24 drives; 6 of 16 tests of scaling)",
				"run again with longer preconditioning"}},
		{"health", Input{Gates: []Gate{cap1, {Name: "health", Verdict: NotQualified, Cells: 4, Failed: 1, Reason: "1 of 4 checks failed; first: /dev/nvme0n1: media errors 3"}}},
			Line{NotQualified, "health: 1 of 4 checks failed; first: /dev/nvme0n1: media errors 3", "return the drive to its supplier with this report"}},
		{"nothing", Input{}, Line{Inconclusive, "no test has been judged yet", "wait for the run to finish; if it has, its log says why it stopped"}},
		{"edited", Input{Gates: []Gate{cap1}, Precondition: "full", Evidence: "judged from edited evidence: 1 file differs"},
			Line{Qualified, "1.92TB met the vendor's figures in all 8 tests; judged from edited evidence: 1 file differs", "the drives may be accepted; keep this page with the order"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.in); got != tc.want {
				t.Errorf("Of() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// The reason is in plain words: no flag, no statistic's name.
func TestReasonsArePlainWords(t *testing.T) {
	for cause, w := range words {
		for _, jargon := range []string{"-precondition", "p99", "median", "spread", "cause", "_"} {
			if strings.Contains(w.what, jargon) {
				t.Errorf("%s: %q says %q", cause, w.what, jargon)
			}
		}
		if w.next == "" {
			t.Errorf("%s: no next step", cause)
		}
	}
}
