package dirglob

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// Names are matched in the directory given alone: a -record directory
// "run[1]" is not a pattern that finds "run1"'s files.
func TestMatchNamesOnly(t *testing.T) {
	mine, _ := testenv.GlobTwins(t, "sequential_lat.1.log")
	if got := Match(mine, "sequential_lat.*.log"); got != nil {
		t.Errorf("Match(%s) = %q, another directory's", mine, got)
	}
	for _, name := range []string{"sequential_lat.1.log", "sequential_clat.1.log"} {
		if err := os.WriteFile(filepath.Join(mine, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := Match(mine, "sequential_lat.*.log"), []string{filepath.Join(mine, "sequential_lat.1.log")}; !slices.Equal(got, want) {
		t.Errorf("Match(%s) = %q, want %q", mine, got, want)
	}
	if got := Match(filepath.Join(mine, "none"), "*.log"); got != nil {
		t.Errorf("Match of a missing directory = %q", got)
	}
}
