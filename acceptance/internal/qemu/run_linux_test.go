package qemu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeQEMU puts a qemu-system-x86_64 on PATH that runs kvm under -accel
// kvm and otherwise does what the guest's /init does, on the host: says it
// started, runs the work directory's run.sh and writes its output and exit
// status beside it. Each call's accelerator is appended to the file it
// returns.
func fakeQEMU(t *testing.T, kvm string) (calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	script := `#!/bin/sh
accel=; prev=
for a in "$@"; do
  [ "$prev" = -accel ] && accel=$a
  prev=$a
done
echo "$accel" >>` + shellQuote(calls) + `
work=$(printf '%s\n' "$@" | sed -n 's/.*drivequal\.work=\([^ ]*\).*/\1/p')
if [ "$accel" = kvm ]; then
` + kvm + `
:
fi
echo "drivequal-init: started"
sh "$work/run.sh" >"$work/output" 2>&1
echo $? >"$work/exit"
`
	installQEMU(t, dir, script)
	return calls
}

// installQEMU puts script in dir as the qemu-system-x86_64 that t's
// tests start, ahead of the real one on PATH.
func installQEMU(t *testing.T, dir, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "qemu-system-x86_64"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestRunFallback runs Machine.Run with a QEMU that fails under KVM in
// each way one can before the guest's init speaks, and checks that the
// guest then runs under TCG, once, with the reason in Result.Fallback; and
// that a guest whose init has spoken is not run again.
func TestRunFallback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kvm       string   // what the fake QEMU does under -accel kvm
		accels    []string // Machine.Accels; nil: kvm, tcg
		calls     string   // accelerators tried, in order
		accel     string   // Result.Accel
		fallback  []string // in Result.Fallback
		err       string   // in Run's error; "": none
		wallUnder time.Duration
	}{{
		name: "abort", // QEMU 7.2 on a host whose KVM refuses an MSR
		kvm: `echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion failed." >&2
kill -ABRT $$`,
		calls: "kvm tcg", accel: "tcg",
		fallback: []string{"kvm: QEMU stopped after ", "before the guest's init spoke: signal: aborted: qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69 / qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183"},
	}, {
		name:  "exit status",
		kvm:   `echo "qemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied" >&2; exit 1`,
		calls: "kvm tcg", accel: "tcg",
		fallback: []string{"kvm: QEMU stopped after ", "exit status 1: qemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied"},
	}, {
		name:  "clean exit before init", // a kernel panic, with -no-reboot
		kvm:   `echo "Kernel panic - not syncing: Attempted to kill init!"; exit 0`,
		calls: "kvm tcg", accel: "tcg",
		fallback: []string{"kvm: QEMU exited after ", "before the guest's init spoke: Kernel panic - not syncing"},
	}, {
		name:  "hang",
		kvm:   `echo "SeaBIOS (version 1.16.2-debian-1.16.2-1)"; exec sleep 60`,
		calls: "kvm tcg", accel: "tcg",
		fallback:  []string{"kvm: the guest's init had not spoken after 1s: ", "SeaBIOS"},
		wallUnder: 20 * time.Second,
	}, {
		name:  "init spoke", // the guest's own failure: not retried
		kvm:   `echo "drivequal-init: started"; kill -ABRT $$`,
		calls: "kvm", accel: "kvm",
		err: "qemu-system-x86_64 (kvm): signal: aborted",
	}, {
		name:   "nothing to fall back on",
		kvm:    `kill -ABRT $$`,
		accels: []string{"kvm"},
		calls:  "kvm", accel: "kvm",
		err: "qemu-system-x86_64 (kvm): signal: aborted",
	}, {
		// The boot bound is for a try with a fallback after it: the last
		// one (TCG, which boots in 15-35 s on a busy host) has none.
		name:   "slow boot of the last try",
		kvm:    `echo "SeaBIOS (version 1.16.2-debian-1.16.2-1)"; sleep 3`,
		accels: []string{"kvm"},
		calls:  "kvm", accel: "kvm",
	}, {
		name:   "tcg alone",
		accels: []string{"tcg"},
		calls:  "tcg", accel: "tcg",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			calls := fakeQEMU(t, tc.kvm)
			m := Machine{Accels: tc.accels, BootBound: time.Second}
			if m.Accels == nil {
				m.Accels = []string{"kvm", "tcg"}
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			start := time.Now()
			res, err := m.Run(ctx, Kernel{Image: "/boot/vmlinuz-x"}, []byte("initrd"), t.TempDir(), "echo hello from the guest; exit 3\n")
			wall := time.Since(start)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Run error = %v, want %q", err, tc.err)
			}
			data, _ := os.ReadFile(calls)
			if got := strings.Join(strings.Fields(string(data)), " "); got != tc.calls {
				t.Errorf("accelerators tried = %q, want %q", got, tc.calls)
			}
			if res.Accel != tc.accel {
				t.Errorf("Result.Accel = %q, want %q", res.Accel, tc.accel)
			}
			for _, want := range tc.fallback {
				if !strings.Contains(res.Fallback, want) {
					t.Errorf("Result.Fallback = %q, want it to hold %q", res.Fallback, want)
				}
			}
			if len(tc.fallback) == 0 && res.Fallback != "" {
				t.Errorf("Result.Fallback = %q, want none", res.Fallback)
			}
			if tc.err == "" && (res.Exit != 3 || res.Output != "hello from the guest\n") {
				t.Errorf("Result exit %d, output %q; want the script's: 3, %q", res.Exit, res.Output, "hello from the guest\n")
			}
			if tc.wallUnder > 0 && wall > tc.wallUnder {
				t.Errorf("Run took %s, want under %s (the boot bound is 1 s)", wall, tc.wallUnder)
			}
		})
	}
}

// TestRunCanceled: a run stopped by its context is not tried again.
func TestRunCanceled(t *testing.T) {
	calls := fakeQEMU(t, `exec sleep 60`)
	m := Machine{Accels: []string{"kvm", "tcg"}, BootBound: time.Minute}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err := m.Run(ctx, Kernel{}, nil, t.TempDir(), "true\n")
	if err == nil || !strings.Contains(err.Error(), "stopped after") {
		t.Errorf("Run error = %v, want one saying QEMU was stopped", err)
	}
	if data, _ := os.ReadFile(calls); strings.TrimSpace(string(data)) != "kvm" {
		t.Errorf("accelerators tried = %q, want kvm alone", data)
	}
}

// TestRunScriptRanNotRetried: a try whose guest ran the script is never
// tried again, even when the console does not hold init's first words (a
// kernel message printed into the middle of that line, or an init that
// says something else): the script may be a destructive test, and its
// second run would start from the first run's namespace images.
func TestRunScriptRanNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name, kvm string
		exit      int
	}{{
		name: "success", // the fake's own /init, but its first line cut by a kernel message
		kvm: `printf 'drivequal-in[    2.104] nvme nvme0: I/O 17 QID 0 timeout\nit: started\n'
sh "$work/run.sh" >"$work/output" 2>&1
echo $? >"$work/exit"
exit 0`,
		exit: 3,
	}, {
		name: "QEMU aborted after the script started",
		kvm: `sh "$work/run.sh" >"$work/output" 2>&1
kill -ABRT $$`,
		exit: -1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			calls := fakeQEMU(t, tc.kvm)
			work := t.TempDir()
			m := Machine{Accels: []string{"kvm", "tcg"}, BootBound: time.Minute}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			res, _ := m.Run(ctx, Kernel{}, nil, work, "echo run >>"+shellQuote(filepath.Join(work, "runs"))+"; echo hello from the guest; exit 3\n")
			if data, _ := os.ReadFile(calls); strings.TrimSpace(string(data)) != "kvm" {
				t.Errorf("accelerators tried = %q, want kvm alone", strings.Fields(string(data)))
			}
			if data, _ := os.ReadFile(filepath.Join(work, "runs")); string(data) != "run\n" {
				t.Errorf("the script ran %d times, want once", strings.Count(string(data), "run"))
			}
			if res.Accel != "kvm" || res.Exit != tc.exit || res.Fallback != "" {
				t.Errorf("Result accel %q, exit %d, fallback %q; want kvm's own, exit %d, no fallback", res.Accel, res.Exit, res.Fallback, tc.exit)
			}
		})
	}
}

// TestRunStartBound: a guest whose kernel hangs after init spoke and
// before the script starts (a module's insmod blocked) is stopped at
// StartBound and booted once more under the same accelerator, with the
// reason in Result.Rebooted; one that hangs again is stopped the same way
// and not booted a third time; and a guest that has started the script is never booted again,
// however long it runs.
func TestRunStartBound(t *testing.T) {
	const hang = `echo "drivequal-init: started"; echo "INFO: task insmod:137 blocked for more than 120 seconds."; exec sleep 60`
	const runs = `echo "drivequal-init: started"; echo "drivequal-init: running $work/run.sh"
sh "$work/run.sh" >"$work/output" 2>&1
echo $? >"$work/exit"`
	for _, tc := range []struct {
		name     string
		boots    []string // what the fake QEMU does at each call
		calls    int
		exit     int
		rebooted string
		err      string
	}{{
		name:  "hung once",
		boots: []string{hang, runs},
		calls: 2, exit: 3, rebooted: "the guest had not started the script after 1s: ",
	}, {
		name:  "hung twice",
		boots: []string{hang, hang},
		calls: 2, exit: -1, rebooted: "task insmod:137 blocked",
		err: "(tcg): the guest had not started the script after 1s",
	}, {
		name:  "script started then slow",
		boots: []string{`echo "drivequal-init: started"; echo "drivequal-init: running $work/run.sh"; sh "$work/run.sh" >"$work/output" 2>&1; sleep 3; echo 0 >"$work/exit"`},
		calls: 1, exit: 0,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := filepath.Join(dir, "calls")
			script := "#!/bin/sh\nwork=$(printf '%s\\n' \"$@\" | sed -n 's/.*drivequal\\.work=\\([^ ]*\\).*/\\1/p')\necho call >>" + shellQuote(calls) + "\nn=$(wc -l <" + shellQuote(calls) + ")\n"
			for i, b := range tc.boots {
				script += fmt.Sprintf("if [ \"$n\" = %d ]; then\n%s\nexit 0\nfi\n", i+1, b)
			}
			script += "exit 1\n"
			installQEMU(t, dir, script)
			m := Machine{Accels: []string{"tcg"}, StartBound: time.Second}
			ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
			defer cancel()
			res, err := m.Run(ctx, Kernel{}, nil, t.TempDir(), "echo hello from the guest; exit 3\n")
			if data, _ := os.ReadFile(calls); strings.Count(string(data), "call") != tc.calls {
				t.Errorf("QEMU started %d times, want %d", strings.Count(string(data), "call"), tc.calls)
			}
			if res.Exit != tc.exit {
				t.Errorf("Result.Exit = %d, want %d (output %q)", res.Exit, tc.exit, res.Output)
			}
			if tc.rebooted == "" && res.Rebooted != "" || !strings.Contains(res.Rebooted, tc.rebooted) {
				t.Errorf("Result.Rebooted = %q, want %q", res.Rebooted, tc.rebooted)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("Run error = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestRunExitBound: a guest that has written its script's exit status and
// then does not power off (its sync hung on a controller) is stopped
// ExitBound later, the script's result kept and no error returned; one
// that powers off is not stopped.
func TestRunExitBound(t *testing.T) {
	for _, tc := range []struct {
		name, after string
		stuck       bool
	}{{"hangs", "exec sleep 60", true}, {"powers off", "exit 0", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := "#!/bin/sh\nwork=$(printf '%s\\n' \"$@\" | sed -n 's/.*drivequal\\.work=\\([^ ]*\\).*/\\1/p')\n" +
				`echo "drivequal-init: started"; echo "drivequal-init: running $work/run.sh"` + "\n" +
				`sh "$work/run.sh" >"$work/output" 2>&1; echo $? >"$work/exit"` + "\n" + tc.after + "\n"
			installQEMU(t, dir, script)
			m := Machine{Accels: []string{"tcg"}, ExitBound: time.Second}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			res, err := m.Run(ctx, Kernel{}, nil, t.TempDir(), "echo hello from the guest; exit 3\n")
			if err != nil || ctx.Err() != nil {
				t.Fatalf("Run error = %v (ctx %v), want none", err, ctx.Err())
			}
			if res.Exit != 3 || !strings.Contains(res.Output, "hello from the guest") {
				t.Errorf("Result.Exit = %d, Output %q: want the script's 3 and its output", res.Exit, res.Output)
			}
			if got := res.Stuck != ""; got != tc.stuck {
				t.Errorf("Result.Stuck = %q, want stopped: %v", res.Stuck, tc.stuck)
			}
			if tc.stuck && !strings.Contains(res.Stuck, "had not powered off 1s after its script's exit status") {
				t.Errorf("Result.Stuck = %q", res.Stuck)
			}
			if tc.stuck && res.Wall > 20*time.Second {
				t.Errorf("stopped after %s, want soon after the 1 s bound", res.Wall)
			}
		})
	}
}
