package overtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/record"
)

// A step's log is found by its name in the recording's own prepare
// directory: a glob of the whole path read a -record directory "run[1]"
// as a pattern and found run1's.
func TestStepLogInItsOwnRecording(t *testing.T) {
	base := t.TempDir()
	mine, other := filepath.Join(base, "run[1]"), filepath.Join(base, "run1")
	for _, d := range []string{mine, other} {
		if err := os.MkdirAll(filepath.Join(d, record.PrepareDir(0)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, record.PrepareDir(0), "001-fill"+record.LogExt), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := stepLog(mine, 0, 1); ok {
		t.Errorf("stepLog(%s) = %s, another recording's", mine, got)
	}
	if err := os.WriteFile(filepath.Join(mine, record.PrepareDir(0), "001-fill"+record.LogExt), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := stepLog(mine, 0, 1); !ok || got != "prepare/001-fill"+record.LogExt {
		t.Errorf("stepLog(%s) = %q, %v", mine, got, ok)
	}
}
