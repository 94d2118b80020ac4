package specs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// brief is the built-in spec's text: the hostile specs below are it with
// one edit each, as a recording's run.json could carry it.
func brief(t *testing.T) string {
	t.Helper()
	data, err := builtin.ReadFile("solidigm-d7-ps1010.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// lineOf is the 1-based line of the first occurrence of s in text.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("the spec has no %q", s)
	}
	return strings.Count(text[:i], "\n") + 1
}

type boundTest struct {
	name      string
	old, new  string // the edit of the brief's spec
	at        string // the line the error must name holds this (new if empty)
	wantError string
}

var boundTests = []boundTest{
	{"scaling drive count", "drives    = [1, 2, 4, 8, 12, 16, 20, 24]", "drives    = [2147483647]", "",
		"scaling: drives: drive count 2147483647 is more than 1024, the most drives one step may measure"},
	{"scaling drive count past 1024", "drives    = [1, 2, 4, 8, 12, 16, 20, 24]", "drives    = [1, 1025]", "",
		"drive count 1025 is more than 1024"},
	{"scaling steps", "drives    = [1, 2, 4, 8, 12, 16, 20, 24]", "drives    = [" + countList(65) + "]", "",
		"drives lists 65 drive counts, more than the 64 a spec may hold"},
	{"numjobs", "numjobs = 8", "numjobs = 100000", "",
		`workload "4KB Random Read": numjobs 100000 is more than 4096, fio's limit on jobs`},
	{"iodepth", "iodepth = 64", "iodepth = 1048576", "",
		`workload "4KB Random Read": iodepth 1048576 is more than 65536, the deepest NVMe queue`},
	{"override iodepth", "iodepth = 32\n", "iodepth = 9999999\n", "iodepth = 9999999",
		`scaling override "8KB Random Read": iodepth 9999999 is more than 65536`},
	{"fill passes", "fill_passes    = 2", "fill_passes    = 2147483647", "",
		"precondition: fill_passes 2147483647 is more than 100"},
	{"rounds", `random_runtime = "30m"`, `random_runtime = "30m"` + "\nsteady_round = \"1ms\"", `random_runtime = "30m"`,
		`precondition: random_runtime 30m0s is 1800000 rounds of steady_round 1ms, more than 100000`},
	{"capacity bytes", "bytes = 1_920_383_410_176", "bytes = 9_223_372_036_854_775_807", "",
		`capacity "1.92TB": bytes 9223372036854775807 is more than 9007199254740992`},
	{"newline in a workload name", `name    = "4KB Random Read"`, `name    = "4KB Random Read\n::error::forged"`, "",
		`name "4KB Random Read\n::error::forged" holds the control character U+000A`},
	{"escape in the model", `model  = "Solidigm D7-PS1010"`, `model  = "Solidigm\u001b[2J"`, "",
		`model "Solidigm\x1b[2J" holds the control character U+001B`},
	{"bidi override in the model", `model  = "Solidigm D7-PS1010"`, `model  = "Loop \u202Eevil"`, "",
		`model "Loop \u202eevil" holds the invisible format character U+202E`},
	{"bidi isolate in the source", `source = "`, `source = "\u2066`, "",
		`holds the invisible format character U+2066`},
	{"models", `models = ["SOLIDIGM SB5PH27X*"]`, `models = ["` + strings.Repeat("*", 300) + `"]`, "",
		"models: a pattern of 300 characters is longer than 256"},
}

func countList(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	return b.String()
}

// Each number that sizes what a replay allocates is refused at load,
// naming the file and line; before the bounds, [scaling] drives =
// [2147483647] loaded and a replay made one placeholder drive per count.
func TestBoundsRefusedAtLoad(t *testing.T) {
	base := brief(t)
	for _, tt := range boundTests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.old) {
				t.Fatalf("the built-in spec has no %q", tt.old)
			}
			text := strings.Replace(base, tt.old, tt.new, 1)
			at := tt.at
			if at == "" {
				at = tt.new
			}
			want := fmt.Sprintf("run.json: spec_text:%d: ", lineOf(t, text, at))
			_, err := Parse("run.json: spec_text", []byte(text))
			if err == nil {
				t.Fatalf("Parse(%s) = nil error, want %q", tt.name, want+tt.wantError)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse(%s) = %v, not an ErrorList", tt.name, err)
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("Parse(%s) = %q, want %q at %q", tt.name, err, tt.wantError, want)
			}
		})
	}
}

// chained is a spec of n read workloads, each preconditioned by the next,
// the last by a write.
func chained(n int) string {
	var b strings.Builder
	b.WriteString("model = \"m\"\nsource = \"s\"\n[method]\nruntime = \"1s\"\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[[workload]]\nname = \"r%d\"\nrw = \"randread\"\nbs = 4096\niodepth = 1\nnumjobs = 1\nmetric = \"iops\"\nprecondition = \"r%d\"\n", i, i+1)
	}
	fmt.Fprintf(&b, "[[workload]]\nname = \"r%d\"\nrw = \"randwrite\"\nbs = 4096\niodepth = 1\nnumjobs = 1\nmetric = \"iops\"\n", n)
	b.WriteString("[[capacity]]\nname = \"c\"\nbytes = 1000000\n[capacity.spec]\n\"r0\" = 1\n")
	return b.String()
}

// More workloads than a spec may hold are refused at the first one past
// the bound; a spec larger than MaxSpecBytes is refused before decoding.
func TestTooManyWorkloads(t *testing.T) {
	text := chained(MaxWorkloads) // MaxWorkloads + 1 tables
	_, err := Parse("many.toml", []byte(text))
	want := fmt.Sprintf("many.toml:%d: 257 workloads, more than the 256 a spec may hold", lineOf(t, text, `name = "r256"`)-1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(257 workloads) = %v, want %q", err, want)
	}
	if _, err := Parse("many.toml", []byte(chained(MaxWorkloads-1))); err != nil {
		t.Errorf("Parse(256 chained workloads) = %v, want nil", err)
	}
	big := chained(30_000)
	_, err = Parse("big.toml", []byte(big))
	if want := fmt.Sprintf("big.toml: the spec is %d bytes, more than the 1048576 a spec may be", len(big)); err == nil || err.Error() != want {
		t.Errorf("Parse(30,000 workloads) = %v, want %q", err, want)
	}
}

// The precondition chains are checked in one walk: 30,000 chained
// workloads (a quadratic check took minutes) and a loop of 30,000 at the
// end of a chain are checked without the spec's bounds in the way.
func TestPreconditionChainsLinear(t *testing.T) {
	const n = 30_000
	ws := make([]Workload, n+1)
	for i := range ws {
		ws[i] = Workload{Name: fmt.Sprintf("r%d", i), RW: "randread", Precondition: fmt.Sprintf("r%d", i+1), Line: i + 1}
	}
	ws[n] = Workload{Name: fmt.Sprintf("r%d", n), RW: "randwrite", Line: n + 1}
	p := &parser{file: "chain.toml"}
	p.checkWorkloads(ws)
	if len(p.errs) != 0 {
		t.Fatalf("checkWorkloads(chain of %d) = %v, want no problem", n, p.errs[0])
	}
	// The last three loop: r29998 -> r29999 -> r30000 -> r29998.
	ws[n] = Workload{Name: ws[n].Name, RW: "randread", Precondition: "r29998"}
	p = &parser{file: "chain.toml"}
	p.checkWorkloads(ws)
	if len(p.errs) != 3 {
		t.Fatalf("checkWorkloads(loop of 3 after a chain) = %d problems, want 3: %v", len(p.errs), p.errs)
	}
	if got, want := p.errs[0].Msg, `precondition loops: "r29998" -> "r29999" -> "r30000" -> "r29998"`; got != want {
		t.Errorf("first problem = %q, want %q", got, want)
	}
}

// A spec that plans more cells than MaxCells (workloads times capacities
// and scaling steps, each within its own bound) is refused at its first
// workload: 256 workloads at 64 capacities planned 16,384 cells, whose
// replay rewrote its reports after each cell and had not ended after
// minutes. Four workloads at 256 cells' worth of capacities load.
func TestTooManyCells(t *testing.T) {
	spec := func(workloads, capacities int) string {
		var b strings.Builder
		b.WriteString("model = \"m\"\nsource = \"s\"\n[method]\nruntime = \"1s\"\n")
		for i := 0; i < workloads; i++ {
			fmt.Fprintf(&b, "[[workload]]\nname = \"r%d\"\nrw = \"randread\"\nbs = 4096\niodepth = 1\nnumjobs = 1\nmetric = \"iops\"\n", i)
		}
		for c := 0; c < capacities; c++ {
			fmt.Fprintf(&b, "[[capacity]]\nname = \"c%d\"\nbytes = %d\n[capacity.spec]\n\"r0\" = 1\n", c, 1000000+c)
		}
		return b.String()
	}
	text := spec(MaxWorkloads, MaxCapacities)
	_, err := Parse("cells.toml", []byte(text))
	want := fmt.Sprintf("cells.toml:%d: 256 workloads at 64 capacities and 0 scaling steps are 16384 cells, more than the 1024 a spec may plan", lineOf(t, text, `name = "r0"`)-1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Parse(256 workloads at 64 capacities) = %v, want %q", err, want)
	}
	if _, err := Parse("cells.toml", []byte(spec(16, MaxCapacities))); err != nil {
		t.Errorf("Parse(16 workloads at 64 capacities) = %v, want nil", err)
	}
}
