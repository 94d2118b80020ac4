// Package nvme reads NVMe identity and health through nvme-cli.
//
// It runs and parses the controller's identify data (id-ctrl), the SMART
// / health log (smart-log), the sanitize status log (sanitize-log) and
// nvme-cli's own version.
//
// Every command is a real nvme-cli process that belongs to its caller: it
// runs in its own process group, is killed with the group when the context
// ends, and is killed by the kernel if the process that started it dies.
// That needs Linux; elsewhere Run returns an error saying so, and only the
// parsers are of use.
// The package parses what nvme-cli prints in every JSON dialect it has had
// (see Uint128 for the 128-bit counters); it never prints anything itself.
//
// Temperatures are in kelvin, as NVMe reports them; Celsius converts.
package nvme

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// ErrNotInstalled is returned (wrapped) when the nvme-cli executable cannot
// be found.
var ErrNotInstalled = errors.New("nvme-cli is not installed")

// CLI runs nvme-cli. The zero value runs "nvme" from PATH.
type CLI struct {
	// Binary is the nvme-cli executable: a name looked up in PATH or a
	// path. "" means "nvme". Tests point it (or PATH) at a fake script.
	Binary string
	// WaitDelay bounds how long a killed nvme-cli may keep its output
	// pipes open; 0 means 5 seconds.
	WaitDelay time.Duration
}

func (c CLI) binary() string {
	if c.Binary == "" {
		return "nvme"
	}
	return c.Binary
}

// Check reports whether nvme-cli can be run, as an error wrapping
// ErrNotInstalled that says how to install it.
func (c CLI) Check() error {
	if _, err := exec.LookPath(c.binary()); err != nil {
		return fmt.Errorf("running %s: %w: install it (apt-get install nvme-cli, dnf install nvme-cli) or put it on PATH", c.binary(), ErrNotInstalled)
	}
	return nil
}

// CommandError is a nvme-cli run that did not exit 0.
type CommandError struct {
	Argv   []string // the command as run
	Stderr string   // what nvme-cli printed on stderr, trimmed
	Err    error    // *exec.ExitError, or the context's error when it was killed
}

// ansiEscape matches a terminal control sequence (CSI: ESC [ ... final
// byte), as nvme-cli prints around its usage text.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]`)

// ErrorText is what nvme-cli printed on stderr as an error: its lines up to
// the usage text it prints after an error ("Usage: nvme format <device>
// [OPTIONS]" and the command's help), without terminal escape sequences,
// trimmed.
func ErrorText(stderr string) string {
	var keep []string
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(stderr, ""), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "Usage: nvme") {
			break
		}
		keep = append(keep, line)
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == 0x1b {
			return -1
		}
		return r
	}, strings.Join(keep, "\n")))
}

func (e *CommandError) Error() string {
	msg := strings.Join(e.Argv, " ") + ": " + e.Err.Error()
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run runs nvme-cli with args and returns its stdout. A run that does not
// exit 0 is a *CommandError carrying stderr; a missing nvme-cli wraps
// ErrNotInstalled. When ctx ends, the process group is killed and the
// error wraps ctx.Err(). On systems other than Linux nothing is started:
// the *CommandError says running nvme-cli needs Linux.
func (c CLI) Run(ctx context.Context, args ...string) ([]byte, error) {
	argv := append([]string{c.binary()}, args...)
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("running %s: %w: install it (apt-get install nvme-cli, dnf install nvme-cli) or put it on PATH", argv[0], ErrNotInstalled)
	}
	if err := ctx.Err(); err != nil {
		return nil, &CommandError{Argv: argv, Err: err}
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	started, err := run(cmd)
	if !started {
		return nil, &CommandError{Argv: argv, Err: err}
	}
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return stdout.Bytes(), &CommandError{Argv: argv, Stderr: ErrorText(stderr.String()), Err: err}
	}
	return stdout.Bytes(), nil
}

// IDCtrl reads the identify-controller data of dev (/dev/nvme0, or any of
// its namespaces) with `nvme id-ctrl DEV -o json`.
func (c CLI) IDCtrl(ctx context.Context, dev string) (Controller, error) {
	out, err := c.Run(ctx, "id-ctrl", dev, "-o", "json")
	if err != nil {
		return Controller{}, fmt.Errorf("reading the identity of %s: %w", dev, err)
	}
	ctrl, err := ParseIDCtrl(out)
	if err != nil {
		return Controller{}, fmt.Errorf("reading the identity of %s: nvme id-ctrl output: %w", dev, err)
	}
	return ctrl, nil
}

// SmartLog reads the SMART / health log of dev with
// `nvme smart-log DEV -o json`.
func (c CLI) SmartLog(ctx context.Context, dev string) (SmartLog, error) {
	out, err := c.Run(ctx, "smart-log", dev, "-o", "json")
	if err != nil {
		return SmartLog{}, fmt.Errorf("reading the health log of %s: %w", dev, err)
	}
	l, err := ParseSmartLog(out)
	if err != nil {
		return SmartLog{}, fmt.Errorf("reading the health log of %s: nvme smart-log output: %w", dev, err)
	}
	return l, nil
}

// SanitizeLog reads the sanitize status log of controller ctrl
// (/dev/nvme0) with `nvme sanitize-log CTRL -o json`.
func (c CLI) SanitizeLog(ctx context.Context, ctrl string) (SanitizeLog, error) {
	out, err := c.Run(ctx, "sanitize-log", ctrl, "-o", "json")
	if err != nil {
		return SanitizeLog{}, fmt.Errorf("reading the sanitize log of %s: %w", ctrl, err)
	}
	l, err := ParseSanitizeLog(out)
	if err != nil {
		return SanitizeLog{}, fmt.Errorf("reading the sanitize log of %s: nvme sanitize-log output: %w", ctrl, err)
	}
	return l, nil
}

// Version returns nvme-cli's version ("2.4"), from `nvme version`.
func (c CLI) Version(ctx context.Context) (string, error) {
	out, err := c.Run(ctx, "version")
	if err != nil {
		return "", fmt.Errorf("reading the nvme-cli version: %w", err)
	}
	v, err := ParseVersion(out)
	if err != nil {
		return "", fmt.Errorf("reading the nvme-cli version: %w", err)
	}
	return v, nil
}

// ParseVersion reads the version from what `nvme version` prints:
// "nvme version 2.4 (git 2.4+)" (v2.x) or "nvme version 1.16" (v1.x).
func ParseVersion(out []byte) (string, error) {
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "nvme" && f[1] == "version" {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("no \"nvme version X\" line in %q", firstLine(out))
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
