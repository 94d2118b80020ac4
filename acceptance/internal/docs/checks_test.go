package docs

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// want checks that problems are exactly the ones whose text holds each of
// wants, in order.
func want(t *testing.T, problems []Problem, wants ...string) {
	t.Helper()
	if len(problems) != len(wants) {
		t.Errorf("%d problems, want %d:", len(problems), len(wants))
		for _, p := range problems {
			t.Errorf("  %s", p)
		}
		return
	}
	for i, p := range problems {
		if !strings.Contains(p.String(), wants[i]) {
			t.Errorf("problem %d is %q, want it to hold %q", i, p, wants[i])
		}
	}
}

func TestSlug(t *testing.T) {
	for h, a := range map[string]string{
		"Data integrity: every byte read back (`TestIntegrity`)": "data-integrity-every-byte-read-back-testintegrity",
		"Against a baseline: firmware and vendor A/B":            "against-a-baseline-firmware-and-vendor-ab",
		"Health, heat, host and PCIe bounds, latency":            "health-heat-host-and-pcie-bounds-latency",
		"The gate: the exit status":                              "the-gate-the-exit-status",
		"run.json and `steady_round` **rules**":                  "runjson-and-steady_round-rules",
		"A [linked](x.md) heading":                               "a-linked-heading",
	} {
		if got := Slug(h); got != a {
			t.Errorf("Slug(%q) = %q, want %q", h, got, a)
		}
	}
}

// TestLinksBroken: a missing file, a missing anchor and a link out of the
// repository are each one problem at its line; links in code are not
// links, a link's text may span lines, and a stray backtick does not
// make the paragraphs after it code.
func TestLinksBroken(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := "# Other\n\n## Top-ups of idle drives\n\n## Same\n\n## Same\n"
	if err := os.WriteFile(filepath.Join(root, "docs", "other.md"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := strings.Join([]string{
		"# Title",
		"[ok](docs/other.md) and [ok too](docs/other.md#top-ups-of-idle-drives), [the second Same](docs/other.md#same-1)",
		"[gone](docs/gone.md)",
		"[no such anchor](docs/other.md#top-ups-of-idle-drive)",
		"`[in code](docs/gone.md)` and [on two",
		"lines](#title) and [out](../x.md) and [web](https://example.com/gone)",
		"```",
		"[in a fence](docs/gone.md)",
		"```",
		"[self](#no-such-heading)",
		"",
		"A stray ` backtick, which no later one closes.",
		"",
		"[after the stray](docs/gone.md), and `code` after it.",
	}, "\n")
	pages := []Page{{Path: "README.md", Text: readme}, {Path: "docs/other.md", Text: other}}
	want(t, Links(root, pages),
		"README.md:3: link \"docs/gone.md\": docs/gone.md does not exist: fix the link (it is relative to the module root)",
		"README.md:4: link \"docs/other.md#top-ups-of-idle-drive\": docs/other.md has no heading whose anchor is #top-ups-of-idle-drive: link to one of its anchors (#top-ups-of-idle-drives,",
		"README.md:6: link \"../x.md\" leaves the repository",
		"README.md:10: link \"#no-such-heading\": README.md has no heading whose anchor is #no-such-heading",
		"README.md:14: link \"docs/gone.md\": docs/gone.md does not exist",
	)
}

// TestFlagsUndocumented: a registered flag no table documents, and a
// flag table row naming no registered flag, are each a problem.
func TestFlagsUndocumented(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("drives", "", "the drives")
	fs.Bool("destructive", false, "allow writing")
	fs.Bool("overwrite", false, "new")
	running := strings.Join([]string{
		"# Running",
		"",
		"| flag | meaning |",
		"|---|---|",
		"| `-drives LIST` | the drives |",
		"| `-destructive` | allow writing |",
		"| `-any-model` | not registered |",
	}, "\n")
	elsewhere := "# Other\n\n| flag | meaning |\n|---|---|\n| `-run` | go test's, not the suite's |\n"
	want(t, Flags([]Page{{Path: FlagPage, Text: running}, {Path: "docs/ci.md", Text: elsewhere}}, fs, "config.go"),
		"docs/running.md:3: flag -overwrite (registered in config.go: \"new\") is documented on no page: add a row | `-overwrite …` |",
		"docs/running.md:7: -any-model is documented but the suite registers no such flag (config.go): remove the row, or fix its name (the flags are -destructive, -drives, -overwrite)",
	)
}

// TestSpecKeysWrong: a key accepted but not documented, one documented
// but not accepted, one without a default and one documented twice are
// each a problem.
func TestSpecKeysWrong(t *testing.T) {
	spec := strings.Join([]string{
		"# Writing a spec",
		"",
		"| key | meaning | default |",
		"|---|---|---|",
		"| `model`, `source` | the model | required |",
		"| `[method]` `runtime` | measured time | required |",
		"| `[method]` `iodirect` | a typo | `true` |",
		"| `[[workload]]` `name` | its name | required |",
		"| `[[workload]]` `runtime` | its time | — |",
		"| `[capacity.spec]` | workload → value | required |",
		`| ` + "`[capacity.qos.\"NAME\"]` `read_p99_us`" + ` | a limit | unset |`,
		"| `[method]` `runtime` | again | required |",
	}, "\n")
	accepted := []string{"model", "source", "method.runtime", "method.ramp_time", "workload.name", "workload.runtime", "workload.bs",
		"capacity.spec.*", "capacity.qos.*.read_p99_us"}
	want(t, SpecKeys(Page{Path: SpecPage, Text: spec}, accepted, "schema.go"),
		"docs/spec.md:7: key `[method]` `iodirect` is documented but the spec parser (schema.go) does not accept it: remove it from the row, or fix its name (accepted there: ramp_time, runtime)",
		"docs/spec.md:9: key `[[workload]]` `runtime` has no default: write in its default cell",
		"docs/spec.md:12: key `[method]` `runtime` is documented again (first on line 6)",
		"docs/spec.md:3: key `[method]` `ramp_time`, which the spec parser (schema.go) accepts, is not in the key table: add a row | `[method]` `ramp_time` | meaning | default |",
		"docs/spec.md:3: key `[[workload]]` `bs`, which the spec parser (schema.go) accepts, is not in the key table",
	)
	want(t, SpecKeys(Page{Path: SpecPage, Text: "# Writing a spec\n"}, accepted, "schema.go")[:1], "docs/spec.md: no key table")
}

// TestOpeningsMissing: a page without its opening sentence, and a page
// README.md does not link to, are each a problem.
func TestOpeningsMissing(t *testing.T) {
	pages := []Page{
		{Path: "README.md", Text: "# x\n\n| page | answers |\n|---|---|\n| [a](docs/a.md) | A |\n"},
		{Path: "docs/a.md", Text: "# A\n\nThis page answers what A is.\n"},
		{Path: "docs/b.md", Text: "# B\n\nB is a page.\n"},
	}
	want(t, Openings(pages),
		"docs/b.md:1: a page opens with its title",
		"README.md:3: the table of contents does not link to docs/b.md",
	)
}
