package layout

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// make test puts the Makefile's RACE_FIRST first on the -race run's
// command line and takes them out of the rest; a package there that is
// also in LONG_PKGS or NVMEVM, whose go tests run without -race, would run
// twice, and one that is not a package directory of the module makes go
// list fail, and make test with it, only once the guests have run.
func TestRaceFirstArePackagesOfTheRaceRun(t *testing.T) {
	for _, p := range raceFirstProblems(string(readMakefile(t)), moduleRoot) {
		t.Error(p)
	}
}

// raceFirstProblems says what is wrong with makefile's RACE_FIRST, its
// entries read against the module at root.
func raceFirstProblems(makefile, root string) []string {
	list := func(name string) []string {
		if n, plain := makeAssignments(makefile, name); n != 1 || !plain {
			return nil
		}
		return makeDirs(makeValue(makefile, name))
	}
	first := list("RACE_FIRST")
	if first == nil {
		return []string{"the Makefile must set RACE_FIRST once, as `RACE_FIRST = ./pkg ...`"}
	}
	var out []string
	long, vm := list("LONG_PKGS"), list("NVMEVM")
	if long == nil || vm == nil {
		out = append(out, "the Makefile must set LONG_PKGS and NVMEVM once each, as `NAME = ./pkg ...`")
	}
	elsewhere := append(long, vm...)
	for _, p := range first {
		if slices.Contains(elsewhere, p) {
			out = append(out, fmt.Sprintf("RACE_FIRST names ./%s, which LONG_PKGS or NVMEVM runs without -race: it would run twice", p))
		}
		if goFiles, _ := filepath.Glob(filepath.Join(root, p, "*.go")); len(goFiles) == 0 {
			out = append(out, fmt.Sprintf("RACE_FIRST names ./%s, which is no package directory of the module", p))
		}
	}
	// first must be what RACE_FIRST lists, and go first on the -race run's
	// command line: RACE_FIRST is also taken out of the rest (skip).
	if !strings.Contains(makefile, "first=$$($(GO) list $(RACE_FIRST))") || !strings.Contains(makefile, "-race -timeout=20m -p=$(TEST_P) $$first $$pkgs;") {
		out = append(out, "make test's -race run does not start with RACE_FIRST (first=$$($(GO) list $(RACE_FIRST)) ... $$first $$pkgs)")
	}
	return out
}

// Each way RACE_FIRST can go wrong is named.
func TestRaceFirstProblemsNamed(t *testing.T) {
	good := string(readMakefile(t))
	if p := raceFirstProblems(good, moduleRoot); len(p) != 0 {
		t.Fatalf("the Makefile: %v", p)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"long", "RACE_FIRST = ", "RACE_FIRST = ./acceptance/internal/e2e ", "which LONG_PKGS or NVMEVM runs without -race"},
		{"missing", "RACE_FIRST = ", "RACE_FIRST = ./fioojob ", "./fioojob, which is no package directory"},
		{"twice", "RACE_FIRST = ", "RACE_FIRST = ./fiojob\nRACE_FIRST = ", "must set RACE_FIRST once"},
		{"appended", "RACE_FIRST = ", "RACE_FIRST += ./acceptance/internal/e2e\nRACE_FIRST = ", "must set RACE_FIRST once"},
		{"immediate", "RACE_FIRST = ", "RACE_FIRST := ", "must set RACE_FIRST once"},
		{"vm unread", "NVMEVM = ", "NVMEVM := ", "must set LONG_PKGS and NVMEVM once each"},
		{"unused", "$$first $$pkgs;", "$$pkgs;", "does not start with RACE_FIRST"},
		{"not listed", "first=$$($(GO) list $(RACE_FIRST)) && ", "", "does not start with RACE_FIRST"},
	} {
		if !strings.Contains(good, c.old) {
			t.Fatalf("%s: %q is not in the Makefile", c.name, c.old)
		}
		bad := strings.Replace(good, c.old, c.new, 1)
		if p := raceFirstProblems(bad, moduleRoot); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, p, c.want)
		}
	}
}
