// Package browser opens a report's index.html in headless Chromium for a
// test, as a reader would, and says what the page showed and did: its
// boxes from the browser's own layout, its console errors and the
// requests it made.
package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// The viewport a page is opened in: a laptop's screen, in CSS pixels.
const ViewW, ViewH = 1280, 900

// Launch starts headless Chromium for t and its subtests (one browser for
// every page they open), as root on a closed network: no sandbox, no GPU,
// nothing fetched in the background, a fresh profile. Without chromium
// the test is skipped, saying why (failed under DRIVEQUAL_REQUIRE_LOOP=1).
func Launch(t *testing.T) context.Context {
	t.Helper()
	chromium := testenv.MustHave(t, "chromium", "apt-get install chromium")
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
		chromedp.WindowSize(ViewW, ViewH),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	b, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(b); err != nil {
		testenv.Skipf(t, "needs a headless chromium that starts: %v", err)
	}
	return b
}

// Box is an element's place on the page, in CSS pixels from the page's
// top left (at scroll 0), its text, and whether it is shown.
type Box struct {
	Text       string
	X, Y, W, H float64
	Shown      bool
}

// Visible says b is shown and takes room.
func (b Box) Visible() bool { return b.Shown && b.W > 0 && b.H > 0 }

// OnScreen says b is visible and wholly inside the first screen.
func (b Box) OnScreen() bool {
	return b.Visible() && b.X >= 0 && b.Y >= 0 && b.X+b.W <= ViewW && b.Y+b.H <= ViewH
}

// Inside says b is within o, to a pixel.
func (b Box) Inside(o Box) bool {
	return b.X >= o.X-1 && b.Y >= o.Y-1 && b.X+b.W <= o.X+o.W+1 && b.Y+b.H <= o.Y+o.H+1
}

// Overlaps says two boxes share more than a pixel each way.
func (b Box) Overlaps(o Box) bool {
	const slack = 1
	return b.X+slack < o.X+o.W && o.X+slack < b.X+b.W && b.Y+slack < o.Y+o.H && o.Y+slack < b.Y+b.H
}

// Chart is a chart drawn on the page: its file, its picture's box and
// each of its texts'.
type Chart struct {
	Name   string
	Box    Box
	Labels []Box
}

// Page is what a page showed and did.
type Page struct {
	// Decision, Reason and Next are the bottom line's; Gates the
	// verdicts' table.
	Decision, Reason, Next, Gates Box
	Charts                        []Chart
	// Errors are its console errors and warnings, uncaught exceptions and
	// the browser's log errors (a blocked load among them); Requests every
	// URL it asked for but its own.
	Errors, Requests []string
	// Screenshots are the files of its first screen and its first chart.
	Screenshots []string
	// Printed is the page's layout as printed (CSS media print).
	Printed *Page
}

// Problems are what a reader would trip on: an error, a request, a
// chart not shown (on the screen or printed), a chart's text outside its
// picture or over another.
func (p Page) Problems() []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, "console: "+e)
	}
	for _, u := range p.Requests {
		out = append(out, "the page asked for "+u)
	}
	if pr := p.Printed; pr != nil {
		if !pr.Decision.Visible() || !pr.Reason.Visible() || len(pr.Charts) != len(p.Charts) {
			out = append(out, fmt.Sprintf("printed, the page loses its bottom line or charts: %+v, %+v, %d of %d charts", pr.Decision, pr.Reason, len(pr.Charts), len(p.Charts)))
		}
		for _, c := range pr.Charts {
			if !c.Box.Visible() {
				out = append(out, fmt.Sprintf("printed, chart %s is not visible: %+v", c.Name, c.Box))
			}
		}
	}
	for _, c := range p.Charts {
		if !c.Box.Visible() {
			out = append(out, fmt.Sprintf("chart %s is not visible: %+v", c.Name, c.Box))
		}
		for i, a := range c.Labels {
			if !a.Inside(c.Box) {
				out = append(out, fmt.Sprintf("chart %s: %q %+v is not inside the chart %+v", c.Name, a.Text, a, c.Box))
			}
			for _, b := range c.Labels[i+1:] {
				if a.Overlaps(b) {
					out = append(out, fmt.Sprintf("chart %s: %q %+v overlaps %q %+v", c.Name, a.Text, a, b.Text, b))
				}
			}
		}
	}
	return out
}

// layout reads the boxes from the page.
const layout = `(() => {
  const box = el => {
    if (!el) return {Text: "", Shown: false};
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return {Text: el.textContent.trim(), X: r.x + scrollX, Y: r.y + scrollY, W: r.width, H: r.height,
      Shown: s.display !== "none" && s.visibility !== "hidden" && s.opacity !== "0"};
  };
  return {
    Decision: box(document.querySelector("#decision")),
    Reason: box(document.querySelector("#reason")),
    Next: box(document.querySelector("#next")),
    Gates: box(document.querySelector("#verdicts table")),
    Charts: [...document.querySelectorAll("figure.chart")].map(f => ({
      Name: f.dataset.chart, Box: box(f.querySelector("svg")),
      Labels: [...f.querySelectorAll("svg text")].filter(t => t.textContent.trim() !== "").map(box)})),
  };
})()`

// Open opens the file path in a new tab of b (from Launch) and reads the
// page; its screenshots go into t's artifact directory (go test
// -artifacts keeps it), their paths logged.
func Open(t *testing.T, b context.Context, path string) Page {
	t.Helper()
	var (
		mu  sync.Mutex
		got Page
	)
	url := "file://" + path
	// The listener sees every event of the tab from its start; it runs in
	// the tab's loop, so it only notes what it sees.
	ctx, cancel := chromedp.NewContext(b, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, fmt.Sprintf("%s%s", a.Value, a.Description))
				}
				got.Errors = append(got.Errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			got.Errors = append(got.Errors, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				got.Errors = append(got.Errors, fmt.Sprintf("%s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != url {
				got.Requests = append(got.Requests, ev.Request.URL)
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
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(ViewW, ViewH), chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("opening %s in chromium: %v", path, err)
	}
	boxes, err := chromedp.Run(ctx, chromedp.Evaluate[Page](layout))
	if err != nil {
		t.Fatalf("reading the layout of %s: %v", path, err)
	}
	first, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	shots := map[string][]byte{"first-screen.png": first}
	// The first chart on its own (a whole page takes seconds to shoot).
	if len(boxes.Charts) > 0 {
		chart, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("figure.chart")))
		if err != nil {
			t.Fatal(err)
		}
		shots["first-chart.png"] = chart
	}
	// As printed: the print styles keep the bottom line and every chart.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	printed, err := chromedp.Run(ctx, chromedp.Evaluate[Page](layout))
	if err != nil {
		t.Fatalf("reading the printed layout of %s: %v", path, err)
	}
	boxes.Printed = &printed
	art := t.ArtifactDir()
	for _, name := range []string{"first-screen.png", "first-chart.png"} {
		if img, ok := shots[name]; ok {
			f := filepath.Join(art, name)
			if err := os.WriteFile(f, img, 0o644); err != nil {
				t.Fatal(err)
			}
			boxes.Screenshots = append(boxes.Screenshots, f)
		}
	}
	t.Logf("screenshots: %s", strings.Join(boxes.Screenshots, ", "))
	mu.Lock()
	defer mu.Unlock()
	boxes.Errors, boxes.Requests = got.Errors, got.Requests
	return boxes
}
