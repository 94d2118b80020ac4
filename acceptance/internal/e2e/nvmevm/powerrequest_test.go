package nvmevm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The guest's power script and the host's request server, without a
// guest: `power cut S`, `power restore S` and `power cut-host` reach the
// boot's power function and exit 0 on its success, non-zero naming its error; a
// restore of DRIVEQUAL_QEMU_STAYS_OUT asks nothing; a boot with no power
// function answers every power request with an error.
func TestPowerRequests(t *testing.T) {
	if inGuest() {
		t.Skip("the host's test")
	}
	script := filepath.Join(t.TempDir(), "power")
	if err := os.WriteFile(script, []byte(powerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	power := func(_ context.Context, req powerRequest) error {
		mu.Lock()
		got = append(got, req.String())
		mu.Unlock()
		if req.Restore == "BROKEN" {
			return errors.New("nbdkit did not start")
		}
		return nil
	}
	run := func(work string, env []string, args ...string) (string, error) {
		cmd := exec.Command(script, args...)
		cmd.Env = append(append(os.Environ(), "DRIVEQUAL_QEMU_WORK="+work), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	served := serveRequests(ctx, t, work, filepath.Join(work, "no-qmp.sock"), power)
	for _, c := range []struct {
		args []string
		env  []string
		fail string
	}{
		{args: []string{"cut", "S1"}},
		{args: []string{"restore", "S1"}},
		{args: []string{"restore", "BROKEN"}, fail: "nbdkit did not start"},
		{args: []string{"restore", "S2"}, env: []string{"DRIVEQUAL_QEMU_STAYS_OUT=S2"}},
		{args: []string{"cut-host"}},
	} {
		out, err := run(work, c.env, c.args...)
		if (err != nil) != (c.fail != "") || !strings.Contains(out, c.fail) {
			t.Errorf("power %s: %v\n%s\nwant failure %q", strings.Join(c.args, " "), err, out, c.fail)
		}
	}
	cancel()
	<-served
	if want := []string{"cut S1", "restore S1", "restore BROKEN", "cut the host"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the host served %q, want %q (S2 stays out)", got, want)
	}

	work = t.TempDir()
	ctx, cancel = context.WithCancel(context.Background())
	served = serveRequests(ctx, t, work, filepath.Join(work, "no-qmp.sock"), nil)
	out, err := run(work, nil, "cut", "S1")
	cancel()
	<-served
	if err == nil || !strings.Contains(out, "this boot's controllers have no power the host cuts") {
		t.Errorf("a boot with no power function: %v\n%s", err, out)
	}
}
