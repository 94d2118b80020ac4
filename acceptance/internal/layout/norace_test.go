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
	"strings"
	"testing"
)

// TestNoRaceTestsRun: the tests that skip themselves under -race
// (testenv.SkipUnderRace) are exactly the Makefile's NORACE_TESTS, each in
// one of its NORACE_PKGS, and make test runs them in a go test of their
// own without -race, whose failure fails make test: a test that skipped
// under -race and was named nowhere else would pass by never running, and
// a name in the list that no test has would select nothing. Only a test
// (func TestX(t *testing.T) in a _test.go file) may call SkipUnderRace: a
// helper's name in the list would select nothing, and the tests calling
// the helper would run nowhere.
func TestNoRaceTestsRun(t *testing.T) {
	makefile := readMakefile(t)
	for _, p := range noRaceMakefileProblems(string(makefile)) {
		t.Error(p)
	}
	listed, pkgs := noRaceLists(string(makefile))
	hits, problems := skipUnderRaceCallers(t, moduleRoot)
	for _, p := range problems {
		t.Error(p)
	}
	if len(hits) == 0 {
		t.Fatal("no test calls testenv.SkipUnderRace: the walk found none")
	}
	named := map[string]bool{}
	used := map[string]bool{}
	for _, h := range hits {
		named[h.name] = true
		used[h.dir] = true
		if !slices.Contains(listed, h.name) {
			t.Errorf("%s (./%s) skips under -race but is not in the Makefile's NORACE_TESTS: make test would never run it", h.name, h.dir)
		}
		if !slices.Contains(pkgs, h.dir) {
			t.Errorf("%s is in ./%s, which is not in the Makefile's NORACE_PKGS: make test would never run it", h.name, h.dir)
		}
	}
	for _, name := range listed {
		if !named[name] {
			t.Errorf("NORACE_TESTS names %q, which no test that calls testenv.SkipUnderRace is", name)
		}
	}
	for _, dir := range pkgs {
		if !used[dir] {
			t.Errorf("NORACE_PKGS names ./%s, where no test calls testenv.SkipUnderRace", dir)
		}
	}
}

// moduleRoot is the module's root, from this package's directory.
var moduleRoot = filepath.Join("..", "..", "..")

// readMakefile is the module's Makefile.
func readMakefile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noRaceLists is the Makefile's NORACE_TESTS and NORACE_PKGS (as
// directories from the module root).
func noRaceLists(makefile string) (tests, pkgs []string) {
	if v := makeValue(makefile, "NORACE_TESTS"); v != "" {
		tests = strings.Split(v, "|")
	}
	return tests, makeDirs(makeValue(makefile, "NORACE_PKGS"))
}

// makeValue is the value of makefile's first plain `name = value` line.
func makeValue(makefile, name string) string {
	m := regexp.MustCompile(`(?m)^` + name + ` = (.*)$`).FindStringSubmatch(makefile)
	if m == nil {
		return ""
	}
	return m[1]
}

// makeDirs is a Makefile list of packages (./dir ...) as directories from
// the module root.
func makeDirs(list string) []string {
	var dirs []string
	for _, p := range strings.Fields(list) {
		dirs = append(dirs, filepath.Clean(strings.TrimPrefix(p, "./")))
	}
	return dirs
}

// makeAssignments is how many times makefile assigns name, in any
// flavour (=, :=, ?=, +=, !=, after override or export), and whether one
// of them is a plain `name = value` with a value: a variable is read as
// make reads it only when both are one and true.
func makeAssignments(makefile, name string) (n int, plain bool) {
	all := regexp.MustCompile(`(?m)^\s*(override\s+|export\s+)?`+name+`\s*[:+?!]?=`).FindAllString(makefile, -1)
	return len(all), regexp.MustCompile(`(?m)^` + name + ` = \S`).MatchString(makefile)
}

// noRaceMakefileProblems says what in the Makefile would let a test of
// NORACE_TESTS go unrun: another assignment to either list (make joins
// += with a space, and the name would select nothing), or a test recipe
// without its go test of them, with -race, without DRIVEQUAL_NORACE_RUN=1,
// or whose status it does not wait for.
func noRaceMakefileProblems(makefile string) []string {
	var out []string
	for _, name := range []string{"NORACE_TESTS", "NORACE_PKGS"} {
		if n, plain := makeAssignments(makefile, name); n != 1 || !plain {
			out = append(out, fmt.Sprintf("the Makefile must set %s once, as `%s = ...` (found %d assignments)", name, name, n))
		}
	}
	if tests, _ := noRaceLists(makefile); slices.ContainsFunc(tests, func(s string) bool { return !regexp.MustCompile(`^Test\w*$`).MatchString(s) }) {
		out = append(out, fmt.Sprintf("NORACE_TESTS %q holds something other than test names joined by |", tests))
	}
	var recipe []string
	in := false
	for _, l := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(l, "test:"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			recipe = append(recipe, l)
		case in:
			in = false
		}
	}
	run := slices.IndexFunc(recipe, func(l string) bool {
		return strings.Contains(l, "-run='^($(NORACE_TESTS))$$' $(NORACE_PKGS) & norace=$$!")
	})
	switch {
	case run < 0:
		out = append(out, "make test's recipe runs no go test of NORACE_TESTS in NORACE_PKGS (-run='^($(NORACE_TESTS))$$' $(NORACE_PKGS) & norace=$$!)")
	case strings.Contains(recipe[run], "-race"):
		out = append(out, "make test runs NORACE_TESTS with -race, where they skip: "+strings.TrimSpace(recipe[run]))
	case !strings.HasPrefix(strings.TrimSpace(recipe[run]), "DRIVEQUAL_NORACE_RUN=1 "):
		out = append(out, "make test runs NORACE_TESTS without DRIVEQUAL_NORACE_RUN=1, which makes a -race build of them fail rather than skip")
	}
	if !slices.ContainsFunc(recipe, func(l string) bool { return strings.Contains(l, "wait $$norace || rc=1") }) {
		out = append(out, "make test does not fail when the go test of NORACE_TESTS fails (wait $$norace || rc=1)")
	}
	return out
}

// raceSkip is a function that calls SkipUnderRace.
type raceSkip struct{ dir, name string }

// skipUnderRaceCallers walks root's Go files for the functions that call
// SkipUnderRace, and says which callers are not tests.
func skipUnderRaceCallers(t *testing.T, root string) ([]raceSkip, []string) {
	var hits []raceSkip
	var problems []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !callsSkipUnderRace(fn.Body) {
				continue
			}
			if !strings.HasSuffix(path, "_test.go") || !isTest(fn) {
				problems = append(problems, fmt.Sprintf("%s: %s calls SkipUnderRace, and only a test (func TestX(t *testing.T)) may: the tests calling it would run nowhere", filepath.Join(rel, filepath.Base(path)), fn.Name.Name))
				continue
			}
			hits = append(hits, raceSkip{dir: rel, name: fn.Name.Name})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits, problems
}

// callsSkipUnderRace reports whether body calls SkipUnderRace, qualified
// or not.
func callsSkipUnderRace(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch f := call.Fun.(type) {
		case *ast.SelectorExpr:
			found = found || f.Sel.Name == "SkipUnderRace"
		case *ast.Ident:
			found = found || f.Name == "SkipUnderRace"
		}
		return true
	})
	return found
}

// isTest reports whether fn is func TestX(t *testing.T).
func isTest(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || len(fn.Type.Params.List) != 1 || len(fn.Type.Params.List[0].Names) > 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && sel.Sel.Name == "T"
}

// Each way of leaving a NORACE test unrun is named: a second assignment,
// -race on its go test, no DRIVEQUAL_NORACE_RUN=1, its status not
// waited for, and a helper, or a file that is not a test's, calling
// SkipUnderRace.
func TestNoRaceProblemsNamed(t *testing.T) {
	good := readMakefile(t)
	if p := noRaceMakefileProblems(string(good)); len(p) != 0 {
		t.Fatalf("the Makefile: %v", p)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"appended", "NORACE_PKGS = ", "NORACE_TESTS += TestX\nNORACE_PKGS = ", "must set NORACE_TESTS once"},
		{"race", "-run='^($(NORACE_TESTS))$$'", "-race -run='^($(NORACE_TESTS))$$'", "with -race, where they skip"},
		{"no env", "DRIVEQUAL_NORACE_RUN=1 nice", "nice", "without DRIVEQUAL_NORACE_RUN=1"},
		{"not waited", "wait $$norace || rc=1; ", "", "does not fail when"},
		{"commented", "\tDRIVEQUAL_NORACE_RUN=1 nice", "#\tDRIVEQUAL_NORACE_RUN=1 nice", "runs no go test of NORACE_TESTS"},
	} {
		bad := strings.Replace(string(good), c.old, c.new, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q is not in the Makefile", c.name, c.old)
		}
		if p := noRaceMakefileProblems(bad); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, p, c.want)
		}
	}

	dir := t.TempDir()
	files := map[string]string{
		"a/a_test.go": "package a\nimport (\"testing\"; \"x/testenv\")\nfunc heavy(t *testing.T) { testenv.SkipUnderRace(t) }\nfunc TestA(t *testing.T) { heavy(t) }\n",
		"b/b.go":      "package b\nimport (\"testing\"; \"x/testenv\")\nfunc Skip(t *testing.T) { testenv.SkipUnderRace(t) }\n",
		"c/c_test.go": "package c\nimport (\"testing\"; \"x/testenv\")\nfunc TestC(t *testing.T) { testenv.SkipUnderRace(t) }\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hits, problems := skipUnderRaceCallers(t, dir)
	if want := []raceSkip{{dir: "c", name: "TestC"}}; !slices.Equal(hits, want) {
		t.Errorf("tests that skip: %v, want %v", hits, want)
	}
	for _, want := range []string{"heavy calls SkipUnderRace", "Skip calls SkipUnderRace"} {
		if !slices.ContainsFunc(problems, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("problems %q, want one saying %q", problems, want)
		}
	}
}
