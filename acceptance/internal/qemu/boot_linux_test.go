package qemu_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/qemu"
	"github.com/drivequal/drivequal/acceptance/internal/testenv"
)

// TestBootFallsBackToTCG boots the installed kernel with the real
// initramfs under the real QEMU, through a qemu-system-x86_64 on PATH that
// aborts under -accel kvm as QEMU 7.2 does on a host whose KVM refuses an
// MSR, and checks that the guest then boots under TCG and runs its script.
// The smallest guest (one CPU, no NVMe) keeps it to one short TCG boot.
func TestBootFallsBackToTCG(t *testing.T) {
	kernel, busybox := testenv.MustHaveGuest(t)
	t.Parallel()
	real, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	initrd := testenv.Initramfs(t, kernel, busybox)
	bin := t.TempDir()
	wrapper := `#!/bin/sh
case " $* " in
*" -accel kvm "*)
  echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
  kill -ABRT $$ ;;
esac
exec '` + real + `' "$@"
`
	stand := filepath.Join(bin, "qemu-system-x86_64")
	if err := os.WriteFile(stand, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	m := qemu.Machine{Memory: 256, CPUs: 1, Accels: []string{"kvm", "tcg"}, Binary: stand}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := m.Run(ctx, kernel, initrd, t.TempDir(), "echo \"guest $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s\"\n")
	t.Logf("guest (%s): %s wall, exit %d; %s", res.Accel, res.Wall.Round(100*time.Millisecond), res.Exit, strings.TrimSpace(res.Output))
	if err != nil || res.Exit != 0 {
		t.Fatalf("guest: %v, exit %d\nconsole:\n%s\noutput:\n%s", err, res.Exit, res.Console, res.Output)
	}
	if res.Accel != "tcg" || !strings.Contains(res.Fallback, "kvm: QEMU stopped after") || !strings.Contains(res.Fallback, "signal: aborted: qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69") {
		t.Errorf("Accel %q, Fallback %q; want tcg, after kvm aborted naming the MSR", res.Accel, res.Fallback)
	}
	// Run tells a guest that has reached its init by this line: without it
	// on a real console, a try whose init failed would be tried again.
	if !strings.Contains(res.Console, "drivequal-init: started") {
		t.Errorf("console lacks init's first line %q:\n%s", "drivequal-init: started", res.Console)
	}
	if !strings.HasPrefix(res.Output, "guest "+kernel.Version+" up after ") {
		t.Errorf("output = %q, want the guest's kernel %s to say it is up", res.Output, kernel.Version)
	}
}
