package bottomline_test

import (
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/fleet"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/bottomline"
)

// Every cause a result may carry has plain words and a next step.
func TestEveryCauseKnown(t *testing.T) {
	for _, c := range []string{report.CauseBelowSpec, report.CauseFioFailed, report.CausePreparation, report.CauseDriveChanged,
		report.CausePrecondition, report.CauseInterrupted, report.CauseNoBaseline, report.CauseNotRecorded, report.CauseBadRecording,
		report.CauseNotSteady, report.CauseThrottled, report.CauseLatency, report.CausePCIeLink, report.CauseHostBound,
		report.CausePCIeBound, report.CauseTransportBound, report.CauseCriticalWarning, report.CauseIntegrity, report.CauseReadBack,
		report.CauseIOError, report.CauseRegressed, report.CauseNotComparable, report.CauseLotRejected, report.CauseLotUndecided,
		fleet.CauseSpread, fleet.CauseMemberFailed, fleet.CauseNoFigure, fleet.CauseMemberNotClear, fleet.CauseTooFew} {
		if !bottomline.Knows(c) {
			t.Errorf("cause %q has no plain words", c)
		}
	}
}

// summary.md's first line is the bottom line.
func TestSummaryFirstLine(t *testing.T) {
	r := report.Run{Precondition: "quick", Results: []report.Result{{Kind: report.KindSingle, Capacity: "1.92TB", Workload: "4KB Random Read",
		Verdict: report.Inconclusive, Cause: report.CausePrecondition, Error: "measured with -precondition=quick"}}}
	first, _, _ := bytesCut(r.Summary())
	want := "**INCONCLUSIVE**: smoke test only: the drives were not preconditioned, so nothing can be qualified; next: run without -precondition=quick."
	if first != want {
		t.Errorf("summary.md's first line is\n%s\nwant\n%s", first, want)
	}
}

func bytesCut(b []byte) (string, string, bool) {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i]), string(b[i+1:]), true
		}
	}
	return string(b), "", false
}
