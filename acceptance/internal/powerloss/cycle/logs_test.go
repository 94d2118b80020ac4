package cycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
