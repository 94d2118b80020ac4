package report

import (
	"fmt"
	"strings"
)

// ChartLink is a chart summary.md links: its title, and its file
// relative to the report directory.
type ChartLink struct{ Title, File string }

// writeOverTime lists the charts over time and of latency (package
// overtime), each as an image link, and says how many cells have no
// per-second log to draw over time.
func (s *summary) writeOverTime() {
	r := s.r
	if len(r.OverTime) == 0 && r.OverTimeMissing == 0 {
		return
	}
	b := &s.b
	b.WriteString("## Over time and latency\n\n")
	if n := r.OverTimeMissing; n > 0 {
		fmt.Fprintf(b, "Charts over time absent for %d %s: the recording holds no per-second log of %s (recorded before drivequal kept them, or fio wrote none).\n\n",
			n, plural(n, "cell", "cells"), plural(n, "it", "them"))
	}
	for _, l := range r.OverTime {
		fmt.Fprintf(b, "![%s](%s)\n\n", strings.NewReplacer("[", "(", "]", ")").Replace(l.Title), l.File)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
