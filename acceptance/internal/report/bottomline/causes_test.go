package bottomline_test

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/report"
	"github.com/drivequal/drivequal/acceptance/internal/report/bottomline"
)

// Every cause a result may carry has plain words and a next step: the
// causes are every string constant named Cause… in the non-test Go files
// under acceptance/internal, so a cause added anywhere is held to it.
func TestEveryCauseKnown(t *testing.T) {
	causes := causeConstants(t)
	if len(causes) < 30 {
		t.Fatalf("found %d Cause constants: the causes are no longer declared as Cause… string constants under acceptance/internal, which this test reads", len(causes))
	}
	for c, where := range causes {
		if !bottomline.Knows(c) {
			t.Errorf("cause %q (%s) has no plain words", c, where)
		}
	}
}

func causeConstants(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "..")
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == "testdata" {
			return cmp.Or(err, filepath.SkipDir)
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Cause") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return err
						}
						out[v] = path + ", " + name.Name
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// summary.md's first line is the bottom line.
func TestSummaryFirstLine(t *testing.T) {
	r := report.Run{Precondition: "quick", Results: []report.Result{{Kind: report.KindSingle, Capacity: "1.92TB", Workload: "4KB Random Read",
		Verdict: report.Inconclusive, Cause: report.CausePrecondition, Error: "measured with -precondition=quick"}}}
	first, _, _ := bytesCut(r.Summary())
	want := "**INCONCLUSIVE**: smoke test only: the drives were not preconditioned, so nothing can be qualified; next: run without -precondition=quick."
	if first != want {
		t.Errorf("summary.md's first line is\n%s\nwant\n%s", first, want)
	}
}

func bytesCut(b []byte) (string, string, bool) {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i]), string(b[i+1:]), true
		}
	}
	return string(b), "", false
}
