package nonfinite

import "testing"

var zeroTests = []struct{ in, out string }{
	{`{"a" : 1.5}`, `{"a" : 1.5}`},
	{`{"a" : -nan, "b" : nan, "c" : inf, "d" : -inf}`, `{"a" : 0, "b" : 0, "c" : 0, "d" : 0}`},
	{`{"a" : [nan,-nan], "b" : null, "c" : -1}`, `{"a" : [0,0], "b" : null, "c" : -1}`},
	{`{"nan" : "-nan inf", "e\"nan" : inf}`, `{"nan" : "-nan inf", "e\"nan" : 0}`},
	{`{"a" : nano, "b" : -info}`, `{"a" : nano, "b" : -info}`}, // not fio's; left for Unmarshal to reject
	{`{"minf" : 5, "info" : "x"}`, `{"minf" : 5, "info" : "x"}`},
	// A bare nan elsewhere sends Zero through its exact pass; a nan or inf
	// that ends a number or word stays, for Unmarshal to reject.
	{`{"a" : 1e3nan, "b" : 1-inf, "c" : 2.nan, "d" : --nan, "e" : nan}`, `{"a" : 1e3nan, "b" : 1-inf, "c" : 2.nan, "d" : --nan, "e" : 0}`},
	{`[-nan,inf,-inf]`, `[0,0,0]`},
	{`{"a" : nan.5, "b" : -inf.25, "c" : inf1, "d" : nan_, "e" : -nan}`, `{"a" : nan.5, "b" : -inf.25, "c" : inf1, "d" : nan_, "e" : 0}`},
	{"{\"a\":\n-nan}", "{\"a\":\n0}"},
}

// Zero replaces the non-finite numbers glibc prints, and nothing else.
func TestZero(t *testing.T) {
	for _, tt := range zeroTests {
		if got := string(Zero([]byte(tt.in))); got != tt.out {
			t.Errorf("Zero(%q) = %q, want %q", tt.in, got, tt.out)
		}
	}
}
