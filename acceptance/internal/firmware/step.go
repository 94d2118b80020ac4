package firmware

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drivequal/drivequal/acceptance/internal/dirglob"
	"github.com/drivequal/drivequal/acceptance/internal/nvme"
	"github.com/drivequal/drivequal/fiojob"
)

// Input is one drive's step.
type Input struct {
	Drive  string // the drive as given
	Device string // the block device fio loads
	// Others are the block devices of the controller's other given
	// namespaces: its commit reaches them too, and the load runs on them.
	Others []string
	// Known is the known region of each device (KnownBytes), written
	// before the download with Pattern and read back after the commit; 0
	// leaves it out.
	Known   int64
	Pattern uint64
	Admin   string // where nvme-cli's commands go: the controller, else the drive
	Image   string
	Step    string
	Action  string
	Slot    int
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

// Job is the load's fio job file on devs (a controller's given
// namespaces: its commit reaches them all), its logs under prefix: on
// each device, past its first skip bytes (the known region, see Known),
// a 4 KiB random writer that reads back every block it wrote, 16 at a
// time, with a checksum and header (verify_backlog, fatal on a
// mismatch), beside a 4 KiB random reader; each logs the highest
// completion latency of every 10 ms window that completed I/O, so that a
// window without completion shows as a gap. It runs until stopped, which
// leaves no verify state file behind (verify_state_save=0). Its jobs are
// threads of one fio process (thread=1): fio's forked job processes
// outlive a killed parent, and would write the drive for the rest of the
// hour.
func Job(devs []string, skip int64, prefix string) string {
	var b strings.Builder
	b.WriteString(`[global]
ioengine=libaio
direct=1
thread=1
bs=4k
iodepth=8
time_based=1
runtime=3600
log_avg_msec=10
log_max_value=1
`)
	for i, dev := range devs {
		sfx := ""
		if i > 0 {
			sfx = "-" + strconv.Itoa(i)
		}
		fmt.Fprintf(&b, `[write%[2]s]
filename=%[1]s
offset=%[3]d
rw=randwrite
verify=crc32c
verify_backlog=16
verify_fatal=1
verify_state_save=0
write_lat_log=%[4]s-write%[2]s
[read%[2]s]
filename=%[1]s
offset=%[3]d
rw=randread
write_lat_log=%[4]s-read%[2]s
`, fiojob.EscapeFilename(dev), sfx, skip, prefix)
	}
	return b.String()
}

// KnownMax bounds the known region: the first bytes of each device,
// written with a run-unique pattern before the download and read back
// whole after the commit (a quarter of a smaller device).
const KnownMax = 1 << 30

// KnownBytes is the known region of a device of size bytes: a quarter of
// it, at most KnownMax, in whole MiB; 0 when it is under 4 MiB or unknown.
func KnownBytes(size int64) int64 {
	n := min(size/4, KnownMax) / (1 << 20) * (1 << 20)
	if n < 1<<20 {
		return 0
	}
	return n
}

// Known is the fio job file that writes (read false) or reads back and
// checks (read true) the first n bytes of each of devs: 1 MiB blocks of
// pattern (8 bytes, this step's own) followed by each block's offset
// (verify_pattern's %o), so that stale data, another run's and another
// block's all fail the check. Its jobs are threads of one fio process, as
// Job's are.
func Known(devs []string, n int64, pattern uint64, read bool) string {
	var b strings.Builder
	rw, check := "write", "do_verify=0"
	if read {
		rw, check = "read", "verify_fatal=1"
	}
	fmt.Fprintf(&b, `[global]
ioengine=libaio
direct=1
thread=1
bs=1M
iodepth=4
offset=0
size=%d
rw=%s
verify=pattern
verify_pattern=0x%016x%%o
verify_state_save=0
%s
`, n, rw, pattern, check)
	for i, dev := range devs {
		fmt.Fprintf(&b, "[known-%d]\nfilename=%s\n", i, fiojob.EscapeFilename(dev))
	}
	return b.String()
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
	devs := append([]string{in.Device}, in.Others...)
	if in.Known > 0 {
		if err := runKnown(ctx, devs, in.Known, in.Pattern, prefix+"-known-write", false); err != nil {
			return fail(fmt.Errorf("writing the known region before the download: %w", err))
		}
	}
	jobFile := prefix + ".fio"
	if err := os.WriteFile(jobFile, []byte(Job(devs, in.Known, prefix)), 0o644); err != nil {
		return fail(err)
	}
	since, statErr := completed(in.Device)
	fio := exec.CommandContext(ctx, "fio", "--output-format=json", "--output="+prefix+".json", jobFile)
	fio.Dir = in.Dir
	// The load dies with this process, as every fio the suite starts
	// does (its jobs are threads of one process: thread=1 in Job): a
	// suite killed mid-step leaves nothing writing the drive.
	fio.SysProcAttr = procAttr()
	fio.Cancel = func() error { return syscall.Kill(-fio.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	fio.Stderr = &stderr
	// The kernel sends the death signal when the forking thread ends:
	// this one is held until the load has been waited for, below.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
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
	if in.Known > 0 {
		o.Known = in.Known * int64(len(devs))
		o.KnownErr = runKnown(ctx, devs, in.Known, in.Pattern, prefix+"-known-read", true)
	}
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

// runKnown writes, or reads back and checks, the known region of devs
// (see Known), its job file and fio's output under base.
func runKnown(ctx context.Context, devs []string, n int64, pattern uint64, base string, read bool) error {
	job := base + ".fio"
	if err := os.WriteFile(job, []byte(Known(devs, n, pattern, read)), 0o644); err != nil {
		return err
	}
	stdout, stderr, err := fiojob.Runner{Format: fiojob.FormatJSON}.Run(ctx, job)
	if werr := os.WriteFile(base+".json", stdout, 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("fio %s: %v: %s", job, err, firstLines(stderr, 3))
	}
	return nil
}

// firstLines is the first n lines of b, on one line.
func firstLines(b []byte, n int) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(ls[:min(n, len(ls))], "; ")
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
	var paths []string
	for _, p := range dirglob.Match(filepath.Dir(prefix), "*_clat.*.log") {
		if strings.HasPrefix(filepath.Base(p), filepath.Base(prefix)+"-") {
			paths = append(paths, p)
		}
	}
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
