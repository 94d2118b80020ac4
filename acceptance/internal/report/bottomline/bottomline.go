// Package bottomline says a run's decision in one line a reader who was not
// at the server understands: the verdict, one reason in plain words and the
// next step. summary.md's first line and index.html's top are this line.
package bottomline

import (
	"fmt"
	"strings"
)

// Verdicts of a gate and of a run.
const (
	Qualified    = "QUALIFIED"
	NotQualified = "NOT QUALIFIED"
	Inconclusive = "INCONCLUSIVE"
)

// Gate is the verdict on one part of a run: one capacity's single-drive
// cells (with its drives' TestIntegrity), every scaling step, or every
// fleet, baseline, lot, receipt or health result.
type Gate struct {
	Name    string // a capacity ("1.92TB"), or "scaling", "health", ...
	Verdict string // Qualified, NotQualified or Inconclusive
	// Reason says in one line why the verdict is not Qualified; "" when it is.
	Reason string
	// Cause is the cause of the first cell that failed (or, with none
	// failed, was inconclusive), and Subject names that cell ("4KB
	// Random Read", "4KB Random Read at 24 drives"); "" for a gate of
	// checks or a qualified gate.
	Cause, Subject string
	// Counts of the cells judged.
	Cells, Passed, Failed, Inconclusive int
}

// String is the gate as the run's closing line gives it:
// "NOT QUALIFIED: 1.92TB: 2 of 8 cells failed: 4KB Random Read: actual ...".
func (g Gate) String() string {
	if g.Reason == "" {
		return g.Verdict + ": " + g.Name
	}
	return g.Verdict + ": " + g.Name + ": " + g.Reason
}

// Input is what the bottom line is decided from.
type Input struct {
	Gates []Gate
	// Precondition is the preconditioning the measurements had: full,
	// quick or none.
	Precondition string
	// Reconstructed says the figures were reconstructed from a
	// publication (From), not measured on drives.
	Reconstructed bool
	From          string
	// Evidence says the replayed recording's files are not as recorded
	// (hashes.Check.Evidence); "" when they are.
	Evidence string
}

// Line is the bottom line: Decision is the run's verdict, Reason why in
// plain words, Next what to do now.
type Line struct {
	Decision, Reason, Next string
}

// String is the line as one sentence: "NOT QUALIFIED: ...; next: ...".
func (l Line) String() string {
	return l.Decision + ": " + l.Reason + "; next: " + l.Next
}

// Of is the bottom line of a run: the worst gate decides, its first
// failed (else inconclusive) cell's cause says why in plain words and
// what to do; a run measured without preconditioning is a smoke test,
// which qualifies nothing.
func Of(in Input) Line {
	if len(in.Gates) == 0 {
		return Line{Inconclusive, "no test has been judged yet",
			"wait for the run to finish; if it has, its log says why it stopped"}
	}
	var failed, unsure []Gate
	passed, cells := 0, 0
	for _, g := range in.Gates {
		passed += g.Passed
		cells += g.Cells
		switch g.Verdict {
		case NotQualified:
			failed = append(failed, g)
		case Qualified:
		default:
			unsure = append(unsure, g)
		}
	}
	var l Line
	switch {
	case len(failed) > 0:
		l = Line{NotQualified, reason(failed, "failed"), next(failed[0])}
	case smoke(unsure, in.Precondition):
		l = Line{Inconclusive, "smoke test only: the drives were not preconditioned, so nothing can be qualified",
			"run without -precondition=" + in.Precondition}
	case len(unsure) > 0:
		l = Line{Inconclusive, reason(unsure, "could not be judged"), next(unsure[0])}
	default:
		l = Line{Qualified, fmt.Sprintf("%s met the vendor's figures in all %d tests", names(in.Gates), cells),
			"the drives may be accepted; keep this page with the order"}
		if passed < cells {
			l.Reason = fmt.Sprintf("%s met the vendor's figures in %d of %d tests", names(in.Gates), passed, cells)
		}
	}
	if in.Reconstructed {
		from := strings.TrimSuffix(in.From, ".")
		if from == "" {
			from = "a publication"
		}
		l.Reason += "; these figures were copied from " + from + ", no drive was measured"
		if l.Decision == Qualified {
			l.Next = "measure the drives themselves (make qualify DRIVES=...) before accepting them"
		}
	}
	if in.Evidence != "" {
		l.Reason += "; " + in.Evidence
	}
	return l
}

// smoke says every inconclusive gate is inconclusive for want of
// preconditioning.
func smoke(unsure []Gate, precondition string) bool {
	if len(unsure) == 0 || precondition == "full" || precondition == "" {
		return false
	}
	for _, g := range unsure {
		if g.Cause != "not preconditioned" {
			return false
		}
	}
	return true
}

// Explain is one gate's verdict in plain words after its name: "met the
// vendor's figures in all 8 tests", "failed: the drives were slower than
// ...".
func Explain(g Gate, precondition string) string {
	tests := "tests"
	if g.Name == "health" || g.Name == "receipt" {
		tests = "checks"
	}
	switch {
	case g.Verdict == Qualified:
		return fmt.Sprintf("met the vendor's figures in all %d %s", g.Cells, tests)
	case g.Verdict == NotQualified:
		return unnamed(reason([]Gate{g}, "failed"), g.Name)
	case smoke([]Gate{g}, precondition):
		return "not qualified by a smoke test: the drives were not preconditioned"
	}
	return unnamed(reason([]Gate{g}, "could not be judged"), g.Name)
}

// unnamed is a reason without the gate's name it starts with.
func unnamed(reason, name string) string {
	reason = strings.TrimPrefix(reason, name)
	return strings.TrimPrefix(strings.TrimPrefix(reason, ":"), " ")
}

// reason says which gates and what happened to the first one's first cell.
func reason(gates []Gate, what string) string {
	g := gates[0]
	who := g.Name
	if len(gates) > 1 {
		who = names(gates)
	}
	count := g.Failed
	if what != "failed" {
		count = g.Inconclusive
	}
	if w, ok := words[g.Cause]; ok {
		s := fmt.Sprintf("%s %s: %s", who, what, w.what)
		if g.Subject != "" {
			s += fmt.Sprintf(" (%s; %d of %d tests of %s)", g.Subject, count, g.Cells, g.Name)
		}
		return s
	}
	if g.Reason != "" {
		return who + ": " + strings.ReplaceAll(g.Reason, "cells", "tests")
	}
	return who + " " + what
}

// next is what to do about a gate's first cell.
func next(g Gate) string {
	if w, ok := words[g.Cause]; ok {
		return w.next
	}
	switch g.Name {
	case "health", "receipt":
		return "return the drive to its supplier with this report"
	}
	return "read the tables below for each test's reason, fix it and run again"
}

// names lists gates' names: "1.92TB, 3.84TB and scaling".
func names(gates []Gate) string {
	var s []string
	for _, g := range gates {
		s = append(s, g.Name)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// Knows says the bottom line has plain words for cause.
func Knows(cause string) bool {
	_, ok := words[cause]
	return ok
}

const toSupplier = "give this page to the drives' supplier"
const returnDrive = "return the drive to its supplier with the evidence kept (listed below)"

// words are, for each cause of a verdict other than pass, what happened
// in plain words and what to do next.
var words = map[string]struct{ what, next string }{
	"below spec":          {"the drives were slower than the vendor's published figures", toSupplier},
	"fio failed":          {"the test program failed, so nothing was measured", "fix the error the tables below give and run again"},
	"preparation failed":  {"erasing or preparing the drives failed", "fix the error the tables below give and run again"},
	"drive changed":       {"a drive was swapped or changed during the run", "run again from the start with the same drives in place"},
	"not preconditioned":  {"the drives were not preconditioned, so their speed is not the lasting one", "run with full preconditioning"},
	"interrupted":         {"the run was stopped before it finished", "continue it: the same command with -resume"},
	"no baseline":         {"the earlier run it is compared with has no figure for it", "compare with an earlier run that measured the same tests"},
	"not recorded":        {"the recording has no measurement for it", "replay a complete recording, or run the missing tests"},
	"bad recording":       {"the recording's files could not be read", "replay an intact copy of the recording"},
	"not steady":          {"the drives had not settled to their lasting speed before they were measured", "run again with longer preconditioning"},
	"thermal throttle":    {"a drive overheated and slowed itself down", "improve the drives' cooling and run again"},
	"latency above limit": {"responses were slower than the vendor's latency limits", toSupplier},
	"pcie link degraded":  {"a drive's PCIe link ran slower than the test needs", "reseat the drive or move it to a full-speed slot, and run again"},
	"host-bound":          {"the test machine's processors, not the drives, were the limit", "run again on a machine with more processors free"},
	"pcie bound":          {"a PCIe link the drives share, not the drives, was the limit", "spread the drives over more PCIe links and run again"},
	"transport bound":     {"the network, not the drives, was the limit", "run again over a faster network"},
	"critical warning":    {"a drive raised a critical warning", returnDrive},
	"data integrity":      {"a drive returned data other than what was written to it", returnDrive},
	"read-back failed":    {"a drive could not read its data back", returnDrive},
	"i/o error":           {"a drive answered with I/O errors", returnDrive},
	"regressed":           {"the drives were slower than the earlier run they are compared with", "compare the two runs' drives and firmware, and ask the supplier what changed"},
	"not comparable":      {"the earlier run it is compared with measured something else", "compare with an earlier run of the same spec and tests"},
	"lot rejected":        {"the drives measured say the lot as a whole falls short", toSupplier},
	"lot undecided":       {"too few drives were measured to judge the lot", "measure more drives of the lot"},
	"fleet spread":        {"the drives differ from one another by more than allowed", "look at the slowest drives named below and ask the supplier"},
	"member failed":       {"a host's own test of a drive failed", "read that host's report, fix it and run again"},
	"no figure":           {"a drive has no measured figure", "run the missing tests on that drive"},
	"member inconclusive": {"a host's own test of a drive could not be judged", "read that host's report, fix it and run again"},
	"too few drives":      {"fewer than two drives have a figure to compare", "measure more drives"},
	"purge not proven":    {"the drive did not erase its data", "do not release the drive: return it to its supplier with the evidence kept (listed below)"},
	"purge not shown":     {"the drive held none of the run's data before its erase, so the erase is not shown", "run again from the start, so the drives hold the run's data when the purge is proven"},
	"firmware activation": {"a firmware update under load stalled the drive, lost data or did not take", returnDrive},
}
