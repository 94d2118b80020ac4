package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Limits of the code's shape (see docs/code.md).
const (
	maxLines   = 2500 // non-test Go lines a package
	maxMethods = 25   // methods a named type
	// maxLive is how many times package qual and those below it may ask
	// whether the run is live (Config.Live): where Setup decides what the
	// run will do, never in judging.
	maxLive = 4
)

// pkg is one package's non-test source, parsed.
type pkg struct {
	dir   string // relative to the module root, slash-separated
	lines int
	files []*ast.File
}

// modulePackages parses every package of the module that has non-test Go
// files.
func modulePackages(t *testing.T) []*pkg {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
	byDir := map[string]*pkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, data, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := byDir[rel]
		if p == nil {
			p = &pkg{dir: rel}
			byDir[rel] = p
		}
		p.lines += strings.Count(string(data), "\n")
		p.files = append(p.files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []*pkg
	for _, p := range byDir {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	if len(out) < 20 {
		t.Fatalf("found %d packages under %s: the walk missed the module", len(out), root)
	}
	return out
}

// No package grows past maxLines non-test lines: a package that does
// holds more than one concern.
func TestPackageSize(t *testing.T) {
	for _, p := range modulePackages(t) {
		if p.lines > maxLines {
			t.Errorf("%s: %d non-test lines, more than %d: split it by concern", p.dir, p.lines, maxLines)
		}
	}
}

// No named type has more than maxMethods methods.
func TestMethodsPerType(t *testing.T) {
	for _, p := range modulePackages(t) {
		count := map[string]int{}
		for _, f := range p.files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) > 0 {
					count[receiverName(fd.Recv.List[0].Type)]++
				}
			}
		}
		for typ, n := range count {
			if n > maxMethods {
				t.Errorf("%s.%s has %d methods, more than %d: it owns more than one concern", p.dir, typ, n, maxMethods)
			}
		}
	}
}

func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// qualPackages are package qual and the packages below it.
func qualPackages(t *testing.T) []*pkg {
	var out []*pkg
	for _, p := range modulePackages(t) {
		if p.dir == "acceptance/internal/qual" || strings.HasPrefix(p.dir, "acceptance/internal/qual/") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("no package acceptance/internal/qual")
	}
	return out
}

// Judging does not ask whether the run is live: at most maxLive calls of
// Live() remain in package qual and below, and no type assertion picks
// the live runner, the executor or the recording reader out of an
// interface.
func TestOneSeamBetweenLiveAndReplay(t *testing.T) {
	pkgs := qualPackages(t)
	// The types of the pieces an interface must not be asked about.
	pieces := map[string]bool{}
	for _, p := range pkgs {
		if p.dir == "acceptance/internal/qual" || p.dir == "acceptance/internal/qual/cmdline" {
			continue
		}
		for _, f := range p.files {
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
					for _, s := range gd.Specs {
						pieces[s.(*ast.TypeSpec).Name.Name] = true
					}
				}
			}
		}
	}
	live := 0
	for _, p := range pkgs {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if se, ok := x.Fun.(*ast.SelectorExpr); ok && se.Sel.Name == "Live" && len(x.Args) == 0 {
						live++
					}
				case *ast.TypeAssertExpr:
					if x.Type == nil {
						return true // a type switch's x.(type), checked by its cases
					}
					if name := typeName(x.Type); pieces[name] {
						t.Errorf("%s: a type assertion to %s asks which piece the evidence is", p.dir, name)
					}
				case *ast.TypeSwitchStmt:
					for _, c := range x.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							if name := typeName(e); pieces[name] {
								t.Errorf("%s: a type switch case %s asks which piece the evidence is", p.dir, name)
							}
						}
					}
				}
				return true
			})
		}
	}
	if live > maxLive {
		t.Errorf("package qual and below call Live() %d times, more than %d: judging asks whether the run is live", live, maxLive)
	}
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// sentenceBreak is the end of a sentence followed by another.
var sentenceBreak = regexp.MustCompile(`[.!?]\s+[A-Z(]`)

// Every package's doc comment opens with one sentence that says its one
// job; details follow in later paragraphs.
func TestPackageDocIsOneSentence(t *testing.T) {
	for _, p := range modulePackages(t) {
		var doc string
		for _, f := range p.files {
			if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package ") {
				doc = f.Doc.Text()
			}
		}
		if p.files[0].Name.Name == "main" {
			continue
		}
		if doc == "" {
			t.Errorf("%s: no package doc comment (\"// Package %s ...\")", p.dir, p.files[0].Name.Name)
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(doc), "\n\n")
		first = strings.Join(strings.Fields(first), " ")
		if !strings.HasSuffix(first, ".") {
			t.Errorf("%s: the doc comment's first paragraph is not one sentence ending in a full stop: %q", p.dir, first)
		} else if loc := sentenceBreak.FindStringIndex(first); loc != nil {
			t.Errorf("%s: the doc comment's first paragraph is more than one sentence (%q …): say the package's one job in one, the rest after a blank line",
				p.dir, first[:loc[0]+1])
		}
	}
}
