package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeepList: an entry replaces the one it is the same as unless that
// one failed, a new one is added, and the file reads back as written; no
// file is an empty list, a file that is not the list is an error naming it.
func TestKeepList(t *testing.T) {
	type v struct{ Drive, Verdict string }
	same := func(k, r v) bool { return k.Drive == r.Drive }
	failed := func(k v) bool { return k.Verdict == "fail" }
	dir := t.TempDir()
	if got, err := LoadList[v](dir, "x.json", "drives"); err != nil || got != nil {
		t.Fatalf("no file: %v, %v; want none, no error", got, err)
	}
	for _, step := range [][]v{
		{{"a", "pass"}, {"b", "fail"}},
		{{"a", "fail"}, {"b", "pass"}, {"c", "pass"}},
		{{"a", "pass"}},
	} {
		if err := KeepList(dir, "x.json", "drives", step, same, failed); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LoadList[v](dir, "x.json", "drives")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]v{{"a", "fail"}, {"b", "fail"}, {"c", "pass"}}, got); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if err := os.WriteFile(filepath.Join(dir, "y.json"), []byte(`{"drives": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadList[v](dir, "y.json", "drives"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "y.json")) {
		t.Errorf("a file that is not a list: %v, want an error naming it", err)
	}
}
