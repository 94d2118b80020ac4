package report

import (
	"fmt"

	"github.com/drivequal/drivequal/acceptance/internal/report/waf"
)

func hasWAF(rows []Result) bool {
	for _, r := range rows {
		for _, w := range r.WAF {
			if w.MediaBytes != "" || w.Note != "" {
				return true
			}
		}
	}
	return false
}

// writeWAF writes summary.md's write amplification section (waf.Section).
func (s *summary) writeWAF() {
	var rows []waf.Row
	for _, st := range s.r.Steps {
		for _, w := range st.WAF {
			rows = append(rows, waf.Row{What: fmt.Sprintf("step %d: %s", st.N, st.Name), W: w})
		}
	}
	for _, res := range s.r.Results {
		for _, w := range res.WAF {
			rows = append(rows, waf.Row{What: res.Test, W: w})
		}
	}
	waf.Section(&s.b, rows)
}
