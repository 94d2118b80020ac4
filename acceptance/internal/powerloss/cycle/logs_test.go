package cycle

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A cycle's logs are found by their names in its own directory, whatever
// the recording's directory is called: with a glob over the whole path,
// a -record directory "run[1]" matched "run1", another run's ledger.
func TestLogsMatchNamesOnly(t *testing.T) {
	base := t.TempDir()
	mine, other := filepath.Join(base, "run[1]"), filepath.Join(base, "run1")
	for _, d := range []string{mine, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sequential_lat.1.log"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mine, "sequential_clat.1.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := Logs(mine, "sequential_lat.*.log"), []string{filepath.Join(mine, "sequential_lat.1.log")}; !slices.Equal(got, want) {
		t.Errorf("Logs(%s) = %q, want %q", mine, got, want)
	}
	if got, _ := filepath.Glob(filepath.Join(mine, "sequential_lat.*.log")); slices.Equal(got, Logs(mine, "sequential_lat.*.log")) {
		t.Errorf("a glob of the whole path found the same (%q): the test's directories do not show the difference", got)
	}
	if got := Logs(filepath.Join(base, "none"), "*.log"); got != nil {
		t.Errorf("Logs of a missing directory = %q", got)
	}
}
