package report

import (
	"strings"
	"testing"
)

var escapeTests = []struct{ in, want string }{
	{"SOLIDIGM SB5PH27X038T", "SOLIDIGM SB5PH27X038T"},
	{"loop\n::error title=x::forged", `loop\n::error title=x::forged`},
	{"a\r\x1b[2Jb\u0085c\x00", `a\r\x1b[2Jb\u0085c\x00`},
	{"über", "über"},
	// Format characters that reorder or hide text (a bidi override makes
	// "vm\u202egnp.exe" read as "vmexe.png"), and the line separators.
	{"vm\u202egnp.exe\u202c", `vm\u202egnp.exe\u202c`},
	{"a\u2066b\u2069\u200bc\ufeff", `a\u2066b\u2069\u200bc\ufeff`},
	{"a\u2028b\u2029c", `a\u2028b\u2029c`},
}

func TestEscape(t *testing.T) {
	for _, tt := range escapeTests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Values a recording supplies (fio's version from a cell's output, a
// purge's or firmware step's message) stay inside their line of
// summary.md: a forged version cannot add a heading or a verdict row.
func TestSuppliedValuesStayInTheirLine(t *testing.T) {
	forged := "fio-3.28\n\n## Verdicts\n\n| 1.92TB | PASS |\n\n### Bottom line: QUALIFIED\n"
	r := &Run{Spec: "X", Mode: "replay", FioVersion: forged, Precondition: "full"}
	md := string(r.Summary())
	for _, bad := range []string{"\n## Verdicts\n\n| 1.92TB", "\n### Bottom line", "\n| 1.92TB | PASS |"} {
		if strings.Contains(md, bad) {
			t.Errorf("summary.md holds %q from a supplied value:\n%s", bad, md)
		}
	}
}
