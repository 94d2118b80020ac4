package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNoRaceTestsRun: the tests that skip themselves under -race
// (testenv.SkipUnderRace) are exactly the Makefile's NORACE_TESTS, each in
// one of its NORACE_PKGS, so that make test's go test without -race runs
// every one of them: a test that skipped under -race and was named
// nowhere else would pass by never running, and a name in the list that
// no test has would select nothing.
func TestNoRaceTestsRun(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	value := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + ` = (.*)$`).FindSubmatch(makefile)
		if m == nil {
			t.Fatalf("the Makefile sets no %s", name)
		}
		return string(m[1])
	}
	listed := strings.Split(value("NORACE_TESTS"), "|")
	pkgs := map[string]bool{}
	for _, p := range strings.Fields(value("NORACE_PKGS")) {
		pkgs[filepath.Clean(strings.TrimPrefix(p, "./"))] = true
	}
	if !strings.Contains(string(makefile), "-run='^($(NORACE_TESTS))$$' $(NORACE_PKGS)") {
		t.Error("make test runs no go test of NORACE_TESTS in NORACE_PKGS without -race")
	}

	found := map[string]string{} // test: its package's directory
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if ok && sel.Sel.Name == "SkipUnderRace" {
					rel, _ := filepath.Rel(root, filepath.Dir(path))
					found[fn.Name.Name] = rel
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("no test calls testenv.SkipUnderRace: the walk found none")
	}
	for name, dir := range found {
		if !slices.Contains(listed, name) {
			t.Errorf("%s (%s) skips under -race but is not in the Makefile's NORACE_TESTS: make test would never run it", name, dir)
		}
		if !pkgs[dir] {
			t.Errorf("%s is in ./%s, which is not in the Makefile's NORACE_PKGS", name, dir)
		}
	}
	for _, name := range listed {
		if _, ok := found[name]; !ok {
			t.Errorf("NORACE_TESTS names %s, which no test that calls testenv.SkipUnderRace is", name)
		}
	}
}
