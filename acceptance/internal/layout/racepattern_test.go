package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// make test runs with -race only the packages one of whose files matches
// the Makefile's RACE_PATTERN (grep -E, a line at a time), and the others
// without it. A package that starts a goroutine, read from its syntax,
// must be one the pattern finds: otherwise its data races would go
// unlooked for. And the recipe must run both sets.
func TestRacePatternFindsEveryConcurrentPackage(t *testing.T) {
	makefile := string(readMakefile(t))
	re, err := racePattern(makefile)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := racePatternProblems(re, moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, want := range []string{
		"grep -l -E '$(RACE_PATTERN)'",
		"-race -timeout=20m -p=$(TEST_P) $$first $$pkgs;",
		"$(TEST_FLAGS) -timeout=20m -p=$(TEST_P) $$plain & oneg=$$!",
		"wait $$oneg || rc=1",
	} {
		if !strings.Contains(makefile, want) {
			t.Errorf("make test's recipe lacks %q: the packages RACE_PATTERN finds must run with -race, the rest without, and both count", want)
		}
	}
}

// racePattern is the Makefile's RACE_PATTERN as grep -E reads it: a line
// at a time.
func racePattern(makefile string) (*regexp.Regexp, error) {
	if n, plain := makeAssignments(makefile, "RACE_PATTERN"); n != 1 || !plain {
		return nil, fmt.Errorf("the Makefile must set RACE_PATTERN once, as `RACE_PATTERN = regexp`")
	}
	return regexp.Compile("(?m)" + makeValue(makefile, "RACE_PATTERN"))
}

// racePatternProblems names each package directory under root (testdata
// aside, as make test's find leaves it) that starts a goroutine but none
// of whose files re matches.
func racePatternProblems(re *regexp.Regexp, root string) ([]string, error) {
	type dir struct {
		why     string
		matched bool
	}
	dirs := map[string]*dir{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		relFile, _ := filepath.Rel(root, path)
		rel := filepath.Dir(relFile)
		e := dirs[rel]
		if e == nil {
			e = &dir{}
			dirs[rel] = e
		}
		e.matched = e.matched || re.Match(src)
		if e.why == "" {
			why, err := concurrency(relFile, src)
			if err != nil {
				return err
			}
			e.why = why
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for rel, e := range dirs {
		if e.why != "" && !e.matched {
			out = append(out, fmt.Sprintf("./%s runs goroutines (%s), but RACE_PATTERN matches none of its files: make test would run it without -race", rel, e.why))
		}
	}
	slices.Sort(out)
	return out, nil
}

// concurrency says where the Go file path (src) runs code on another
// goroutine, "" when it does not: a go statement, an import of sync,
// sync/atomic, os/signal or net/http, a call of AfterFunc,
// runtime.SetFinalizer or runtime.AddCleanup, tests run at once
// (t.Parallel(), b.RunParallel).
func concurrency(path string, src []byte) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	where := func(n ast.Node, what string) string {
		return fmt.Sprintf("%s at %s", what, fset.Position(n.Pos()))
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch p {
		case "sync", "sync/atomic", "os/signal", "net/http", "net/http/httptest":
			return where(imp, "imports "+p), nil
		}
	}
	why := ""
	ast.Inspect(f, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.GoStmt:
			why = where(n, "a go statement")
		case *ast.SelectorExpr:
			switch n.Sel.Name {
			case "AfterFunc", "SetFinalizer", "AddCleanup":
				why = where(n, n.Sel.Name)
			}
		case *ast.CallExpr:
			// t.Parallel() or b.RunParallel(...): the package's tests run
			// its code on several goroutines at once.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Parallel" && len(n.Args) == 0 || sel.Sel.Name == "RunParallel") {
				why = where(n, sel.Sel.Name)
			}
		}
		return why == ""
	})
	return why, nil
}

// Each way a package runs goroutines is found by RACE_PATTERN, and one
// that runs none is not; a pattern without one of its alternatives names
// the package it misses.
func TestRacePatternProblemsNamed(t *testing.T) {
	re, err := racePattern(string(readMakefile(t)))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	pkgs := map[string]string{
		"gostmt":   "package p\nfunc f() { go func() {}() }\n",
		"gocall":   "package p\nfunc g(int) {}\nfunc f() {\n\tgo g(1)\n}\n",
		"method":   "package p\ntype s struct{}\nfunc (s) run() {}\nfunc f(x s) { go x.run() }\n",
		"mutex":    "package p\nimport \"sync\"\nvar mu sync.Mutex\n",
		"atomic":   "package p\nimport \"sync/atomic\"\nvar n atomic.Int64\n",
		"timer":    "package p\nimport \"time\"\nfunc f() { time.AfterFunc(time.Second, func() {}) }\n",
		"ctx":      "package p\nimport \"context\"\nfunc f(c context.Context) { context.AfterFunc(c, func() {}) }\n",
		"signal":   "package p\nimport (\n\t\"os\"\n\t\"os/signal\"\n)\nfunc f(c chan os.Signal) { signal.Notify(c) }\n",
		"server":   "package p\nimport \"net/http/httptest\"\nvar s = httptest.NewServer(nil)\n",
		"finalize": "package p\nimport \"runtime\"\nfunc f(x *int) { runtime.SetFinalizer(x, nil) }\n",
		"parallel": "package p\nimport \"testing\"\nfunc TestA(t *testing.T) {\n\tt.Parallel()\n}\n",
		"bench":    "package p\nimport \"testing\"\nfunc BenchmarkA(b *testing.B) { b.RunParallel(func(*testing.PB) {}) }\n",
		"plain":    "package p\n// We go (to) the drive, and cargo(1) is no go statement.\nfunc cargo(int) {}\nfunc f() { cargo(1) }\n",
	}
	for name, src := range pkgs {
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "p_test.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "plain" {
			if why, _ := concurrency(name, []byte(src)); why != "" || re.MatchString(src) {
				t.Errorf("plain: found concurrency %q, pattern matched %v: want neither", why, re.MatchString(src))
			}
		}
	}
	if p, err := racePatternProblems(re, root); err != nil || len(p) != 0 {
		t.Fatalf("the Makefile's RACE_PATTERN: %v %v", p, err)
	}
	for _, c := range []struct{ drop, misses string }{
		{`(^|[^[:alnum:]_.])go (func|[[:alnum:]_.]+\()|`, "./gocall runs goroutines (a go statement"},
		{`"sync"|`, "./mutex runs goroutines (imports sync"},
		{`"sync/atomic"|`, "./atomic runs goroutines (imports sync/atomic"},
		{`|AfterFunc`, "./ctx runs goroutines (AfterFunc"},
		{`"os/signal"|`, "./signal runs goroutines (imports os/signal"},
		{`"net/http/httptest"|`, "./server runs goroutines (imports net/http/httptest"},
		{`SetFinalizer|`, "./finalize runs goroutines (SetFinalizer"},
		{`|\.Parallel\(\)`, "./parallel runs goroutines (Parallel"},
		{`|\.RunParallel\(`, "./bench runs goroutines (RunParallel"},
	} {
		weak := strings.Replace(re.String(), c.drop, "", 1)
		if weak == re.String() {
			t.Fatalf("%q is not in RACE_PATTERN", c.drop)
		}
		p, err := racePatternProblems(regexp.MustCompile(weak), root)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.misses) }) {
			t.Errorf("without %s: problems %q, want one saying %q", c.drop, p, c.misses)
		}
	}
}
