package page_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/page"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// runs holds the results.json files of the suite's runs the junit
// package is tested on; its README gives the command of each.
const runs = "../../junit/testdata/runs/"

// The viewport the page is checked at: a laptop's screen.
const viewW, viewH = 1280, 900

// TestPageInChromium opens index.html in headless Chromium, one browser
// for every case, as a reader would: the report of a run the suite
// wrote (testdata/README.md gives the command of each), written by Run.Write and page.Write as the reporter
// writes them. Each page loads with no console error and no request but
// for itself; its bottom line, its verdicts and every chart are visible;
// no two labels of a chart overlap (from the browser's own layout);
// and screenshots of the first screen and of the first chart are kept
// in the test's artifact directory (go test -artifacts keeps it).
func TestPageInChromium(t *testing.T) {
	chromium := testenv.MustHave(t, "chromium", "apt-get install chromium")
	browser := launch(t, chromium)
	for _, tc := range []struct {
		name, run string
		decision  string
		// first are the texts the first screen shows.
		first []string
	}{
		// The brief's replay: QUALIFIED and the four capacities.
		{"brief", runs + "brief.json", report.Qualified, []string{"1.92TB", "3.84TB", "7.68TB", "15.36TB", "scaling"}},
		// One cell below spec: why is said without scrolling.
		{"not-qualified", "testdata/onefail.json", report.NotQualified, []string{"1.92TB", "4KB Random Read", "slower than the vendor's published figures"}},
		// 24 loop devices, scaling at 1 and 24 drives.
		{"24-drives", runs + "loop24.json", report.CapacityInconclusive, []string{"256MiB", "scaling"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeReport(t, tc.run)
			got := visit(t, browser, filepath.Join(dir, page.File))
			for _, e := range got.errors {
				t.Errorf("console: %s", e)
			}
			for _, u := range got.requests {
				t.Errorf("the page asked for %s", u)
			}
			if got.decision.Text != tc.decision || !got.decision.onScreen() {
				t.Errorf("decision %+v, want %q in the first screen", got.decision, tc.decision)
			}
			if !got.reason.onScreen() || !got.next.onScreen() {
				t.Errorf("the reason (%+v) or the next step (%+v) is not in the first screen", got.reason, got.next)
			}
			for _, want := range tc.first {
				if !strings.Contains(got.reason.Text+got.gates, want) {
					t.Errorf("the bottom line and verdicts do not name %q: %s / %s", want, got.reason.Text, got.gates)
				}
			}
			if !got.gatesBox.onScreen() {
				t.Errorf("the verdicts (%+v) are not in the first screen", got.gatesBox)
			}
			if len(got.charts) != got.linked || got.linked == 0 {
				t.Errorf("%d charts drawn, summary.md links %d", len(got.charts), got.linked)
			}
			for _, c := range got.charts {
				if !c.Box.visible() {
					t.Errorf("chart %s is not visible: %+v", c.Name, c.Box)
				}
				if len(c.Labels) < 5 {
					t.Errorf("chart %s has %d labels", c.Name, len(c.Labels))
				}
				for i, a := range c.Labels {
					if !a.inside(c.Box) {
						t.Errorf("chart %s: %q %+v is not inside the chart %+v", c.Name, a.Text, a, c.Box)
					}
					for _, b := range c.Labels[i+1:] {
						if a.overlaps(b) {
							t.Errorf("chart %s: %q %+v overlaps %q %+v", c.Name, a.Text, a, b.Text, b)
						}
					}
				}
			}
		})
	}
}

// box is an element's place on the page, in CSS pixels from the page's
// top left (at scroll 0), and whether it is shown.
type box struct {
	Text       string
	X, Y, W, H float64
	Shown      bool
}

func (b box) visible() bool { return b.Shown && b.W > 0 && b.H > 0 }

// onScreen says b is visible and wholly inside the first screen.
func (b box) onScreen() bool {
	return b.visible() && b.X >= 0 && b.Y >= 0 && b.X+b.W <= viewW && b.Y+b.H <= viewH
}

// inside says b is within o, to a pixel.
func (b box) inside(o box) bool {
	return b.X >= o.X-1 && b.Y >= o.Y-1 && b.X+b.W <= o.X+o.W+1 && b.Y+b.H <= o.Y+o.H+1
}

// overlaps says two labels share more than a pixel each way.
func (b box) overlaps(o box) bool {
	const slack = 1
	return b.X+slack < o.X+o.W && o.X+slack < b.X+b.W && b.Y+slack < o.Y+o.H && o.Y+slack < b.Y+b.H
}

type chartBoxes struct {
	Name   string
	Box    box
	Labels []box
}

// seen is what a page showed and did.
type seen struct {
	decision, reason, next, gatesBox box
	gates                            string
	charts                           []chartBoxes
	linked                           int
	errors, requests                 []string
}

// layout reads the boxes the checks need from the page.
const layout = `(() => {
  const box = el => {
    if (!el) return {Text: "", Shown: false};
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return {Text: el.textContent.trim(), X: r.x + scrollX, Y: r.y + scrollY, W: r.width, H: r.height,
      Shown: s.display !== "none" && s.visibility !== "hidden" && s.opacity !== "0"};
  };
  const gates = document.querySelector("#verdicts table");
  return {
    decision: box(document.querySelector("#decision")),
    reason: box(document.querySelector("#reason")),
    next: box(document.querySelector("#next")),
    gates: box(gates),
    charts: [...document.querySelectorAll("figure.chart")].map(f => ({
      Name: f.dataset.chart, Box: box(f.querySelector("svg")),
      Labels: [...f.querySelectorAll("svg text")].filter(t => t.textContent.trim() !== "").map(box)})),
  };
})()`

var launchOnce sync.Mutex

// launch starts headless Chromium for the test's cases, as root on a
// closed network: no sandbox, no GPU, nothing fetched in the background,
// a fresh profile.
func launch(t *testing.T, chromium string) context.Context {
	t.Helper()
	launchOnce.Lock()
	defer launchOnce.Unlock()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(viewW, viewH),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		testenv.Skipf(t, "needs a headless chromium that starts: %v", err)
	}
	return browser
}

// visit opens path in a new tab of browser, reads its layout and keeps
// its screenshots.
func visit(t *testing.T, browser context.Context, path string) seen {
	t.Helper()
	var (
		mu  sync.Mutex
		got seen
	)
	url := "file://" + path
	// The listener sees every event of the tab from its start; it runs in
	// the tab's loop, so it only notes what it sees.
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, fmt.Sprintf("%s%s", a.Value, a.Description))
				}
				got.errors = append(got.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			got.errors = append(got.errors, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				got.errors = append(got.errors, fmt.Sprintf("%s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != url {
				got.requests = append(got.requests, ev.Request.URL)
			}
		}
	}))
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewW, viewH), chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("opening %s in chromium: %v", path, err)
	}
	type layoutOf struct {
		Decision, Reason, Next, Gates box
		Charts                        []chartBoxes
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[layoutOf](layout))
	if err != nil {
		t.Fatalf("reading the layout of %s: %v", path, err)
	}
	first, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	// The first chart on its own (a whole page takes seconds to shoot).
	chart, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("figure.chart")))
	if err != nil {
		t.Fatal(err)
	}
	art := t.ArtifactDir()
	for name, img := range map[string][]byte{"first-screen.png": first, "first-chart.png": chart} {
		if err := os.WriteFile(filepath.Join(art, name), img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots: %s, %s", filepath.Join(art, "first-screen.png"), filepath.Join(art, "first-chart.png"))
	summary, err := os.ReadFile(filepath.Join(filepath.Dir(path), report.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got.decision, got.reason, got.next, got.gatesBox = raw.Decision, raw.Reason, raw.Next, raw.Gates
	got.gates, got.charts = raw.Gates.Text, raw.Charts
	got.linked = strings.Count(string(summary), ".svg)")
	return got
}

// writeReport writes a run's report, index.html included, as the
// reporter does, from the results.json the suite wrote.
func writeReport(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
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
