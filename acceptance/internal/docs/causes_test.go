package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var causeNameRE = regexp.MustCompile(`^Cause[A-Z]`)

// causeConstants reads every string constant named Cause… declared in
// the non-test Go files under acceptance/internal: its value, and where
// it is declared.
func causeConstants(t *testing.T) map[string]string {
	t.Helper()
	r := root(t)
	out := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(r, "acceptance", "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r, path)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !causeNameRE.MatchString(name.Name) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						return err
					}
					out[v] = filepath.ToSlash(rel) + ", " + name.Name
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

// TestCausesDocumented: docs/verdicts.md's cause table lists every cause
// a result can name, and no other.
func TestCausesDocumented(t *testing.T) {
	causes := causeConstants(t)
	if len(causes) < 20 {
		t.Fatalf("found %d Cause constants: the causes are no longer declared as Cause… string constants under acceptance/internal, which this test reads", len(causes))
	}
	report(t, Causes(pages(t), causes))
}

// TestCausesUndocumented: a cause missing from the table, and one the
// table names that no constant declares, are each a problem.
func TestCausesUndocumented(t *testing.T) {
	page := Page{Path: VerdictPage, Text: "# V\n\n| cause | verdict | when |\n|---|---|---|\n| `below spec` | fail | short |\n| `regresed` / `not comparable` | fail / inconclusive | TestBaseline |\n"}
	causes := map[string]string{"below spec": "report.go, CauseBelowSpec", "regressed": "baseline.go, CauseRegressed", "not comparable": "baseline.go, CauseNotComparable"}
	want(t, Causes([]Page{page}, causes),
		`docs/verdicts.md:6: cause "regresed" is documented but no Cause constant has that value: remove it, or fix it to one of "below spec", "not comparable", "regressed"`,
		`docs/verdicts.md:3: cause "regressed" (baseline.go, CauseRegressed) is not in the cause table: add a row | `+"`regressed`"+` | its verdict | when |`,
	)
}
