package specs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that a failure is always an
// ErrorList of located problems, and that a success is a spec that holds
// every invariant checkSpec knows.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*/*.toml")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, name := range BuiltIn() {
		data, err := builtin.ReadFile(name + ".toml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.toml", data)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse returned a spec and error %v", err)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse error is %T %v, want a non-empty ErrorList", err, err)
			}
			for _, e := range list {
				if e.File != "fuzz.toml" || e.Line < 0 || e.Msg == "" {
					t.Fatalf("Parse error %+v lacks file, line or message", e)
				}
			}
			return
		}
		if err := checkSpec(s); err != nil {
			t.Fatalf("Parse accepted a spec that breaks an invariant: %v\n%s", err, data)
		}
	})
}
