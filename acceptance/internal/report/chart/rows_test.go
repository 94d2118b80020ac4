package chart

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rowText is one text of a rendered chart: where it starts and what it says.
type rowText struct {
	x, y float64
	s    string
}

var textRE = regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)"[^>]*>([^<]*)</text>`)

func svgTexts(t *testing.T, svg []byte) []rowText {
	t.Helper()
	var out []rowText
	for _, m := range textRE.FindAllStringSubmatch(string(svg), -1) {
		x, err1 := strconv.ParseFloat(m[1], 64)
		y, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("text %q: position %s, %s", m[3], m[1], m[2])
		}
		out = append(out, rowText{x, y, html.UnescapeString(m[3])})
	}
	return out
}

// The lot chart says each lot's verdict on its row and counts them in
// its title, and its legend stands right of the data, past the x axis's
// last tick, where no figure is drawn: one lot's dots lie at the left
// edge, where the legend used to sit over them.
func TestLotChartVerdictsAndLegendOffTheData(t *testing.T) {
	rows := []LotRow{
		{Capacity: "1.92TB", Workload: "4KB Random Read", PassLine: 100, Bound: 104, Judged: true, Accepted: true, Verdict: "accepted",
			Figures: []LotDot{{Value: 103, Pass: true}, {Value: 108, Pass: true}}},
		{Capacity: "1.92TB", Workload: "4KB Random Write", PassLine: 100, Bound: 20, Judged: true, Verdict: "rejected",
			Figures: []LotDot{{Value: 40}, {Value: 120, Pass: true}}},
		{Capacity: "1.92TB", Workload: "8KB Random Read", PassLine: 100, Verdict: "inconclusive"},
	}
	svg, err := Lot(rows)
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg)
	has := func(s string) bool {
		for _, x := range texts {
			if x.s == s {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"4KB Random Read: ACCEPTED", "4KB Random Write: REJECTED", "8KB Random Read: INCONCLUSIVE",
		"lot: 1 accepted, 1 rejected, 1 inconclusive"} {
		if !has(want) {
			t.Errorf("lot chart lacks the text %q; texts: %v", want, texts)
		}
	}
	// The x axis's tick labels share the lowest line of numbers.
	right := 0.0
	tickY := 0.0
	for _, x := range texts {
		if _, err := strconv.ParseFloat(strings.TrimSpace(x.s), 64); err == nil && x.y < tickY {
			tickY = x.y
		}
	}
	for _, x := range texts {
		if _, err := strconv.ParseFloat(strings.TrimSpace(x.s), 64); err == nil && x.y == tickY {
			right = max(right, x.x)
		}
	}
	if right == 0 {
		t.Fatalf("no x tick labels in %v", texts)
	}
	for _, leg := range []string{"drive", "drive below the pass line", "tolerance bound (black: accepted)", "pass line"} {
		found := false
		for _, x := range texts {
			if x.s == leg {
				found = true
				if x.x <= right {
					t.Errorf("legend entry %q at x %.1f, within the data (last x tick at %.1f)", leg, x.x, right)
				}
			}
		}
		if !found {
			t.Errorf("legend entry %q missing", leg)
		}
	}
}
