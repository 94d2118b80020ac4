package junit

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	gojunit "github.com/joshdk/go-junit"

	"github.com/drivequal/drivequal/acceptance/internal/report"
)

// A message is at most MaxMessage characters as the consumer reads it:
// characters XML cannot carry are written as visible escapes ("\x1b",
// four characters for one), so the cut counts them as written.
func TestShortCountsEscapes(t *testing.T) {
	// fio's stderr, colored: 20 ESC characters in 290.
	row := "4KB Random Write: fio: " + strings.Repeat("\x1b[0m error ", 20)
	row += strings.Repeat("x", 290-utf8.RuneCountInString(row))
	r := &report.Run{Results: []report.Result{{Test: "TestSingleDrive/1.92TB/4KB_Random_Write", Workload: "4KB Random Write",
		Verdict: report.Fail, Error: row}}}
	suites, err := gojunit.Ingest(marshal(t, r))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range suites[0].Tests {
		if c.Classname != "TestSingleDrive" {
			continue
		}
		if n := utf8.RuneCountInString(c.Message); n > MaxMessage {
			t.Errorf("message of %d characters, want at most %d: %q", n, MaxMessage, c.Message)
		}
		if !strings.HasPrefix(c.Message, `4KB Random Write: fio: \x1b[0m error`) {
			t.Errorf("message does not start with the escaped verdict row: %q", c.Message)
		}
	}
}

// A cut falls between two words: no number is cut ("1,23…" for
// 1,234,567), and a clause that does not fit whole is shown as far as it
// fits, so the cause after the verdict row is not dropped for want of
// room.
func TestShortCutsBetweenWords(t *testing.T) {
	row := "8KB Random Write on 24 drives: total 25,035 IOPS >= expected 24 IOPS (104314.17 % of expected, tolerance 10 %, spread 103.1 %)"
	cause := "23 of 24 drives did not reach steady state in step 15 (8KB Random Write) within 20s: window means 1,737–3,270 IOPS, " +
		"ranges 30.9–160.7 % (limit 20 %), excursions 4.2–128.1 % (limit 10 %): loop0–loop8, loop10–loop23"
	long := strings.Repeat("drive /dev/nvme12n1 at 1,234,567 IOPS, ", 12)
	for _, tt := range []struct {
		msg, want string
	}{
		{row + "; " + cause + "; the figure proves nothing: raise random_runtime (or topup_runtime) and rerun",
			row + "; 23 of 24 drives did not reach steady state in step 15 (8KB Random Write) within 20s: window means 1,737–3,270 IOPS" + cut},
		// A verdict row too long alone: cut after a whole figure.
		{"8KB Random Read on 24 drives: " + long, ""},
		// A verdict row that fits, with no room for more.
		{strings.Repeat("a ", 145) + "row; " + cause, strings.Repeat("a ", 145) + "row …"},
	} {
		got := Short(tt.msg)
		if n := utf8.RuneCountInString(got); n > MaxMessage {
			t.Errorf("Short: %d characters: %q", n, got)
		}
		if tt.want != "" && got != tt.want {
			t.Errorf("Short =\n%q, want\n%q", got, tt.want)
		}
		head := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(got, cut), more), " …")
		if !strings.HasPrefix(tt.msg, head) || len(head) == len(got) {
			t.Errorf("Short = %q: not the start of the message and a mark that it was cut", got)
			continue
		}
		if next := tt.msg[len(head):]; next != "" && !strings.HasPrefix(next, " ") && !strings.HasPrefix(next, ",") && !strings.HasPrefix(next, ";") {
			t.Errorf("Short cuts inside a word or number: %q|%q", got, next[:min(len(next), 20)])
		}
	}
}

// A message names the lowest of several drives below the median; each
// of them is in its cell's system-out, as results.json marks it.
func TestOutliersInSystemOut(t *testing.T) {
	r := loadRun(t, "testdata/runs/loop24.json")
	suites, err := gojunit.Ingest(marshal(t, r))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range suites[0].Tests {
		out[c.Classname+"/"+c.Name] = c.SystemOut
	}
	var outliers int
	for _, res := range r.Results {
		for i, d := range res.PerDrive {
			if !d.Outlier {
				continue
			}
			outliers++
			if want := fmt.Sprintf("drive[%d]: %s ", i+1, d.Path); !strings.Contains(out[res.Test], want) ||
				!strings.Contains(strings.SplitN(strings.SplitN(out[res.Test], want, 2)[1], "\n", 2)[0], "outlier=true") {
				t.Errorf("%s: system-out does not mark %s an outlier:\n%s", res.Test, d.Path, out[res.Test])
			}
		}
		if res.Median != 0 && !strings.Contains(out[res.Test], "median: "+num(res.Median)+"\n") {
			t.Errorf("%s: system-out lacks the median %v", res.Test, res.Median)
		}
	}
	if outliers < 10 {
		t.Errorf("%d outliers in loop24.json, want the 63 it marks", outliers)
	}
}
