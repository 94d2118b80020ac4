package keylines

import (
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

// TestLocate checks key lines where keys are easy to mistake: text
// that looks like a key inside strings and comments, multi-line strings,
// quoted and dotted keys, and repeated [[workload]] elements.
func TestLocate(t *testing.T) {
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
	_, got := Locate([]byte(doc), md)
	want := Lines{
		Path("model"):                                             2,
		Path("source"):                                            3,
		Path("method"):                                            6,
		Path("method", "runtime"):                                 7,
		Path("workload"):                                          9,
		Path("workload", "#0"):                                    9,
		Path("workload", "#0", "name"):                            10,
		Path("workload", "#0", "iodepth"):                         11,
		Path("workload", "#1"):                                    13,
		Path("workload", "#1", "name"):                            14,
		Path("workload", "#1", "iodepth"):                         15,
		Path("capacity"):                                          16,
		Path("capacity", "#0"):                                    16,
		Path("capacity", "#0", "spec"):                            17,
		Path("capacity", "#0", "spec", "4KB Random Read"):         17,
		Path("capacity", "#0", "spec", "x y"):                     18,
		Path("scaling"):                                           19,
		Path("scaling", "override"):                               19,
		Path("scaling", "override", "8KB Random Read"):            19,
		Path("scaling", "override", "8KB Random Read", "iodepth"): 20,
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
	for _, k := range []string{Path("model"), Path("workload", "#1", "iodepth"), Path("capacity", "#0", "spec", "x y")} {
		if _, ok := got[k]; !ok {
			t.Errorf("locateKeys did not find %q", k)
		}
	}
	if t.Failed() {
		t.Logf("all: %s", cmp.Diff(want, got))
	}
}
