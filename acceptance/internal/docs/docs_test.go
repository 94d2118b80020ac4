package docs

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/qual/cmdline"
	"github.com/drivequal/drivequal/specs"
)

// The places the checked facts come from, named in the problems.
const (
	flagsFrom = "acceptance/internal/qual/cmdline/config.go, Flags.Register"
	keysFrom  = "specs/schema.go, read by specs.Keys"
)

// root is the module root, three levels above this package.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", r, err)
	}
	return r
}

func pages(t *testing.T) []Page {
	t.Helper()
	ps, err := Pages(root(t))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func report(t *testing.T, problems []Problem) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

// suiteFlags is the suite's own flag set, registered as TestMain does.
func suiteFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("drivequal", flag.ContinueOnError)
	new(cmdline.Flags).Register(fs)
	return fs
}

// TestLinks: every relative link and #anchor of README.md, docs/ and
// specs/README.md resolves.
func TestLinks(t *testing.T) {
	report(t, Links(root(t), pages(t)))
}

// TestFlagsDocumented: every flag the suite registers is documented in a
// table, and the flag table documents no flag it does not register.
func TestFlagsDocumented(t *testing.T) {
	fs := suiteFlags()
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n < 10 {
		t.Fatalf("the suite registers %d flags: Register no longer defines them on the set it is given", n)
	}
	report(t, Flags(pages(t), fs, flagsFrom))
}

// TestSpecKeysDocumented: docs/spec.md's key table lists every key the
// spec parser accepts, once, with its default, and no key it refuses.
func TestSpecKeysDocumented(t *testing.T) {
	var spec Page
	for _, p := range pages(t) {
		if p.Path == SpecPage {
			spec = p
		}
	}
	if spec.Path == "" {
		t.Fatalf("%s is missing: it holds the spec's key reference", SpecPage)
	}
	report(t, SpecKeys(spec, specs.Keys(), keysFrom))
}

// TestOpenings: each docs/ page says first what it answers, and README.md
// links to each.
func TestOpenings(t *testing.T) {
	report(t, Openings(pages(t)))
}
