package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// flagDefRE are the flag package's functions that define a flag.
var flagDefRE = regexp.MustCompile(`^(Bool|BoolFunc|Duration|Float64|Func|Int|Int64|String|TextVar|Uint|Uint64|Var)(Var)?$`)

// flagDefinitions are the calls in the Go files of dir that define a flag
// on the flag package's own set (flag.Bool(...), flag.CommandLine.Var(...)),
// each as FILE:LINE.
func flagDefinitions(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !flagDefRE.MatchString(sel.Sel.Name) {
				return true
			}
			onFlag := false
			switch x := sel.X.(type) {
			case *ast.Ident: // flag.Bool
				onFlag = x.Name == "flag"
			case *ast.SelectorExpr: // flag.CommandLine.Bool
				id, ok := x.X.(*ast.Ident)
				onFlag = ok && id.Name == "flag" && x.Sel.Name == "CommandLine"
			}
			if onFlag {
				p := fset.Position(call.Pos())
				out = append(out, fmt.Sprintf("%s:%d", filepath.ToSlash(p.Filename), p.Line))
			}
			return true
		})
	}
	return out, nil
}

// TestSuiteFlagsAllRegistered: the suite defines its flags only through
// cmdline.Flags.Register, the set TestFlagsDocumented checks, so that
// what -help lists and what the check reads are the same flags.
func TestSuiteFlagsAllRegistered(t *testing.T) {
	defs, err := flagDefinitions(filepath.Join(root(t), "acceptance"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		rel, err := filepath.Rel(root(t), filepath.FromSlash(d))
		if err != nil {
			rel = d
		}
		t.Errorf("%s: defines a suite flag outside %s, which the documentation check does not see: define it in Flags.Register and document it in %s", rel, flagsFrom, FlagPage)
	}
}

// TestFlagDefinitionsFound: a flag defined on the flag package's set, by
// a function or through flag.CommandLine, is found at its line; a flag
// defined on another set, and a flag read, are not.
func TestFlagDefinitionsFound(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport \"flag\"\n\nvar a = flag.Bool(\"a\", false, \"\")\n\nfunc init() {\n\tflag.CommandLine.StringVar(new(string), \"b\", \"\", \"\")\n\tfs := flag.NewFlagSet(\"x\", 0)\n\tfs.Bool(\"c\", false, \"\")\n\t_ = flag.Lookup(\"a\")\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "x_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defs, err := flagDefinitions(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.ToSlash(filepath.Join(dir, "x_test.go")) + ":5", filepath.ToSlash(filepath.Join(dir, "x_test.go")) + ":8"}
	if fmt.Sprint(defs) != fmt.Sprint(want) {
		t.Errorf("flagDefinitions = %q, want %q", defs, want)
	}
}
