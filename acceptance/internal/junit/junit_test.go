package junit

import (
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	gojunit "github.com/joshdk/go-junit"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.xml from the current output")

// reportDir is the report directory the golden files are written for: the
// default report/ at the module root, whose parent the recorded raw paths
// are relative to.
const reportDir = "report"

// A runCase is one results.json and what its JUnit must count.
type runCase struct {
	name string // testdata/golden/<name>.xml
	file string // the results.json, from this package's directory
	// Cell and verdict testcases by outcome.
	cells, cellFailures, cellSkipped int
	gates, gateFailures              int
}

// The four runs in testdata/runs are real results.json files of the suite's
// replay of the brief's fixtures (testdata/runs/README.md has the commands).
// "mixed" is the report package's golden results.json: single and scaling
// cells with drive identities, per-drive errors and latency figures.
var runCases = []runCase{
	// (a) the brief replayed as published: everything passes.
	{name: "brief", file: "testdata/runs/brief.json", cells: 48, gates: 5},
	// (b) judged against a spec ten times the brief's: every cell fails.
	{name: "allfail", file: "testdata/runs/allfail.json", cells: 48, cellFailures: 48, gates: 5, gateFailures: 5},
	// (c) a recording made with -precondition=quick: every cell inconclusive.
	{name: "inconclusive", file: "testdata/runs/quick.json", cells: 48, cellSkipped: 48, gates: 5, gateFailures: 5},
	// (d) one spec figure raised above the brief's actual: one cell fails.
	{name: "onefail", file: "testdata/runs/onefail.json", cells: 48, cellFailures: 1, gates: 5, gateFailures: 1},
	// (e) compared with the brief as a baseline (-baseline): 48 more
	// TestBaseline cells, one of them regressed, and a baseline gate.
	{name: "baseline", file: "testdata/runs/baseline.json", cells: 96, cellFailures: 2, gates: 6, gateFailures: 2},
	// (f) a live run on two loop devices whose second drive returned a
	// changed block in its verify pass: TestIntegrity fails it, its two
	// scaling cells fail unmeasured, the first drive's cells pass.
	{name: "integrity", file: "testdata/runs/integrity.json", cells: 8, cellFailures: 3, gates: 2, gateFailures: 2},
	// (g) a live run of the built-in method on 24 loop devices, replayed
	// (fixtures/loop24): 18 cells inconclusive, no drive in steady state.
	{name: "loop24", file: "testdata/runs/loop24.json", cells: 48, cellSkipped: 18, gates: 2, gateFailures: 2},
	// One fail and two inconclusive cells (one of them scaling) among passes.
	{name: "mixed", file: "../report/testdata/golden/results.json", cells: 22, cellFailures: 1, cellSkipped: 2, gates: 3, gateFailures: 2},
}

func loadRun(t *testing.T, path string) *report.Run {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

func marshal(t *testing.T, r *report.Run) []byte {
	t.Helper()
	got, err := Marshal(r, reportDir)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return got
}

func TestGolden(t *testing.T) {
	for _, tc := range runCases {
		t.Run(tc.name, func(t *testing.T) {
			got := marshal(t, loadRun(t, tc.file))
			golden := filepath.Join("testdata", "golden", tc.name+".xml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Marshal(%s) differs from %s (-want +got):\n%s", tc.file, golden, diff)
			}
		})
	}
}

// TestCounts reads each file back with a JUnit parser that CI tools use
// (joshdk/go-junit) and checks what a reader of the report would count.
func TestCounts(t *testing.T) {
	for _, tc := range runCases {
		t.Run(tc.name, func(t *testing.T) {
			r := loadRun(t, tc.file)
			suites, err := gojunit.Ingest(marshal(t, r))
			if err != nil {
				t.Fatalf("go-junit: %v", err)
			}
			if len(suites) != 1 {
				t.Fatalf("go-junit read %d suites, want 1", len(suites))
			}
			s := suites[0]
			wantTests := tc.cells + tc.gates
			wantFailed := tc.cellFailures + tc.gateFailures
			tot := s.Totals
			if tot.Tests != wantTests || tot.Failed != wantFailed || tot.Skipped != tc.cellSkipped || tot.Error != 0 {
				t.Errorf("totals = %d tests, %d failed, %d skipped, %d errors; want %d, %d, %d, 0",
					tot.Tests, tot.Failed, tot.Skipped, tot.Error, wantTests, wantFailed, tc.cellSkipped)
			}
			if want := wantTests - wantFailed - tc.cellSkipped; tot.Passed != want {
				t.Errorf("passed = %d, want %d", tot.Passed, want)
			}

			var cellFail, cellSkip, gateFail, gates int
			for _, c := range s.Tests {
				if c.Classname == VerdictClass {
					gates++
					if c.Status == gojunit.StatusFailed {
						gateFail++
						if !strings.HasPrefix(c.Message, report.NotQualified+": ") && !strings.HasPrefix(c.Message, report.CapacityInconclusive+": ") {
							t.Errorf("Verdict/%s message = %q, want NOT QUALIFIED: or INCONCLUSIVE: first", c.Name, c.Message)
						}
					}
					continue
				}
				switch c.Status {
				case gojunit.StatusFailed:
					cellFail++
				case gojunit.StatusSkipped:
					cellSkip++
				}
			}
			if cellFail != tc.cellFailures || cellSkip != tc.cellSkipped || gates != tc.gates || gateFail != tc.gateFailures {
				t.Errorf("cells: %d failed, %d skipped; verdicts: %d of %d failed; want %d, %d; %d of %d",
					cellFail, cellSkip, gateFail, gates, tc.cellFailures, tc.cellSkipped, tc.gateFailures, tc.gates)
			}

			// Every testcase is a cell of results.json or a gate, once each,
			// and a cell's message is its verdict row.
			byTest := make(map[string]report.Result)
			for _, res := range r.Results {
				byTest[res.Test] = res
			}
			seen := make(map[string]bool)
			for _, c := range s.Tests {
				full := c.Classname + "/" + c.Name
				if seen[full] {
					t.Errorf("testcase %s appears twice", full)
				}
				seen[full] = true
				if c.Classname == VerdictClass {
					continue
				}
				res, ok := byTest[full]
				if !ok {
					t.Errorf("testcase %s is not a result", full)
					continue
				}
				// A message is the verdict row and what fits of the rest
				// in MaxMessage characters; the whole text is the failure's
				// body and system-out's "error:" line.
				if n := utf8.RuneCountInString(c.Message); n > MaxMessage {
					t.Errorf("%s: message of %d characters, want at most %d: %q", full, n, MaxMessage, c.Message)
				}
				switch c.Status {
				case gojunit.StatusFailed:
					if c.Message != Short(res.Error) || !strings.HasPrefix(res.Error, strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(c.Message, more), cut), " …")) {
						t.Errorf("%s: failure message = %q, want the start of the verdict row %q", full, c.Message, res.Error)
					}
					var body string
					if c.Error != nil {
						body = c.Error.Error()
					}
					if !strings.Contains(string(marshal(t, r)), ">"+xmlEscape(res.Error)+"</failure>") {
						t.Errorf("%s: the failure's body is not the whole verdict row %q (got error %q)", full, res.Error, body)
					}
				case gojunit.StatusSkipped:
					if want := InconclusivePrefix + res.Error; c.Message != Short(want) {
						t.Errorf("%s: skipped message = %q, want %q", full, c.Message, Short(want))
					}
				}
				if res.Error != "" && !strings.Contains(c.SystemOut, "error: "+strings.ReplaceAll(res.Error, "\n", "\n  ")+"\n") {
					t.Errorf("%s: system-out lacks the whole error %q", full, res.Error)
				}
				if !strings.Contains(c.SystemOut, "verdict: "+res.Verdict+"\n") {
					t.Errorf("%s: system-out lacks %q:\n%s", full, "verdict: "+res.Verdict, c.SystemOut)
				}
			}
			if len(seen) != len(r.Results)+len(r.Gates()) {
				t.Errorf("%d testcases, want %d results + %d gates", len(seen), len(r.Results), len(r.Gates()))
			}
		})
	}
}

// TestInconclusiveHasNoPass is the case that must never look green: with
// every cell inconclusive, no testcase at all passes.
func TestInconclusiveHasNoPass(t *testing.T) {
	suites, err := gojunit.Ingest(marshal(t, loadRun(t, "testdata/runs/quick.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range suites[0].Tests {
		if c.Status == gojunit.StatusPassed {
			t.Errorf("%s/%s passed in an all-inconclusive run", c.Classname, c.Name)
		}
		if c.Classname != VerdictClass && !strings.HasPrefix(c.Message, InconclusivePrefix) {
			t.Errorf("%s/%s: message %q does not start with %q", c.Classname, c.Name, c.Message, InconclusivePrefix)
		}
	}
}

// schemas are the strict consumers the file must satisfy; testdata/schema's
// README says where each comes from.
var schemas = []string{
	"testdata/schema/junit-10.xsd",             // Jenkins xunit plugin
	"testdata/schema/surefire-test-report.xsd", // Maven Surefire
}

func TestSchemas(t *testing.T) {
	xmllint := testenv.MustHave(t, "xmllint", "apt-get install libxml2-utils")
	dir := t.TempDir()
	for _, tc := range append(runCases, runCase{name: "escaping"}) {
		var r *report.Run
		if tc.file == "" {
			r = escapingRun()
		} else {
			r = loadRun(t, tc.file)
		}
		file := filepath.Join(dir, tc.name+".xml")
		if err := os.WriteFile(file, marshal(t, r), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, xsd := range schemas {
			out, err := exec.Command(xmllint, "--noout", "--schema", xsd, file).CombinedOutput()
			if err != nil {
				t.Errorf("%s against %s: %v\n%s", tc.name, filepath.Base(xsd), err, out)
			}
		}
	}
}

// escapingRun has text XML cannot carry as is: markup, a CDATA end, quotes,
// newlines, an escape sequence from a terminal, a NUL and invalid UTF-8.
func escapingRun() *report.Run {
	return &report.Run{
		Spec: `A<B>&"C"`, Mode: "live", FioVersion: "fio-3.33", Precondition: "full",
		Capacities: []string{"1.92TB"},
		Drives:     []report.Drive{{Path: "/dev/nvme0n1", Model: "M\x1b[1mX", Serial: "0012345678", Firmware: "2.10", Capacity: "1.92TB"}},
		Results: []report.Result{
			{Test: "TestSingleDrive/1.92TB/4KB_Random_Read", Kind: report.KindSingle, Capacity: "1.92TB", Workload: "4KB Random Read",
				Drives: 1, Metric: "iops", Spec: 100, Expected: 100, Actual: 50, Ratio: 0.5, Verdict: report.Fail, Cause: report.CauseFioFailed,
				Error: "fio: <bad> & \"worse\" ]]> line1\nline2\r\nnul\x00 esc\x1b[0m bad\xff utf8 \ufffe"},
			{Test: "TestSingleDrive/1.92TB/4KB_Random_Write", Kind: report.KindSingle, Capacity: "1.92TB", Workload: "4KB Random Write",
				Drives: 1, Metric: "iops", Verdict: report.Inconclusive, Error: "drive said \x07 <no>"},
		},
	}
}

func TestEscaping(t *testing.T) {
	data := marshal(t, escapingRun())
	// encoding/xml must read it back, and so must go-junit.
	var v struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			Out string `xml:"system-out"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(data, &v); err != nil {
		t.Fatalf("xml.Unmarshal: %v\n%s", err, data)
	}
	if _, err := gojunit.Ingest(data); err != nil {
		t.Fatalf("go-junit: %v", err)
	}
	f := v.Cases[0].Failure
	if f == nil {
		t.Fatalf("first testcase has no failure:\n%s", data)
	}
	want := "fio: <bad> & \"worse\" ]]> line1\nline2\r\nnul\\x00 esc\\x1b[0m bad\\xff utf8 \\ufffe"
	if f.Message != want || f.Body != want {
		t.Errorf("failure message = %q, body = %q; want both %q", f.Message, f.Body, want)
	}
	if f.Type != report.CauseFioFailed {
		t.Errorf("failure type = %q, want %q", f.Type, report.CauseFioFailed)
	}
	if s := v.Cases[1].Skipped; s == nil || s.Message != `INCONCLUSIVE: drive said \x07 <no>` {
		t.Errorf("skipped = %+v, want message %q", s, `INCONCLUSIVE: drive said \x07 <no>`)
	}
	// Serial and firmware are text: leading zeros and trailing zeros stay.
	for _, l := range []string{"serial: 0012345678\n", "firmware: 2.10\n", "model: M\\x1b[1mX\n"} {
		if !strings.Contains(v.Cases[0].Out, l) {
			t.Errorf("system-out lacks %q:\n%s", l, v.Cases[0].Out)
		}
	}
}

// A rawPathTest is rawPath(raw, dir) = want.
type rawPathTest struct {
	raw, dir, want string
}

var rawPathTests = []rawPathTest{
	{"", "report", ""},
	// Relative to the report directory's parent, as results.json has it.
	{"report/raw/TestSingleDrive/1.92TB/4KB_Random_Read.json", "report", "raw/TestSingleDrive/1.92TB/4KB_Random_Read.json"},
	{"fixtures/x/TestScaling/24_drives/a.json", "report", "../fixtures/x/TestScaling/24_drives/a.json"},
	{"out/raw/a.json", "/srv/run/out", "raw/a.json"},
	// Absolute.
	{"/srv/run/out/raw/a.json", "/srv/run/out", "raw/a.json"},
	{"/srv/fixtures/a.json", "/srv/run/out", "../../fixtures/a.json"},
}

func TestRawPath(t *testing.T) {
	for _, tt := range rawPathTests {
		if got := rawPath(tt.raw, tt.dir); got != tt.want {
			t.Errorf("rawPath(%q, %q) = %q, want %q", tt.raw, tt.dir, got, tt.want)
		}
	}
	// Absolute raw, relative report directory: relative to the working
	// directory's report/.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rawPath(filepath.Join(wd, "report", "raw", "a.json"), "report"), "raw/a.json"; got != want {
		t.Errorf("rawPath(<wd>/report/raw/a.json, report) = %q, want %q", got, want)
	}
}

// A splitTest is split(test) = class, name.
type splitTest struct {
	test, class, name string
}

var splitTests = []splitTest{
	{"TestSingleDrive/1.92TB/4KB_Random_Read", "TestSingleDrive", "1.92TB/4KB_Random_Read"},
	{"TestScaling/24_drives/128KB_Sequential_Write", "TestScaling", "24_drives/128KB_Sequential_Write"},
	{"TestFleet/1.92TB/4KB_Random_Read", "TestFleet", "1.92TB/4KB_Random_Read"},
	{"TestSingleDrive/host-b/15.36TB/4KB_Random_Read", "TestSingleDrive", "host-b/15.36TB/4KB_Random_Read"},
	{"Verdict/15.36TB", "Verdict", "15.36TB"},
	{"TestHealth", "TestHealth", "TestHealth"},
}

func TestSplit(t *testing.T) {
	for _, tt := range splitTests {
		if class, name := split(tt.test); class != tt.class || name != tt.name {
			t.Errorf("split(%q) = %q, %q, want %q, %q", tt.test, class, name, tt.class, tt.name)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	r := loadRun(t, "testdata/runs/onefail.json")
	if err := Write(dir, r); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Marshal(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Write wrote (-Marshal +file):\n%s", diff)
	}
	// Nothing but the file is left in the directory.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("report directory holds %v, want only %s", names, File)
	}
}

// A run with no result yet is still a valid file: the gate-less run has
// no testcase, and says nothing was judged in its properties.
func TestEmptyRun(t *testing.T) {
	data := marshal(t, &report.Run{Spec: "X"})
	suites, err := gojunit.Ingest(data)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(suites[0].Tests); n != 0 {
		t.Errorf("empty run has %d testcases, want 0", n)
	}
	if !strings.Contains(string(data), `tests="0" failures="0" errors="0" skipped="0"`) {
		t.Errorf("empty run lacks zero counts:\n%s", data)
	}
}

// xmlEscape is s as encoding/xml writes element text.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return strings.ReplaceAll(b.String(), "&#xA;", "\n")
}

// At 24 drives no message runs past MaxMessage characters, every one
// starts with its verdict row, and a reason all 24 drives share is said
// once, with the drives in short, in each cell's message and body.
func TestTwentyFourDrives(t *testing.T) {
	r := loadRun(t, "testdata/runs/loop24.json")
	suites, err := gojunit.Ingest(marshal(t, r))
	if err != nil {
		t.Fatal(err)
	}
	var shared int
	for _, c := range suites[0].Tests {
		if c.Status != gojunit.StatusFailed && c.Status != gojunit.StatusSkipped {
			continue
		}
		if n := utf8.RuneCountInString(c.Message); n > MaxMessage {
			t.Errorf("%s/%s: message of %d characters: %q", c.Classname, c.Name, n, c.Message)
		}
		if strings.HasPrefix(c.Name, "24_drives/") {
			workload := strings.ReplaceAll(strings.TrimPrefix(c.Name, "24_drives/"), "_", " ")
			workload = strings.Replace(workload, "70-30", "70/30", 1)
			if !strings.HasPrefix(c.Message, InconclusivePrefix+workload+" on 24 drives: ") {
				t.Errorf("%s/%s: message does not start with its verdict row: %q", c.Classname, c.Name, c.Message)
			}
			// The drives whose records say they missed steady state.
			var missed, step int
			for _, res := range r.Results {
				if res.Test == c.Classname+"/"+c.Name {
					for _, st := range res.Steady {
						if !st.Attained {
							missed++
							step = st.Step
						}
					}
				}
			}
			// The message says why it is inconclusive, not only the row.
			if why := fmt.Sprintf("; %d of 24 drives did not reach steady state in step %d (", missed, step); !strings.Contains(c.Message, why) {
				t.Errorf("%s/%s: message does not say why it is inconclusive (%q): %q", c.Classname, c.Name, why, c.Message)
			}
			errLine := ""
			for _, l := range strings.Split(c.SystemOut, "\n") {
				if strings.HasPrefix(l, "error: ") {
					errLine = l
				}
			}
			if want := fmt.Sprintf("%d of 24 drives did not reach steady state", missed); missed < 2 ||
				strings.Count(errLine, "did not reach steady state") != 1 || !strings.Contains(errLine, want) {
				t.Errorf("%s/%s: the reason %d drives share is not said once (%q):\n%s", c.Classname, c.Name, missed, want, errLine)
			}
			if missed == 24 && !strings.Contains(errLine, ": loop0–loop23; ") {
				t.Errorf("%s/%s: the 24 drives are not named in short: %s", c.Classname, c.Name, errLine)
			}
			shared++
		}
	}
	if shared != 6 {
		t.Errorf("%d inconclusive 24-drive cells, want the 6 random ones", shared)
	}
}
