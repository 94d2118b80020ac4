package device

import (
	"strings"
	"testing"
)

// The capacities of the Solidigm D7-PS1010 brief, in bytes (IDEMA sizes).
var ps1010 = []Capacity{
	{"1.92TB", 1_920_383_410_176},
	{"3.84TB", 3_840_755_982_336},
	{"7.68TB", 7_681_501_126_656},
	{"15.36TB", 15_362_991_415_296},
}

type matchCapacityTest struct {
	size int64
	caps []Capacity
	want string // "" for an error
}

var matchCapacityTests = []matchCapacityTest{
	{1_920_383_410_176, ps1010, "1.92TB"},
	{15_362_991_415_296, ps1010, "15.36TB"},
	// Within 0.5 % either way.
	{1_920_383_410_176 + 9_000_000_000, ps1010, "1.92TB"},
	{3_840_755_982_336 - 19_000_000_000, ps1010, "3.84TB"},
	// Just outside 0.5 % (9.6 GB for 1.92TB).
	{1_920_383_410_176 + 9_700_000_000, ps1010, ""},
	// A 1.6 TB over-provisioned namespace of a 1.92 TB drive.
	{1_600_321_314_816, ps1010, ""},
	// A 64 MiB loop device.
	{64 << 20, ps1010, ""},
	{1 << 30, nil, ""},
	// Nearest wins when capacities overlap; a tie is an error.
	{1000, []Capacity{{"a", 1000}, {"b", 1004}}, "a"},
	{1003, []Capacity{{"a", 1000}, {"b", 1004}}, "b"},
	{1002, []Capacity{{"a", 1000}, {"b", 1004}}, ""},
}

func TestMatchCapacity(t *testing.T) {
	for _, tt := range matchCapacityTests {
		got, err := MatchCapacity(tt.size, tt.caps)
		if tt.want == "" {
			if err == nil {
				t.Errorf("MatchCapacity(%d) = %q, want error", tt.size, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MatchCapacity(%d) = %q, %v, want %q", tt.size, got, err, tt.want)
		}
	}
}

func TestMatchCapacityError(t *testing.T) {
	_, err := MatchCapacity(64<<20, ps1010)
	if err == nil {
		t.Fatal("MatchCapacity(64 MiB) = nil error")
	}
	want := "size 67108864 bytes (0.07 GB) matches no capacity within 0.5 % of " +
		"1.92TB (1920383410176 bytes), 3.84TB (3840755982336 bytes), 7.68TB (7681501126656 bytes), " +
		"15.36TB (15362991415296 bytes); give -capacity=NAME to say which it is"
	if err.Error() != want {
		t.Errorf("MatchCapacity(64 MiB) error = %q, want %q", err, want)
	}
	_, err = MatchCapacity(1002, []Capacity{{"a", 1000}, {"b", 1004}})
	if err == nil || !strings.Contains(err.Error(), "equally close") {
		t.Errorf("MatchCapacity(tie) error = %v, want one saying equally close", err)
	}
}

type comparableTest struct {
	size, capBytes int64
	want           bool
}

var comparableTests = []comparableTest{
	{1000, 1000, true},
	{1005, 1000, true},
	{995, 1000, true},
	{1006, 1000, false},
	{994, 1000, false},
	{0, 1000, false},
	{1000, 0, false},
}

func TestComparable(t *testing.T) {
	for _, tt := range comparableTests {
		if got := Comparable(tt.size, tt.capBytes); got != tt.want {
			t.Errorf("Comparable(%d, %d) = %v, want %v", tt.size, tt.capBytes, got, tt.want)
		}
	}
}

type checkForcedTest struct {
	name string
	size int64
	cap  Capacity
	warn string // in the warning; "" for none
	err  string // in the error; "" for none
}

var checkForcedTests = []checkForcedTest{
	{"its own capacity", 1_920_383_410_176, ps1010[0], "", ""},
	{"within 0.5 % below", 1_920_383_410_176 - 9_000_000_000, ps1010[0], "", ""},
	// A 3.84 TB drive judged as 1.92TB: allowed, as today, with a warning.
	{"larger than its capacity", 3_840_755_982_336, ps1010[0], "holds 3,840,755,982,336 bytes, not the 1,920,383,410,176 bytes of 1.92TB: its figures are not comparable", ""},
	// A 1.92 TB drive named as 3.84TB: refused, with the right -capacity.
	{"smaller, of another capacity", 1_920_383_410_176, ps1010[1], "",
		"holds 1,920,383,410,176 bytes (1920.38 GB), fewer than the 3,840,755,982,336 bytes of 3.84TB it is to be judged as: a drive smaller than its capacity is refused, as its cells would reach past its end; give -capacity=1.92TB, the spec's capacity of this size, or leave -capacity out"},
	// A 1.6 TB namespace named as 1.92TB: no capacity of its size.
	{"smaller, of no capacity", 1_600_321_314_816, ps1010[0], "", "give a spec with a capacity of 1,600,321,314,816 bytes"},
	// A 2.5 TB drive named as 3.84TB: a smaller capacity is offered.
	{"smaller, between two", 2_500_000_000_000, ps1010[1], "",
		"give a spec with a capacity of 2,500,000,000,000 bytes, or judge it as a smaller capacity (-capacity=1.92TB; its figures are then not comparable with the spec's)"},
	// A 1 GiB loop device named as 1.92TB.
	{"loop device", 1 << 30, ps1010[0], "", "holds 1,073,741,824 bytes (1.07 GB), fewer than the 1,920,383,410,176 bytes of 1.92TB"},
}

func TestCheckForced(t *testing.T) {
	for _, tt := range checkForcedTests {
		warn, err := CheckForced(tt.size, tt.cap, ps1010)
		if (tt.warn == "") != (warn == "") || !strings.Contains(warn, tt.warn) {
			t.Errorf("%s: CheckForced(%d, %s) warns %q, want %q", tt.name, tt.size, tt.cap.Name, warn, tt.warn)
		}
		if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: CheckForced(%d, %s) = %v, want an error containing %q", tt.name, tt.size, tt.cap.Name, err, tt.err)
		}
	}
}
