package nvme

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCLIVersionAndSmartLog(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	smart, _ := filepath.Abs(filepath.Join(fixtures, "smart-log-v2.4-above-2-64.json"))
	cli := CLI{Binary: fakeNVMe(t, `echo "$@" >> `+argv+`
case "$1" in
version) echo "nvme version 2.9.1 (git 2.9.1)"; echo "libnvme version 1.9 (git 1.9)";;
smart-log) cat `+smart+`;;
*) echo "unknown command $1" >&2; exit 1;;
esac
`)}
	ctx := context.Background()
	if v, err := cli.Version(ctx); err != nil || v != "2.9.1" {
		t.Errorf("Version() = %q, %v, want \"2.9.1\"", v, err)
	}
	l, err := cli.SmartLog(ctx, "/dev/nvme0")
	if err != nil || l.DataUnitsRead.String() != "18446744073709551621" {
		t.Errorf("SmartLog() = %v, %v, want data_units_read 18446744073709551621", l.DataUnitsRead, err)
	}
	_, err = cli.IDCtrl(ctx, "/dev/nvme0")
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "unknown command id-ctrl") || !strings.Contains(err.Error(), "/dev/nvme0") {
		t.Errorf("IDCtrl() error = %v, want a *CommandError naming /dev/nvme0 with its stderr", err)
	}
	got, _ := os.ReadFile(argv)
	if want := "version\nsmart-log /dev/nvme0 -o json\nid-ctrl /dev/nvme0 -o json\n"; string(got) != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
}

// TestCLICancelKillsGroup: a cancelled context kills nvme-cli and whatever
// it started, promptly.
func TestCLICancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cli := CLI{Binary: fakeNVMe(t, `sleep 60 &
echo $! > `+pidFile+`.tmp; mv `+pidFile+`.tmp `+pidFile+`
wait
`), WaitDelay: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cli.Run(ctx, "sanitize", "/dev/nvme0", "--sanact=2")
		errc <- err
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the fake nvme never started its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run() after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return 10s after cancel")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run() took %v to return after cancel", d)
	}
	// The grandchild is gone (a zombie until its reaper runs counts as gone).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); err != nil || isZombie(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d of the fake nvme survived the cancel", pid)
		}
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
