package specs

import (
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

// TestLocateKeys checks key lines where keys are easy to mistake: text
// that looks like a key inside strings and comments, multi-line strings,
// quoted and dotted keys, and repeated [[workload]] elements.
func TestLocateKeys(t *testing.T) {
	doc := `# name = "not a key" on line 1
model = "a name = b"
source = """
iodepth = 1
"""
[method] # runtime = x
runtime = '60s'

[[workload]]
name = "first"
  iodepth = 1

[[workload]]
"name" = 'second'
iodepth = 2
[[capacity]]
spec."4KB Random Read" = 1
spec . 'x y' = 2
[scaling.override."8KB Random Read"]
iodepth = 32
`
	var m map[string]any
	md, err := toml.Decode(doc, &m)
	if err != nil {
		t.Fatal(err)
	}
	_, got := locateKeys([]byte(doc), md)
	want := keyLines{
		path("model"):                                             2,
		path("source"):                                            3,
		path("method"):                                            6,
		path("method", "runtime"):                                 7,
		path("workload"):                                          9,
		path("workload", "#0"):                                    9,
		path("workload", "#0", "name"):                            10,
		path("workload", "#0", "iodepth"):                         11,
		path("workload", "#1"):                                    13,
		path("workload", "#1", "name"):                            14,
		path("workload", "#1", "iodepth"):                         15,
		path("capacity"):                                          16,
		path("capacity", "#0"):                                    16,
		path("capacity", "#0", "spec"):                            17,
		path("capacity", "#0", "spec", "4KB Random Read"):         17,
		path("capacity", "#0", "spec", "x y"):                     18,
		path("scaling"):                                           19,
		path("scaling", "override"):                               19,
		path("scaling", "override", "8KB Random Read"):            19,
		path("scaling", "override", "8KB Random Read", "iodepth"): 20,
	}
	// Implicit tables are listed by some TOML versions and not others.
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("locateKeys found unexpected key %q at line %d", k, got[k])
		}
	}
	for k, line := range want {
		if l, ok := got[k]; ok && l != line {
			t.Errorf("locateKeys line of %q = %d, want %d", k, l, line)
		}
	}
	for _, k := range []string{path("model"), path("workload", "#1", "iodepth"), path("capacity", "#0", "spec", "x y")} {
		if _, ok := got[k]; !ok {
			t.Errorf("locateKeys did not find %q", k)
		}
	}
	if t.Failed() {
		t.Logf("all: %s", cmp.Diff(want, got))
	}
}
