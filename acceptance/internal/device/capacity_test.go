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
