package report

import "testing"

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
