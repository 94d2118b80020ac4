package cmdline

import (
	"slices"
	"testing"

	"github.com/drivequal/drivequal/specs"
)

type runWorkloadsTest struct {
	run  string
	want []string
}

var runWorkloadsTests = []runWorkloadsTest{
	{"TestSingleDrive/1.92TB/4KB_Random_Reed", []string{`-run: "4KB_Random_Reed" matches no workload of the spec, so TestSingleDrive/1.92TB/4KB_Random_Reed selects no cell; did you mean "4KB_Random_Read"?`}},
	{"TestScaling/24_drives/^4kb_random_write$", []string{`-run: "^4kb_random_write$" matches no workload of the spec, so TestScaling/24_drives/^4kb_random_write$ selects no cell; did you mean "4KB_Random_Write"?`}},
	{"TestSingleDrive/1.92TB/Sequential_Rread|TestHealth", []string{`-run: "Sequential_Rread" matches no workload of the spec, so TestSingleDrive/1.92TB/Sequential_Rread selects no cell`}},
	{"TestSingleDrive/1.92TB/4KB_Random_Read", nil}, // a workload
	{"TestSingleDrive/1.92TB/Random", nil},          // part of several: go test matches substrings
	{"TestSingleDrive/1.92TB/4KB_.*", nil},          // a regexp is go test's
	{"TestSingleDrive/1.92TB", nil},                 // no workload level
	{"TestHealth/x/y", nil},
}

func TestRunWorkloads(t *testing.T) {
	subtests := []string{"4KB_Random_Read", "4KB_Random_Write", "128KB_Sequential_Read"}
	spec := &specs.Spec{Workloads: []specs.Workload{{Name: "4KB Random Read"}, {Name: "4KB Random Write"}, {Name: "128KB Sequential Read"}}}
	suggest := spec.SuggestWorkload
	for _, tt := range runWorkloadsTests {
		c := &Config{Run: tt.run}
		if got := c.RunWorkloads(subtests, suggest); !slices.Equal(got, tt.want) {
			t.Errorf("RunWorkloads with -run=%s = %q, want %q", tt.run, got, tt.want)
		}
	}
}
