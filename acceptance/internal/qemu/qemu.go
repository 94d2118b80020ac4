// Package qemu boots a Linux guest under QEMU with emulated NVMe
// controllers and runs a command in it.
//
// It is for integration tests that need the kernel's real nvme driver
// under nvme-cli and fio. The guest is the host's own installed kernel
// (Debian's linux-image-amd64) with an initramfs built here from installed
// packages (busybox-static and the kernel's modules; see Initramfs): its
// root is the host's "/", shared read-only over 9p, so every program (fio,
// nvme-cli, a test binary) is the host's at the same path, with tmpfs over
// /tmp, /run and the other directories programs write to. One host
// directory, the work directory, is shared writable at the same path: the
// command's script, output and exit status, and anything the test wants
// back, go there. Each namespace is backed by a raw file on the host.
//
// Machine.Args builds QEMU's command line and has no side effects; Run
// starts QEMU, under KVM where /dev/kvm can be opened and under TCG when
// KVM cannot start the guest (see Run), or when /dev/kvm cannot be opened.
// It needs Linux. The package never prints.
package qemu

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Machine is a guest: its size, kernel command line and NVMe topology.
type Machine struct {
	// Memory is the guest's memory in MiB (default 1024).
	Memory int
	// CPUs is the number of virtual CPUs (default 2).
	CPUs int
	// Cmdline holds extra kernel parameters ("nvme_core.multipath=N").
	Cmdline []string
	// Shares are host directories shared read-only at the same paths, over
	// the guest's tmpfs: a checkout under /tmp or /root is otherwise
	// hidden in the guest.
	Shares []string
	// Udev starts the host's systemd-udevd in the guest before the command,
	// so /dev/disk/by-id holds the links a Debian machine has. It loads no
	// module by a device's alias (see initScript): a driver the guest
	// needs, for a device present at boot or added later, must be among
	// the modules its initramfs loads.
	Udev bool
	// Subsystems are NVM subsystems that controllers join.
	Subsystems []Subsystem
	// Controllers are the NVMe controllers, each a PCI device, in the
	// order the guest numbers them (nvme0, nvme1, ...).
	Controllers []Controller
	// Namespaces are attached to their controller (and, when shared, to
	// every controller of its subsystem).
	Namespaces []Namespace
	// Accels are the accelerators Run tries, in order ("kvm", "tcg");
	// empty: Accels().
	Accels []string
	// Binary is the QEMU Run starts (default qemu-system-x86_64, found on
	// PATH): a test's stand-in for it, without changing the PATH of every
	// test beside it.
	Binary string
	// SingleThreadTCG runs every vCPU of a TCG guest on one host thread,
	// in turn (-accel tcg,thread=single), instead of one thread each: the
	// guest still has CPUs vCPUs, but takes one host core, and no vCPU
	// spins on a lock that another holds while the host has that one's
	// thread descheduled, which on a host busy with other work costs more
	// than the guest's parallelism gains. KVM is not affected.
	SingleThreadTCG bool
	// BootBound is how long a try that has another accelerator after it may
	// run before the guest's init speaks (default DefaultBootBound).
	BootBound time.Duration
	// StartBound is how long a guest may take, from QEMU's start, to start
	// the script (default DefaultStartBound); one that has not by then (its
	// kernel hung loading a module: "task insmod blocked for more than 120
	// seconds") is stopped and booted once more under the same accelerator.
	StartBound time.Duration
	// ExitBound bounds how long QEMU may run on once the guest has
	// written the script's exit status (default DefaultExitBound): /init
	// then syncs and powers off, and a guest whose sync or shutdown hangs
	// on a controller (one was still running, idle, 8 minutes after its
	// exit status beside the rest of make test) is stopped, its result
	// kept: the script had ended.
	ExitBound time.Duration
	// QMP, when set, is the path of a Unix socket QEMU serves its QMP
	// monitor on (see QMP), for a test that changes the machine while the
	// guest runs (device_del, qom-set). It is a file the caller owns; QEMU
	// creates it and does not wait for a client.
	QMP string
	// Extra are more QEMU arguments, appended as they are (a -drive with a
	// blkdebug image, a -device no field here describes).
	Extra []string
}

// DefaultBootBound is how long a guest under KVM may take to reach its
// init before Run gives up on KVM. KVM boots the kernel to init in a few
// seconds even on a loaded host; TCG, which has no bound, takes 10-20 s.
const DefaultBootBound = 45 * time.Second

// DefaultStartBound is how long a guest may take to start its script
// before Run boots it again. A TCG guest starts it in 15-40 s, up to
// 2 minutes beside the rest of make test on 2 cores.
const DefaultStartBound = 5 * time.Minute

// DefaultExitBound is how long a guest may take to power off once its
// script's exit status is written: a sync and a shutdown, seconds.
const DefaultExitBound = 2 * time.Minute

// Subsystem is an NVM subsystem (QEMU's nvme-subsys).
type Subsystem struct {
	ID  string // QEMU id, which controllers name
	NQN string // the subsystem NQN; QEMU prefixes "nqn.2019-08.org.qemu:"
}

// Controller is an NVMe controller (QEMU's nvme).
type Controller struct {
	ID     string // QEMU id, which namespaces name
	Serial string // every controller of one subsystem has the subsystem's serial
	Subsys string // Subsystem.ID, or ""
	// CriticalWarning is the SMART / Health log's critical warning byte the
	// controller reports from boot.
	CriticalWarning uint8
}

// Namespace is an NVMe namespace (QEMU's nvme-ns) backed by a raw file.
type Namespace struct {
	Controller string // Controller.ID it is attached to
	NSID       int
	Image      string // raw file on the host backing it
	// Private keeps a namespace of a subsystem to its own controller
	// (shared=off); otherwise every controller of the subsystem has it.
	Private bool
	// Zoned makes it a zoned namespace (ZNS) with zones of ZoneSize bytes
	// (default 8 MiB).
	Zoned    bool
	ZoneSize int64
	// EUI64 is the namespace's IEEE EUI-64; 0 leaves QEMU's default (none).
	EUI64 uint64
	// UUID is the namespace's UUID ("9a1d...-..."); empty leaves QEMU's
	// default, a random UUID at every start of QEMU, which a drive keeps
	// across power cycles and a guest booted twice would not.
	UUID string
	// Blkdebug, when set, is a rules file of QEMU's blkdebug driver (see
	// WriteBlkdebug) that sits between the namespace and Image: the
	// namespace then fails the I/O those rules name, as a drive's media
	// would, with the NVMe status QEMU maps the error to.
	Blkdebug string
	// IOPS, when above 0, holds the namespace to that many requests a
	// second, reads and writes together, with QEMU's I/O throttle
	// (throttling.iops-total): requests beyond it wait in QEMU, and the
	// guest's CPUs idle meanwhile.
	IOPS int
}

// Args returns QEMU's arguments (without the executable) that boot k with
// initrd, sharing work at the same path, with accel ("kvm" or "tcg").
func (m Machine) Args(k Kernel, initrd, work, accel string) ([]string, error) {
	mem, cpus := m.Memory, m.CPUs
	if mem == 0 {
		mem = 1024
	}
	if cpus == 0 {
		cpus = 2
	}
	// no_timer_check: under TCG on a loaded host the kernel's check that
	// the 8254 timer reaches the IO-APIC can see no tick in time and
	// panic ("IO-APIC + timer doesn't work!"), as a boot beside the whole
	// of make test once did; QEMU's timer works, and a kernel for a virtual
	// machine skips the check.
	cmdline := append([]string{"console=ttyS0", "panic=-1", "quiet", "no_timer_check", "drivequal.work=" + work}, m.Cmdline...)
	if m.Udev {
		cmdline = append(cmdline, "drivequal.udev=1")
	}
	for _, p := range m.Shares {
		cmdline = append(cmdline, "drivequal.share="+p)
	}
	for _, p := range append([]string{work, initrd}, m.Shares...) {
		if strings.ContainsAny(p, ", \t\n") {
			return nil, fmt.Errorf("path %q: QEMU's options cannot hold commas or spaces", p)
		}
	}
	acc := accel
	if accel == "tcg" && m.SingleThreadTCG {
		acc = "tcg,thread=single"
	}
	args := []string{"-accel", acc, "-m", strconv.Itoa(mem), "-smp", strconv.Itoa(cpus)}
	if accel == "kvm" {
		args = append(args, "-cpu", "host")
	}
	// -nodefaults: no floppy, CD-ROM, VGA or parallel port, which the
	// guest's kernel would probe at every boot, and udev load drivers for
	// (with udev's loading, which initScript turns off, a third of a TCG
	// boot's CPU); the serial console, monitor and network are given here.
	args = append(args,
		"-nodefaults", "-nographic", "-no-reboot", "-nic", "none", "-monitor", "none", "-serial", "stdio",
		"-kernel", k.Image, "-initrd", initrd, "-append", strings.Join(cmdline, " "),
		"-virtfs", "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path="+work+",mount_tag=work,security_model=none,multidevs=remap",
	)
	for i, p := range m.Shares {
		args = append(args, "-virtfs", fmt.Sprintf("local,path=%s,mount_tag=share%d,security_model=none,readonly=on,multidevs=remap", p, i))
	}
	if m.QMP != "" {
		if strings.ContainsAny(m.QMP, ", \t\n") {
			return nil, fmt.Errorf("QMP socket %q: QEMU's options cannot hold commas or spaces", m.QMP)
		}
		args = append(args, "-qmp", "unix:"+m.QMP+",server=on,wait=off")
	}
	ids := map[string]bool{}
	for _, s := range m.Subsystems {
		ids[s.ID] = true
		args = append(args, "-device", "nvme-subsys,id="+s.ID+",nqn="+s.NQN)
	}
	for _, c := range m.Controllers {
		if c.Subsys != "" && !ids[c.Subsys] {
			return nil, fmt.Errorf("controller %s: no subsystem %q", c.ID, c.Subsys)
		}
		ids[c.ID] = true
		d := "nvme,id=" + c.ID + ",serial=" + c.Serial
		if c.Subsys != "" {
			d += ",subsys=" + c.Subsys
		}
		if c.CriticalWarning != 0 {
			d += fmt.Sprintf(",smart_critical_warning=%d", c.CriticalWarning)
		}
		args = append(args, "-device", d)
	}
	for _, n := range m.Namespaces {
		if !ids[n.Controller] {
			return nil, fmt.Errorf("namespace %d: no controller %q", n.NSID, n.Controller)
		}
	}
	nsArgs, err := NamespaceArgs("ns", m.Namespaces)
	if err != nil {
		return nil, err
	}
	args = append(args, nsArgs...)
	return append(args, m.Extra...), nil
}

// NamespaceArgs returns QEMU's -drive and -device arguments for ns, as
// Args gives them for a Machine's Namespaces, their drives named prefix0,
// prefix1, ...: for namespaces a caller passes in Machine.Extra because it
// creates and keeps their images itself (another size, or the images of a
// first boot booted again).
func NamespaceArgs(prefix string, ns []Namespace) ([]string, error) {
	var args []string
	for i, n := range ns {
		if strings.ContainsAny(n.Image+n.Blkdebug, ", \t\n") || strings.Contains(n.Blkdebug, ":") {
			return nil, fmt.Errorf("namespace %d: image %q (blkdebug rules %q): QEMU's options cannot hold commas or spaces, nor the rules' path a colon", n.NSID, n.Image, n.Blkdebug)
		}
		drive := fmt.Sprintf("%s%d", prefix, i)
		file := n.Image
		if n.Blkdebug != "" {
			// blkdebug's filename syntax: blkdebug:RULES:IMAGE, the raw
			// format on top as without it.
			file = "blkdebug:" + n.Blkdebug + ":" + n.Image
		}
		dr := "file=" + file + ",if=none,id=" + drive + ",format=raw,discard=unmap"
		if n.IOPS > 0 {
			dr += fmt.Sprintf(",throttling.iops-total=%d", n.IOPS)
		}
		args = append(args, "-drive", dr)
		d := fmt.Sprintf("nvme-ns,drive=%s,bus=%s,nsid=%d,shared=%s", drive, n.Controller, n.NSID, onOff(!n.Private))
		if n.EUI64 != 0 {
			d += fmt.Sprintf(",eui64=%d", n.EUI64)
		}
		if n.UUID != "" {
			d += ",uuid=" + n.UUID
		}
		if n.Zoned {
			zs := n.ZoneSize
			if zs == 0 {
				zs = 8 << 20
			}
			d += fmt.Sprintf(",zoned=on,zoned.zone_size=%d", zs)
		}
		args = append(args, "-device", d)
	}
	return args, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Accels returns the accelerators Run tries by default: KVM and then TCG
// (QEMU's emulator) when /dev/kvm can be opened for reading and writing,
// else TCG alone.
func Accels() []string {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return []string{"tcg"}
	}
	f.Close()
	return []string{"kvm", "tcg"}
}

// Result is how a guest's command ended.
type Result struct {
	// Exit is the exit status of run.sh; -1 when the guest stopped before
	// writing it (see Console).
	Exit int
	// Output is what the command wrote to stdout and stderr.
	Output string
	// Console is the guest's serial console: the kernel's messages and
	// /init's.
	Console string
	// Accel is the accelerator the guest ran under.
	Accel string
	// Fallback says why the accelerators tried before Accel failed, each
	// with its QEMU's last words ("kvm: QEMU stopped after 50ms, before the
	// guest's init spoke: signal: aborted: qemu-system-x86_64: error:
	// failed to set MSR 0x10a to 0x69 ..."); empty when the first ran.
	Fallback string
	// Wall is the wall time from starting QEMU under Accel to its exit,
	// and CPU the host CPU time QEMU used in it (user and system): under
	// TCG, what the guest's work cost the host.
	Wall, CPU time.Duration
	// Stuck says the guest wrote its script's exit status but did not
	// power off within Machine.ExitBound, and was stopped; empty when it
	// powered off.
	Stuck string
	// Rebooted says why the guest was booted a second time under Accel
	// (it had not started the script after StartBound, with the last
	// lines of its console); empty when it was booted once.
	Rebooted string
}

// initMark starts every line the guest's /init writes to the console (see
// initScript): seeing it means the accelerator has run the kernel to init.
const initMark = "drivequal-init:"

// errBootBound cancels a try whose guest did not reach init in time.
var errBootBound = errors.New("boot bound passed")

// errExitBound stops a guest that did not power off after its script's
// exit status was written.
var errExitBound = errors.New("exit bound passed")

// errStartBound cancels a try whose guest did not start the script in
// time.
var errStartBound = errors.New("start bound passed")

// runMark is the line /init writes to the console as it starts the
// script (see initScript).
const runMark = initMark + " running "

// Run boots m and runs script (a /bin/sh script, run as root in the
// guest's root with work as the writable shared directory) and returns
// when the guest has powered off. work must be an empty-enough directory
// the caller owns: run.sh, output, exit and initrd are written there.
//
// Run tries each of m's accelerators (KVM, then TCG) in turn until one
// runs the guest's init: a try that fails before init speaks on the
// console (QEMU aborts, as QEMU 7.2 does on a host whose KVM refuses an
// MSR, exits with any status, or has not reached init after BootBound) is
// killed and the next accelerator tried; Result.Fallback says why. ctx
// bounds all the tries together. Once init has spoken the guest's own
// outcome is returned, whatever it is: its failure is not the
// accelerator's. A try whose guest has started the script (its output or
// exit file is in work) is never repeated either, even when its console
// lacks init's first line: the script may be destructive, and a second
// run would start from what the first left on the namespaces. A guest
// that has not started the script StartBound after QEMU started (its
// kernel hung loading a module) is stopped and booted once more under the
// same accelerator, Result.Rebooted saying why: nothing of the script
// has run. QEMU runs
// in its own process group, gets SIGTERM when ctx is done (and SIGKILL
// 5 s later), and dies with the calling process.
func (m Machine) Run(ctx context.Context, k Kernel, initrd []byte, work, script string) (Result, error) {
	accels := m.Accels
	if len(accels) == 0 {
		accels = Accels()
	}
	bound := m.BootBound
	if bound <= 0 {
		bound = DefaultBootBound
	}
	startBound := m.StartBound
	if startBound <= 0 {
		startBound = DefaultStartBound
	}
	var why []string
	for i, accel := range accels {
		last := i == len(accels)-1
		b := bound
		if last {
			b = 0 // the last try has nothing to fall back on: ctx bounds it
		}
		res, t, err := m.run(ctx, k, initrd, work, script, accel, b, startBound)
		if t.stalled && !t.ran && ctx.Err() == nil {
			// The kernel hung before the script started: nothing of the
			// script has run, so booting again repeats nothing. Once: a
			// second hang is returned, bounded the same way.
			// The bound, not res.Wall: its timer starts before QEMU
			// does, so the wall time can read a little under it.
			again := fmt.Sprintf("the guest had not started the script after %s", startBound)
			if tail := lastLines(res.Console, 3); tail != "" {
				again += ": " + tail
			}
			res, t, err = m.run(ctx, k, initrd, work, script, accel, b, startBound)
			res.Rebooted = again
		}
		res.Fallback = strings.Join(why, "; ")
		if last || !t.started || t.spoke || t.ran || ctx.Err() != nil {
			return res, err
		}
		why = append(why, accel+": "+t.failure(res, err, b))
	}
	return Result{Exit: -1}, errors.New("qemu: no accelerator to try")
}

// try is what one run of QEMU says about the accelerator.
type try struct {
	started bool // QEMU started
	spoke   bool // the guest's init wrote to the console
	ran     bool // the guest started the script (its output or exit file is there)
	bounded bool // killed when BootBound passed before init spoke
	stalled bool // killed when StartBound passed before the script started
}

// failure says why a try that did not reach init failed, with QEMU's
// last lines on the console. bound is the boot bound the try had: a
// bounded try names it rather than its wall time, which starts after the
// bound's timer and can read a little under it.
func (t try) failure(res Result, err error, bound time.Duration) string {
	var s string
	switch {
	case t.bounded:
		s = fmt.Sprintf("the guest's init had not spoken after %s", bound)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = ee
		}
		s = fmt.Sprintf("QEMU stopped after %s, before the guest's init spoke: %v", roundWall(res.Wall), err)
	default:
		s = fmt.Sprintf("QEMU exited after %s, before the guest's init spoke", roundWall(res.Wall))
	}
	if tail := lastLines(res.Console, 3); tail != "" {
		s += ": " + tail
	}
	return s
}

// roundWall rounds d for a message: to 10 ms under a second, else to
// 100 ms.
func roundWall(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// lastLines returns the last n non-blank lines of s, joined by " / ",
// each cut at 200 bytes.
func lastLines(s string, n int) string {
	var out []string
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "..."
		}
		out = append([]string{l}, out...)
	}
	return strings.Join(out, " / ")
}

// needsLinux is Run's error on a system other than Linux (goos).
func needsLinux(goos string) error {
	return fmt.Errorf("booting a QEMU guest needs Linux, not %s (QEMU is tied to this process with a parent-death signal, and boots the host's Linux kernel)", goos)
}

// run boots m once under accel. With bound > 0, QEMU is stopped when the
// guest's init has not spoken by then; with start > 0, when the guest has
// not started the script by then.
func (m Machine) run(ctx context.Context, k Kernel, initrd []byte, work, script, accel string, bound, startBound time.Duration) (Result, try, error) {
	res := Result{Exit: -1, Accel: accel}
	var t try
	work, err := filepath.Abs(work)
	if err != nil {
		return res, t, err
	}
	for _, f := range []string{"output", "exit"} {
		if err := os.Remove(filepath.Join(work, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, t, err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "run.sh"), []byte(script), 0o755); err != nil {
		return res, t, err
	}
	ird := filepath.Join(work, "initrd")
	if err := os.WriteFile(ird, initrd, 0o644); err != nil {
		return res, t, err
	}
	args, err := m.Args(k, ird, work, accel)
	if err != nil {
		return res, t, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cmd := exec.CommandContext(runCtx, cmp.Or(m.Binary, "qemu-system-x86_64"), args...)
	cmd.WaitDelay = 5 * time.Second
	console := &consoleWriter{}
	cmd.Stdout, cmd.Stderr = console, console
	if bound > 0 {
		timer := time.AfterFunc(bound, func() {
			if !console.spoke() {
				cancel(errBootBound)
			}
		})
		defer timer.Stop()
	}
	if startBound > 0 {
		timer := time.AfterFunc(startBound, func() {
			if !console.running() && !exists(filepath.Join(work, "output")) {
				cancel(errStartBound)
			}
		})
		defer timer.Stop()
	}
	exitBound := m.ExitBound
	if exitBound <= 0 {
		exitBound = DefaultExitBound
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if exists(filepath.Join(work, "exit")) {
				select {
				case <-done:
				case <-time.After(exitBound):
					cancel(errExitBound)
				}
				return
			}
		}
	}()
	start0 := time.Now()
	started, runErr := start(cmd)
	res.Wall = time.Since(start0)
	if ps := cmd.ProcessState; ps != nil {
		res.CPU = ps.UserTime() + ps.SystemTime()
	}
	t.started = started
	if errors.Is(context.Cause(runCtx), errExitBound) && ctx.Err() == nil {
		res.Stuck = fmt.Sprintf("the guest had not powered off %s after its script's exit status: stopped", exitBound)
		runErr = nil
	}
	res.Console = stripEscapes(console.String())
	t.spoke = strings.Contains(res.Console, initMark)
	t.bounded = !t.spoke && errors.Is(context.Cause(runCtx), errBootBound)
	t.stalled = errors.Is(context.Cause(runCtx), errStartBound)
	// Both files were removed before QEMU started: either one is the
	// guest's, which has run the script.
	if out, err := os.ReadFile(filepath.Join(work, "output")); err == nil {
		res.Output = string(out)
		t.ran = true
	}
	if data, err := os.ReadFile(filepath.Join(work, "exit")); err == nil {
		t.ran = true
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			res.Exit = n
		}
	}
	switch {
	case !started:
		return res, t, fmt.Errorf("starting qemu-system-x86_64 (%s): %w", accel, runErr)
	case ctx.Err() != nil:
		return res, t, fmt.Errorf("qemu-system-x86_64 (%s): stopped after %s: %w", accel, res.Wall.Round(time.Second), ctx.Err())
	case t.bounded:
		return res, t, fmt.Errorf("qemu-system-x86_64 (%s): the guest's init had not spoken after %s", accel, bound)
	case t.stalled:
		return res, t, fmt.Errorf("qemu-system-x86_64 (%s): the guest had not started the script after %s", accel, startBound)
	case runErr != nil:
		return res, t, fmt.Errorf("qemu-system-x86_64 (%s): %w", accel, runErr)
	}
	return res, t, nil
}

// consoleWriter keeps the guest's console and notes when /init first
// writes to it. exec.Cmd writes to it from one goroutine; the boot bound's
// timer reads it from another.
type consoleWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marked bool
}

func (c *consoleWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	from := max(c.buf.Len()-len(initMark), 0)
	c.buf.Write(p)
	if !c.marked && bytes.Contains(c.buf.Bytes()[from:], []byte(initMark)) {
		c.marked = true
	}
	return len(p), nil
}

// running says whether /init has written that it starts the script.
func (c *consoleWriter) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Contains(c.buf.Bytes(), []byte(runMark))
}

// exists says whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (c *consoleWriter) spoke() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.marked
}

func (c *consoleWriter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// stripEscapes removes the terminal escape sequences SeaBIOS and the
// console print, so that the console reads as text.
func stripEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		if s[i] == 0x1b || s[i] == '\r' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
