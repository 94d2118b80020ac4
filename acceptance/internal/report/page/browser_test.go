package page_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/browser"
	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/outfiles"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
)

// runs holds the results.json files of the suite's runs the junit
// package is tested on; its README gives the command of each.
const runs = "../../junit/testdata/runs/"

// TestPageInChromium opens index.html in headless Chromium, one browser
// for every case, as a reader would: the report of a run the suite wrote
// (testdata/README.md says which), written by Run.Write and page.Write as
// the reporter writes them. Each page loads with no console error and no
// request but for itself; its bottom line and verdicts are in the first
// screen and every chart summary.md links is visible, its texts inside
// it and none over another (from the browser's own layout); screenshots
// of the first screen and the first chart are kept in the test's
// artifact directory (go test -artifacts keeps it).
func TestPageInChromium(t *testing.T) {
	b := browser.Launch(t)
	for _, tc := range []struct {
		name, run string
		decision  string
		// first are the texts the bottom line and verdicts show.
		first []string
	}{
		// The brief's replay: QUALIFIED and the four capacities.
		{"brief", runs + "brief.json", report.Qualified, []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB", "scaling"}},
		// One cell below spec: why is said without scrolling.
		{"not-qualified", "testdata/onefail.json", report.NotQualified, []string{"1.92TB", "4KB Random Read", "slower than the vendor's published figures"}},
		// 24 loop devices, scaling at 1 and 24 drives.
		{"24-drives", runs + "loop24.json", report.CapacityInconclusive, []string{"256MiB", "scaling", "had not settled"}},
		// Made up for the layout alone: a scaling run at every drive
		// count from 1 to 24, 25 ticks and points on each chart.
		{"every-count", "", report.Qualified, []string{"scaling"}},
		// The attack: the one-cell failure judged by a spec whose model
		// links a chart out of the report whose <style> hid the bottom
		// line and wrote QUALIFIED over the page.
		{"hostile-spec", "hostile:testdata/onefail.json", report.NotQualified, []string{"1.92TB", "slower than the vendor's published figures"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeReport(t, tc.run)
			got := browser.Open(t, b, filepath.Join(dir, page.File))
			for _, p := range got.Problems() {
				t.Error(p)
			}
			if got.Decision.Text != tc.decision || !got.Decision.OnScreen() {
				t.Errorf("decision %+v, want %q in the first screen", got.Decision, tc.decision)
			}
			if !got.Reason.OnScreen() || !got.Next.OnScreen() || !got.Gates.OnScreen() {
				t.Errorf("the reason (%+v), the next step (%+v) or the verdicts (%+v) are not in the first screen", got.Reason, got.Next, got.Gates)
			}
			for _, want := range tc.first {
				if !strings.Contains(got.Reason.Text+got.Gates.Text, want) {
					t.Errorf("the bottom line and verdicts do not say %q: %s / %s", want, got.Reason.Text, got.Gates.Text)
				}
			}
			summary, err := os.ReadFile(filepath.Join(dir, report.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			if linked := len(chartLines.FindAllString(string(summary), -1)); len(got.Charts) != linked || linked == 0 {
				t.Errorf("%d charts drawn, summary.md links %d", len(got.Charts), linked)
			}
			for _, c := range got.Charts {
				if len(c.Labels) < 5 {
					t.Errorf("chart %s has %d texts: %+v", c.Name, len(c.Labels), c.Labels)
				}
			}
		})
	}
}

// chartLines are summary.md's lines that are a chart's link alone, as
// the reporter writes them: the charts the page draws.
var chartLines = regexp.MustCompile(`(?m)^(Chart: )?!?\[.*\]\(` + outfiles.ChartName + `\)$`)

// writeReport writes a run's report, index.html included, as the
// reporter does, from the results.json the suite wrote; "hostile:NAME"
// is NAME judged by a spec whose model and source carry the attack.
func writeReport(t *testing.T, name string) string {
	t.Helper()
	var r report.Run
	name, hostile := strings.CutPrefix(name, "hostile:")
	if name == "" {
		r = everyCount()
	} else {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
	}
	if hostile {
		evil := filepath.Join(t.TempDir(), "evil.svg")
		svg := `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><style>header.bottom,#verdicts{display:none!important} body::before{content:"QUALIFIED — all drives met the vendor's figures"}</style><a href="https://evil.example/steal"><text y="9">x</text></a></svg>`
		if err := os.WriteFile(evil, []byte(svg), 0o644); err != nil {
			t.Fatal(err)
		}
		climb := "charts/" + strings.Repeat("../", 12) + strings.TrimPrefix(evil, "/")
		r.Spec = "Loop ![c](" + climb + ") **QUALIFIED** [z](https://evil.example/) \u202eevil"
		r.Source = "src ![c](" + climb + ")"
		r.JudgedBy = &report.SpecRef{Model: r.Spec, File: "evil.toml", SHA256: "00"}
	}
	dir := filepath.Join(t.ArtifactDir(), "report")
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	if err := page.Write(dir, &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("page: %s", filepath.Join(dir, page.File))
	return dir
}

// everyCount is a made-up run for the charts' layout: two workloads
// scaled at every drive count from 1 to 24, a little below linear.
func everyCount() report.Run {
	r := report.Run{Spec: "Layout check", Mode: "replay", Precondition: "full",
		Scaling: &report.Scaling{Capacity: "1.92TB", Baseline: "spec", Tolerance: 0.1}}
	for _, w := range []struct {
		name, metric string
		spec         float64
	}{{"4KB Random Read", "iops", 2.35e6}, {"128KB Sequential Read", "MBps", 14500}} {
		for n := 1; n <= 24; n++ {
			exp := float64(n) * w.spec
			act := exp * (1 - 0.003*float64(n))
			r.Results = append(r.Results, report.Result{Test: fmt.Sprintf("TestScaling/%d_drives/%s", n, w.name), Kind: report.KindScaling,
				Capacity: "1.92TB", Workload: w.name, Drives: n, Metric: w.metric, Spec: w.spec, Expected: exp, Actual: act,
				Ratio: act / exp, Tolerance: 0.1, Verdict: report.Pass})
		}
	}
	return r
}
