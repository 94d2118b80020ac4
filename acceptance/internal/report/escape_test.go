package report

import "testing"

var escapeTests = []struct{ in, want string }{
	{"SOLIDIGM SB5PH27X038T", "SOLIDIGM SB5PH27X038T"},
	{"loop\n::error title=x::forged", `loop\n::error title=x::forged`},
	{"a\r\x1b[2Jb\u0085c\x00", `a\r\x1b[2Jb\u0085c\x00`},
	{"über", "über"},
}

func TestEscape(t *testing.T) {
	for _, tt := range escapeTests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
