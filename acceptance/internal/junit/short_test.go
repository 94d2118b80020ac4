package junit

import (
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
