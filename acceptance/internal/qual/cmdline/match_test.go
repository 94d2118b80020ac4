package cmdline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// matchNames are cell names of the shapes the suite runs.
var matchNames = []string{
	"TestSingleDrive/1GiB/4KB_Random_Read",
	"TestSingleDrive/1GiB/4KB_Random_Write",
	"TestSingleDrive/1GiB/128KB_Sequential_Read",
	"TestSingleDrive/2GiB/4KB_Random_Read",
	"TestScaling/1_drives/4KB_Random_Read",
	"TestScaling/1_drives/4KB_Random_Write",
	"TestScaling/2_drives/4KB_Random_Read",
	"TestScaling/2_drives/4KB_Random_Write",
}

type selectTest struct {
	run, skip string
	want      []string // the cells go test runs
}

// selectTests are written out from testing's matcher (testing/match.go)
// and checked against go test itself by TestSelectedAgreesWithGoTest.
var selectTests = []selectTest{
	{"", "", matchNames},
	{"TestSingleDrive", "", matchNames[:4]},
	// Top-level alternation: each alternative is split at "/" on its own.
	{"TestSingleDrive/1GiB/4KB_Random_Read$|TestScaling/2_drives/4KB_Random_Read$", "",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read", "TestScaling/2_drives/4KB_Random_Read"}},
	{"Scaling/1_drives|Single/2GiB", "",
		[]string{"TestSingleDrive/2GiB/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Write"}},
	{"TestScaling|TestSingleDrive/2GiB/", "",
		[]string{"TestSingleDrive/2GiB/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Write",
			"TestScaling/2_drives/4KB_Random_Read", "TestScaling/2_drives/4KB_Random_Write"}},
	// Alternation inside parentheses stays within its level.
	{"(TestSingleDrive|TestScaling)/1/Write", "",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Write", "TestScaling/1_drives/4KB_Random_Write"}},
	{"TestScaling/(1|2)_drives/Read", "",
		[]string{"TestScaling/1_drives/4KB_Random_Read", "TestScaling/2_drives/4KB_Random_Read"}},
	{"TestSingleDrive/[12]GiB/Random_Read$", "",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read", "TestSingleDrive/2GiB/4KB_Random_Read"}},
	// A slash inside brackets does not split.
	{"TestSingleDrive/1GiB/[/S]eq", "", []string{"TestSingleDrive/1GiB/128KB_Sequential_Read"}},
	// Spaces in a pattern are underscores, as in names.
	{"TestSingleDrive/1GiB/4KB Random Read", "", []string{"TestSingleDrive/1GiB/4KB_Random_Read"}},
	// An unmatched "]" is legal and changes nothing.
	{"x]|TestScaling/2", "", []string{"TestScaling/2_drives/4KB_Random_Read", "TestScaling/2_drives/4KB_Random_Write"}},
	// A pattern deeper than the cells still selects them.
	{"TestScaling/2_drives/Read/deeper", "", []string{"TestScaling/2_drives/4KB_Random_Read"}},
	{"", "TestScaling", matchNames[:4]},
	// Each alternative starts at the top level: "Write" names no top-level test.
	{"", "Write|TestScaling/1_drives/Read$",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read", "TestSingleDrive/1GiB/4KB_Random_Write", "TestSingleDrive/1GiB/128KB_Sequential_Read",
			"TestSingleDrive/2GiB/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Write",
			"TestScaling/2_drives/4KB_Random_Read", "TestScaling/2_drives/4KB_Random_Write"}},
	{"", "TestSingleDrive/.*/Write|TestScaling/2_drives/Write",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read", "TestSingleDrive/1GiB/128KB_Sequential_Read", "TestSingleDrive/2GiB/4KB_Random_Read",
			"TestScaling/1_drives/4KB_Random_Read", "TestScaling/1_drives/4KB_Random_Write", "TestScaling/2_drives/4KB_Random_Read"}},
	// A skip deeper than the cells skips none of them.
	{"TestScaling", "TestScaling/2_drives/Read/deeper", matchNames[4:]},
	// The first alternative that matches decides: here a deeper one, so
	// the 1GiB reads are not skipped although "TestSingleDrive" matches.
	{"TestSingleDrive", "TestSingleDrive/1GiB/Read/deeper|TestSingleDrive",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read", "TestSingleDrive/1GiB/128KB_Sequential_Read"}},
	{"TestSingleDrive/1GiB/4KB_Random_Read$|TestScaling/2_drives/4KB_Random_Read$", "TestScaling",
		[]string{"TestSingleDrive/1GiB/4KB_Random_Read"}},
}

func selected(c *Config) []string {
	var got []string
	for _, name := range matchNames {
		if c.Selected(name) {
			got = append(got, name)
		}
	}
	return got
}

func TestSelected(t *testing.T) {
	for _, tt := range selectTests {
		c := &Config{Run: tt.run, Skip: tt.skip}
		if got := selected(c); !slices.Equal(got, tt.want) {
			t.Errorf("Selected(-run=%q -skip=%q) = %q, want %q", tt.run, tt.skip, got, tt.want)
		}
	}
}

// TestSelectedAgreesWithGoTest runs a generated test binary with the
// suite's subtest names under each pattern of selectTests, and compares
// the leaves go test ran with what Selected selects.
func TestSelectedAgreesWithGoTest(t *testing.T) {
	goCmd := testenv.MustHave(t, "go", "install Go")
	dir := t.TempDir()
	tree := map[string]map[string][]string{}
	var tops []string
	for _, name := range matchNames {
		p := strings.Split(name, "/")
		if tree[p[0]] == nil {
			tree[p[0]] = map[string][]string{}
			tops = append(tops, p[0])
		}
		tree[p[0]][p[1]] = append(tree[p[0]][p[1]], p[2])
	}
	var src strings.Builder
	src.WriteString("package m\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc leaf(t *testing.T) { fmt.Println(\"LEAF\", t.Name()) }\n")
	for _, top := range tops {
		fmt.Fprintf(&src, "\nfunc %s(t *testing.T) {\n", top)
		var mids []string
		for _, name := range matchNames {
			if p := strings.Split(name, "/"); p[0] == top && !slices.Contains(mids, p[1]) {
				mids = append(mids, p[1])
			}
		}
		for _, mid := range mids {
			fmt.Fprintf(&src, "\tt.Run(%q, func(t *testing.T) {\n", mid)
			for _, leaf := range tree[top][mid] {
				fmt.Fprintf(&src, "\t\tt.Run(%q, leaf)\n", leaf)
			}
			src.WriteString("\t})\n")
		}
		src.WriteString("}\n")
	}
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n\ngo 1.22\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "m_test.go"), []byte(src.String()), 0o644))
	bin := filepath.Join(dir, "m.test")
	build := exec.Command(goCmd, "test", "-c", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	for _, tt := range selectTests {
		out, err := exec.Command(bin, "-test.run="+tt.run, "-test.skip="+tt.skip).CombinedOutput()
		if err != nil {
			t.Fatalf("-run=%q -skip=%q: %v\n%s", tt.run, tt.skip, err, out)
		}
		var ran []string
		for _, line := range strings.Split(string(out), "\n") {
			if name, ok := strings.CutPrefix(line, "LEAF "); ok {
				ran = append(ran, name)
			}
		}
		if got := selected(&Config{Run: tt.run, Skip: tt.skip}); !slices.Equal(got, ran) {
			t.Errorf("Selected(-run=%q -skip=%q) = %q, go test ran %q", tt.run, tt.skip, got, ran)
		}
		if !slices.Equal(ran, tt.want) {
			t.Errorf("go test -run=%q -skip=%q ran %q, the table says %q", tt.run, tt.skip, ran, tt.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// AlsoRun adds the gate's test to a -run pattern and changes nothing else
// it selects.
func TestAlsoRun(t *testing.T) {
	for _, tt := range selectTests {
		if tt.run == "" {
			continue
		}
		p := AlsoRun(tt.run, "TestVerdict")
		c := &Config{Run: p, Skip: tt.skip}
		if got, want := selected(c), selected(&Config{Run: tt.run, Skip: tt.skip}); !slices.Equal(got, want) {
			t.Errorf("AlsoRun(%q) = %q selects %q, want %q", tt.run, p, got, want)
		}
		for _, name := range []string{"TestVerdict", "TestVerdict/1GiB"} {
			if !(&Config{Run: p}).Selected(name) {
				t.Errorf("AlsoRun(%q) = %q does not select %s", tt.run, p, name)
			}
		}
		if (&Config{Run: p}).Selected("TestVerdictX") {
			t.Errorf("AlsoRun(%q) = %q selects TestVerdictX", tt.run, p)
		}
	}
	for _, p := range []string{"", "(TestScaling", "TestScaling/[a", `TestScaling\`} {
		if got := AlsoRun(p, "TestVerdict"); got != p {
			t.Errorf("AlsoRun(%q) = %q, want it unchanged", p, got)
		}
	}
}
