package junit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// junitCheck is the repository's script that runs mikepenz/action-junit-report's
// released dist/index.js (testdata/action-junit-report) offline with node.
const junitCheck = "../../../.ci/junit-check"

// TestActionShowsWholeNames runs the action's own code on the files of
// runs with several capacities (15.36TB among them) and failing, skipped
// and passing cells, and checks what a reader of the job summary and the
// annotations sees: every cell's whole go test name, its capacity
// or drive count and its workload, never a name cut at a dot.
func TestActionShowsWholeNames(t *testing.T) {
	testenv.MustHave(t, "node", "apt-get install nodejs")
	testenv.MustHave(t, "bash", "apt-get install bash")
	dir := t.TempDir()
	for _, tc := range runCases {
		if tc.name != "onefail" && tc.name != "inconclusive" && tc.name != "mixed" && tc.name != "baseline" && tc.name != "loop24" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			r := loadRun(t, tc.file)
			file, err := filepath.Abs(filepath.Join(dir, tc.name+".xml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, marshal(t, r), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("bash", junitCheck, file).CombinedOutput()
			if err != nil {
				t.Fatalf("junit-check: %v\n%s", err, out)
			}
			titles, annotations := actionTitles(string(out))
			if len(titles) == 0 {
				t.Fatalf("no job summary rows in:\n%s", out)
			}
			seen := make(map[string]bool)
			for _, title := range titles {
				seen[title] = true
			}
			failed := make(map[string]bool)
			for _, title := range annotations {
				failed[title] = true
			}
			for _, res := range r.Results {
				// The action titles a testcase "<last dot part of classname>.<name>".
				want := strings.Replace(res.Test, "/", ".", 1)
				if !seen[want] {
					t.Errorf("%s: job summary has no row %q; rows:\n%s", res.Test, want, strings.Join(titles, "\n"))
				}
				if res.Verdict == report.Fail && !failed[want] {
					t.Errorf("%s: no failure annotation titled %q; annotations: %q", res.Test, want, annotations)
				}
				// The group ("1.92TB", "24_drives") and the workload, whole.
				el := strings.Split(res.Test, "/")
				if len(el) < 3 {
					// TestIntegrity/loop8: the class and the drive.
					continue
				}
				group, workload := el[len(el)-2], el[len(el)-1]
				if !strings.Contains(want, "."+group+"/") && !strings.Contains(want, "/"+group+"/") || !strings.HasSuffix(want, "/"+workload) {
					t.Errorf("%s: title %q lacks its group %q or workload %q whole", res.Test, want, group, workload)
				}
			}
			// The brief's largest capacity, which a cut at the last dot
			// showed as "36TB".
			if whole := "TestSingleDrive.15.36TB/4KB_Random_Read"; tc.name == "onefail" && !seen[whole] {
				t.Errorf("job summary has no row %q", whole)
			}
		})
	}
}

// actionTitles reads junit-check's output: the job summary's row titles
// and the annotations' titles.
func actionTitles(out string) (rows, annotations []string) {
	inSummary := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == "job summary:":
			inSummary = true
		case inSummary && strings.HasPrefix(l, "  ") && strings.Contains(l, " | "):
			rows = append(rows, strings.TrimSpace(strings.SplitN(l, " | ", 2)[0]))
		case strings.HasPrefix(l, "  failure: "):
			annotations = append(annotations, strings.SplitN(strings.TrimPrefix(l, "  failure: "), " | ", 2)[0])
		}
	}
	return rows, annotations
}
