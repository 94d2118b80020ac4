package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drivequal/drivequal/specs"
)

// specTemplate is a small valid spec that has every table of a spec, each
// with only its required keys (and steadystate, without which
// steadystate_duration is refused). "#@TABLE" marks where a key of TABLE
// is added ("#@" alone: the top level, "*" for a quoted name); a table
// not here is added at the end of the file.
const specTemplate = `model  = "Test"
source = "docs_test.go"
#@

[method]
runtime = "60s"
#@method

[precondition]
steadystate = "iops_slope:0.3%"
#@precondition

[health]
#@health

[receipt]
#@receipt

[pcie]
#@pcie

[[workload]]
name    = "4KB Random Read"
rw      = "randread"
bs      = "4k"
iodepth = 32
numjobs = 8
metric  = "iops"
sweep_iodepth = [1, 2]
#@workload

[[workload]]
name    = "4KB Random Write"
rw      = "randwrite"
bs      = "4k"
iodepth = 32
numjobs = 8
metric  = "iops"

[[capacity]]
name  = "1.92TB"
bytes = 1_920_383_410_176
#@capacity
[capacity.spec]
"4KB Random Read"  = 2_350_000
"4KB Random Write" = 150_000
[capacity.qos."4KB Random Read"]
read_p99_us = 250
#@capacity.qos.*
[capacity.at_latency."4KB Random Read"]
read_p99_us = 250
min_iops = 1000
#@capacity.at_latency.*

[scaling]
capacity = "1.92TB"
drives   = [1, 2]
#@scaling
[scaling.override."4KB Random Read"]
iodepth = 16
#@scaling.override.*

[fleet]
#@fleet

[baseline]
#@baseline

[lot]
coverage   = 0.95
confidence = 0.95
#@lot

[firmware]
max_stall = "1s"
#@firmware
`

var placeholderRE = regexp.MustCompile(`(?m)^#@.*$`)

// withKey is specTemplate with line at TABLE's mark (header being how
// the key table writes TABLE, for one the template lacks), every mark
// then blanked to a comment so that both sides of a comparison have the
// same lines.
func withKey(table, header, line string) string {
	s := specTemplate
	mark := "#@" + table
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(mark) + `$`).MatchString(s) {
		s += "\n" + header + "\n" + mark + "\n"
	}
	s = regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(mark)+`$`).ReplaceAllLiteralString(s, line)
	return placeholderRE.ReplaceAllString(s, "#")
}

// withoutKey is specTemplate without TABLE's line setting key, or false
// when the template sets no such key there.
func withoutKey(table, key string) (string, bool) {
	lines := strings.Split(specTemplate, "\n")
	mark := "#@" + table
	set := regexp.MustCompile(`^` + regexp.QuoteMeta(key) + `\s*=`)
	for i, l := range lines {
		if l != mark {
			continue
		}
		for j := i - 1; j >= 0 && !strings.HasPrefix(lines[j], "["); j-- {
			if set.MatchString(lines[j]) {
				lines[j] = "#"
				return placeholderRE.ReplaceAllString(strings.Join(lines, "\n"), "#"), true
			}
		}
	}
	return "", false
}

func parse(text string) (*specs.Spec, error) { return specs.Parse("template.toml", []byte(text)) }

// TestSpecDefaults: each default docs/spec.md gives as a value is the
// parser's (a spec that sets the key to it loads the same as one that
// leaves it out), and each key it says is required is refused when left
// out.
func TestSpecDefaults(t *testing.T) {
	var page Page
	for _, p := range pages(t) {
		if p.Path == SpecPage {
			page = p
		}
	}
	rows, _, _ := KeyRows(page)
	problems, literals, required := checkDefaults(rows)
	report(t, problems)
	t.Logf("%d documented defaults and %d required keys checked against the parser", literals, required)
	// The table's defaults are written as values and read as such: a
	// change to how a cell is read must not leave them unchecked.
	if literals < 15 || required < 10 {
		t.Errorf("only %d defaults and %d required keys of %s were checked: write defaults as TOML values in code spans (`\"30m\"`) and required keys as \"required\"", literals, required, SpecPage)
	}
}

// checkDefaults checks rows' literal and required defaults against the
// parser.
func checkDefaults(rows []KeyRow) (out []Problem, literals, required int) {
	base, err := parse(withKey("", "", "#"))
	if err != nil {
		return []Problem{{File: "acceptance/internal/docs/defaults_test.go", Msg: fmt.Sprintf("specTemplate does not load: %v: fix the template", err)}}, 0, 0
	}
	same := []cmp.Option{cmpopts.IgnoreFields(specs.Spec{}, "Text"), cmpopts.EquateEmpty()}
	for _, r := range rows {
		parts := strings.Split(r.Key, ".")
		key, table := parts[len(parts)-1], strings.Join(parts[:len(parts)-1], ".")
		if key == "*" {
			continue // a table of names the spec chooses has no default
		}
		if r.Required() {
			required++
			text, ok := withoutKey(table, key)
			if !ok {
				// The template loads without it.
				out = append(out, Problem{SpecPage, r.Line, fmt.Sprintf("key %s is documented as required, but a spec without it loads: write in its default cell the value the parser uses", display(r.Key, nil))})
				continue
			}
			if _, err := parse(text); err == nil || !strings.Contains(err.Error(), key) {
				out = append(out, Problem{SpecPage, r.Line, fmt.Sprintf("key %s is documented as required, but a spec without it loads (%v): write in its default cell the value the parser uses", display(r.Key, nil), err)})
			}
			continue
		}
		lit, ok := r.Literal()
		if !ok {
			continue
		}
		literals++
		set := key + " = " + lit
		with, err := parse(withKey(table, r.Table, set))
		if err != nil {
			out = append(out, Problem{SpecPage, r.Line, fmt.Sprintf("key %s: its documented default %s is refused by the parser (%v): write the default the parser uses", display(r.Key, nil), lit, err)})
			continue
		}
		without := base
		if !strings.Contains(specTemplate, "#@"+table+"\n") {
			if without, err = parse(withKey(table, r.Table, "#")); err != nil {
				out = append(out, Problem{"acceptance/internal/docs/defaults_test.go", 0, fmt.Sprintf("specTemplate with an empty %s does not load (%v): add %s with its required keys to the template", r.Table, err, r.Table)})
				continue
			}
		}
		if d := cmp.Diff(without, with, same...); d != "" {
			out = append(out, Problem{SpecPage, r.Line, fmt.Sprintf("key %s: its documented default %s is not the parser's: a spec with %s loads differently from one without it (-without +with):\n%s\nwrite the default the parser uses", display(r.Key, nil), lit, set, d)})
		}
	}
	return out, literals, required
}

// TestSpecDefaultsWrong: a default that is not the parser's, one the
// parser refuses, and a key said to be required that is not, are each a
// problem; a right default and a right "required" are none.
func TestSpecDefaultsWrong(t *testing.T) {
	page := Page{Path: SpecPage, Text: strings.Join([]string{
		"| key | meaning | default |",
		"|---|---|---|",
		"| `[method]` `runtime` | measured time | required |",
		"| `[method]` `ramp_time` | ramp | required |",
		"| `[method]` `ioengine`, `direct` | fio's | `\"libaio\"`, `false` |",
		"| `[precondition]` `random_runtime` | bound | `\"20m\"` |",
		"| `[precondition]` `fill_passes` | passes | `-1` |",
		"| `[health]` `firmware` | allowed | `[]`: any |",
		"| `[scaling]` `tolerance` | tolerance | `0.10` |",
	}, "\n")}
	rows, _, problems := KeyRows(page)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	problems, literals, required := checkDefaults(rows)
	if literals != 6 || required != 2 {
		t.Errorf("%d defaults and %d required keys checked, want 6 and 2", literals, required)
	}
	want(t, problems,
		"docs/spec.md:4: key `[method]` `ramp_time` is documented as required, but a spec without it loads",
		"docs/spec.md:5: key `[method]` `direct`: its documented default false is not the parser's",
		"docs/spec.md:6: key `[precondition]` `random_runtime`: its documented default \"20m\" is not the parser's",
		"docs/spec.md:7: key `[precondition]` `fill_passes`: its documented default -1 is refused by the parser",
	)
}
