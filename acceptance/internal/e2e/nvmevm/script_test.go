package nvmevm

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The guest's nvme script and the Go wrapper it replaced (nvmeWrapper,
// this binary run as nvme-fake) are one contract, checked here on the
// host without a boot: the same stdout, stderr, stdin and exit status,
// and the same "ARGS -> exit N" line in DRIVEQUAL_NVME_LOG that the
// guest tests read (result.sent), for arguments with spaces,
// backslashes and leading dashes, with and without the log, and with
// DRIVEQUAL_NVME_REAL unset.
func TestNvmeScriptIsTheWrapper(t *testing.T) {
	if inGuest() {
		t.Skip("the guest's own run")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real-nvme")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf 'arg:%s\\n' \"$a\"; done\nprintf 'to stderr: %s\\n' \"$1\" >&2\ncat\nexit \"${STUB_EXIT:-0}\"\n"
	if err := os.WriteFile(real, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "nvme")
	if err := os.WriteFile(script, []byte(nvmeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "nvme-fake")
	if err := os.Symlink(self, wrapper); err != nil {
		t.Fatal(err)
	}

	type out struct {
		stdout, stderr, log string
		code                int
	}
	run := func(t *testing.T, bin string, env []string, args []string) out {
		t.Helper()
		log := filepath.Join(t.TempDir(), "nvme.log")
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for _, e := range env {
			cmd.Env = append(cmd.Env, strings.ReplaceAll(e, "@LOG@", log))
		}
		cmd.Stdin = strings.NewReader("from stdin\n")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		o := out{}
		var ee *exec.ExitError
		if err := cmd.Run(); errors.As(err, &ee) {
			o.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(log)
		o.stdout, o.stderr, o.log = stdout.String(), stderr.String(), string(b)
		return o
	}

	logged := []string{"DRIVEQUAL_NVME_REAL=" + real, "DRIVEQUAL_NVME_LOG=@LOG@"}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"format", append(logged, "STUB_EXIT=0"), []string{"format", "/dev/nvme0n1", "--ses=1", "--force"}},
		{"failing", append(logged, "STUB_EXIT=3"), []string{"id-ctrl", "/dev/nvme9", "-o", "json"}},
		{"spaces and dashes", append(logged, "STUB_EXIT=1"), []string{"-n", "a b", "-e", ""}},
		{"backslashes", logged, []string{`/dev/disk/by-id/nvme-A\cB`, `x\ny`, `\\`, `\0101`}},
		{"no log", []string{"DRIVEQUAL_NVME_REAL=" + real, "STUB_EXIT=5"}, []string{"smart-log", "/dev/nvme0n1"}},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			got, want := run(t, script, tt.env, tt.args), run(t, wrapper, tt.env, tt.args)
			if got != want {
				t.Errorf("nvme %q: the script gives\n%+v\nthe wrapper\n%+v", tt.args, got, want)
			}
			if strings.Contains(strings.Join(tt.env, " "), "DRIVEQUAL_NVME_LOG") && want.log == "" {
				t.Errorf("the wrapper logged nothing for %q", tt.args)
			}
		})
	}
	// Without DRIVEQUAL_NVME_REAL both run the installed nvme-cli.
	if _, err := os.Stat("/usr/sbin/nvme"); err == nil {
		t.Run("installed_nvme-cli", func(t *testing.T) {
			env := []string{"DRIVEQUAL_NVME_LOG=@LOG@"}
			got, want := run(t, script, env, []string{"version"}), run(t, wrapper, env, []string{"version"})
			if got != want || want.code != 0 {
				t.Errorf("nvme version: the script gives\n%+v\nthe wrapper\n%+v", got, want)
			}
		})
	}
}
