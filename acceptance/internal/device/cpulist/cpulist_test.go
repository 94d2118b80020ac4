package cpulist

import (
	"slices"
	"strings"
	"testing"
)

type parseCPUListTest struct {
	in   string
	want []int
}

var parseCPUListTests = []parseCPUListTest{
	{"", nil},
	{"\n", nil},
	{"0", []int{0}},
	{"0-3,8\n", []int{0, 1, 2, 3, 8}},
	{"8,0-2", []int{0, 1, 2, 8}},
	{"0-1,1-2", []int{0, 1, 2}},
	{" 4 - 5 , 7 ", []int{4, 5, 7}},
}

// The last two name more CPUs than Linux numbers, each range small: a
// hostile recording's list, which would otherwise fill memory.
var parseCPUListErrors = []string{"a", "3-1", "-1", "0,,1", "1-", "0-99999999", "65536", "9223372036854775807", "9223372036854775806-9223372036854775807", strings.Repeat("0-60000,", 2) + "0", strings.Repeat("0-9999,", 100000) + "0"}

func TestParse(t *testing.T) {
	for _, tt := range parseCPUListTests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for _, in := range parseCPUListErrors {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, got)
		}
	}
}

type formatCPUListTest struct {
	in   []int
	want string
}

var formatCPUListTests = []formatCPUListTest{
	{nil, ""},
	{[]int{5}, "5"},
	{[]int{0, 1, 2, 3, 8}, "0-3,8"},
	{[]int{8, 3, 2, 1, 0, 3}, "0-3,8"},
	{[]int{0, 2, 4}, "0,2,4"},
	{[]int{0, 1, 3, 4, 6}, "0-1,3-4,6"},
}

func TestFormat(t *testing.T) {
	for _, tt := range formatCPUListTests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.in, got, tt.want)
		}
		// Formatting then parsing gives back the sorted set.
		back, err := Parse(Format(tt.in))
		if err != nil {
			t.Errorf("Parse(Format(%v)): %v", tt.in, err)
		}
		want := slices.Compact(slices.Sorted(slices.Values(tt.in)))
		if !slices.Equal(back, want) {
			t.Errorf("Parse(Format(%v)) = %v, want %v", tt.in, back, want)
		}
	}
}
