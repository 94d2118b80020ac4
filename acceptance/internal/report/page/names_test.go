package page

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A workload named with punctuation ("4KB Random Read, QD256", "… 100%",
// "…+Trim", "… @QD32", "µ") still has its chart drawn: the reporter names
// the file after it, and the page draws every chart summary.md links.
func TestChartOfAPunctuatedWorkloadIsDrawn(t *testing.T) {
	for _, name := range []string{"4KB Random Read", "4KB Random Read, QD256", "4KB Random Read 100%", "4KB Random Read+Trim", "4KB Random Read @QD32", "4KiB Random Read µ"} {
		data, err := os.ReadFile("../../junit/testdata/runs/brief.json")
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.ReplaceAll(string(data), `"4KB Random Read"`, `"`+name+`"`))
		var r report.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		md := r.Summary()
		got := string(Render(&r, md, chartsOf(t, &r)))
		links := strings.Count(string(md), "](charts/")
		if figs := strings.Count(got, `<figure class="chart"`); figs != links || links == 0 {
			t.Errorf("%q: summary.md links %d charts, the page draws %d", name, links, figs)
		}
		if raw := strings.Count(got, "](charts/"); raw != 0 {
			t.Errorf("%q: %d chart links left as text", name, raw)
		}
	}
}
