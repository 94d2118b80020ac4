package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// GlobTwins makes two directories side by side in a temporary one,
// mine "run[1]" and other "run1", with name in other (empty): a glob of
// filepath.Join(mine, pattern), which reads mine's brackets as a
// pattern, finds other's file.
func GlobTwins(t testing.TB, name string) (mine, other string) {
	t.Helper()
	base := t.TempDir()
	mine, other = filepath.Join(base, "run[1]"), filepath.Join(base, "run1")
	for _, d := range []string{mine, filepath.Dir(filepath.Join(other, name))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(mine, name)); len(m) != 1 {
		t.Fatalf("a glob through %s found %q, not %s's file: the twins show nothing", mine, m, other)
	}
	return mine, other
}
