package modelglob

import (
	pathpkg "path"
	"testing"
)

type matchModelTest struct {
	pattern, model string
	want           bool
}

// matchModelTests: path.Match's globs over model numbers, whose "*" must
// reach past a "/". Drives do report a "/" in their model number (udev
// made directories of it under /dev/disk/by-id: systemd issue #19309);
// the models with one here are of that shape (a vendor's part number with
// its capacity after a "/"), not copied from a drive.
var matchModelTests = []matchModelTest{
	{"SOLIDIGM SB5PH27X*", "SOLIDIGM SB5PH27X019T", true},
	{"SOLIDIGM SB5PH27X*", "SOLIDIGM SBFPF2BU153T", false},
	{"ACME X?", "ACME X1", true},
	{"ACME X?", "ACME X12", false},
	{"SAMSUNG MZQL2[0-9]T[0-9]HCJR-*", "SAMSUNG MZQL21T9HCJR-00A07", true},
	{"SAMSUNG MZQL2[^0-9]*", "SAMSUNG MZQL21T9HCJR-00A07", false},
	{`ACME \*X`, "ACME *X", true},
	{`ACME \*X`, "ACME YX", false},
	// "*" and "?" past a "/".
	{"ACME DC1500M*", "ACME DC1500M/3840G", true},
	{"ACME DC1500M/*", "ACME DC1500M/3840G", true},
	{"ACME DC1500M?3840G", "ACME DC1500M/3840G", true},
	{"ACME *M/3840G", "ACME DC1500M/3840G", true},
	{"ACME DC1500M*", "ACME DC600M/480G", false},
	{"ACME DC*/480G", "ACME DC1500M/3840G", false},
	{"* NVMe */*", "Vendor NVMe PM9A3/7.68TB U.2", true},
	{"[A-Z]*/*", "X/Y", true},
	{"[^/]*", "ACME/1", true}, // the class excludes the first character only
	{"[^A]*", "ACME/1", false},
	{"ACME[/]1", "ACME/1", true},
	{`ACME\/1`, "ACME/1", true},
	// A range with "/" in it or at an end keeps its meaning: "+" to "/"
	// is + , - . /; "/" to "9" is / and the digits.
	{"ACME[+-/]1", "ACME/1", true},
	{"ACME[+-/]1", "ACME.1", true},
	{"ACME[+-/]1", "ACMEZ1", false},
	{"ACME[/-9]1", "ACME51", true},
	{"ACME[/-9]1", "ACME/1", true},
	{"ACME[/-9]1", "ACMEA1", false},
	{"ACME[^/-9]1", "ACME51", false},
	{"ACME[^/-9]1", "ACMEA1", true},
	{"ACME[a-c/]1", "ACME/1", true},
	{`ACME[\]-\^]1`, "ACME^1", true},
}

func TestMatch(t *testing.T) {
	for _, tt := range matchModelTests {
		got, err := Match(tt.pattern, tt.model)
		if err != nil || got != tt.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %v", tt.pattern, tt.model, got, err, tt.want)
		}
		// Where neither has a "/", it is path.Match.
		if !containsSlash(tt.pattern) && !containsSlash(tt.model) {
			if pm, _ := pathpkg.Match(tt.pattern, tt.model); pm != got {
				t.Errorf("Match(%q, %q) = %v, path.Match %v", tt.pattern, tt.model, got, pm)
			}
		}
	}
	if _, err := Match("ACME [X", "ACME X"); err != pathpkg.ErrBadPattern {
		t.Errorf("MatchModel of a malformed pattern: %v, want path.ErrBadPattern", err)
	}
}

func containsSlash(s string) bool {
	for _, r := range s {
		if r == '/' {
			return true
		}
	}
	return false
}
