package cycle

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// A power command runs with the drive's values in the suite's
// environment less its own DQ_ variables: a DQ_SLOT the shell exported
// never stands for a drive's slot. Its log names the drive's values, not
// the suite's environment (a BMC's password a script reads from it).
func TestCommandEnvironment(t *testing.T) {
	t.Setenv("DQ_SLOT", "9")
	t.Setenv("DQ_TEST_SECRET", "hunter2")
	log := filepath.Join(t.TempDir(), "cut.log")
	if err := Command(context.Background(), `echo "slot=${DQ_SLOT-unset} path=$DQ_PATH home=${HOME:+set}"`, []string{"DQ_PATH=/dev/x"}, log); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if !strings.Contains(got, "slot=unset path=/dev/x home=set\n") {
		t.Errorf("the command saw %q: want no DQ_SLOT, the drive's path, the suite's HOME", got)
	}
	if !strings.HasPrefix(got, "$ DQ_PATH=/dev/x sh -c ") || strings.Contains(got, "hunter2") || strings.Contains(got, "HOME=") {
		t.Errorf("log %q: want the drive's values alone before the command", got)
	}
}
