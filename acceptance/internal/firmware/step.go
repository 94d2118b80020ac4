package firmware

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/nvme"
)

// Input is one drive's step.
type Input struct {
	Drive  string // the drive as given
	Device string // the block device fio loads
	Admin  string // where nvme-cli's commands go: the controller, else the drive
	Image  string
	Step   string
	Action string
	Slot   int
	// MaxStall is the spec's bound; Allowed its [health] firmware list.
	MaxStall time.Duration
	Allowed  []string
	// Want is the revision the step must end on ("" for the activation).
	Want string
	NVMe nvme.CLI
	// Dir keeps fio's job file, output and logs.
	Dir string
	// Settle is the load before the download (counted from its first
	// I/O the kernel saw complete on Device) and after the commit; 0
	// means one second.
	Settle time.Duration
}

// LoadStart bounds the wait for the load's first I/O before the settle.
const LoadStart = 30 * time.Second

// Job is the load's fio job file on dev, its logs under prefix: a 4 KiB
// random writer that reads back every block it wrote, 16 at a time, with
// a checksum and header (verify_backlog, fatal on a mismatch), beside a
// 4 KiB random reader; each logs the highest completion latency of every
// 10 ms window that completed I/O, so that a window without completion
// shows as a gap. It runs until stopped, which leaves no verify state
// file behind (verify_state_save=0).
func Job(dev, prefix string) string {
	return fmt.Sprintf(`[global]
filename=%s
ioengine=libaio
direct=1
bs=4k
iodepth=8
time_based=1
runtime=3600
log_avg_msec=10
log_max_value=1
[write]
rw=randwrite
verify=crc32c
verify_backlog=16
verify_fatal=1
verify_state_save=0
write_lat_log=%s-write
[read]
rw=randread
write_lat_log=%s-read
`, dev, prefix, prefix)
}

// Step runs in's step: the revisions and slot log before, the load
// started, the image downloaded and committed (and the controller reset
// for an activation at reset), the load run on and stopped, the revisions
// and slot log after, all judged.
func Step(ctx context.Context, in Input) Result {
	r := Result{Drive: in.Drive, Step: in.Step, Image: in.Image, Action: in.Action, Slot: in.Slot}
	if fi, err := os.Stat(in.Image); err == nil {
		r.ImageBytes = fi.Size()
	}
	o := Observed{Want: in.Want, MaxStall: in.MaxStall, Allowed: in.Allowed, Slot: in.Slot}
	fail := func(err error) Result {
		o.CmdErr = err
		o.StallErr = errors.New("no load was run")
		Judge(&r, o)
		return r
	}
	var err error
	if o.Before, o.IdentityBefore, err = identity(ctx, in.NVMe, in.Admin); err != nil {
		return fail(err)
	}
	if o.LogBefore, err = slotLog(ctx, in.NVMe, in.Admin); err != nil {
		return fail(err)
	}
	settle := in.Settle
	if settle == 0 {
		settle = time.Second
	}
	prefix := filepath.Join(in.Dir, "firmware-"+in.Step)
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return fail(err)
	}
	jobFile := prefix + ".fio"
	if err := os.WriteFile(jobFile, []byte(Job(in.Device, prefix)), 0o644); err != nil {
		return fail(err)
	}
	since, statErr := completed(in.Device)
	fio := exec.CommandContext(ctx, "fio", "--output-format=json", "--output="+prefix+".json", jobFile)
	fio.Dir = in.Dir
	fio.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fio.Cancel = func() error { return syscall.Kill(-fio.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	fio.Stderr = &stderr
	if err := fio.Start(); err != nil {
		return fail(fmt.Errorf("starting fio: %w", err))
	}
	done := make(chan error, 1)
	loadCtx, loadEnded := context.WithCancel(ctx)
	defer loadEnded()
	go func() {
		err := fio.Wait()
		loadEnded()
		done <- err
	}()
	// The settle counts from the load's first I/O, not from fio's start.
	if statErr == nil {
		waitLoad(loadCtx, in.Device, since, LoadStart)
	}
	sleep(ctx, settle)
	commit := []string{"fw-commit", in.Admin, "--slot=" + strconv.Itoa(in.Slot), "--action=" + strconv.Itoa(CommitAction(in.Action))}
	cmds := [][]string{{"fw-download", in.Admin, "--fw=" + in.Image}, commit}
	if CommitAction(in.Action) != 3 {
		cmds = append(cmds, []string{"reset", in.Admin})
	}
	for _, c := range cmds {
		r.Commands = append(r.Commands, "nvme "+strings.Join(c, " "))
		if _, err := in.NVMe.Run(ctx, c...); err != nil {
			o.CmdErr = err
			break
		}
	}
	sleep(ctx, settle)
	_ = syscall.Kill(-fio.Process.Pid, syscall.SIGINT)
	var fioErr error
	select {
	case fioErr = <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-fio.Process.Pid, syscall.SIGKILL)
		fioErr = <-done
	}
	o.FioErr = fioResult(prefix+".json", fioErr, stderr.String())
	o.Stall, o.StallErr = readLogFiles(prefix)
	if a, id, err := identity(ctx, in.NVMe, in.Admin); err != nil {
		o.CmdErr = errors.Join(o.CmdErr, err)
	} else {
		o.After, o.IdentityAfter = a, id
	}
	if l, err := slotLog(ctx, in.NVMe, in.Admin); err != nil {
		o.CmdErr = errors.Join(o.CmdErr, err)
	} else {
		o.LogAfter = l
	}
	Judge(&r, o)
	return r
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func identity(ctx context.Context, cli nvme.CLI, dev string) (rev, id string, err error) {
	c, err := cli.IDCtrl(ctx, dev)
	if err != nil {
		return "", "", err
	}
	return c.Firmware, c.Model + " serial " + c.Serial, nil
}

func slotLog(ctx context.Context, cli nvme.CLI, dev string) (SlotLog, error) {
	out, err := cli.Run(ctx, "fw-log", dev, "-o", "json")
	if err != nil {
		return SlotLog{}, fmt.Errorf("reading the firmware slot log of %s: %w", dev, err)
	}
	l, err := ParseSlotLog(out)
	if err != nil {
		return SlotLog{}, fmt.Errorf("%s: %w", dev, err)
	}
	return l, nil
}

// readLogFiles reads the completion latency logs fio wrote under prefix.
func readLogFiles(prefix string) (Stall, error) {
	paths, _ := filepath.Glob(prefix + "-*_clat.*.log")
	if len(paths) == 0 {
		return Stall{}, fmt.Errorf("fio wrote no latency log under %s", prefix)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return Stall{}, err
		}
		files = append(files, f)
	}
	return ReadLogs(files2readers(files)...)
}
