// Package qemu boots a Linux guest under QEMU with emulated NVMe
// controllers and runs a command in it, for integration tests that need
// the kernel's real nvme driver under nvme-cli and fio.
//
// The guest is the host's own installed kernel (Debian's linux-image-amd64)
// with an initramfs built here from installed packages (busybox-static and
// the kernel's modules; see Initramfs): its root is the host's "/", shared
// read-only over 9p, so every program (fio, nvme-cli, a test binary) is the
// host's at the same path, with tmpfs over /tmp, /run and the other
// directories programs write to. One host directory, the work directory, is
// shared writable at the same path: the command's script, output and exit
// status, and anything the test wants back, go there. Each namespace is
// backed by a raw file on the host.
//
// Machine.Args builds QEMU's command line and has no side effects; Run
// starts QEMU. KVM is used where /dev/kvm can be opened, TCG otherwise.
// The package never prints.
package qemu

import (
	"bytes"
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
	// so /dev/disk/by-id holds the links a Debian machine has.
	Udev bool
	// Subsystems are NVM subsystems that controllers join.
	Subsystems []Subsystem
	// Controllers are the NVMe controllers, each a PCI device, in the
	// order the guest numbers them (nvme0, nvme1, ...).
	Controllers []Controller
	// Namespaces are attached to their controller (and, when shared, to
	// every controller of its subsystem).
	Namespaces []Namespace
}

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
	cmdline := append([]string{"console=ttyS0", "panic=-1", "quiet", "drivequal.work=" + work}, m.Cmdline...)
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
	args := []string{"-accel", accel, "-m", strconv.Itoa(mem), "-smp", strconv.Itoa(cpus)}
	if accel == "kvm" {
		args = append(args, "-cpu", "host")
	}
	args = append(args,
		"-nographic", "-no-reboot", "-nic", "none", "-monitor", "none", "-serial", "stdio",
		"-kernel", k.Image, "-initrd", initrd, "-append", strings.Join(cmdline, " "),
		"-virtfs", "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap",
		"-virtfs", "local,path="+work+",mount_tag=work,security_model=none,multidevs=remap",
	)
	for i, p := range m.Shares {
		args = append(args, "-virtfs", fmt.Sprintf("local,path=%s,mount_tag=share%d,security_model=none,readonly=on,multidevs=remap", p, i))
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
	for i, n := range m.Namespaces {
		if !ids[n.Controller] {
			return nil, fmt.Errorf("namespace %d: no controller %q", n.NSID, n.Controller)
		}
		if strings.ContainsAny(n.Image, ", \t\n") {
			return nil, fmt.Errorf("namespace %d: image %q: QEMU's options cannot hold commas or spaces", n.NSID, n.Image)
		}
		drive := fmt.Sprintf("ns%d", i)
		args = append(args, "-drive", "file="+n.Image+",if=none,id="+drive+",format=raw,discard=unmap")
		d := fmt.Sprintf("nvme-ns,drive=%s,bus=%s,nsid=%d,shared=%s", drive, n.Controller, n.NSID, onOff(!n.Private))
		if n.EUI64 != 0 {
			d += fmt.Sprintf(",eui64=%d", n.EUI64)
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

// Accel returns "kvm" when /dev/kvm can be opened for reading and writing,
// else "tcg" (QEMU's emulator).
func Accel() string {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return "tcg"
	}
	f.Close()
	return "kvm"
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
	// Boot is the wall time from starting QEMU to its exit.
	Wall time.Duration
}

// Run boots m and runs script (a /bin/sh script, run as root in the
// guest's root with work as the writable shared directory) and returns
// when the guest has powered off. work must be an empty-enough directory
// the caller owns: run.sh, output, exit and initrd are written there.
// QEMU runs in its own process group, gets SIGTERM when ctx is done (and
// SIGKILL 5 s later), and dies with the calling thread's process.
func (m Machine) Run(ctx context.Context, k Kernel, initrd []byte, work, script string) (Result, error) {
	accel := Accel()
	res, err := m.run(ctx, k, initrd, work, script, accel)
	if err == nil && res.Exit < 0 && accel == "kvm" && !strings.Contains(res.Console, "drivequal-init:") && ctx.Err() == nil {
		// A /dev/kvm that opens may still not run this kernel.
		res, err = m.run(ctx, k, initrd, work, script, "tcg")
	}
	return res, err
}

func (m Machine) run(ctx context.Context, k Kernel, initrd []byte, work, script, accel string) (Result, error) {
	res := Result{Exit: -1, Accel: accel}
	work, err := filepath.Abs(work)
	if err != nil {
		return res, err
	}
	for _, f := range []string{"output", "exit"} {
		if err := os.Remove(filepath.Join(work, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
	}
	if err := os.WriteFile(filepath.Join(work, "run.sh"), []byte(script), 0o755); err != nil {
		return res, err
	}
	ird := filepath.Join(work, "initrd")
	if err := os.WriteFile(ird, initrd, 0o644); err != nil {
		return res, err
	}
	args, err := m.Args(k, ird, work, accel)
	if err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	start := time.Now()
	runErr := cmd.Run()
	res.Wall = time.Since(start)
	if cmd.Process != nil {
		// Nothing of the guest outlives it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res.Console = stripEscapes(console.String())
	if out, err := os.ReadFile(filepath.Join(work, "output")); err == nil {
		res.Output = string(out)
	}
	if data, err := os.ReadFile(filepath.Join(work, "exit")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			res.Exit = n
		}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("qemu-system-x86_64 (%s): stopped after %s: %w", accel, res.Wall.Round(time.Second), ctx.Err())
		}
		return res, fmt.Errorf("qemu-system-x86_64 (%s): %w", accel, runErr)
	}
	return res, nil
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
