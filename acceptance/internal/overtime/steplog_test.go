package overtime

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/drivequal/drivequal/acceptance/internal/record"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// A step's log is found by its name in the recording's own prepare
// directory: a glob of the whole path read a -record directory "run[1]"
// as a pattern and found run1's.
func TestStepLogInItsOwnRecording(t *testing.T) {
	name := filepath.Join(record.PrepareDir(0), "001-fill"+record.LogExt)
	mine, _ := testenv.GlobTwins(t, name)
	if got, ok := stepLog(mine, 0, 1); ok {
		t.Errorf("stepLog(%s) = %s, another recording's", mine, got)
	}
	if err := os.MkdirAll(filepath.Join(mine, record.PrepareDir(0)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := stepLog(mine, 0, 1); !ok || got != "prepare/001-fill"+record.LogExt {
		t.Errorf("stepLog(%s) = %q, %v", mine, got, ok)
	}
}
