package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/drivequal/drivequal/acceptance/internal/units"
)

// Holds are the targets a run owns, from Hold until Close: the kernel
// refuses every other exclusive opener of a held block device (mkfs,
// wipefs, blkdiscard without -f, another drivequal run) and every mount of
// it, and every other exclusive flock of a held regular file. fio opens the
// targets without O_EXCL and is not affected.
type Holds struct {
	held []held
}

type held struct {
	info Info
	f    *os.File
}

// Hold takes every target for the run: a block device is opened
// O_RDWR|O_EXCL (util-linux's way of owning a device: the kernel refuses the
// open while the device is mounted, held by dm, md or LVM, active swap or
// opened exclusively by anyone else), a regular file is opened O_RDWR and
// locked with an exclusive non-blocking flock. The device is opened for
// writing, not only reading, because the kernel discards (Discard) only
// through a writable descriptor; opening it writes nothing.
//
// A target is refused when that open or lock fails, the refusal naming who
// has it (mounts in every mount namespace, holders, swap, and the processes
// that have it open, by pid and command), and when, once held, another
// process has it open for writing. Every target is tried, so that all
// refusals are listed at once; when there is any, nothing stays held and
// Hold returns nil.
//
// Only the running system's devices can be held: with a fake Root a block
// device (a regular file standing for one) is refused.
func (s System) Hold(infos []Info) (*Holds, []Refusal) {
	h := &Holds{}
	var out []Refusal
	var procs *procTable
	table := func() *procTable {
		if procs == nil {
			procs = s.scanProcs()
		}
		return procs
	}
	for _, in := range infos {
		f, err := s.claim(in)
		switch {
		case errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EWOULDBLOCK):
			out = append(out, table().busy(in))
		case err != nil:
			out = append(out, claimRefusal(in, err))
		default:
			h.held = append(h.held, held{info: in, f: f})
		}
	}
	if len(h.held) > 0 {
		// The scan must see our own descriptors: a fresh one, taken after
		// every open.
		procs = s.scanProcs()
		for _, hd := range h.held {
			if r, ok := procs.writers(hd.info); ok {
				out = append(out, r)
			}
		}
	}
	if len(out) > 0 {
		h.Close()
		return nil, out
	}
	return h, nil
}

// errFakeBlock is claim's error for a block device of a fake tree.
var errFakeBlock = errors.New("is a block device of a fake tree (System.Root), which cannot be opened exclusively")

// claim opens and locks one target.
func (s System) claim(in Info) (*os.File, error) {
	path := targetPath(in)
	if in.Block {
		if s.Root != "" {
			return nil, errFakeBlock
		}
		return claimBlock(path, in.Major, in.Minor)
	}
	return claimFile(s.p(path))
}

var errChanged = errors.New("changed since it was inspected")

// errNeedsLinux is wrapped by what only Linux can do (see kernel_linux.go).
var errNeedsLinux = errors.New("needs Linux")

// claimRefusal explains an open or lock that failed for a reason other than
// someone else having the target.
func claimRefusal(in Info, err error) Refusal {
	r := Refusal{Path: in.Path}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, errChanged):
		r.Reason, r.Fix = err.Error(), "stop and check the host: the drive is not the one that was checked"
	case errors.Is(err, errFakeBlock):
		r.Reason, r.Fix = err.Error(), "hold devices of the running system only (System{})"
	case errors.Is(err, errNeedsLinux):
		r.Reason, r.Fix = "cannot be held: "+err.Error(), "run drivequal on Linux"
	case errors.Is(err, unix.EROFS):
		r.Reason, r.Fix = "cannot be opened for writing: it is read-only", "choose a writable device (or make it writable: blockdev --setrw "+shellQuote(targetPath(in))+")"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		r.Reason, r.Fix = "cannot be opened for writing: "+err.Error(), "run as root, or give a target this user may write"
	default:
		r.Reason, r.Fix = "cannot be opened exclusively: "+err.Error(), "check that "+targetPath(in)+" is the target meant, and that nothing else uses it"
	}
	return r
}

// Close releases every held target. It may be called more than once, and
// on a nil Holds.
func (h *Holds) Close() error {
	if h == nil {
		return nil
	}
	var errs []error
	for _, hd := range h.held {
		if err := hd.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: releasing: %w", hd.info.Path, err))
		}
	}
	h.held = nil
	return errors.Join(errs...)
}

// Discard deallocates the whole of the held target path (as given to Hold,
// or its resolved name) through the held descriptor: for a block device the
// BLKDISCARD ioctl over [0, size) (what blkdiscard does, without needing its
// -f while the device is held), for a regular file a hole punched over its
// whole length, its size kept. Either way reads return zeros afterwards on
// devices that zero discarded blocks (loop devices, most NVMe drives; check
// the drive's DLFEAT if it matters) and on every file system that punches
// holes.
func (h *Holds) Discard(path string) error {
	hd, ok := h.find(path)
	if !ok {
		return fmt.Errorf("%s: discarding: it is not held; hold it first (System.Hold)", path)
	}
	if hd.info.Block {
		return discardBlock(path, hd.f)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(hd.f.Fd()), &st); err != nil {
		return fmt.Errorf("%s: discarding: %w", path, err)
	}
	if st.Size == 0 {
		return nil
	}
	if err := PunchHole(hd.f, st.Size); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return fmt.Errorf("%s: discarding %s bytes: its file system cannot punch holes (%w); choose purge = \"none\" or a file on ext4, xfs, btrfs or tmpfs", path, units.Thousands(float64(st.Size)), err)
		}
		return fmt.Errorf("%s: discarding %s bytes (fallocate PUNCH_HOLE): %w", path, units.Thousands(float64(st.Size)), err)
	}
	return nil
}

func (h *Holds) find(path string) (held, bool) {
	if h == nil {
		return held{}, false
	}
	for _, hd := range h.held {
		if hd.info.Path == path || (hd.info.Resolved != "" && hd.info.Resolved == path) {
			return hd, true
		}
	}
	return held{}, false
}

func targetPath(in Info) string {
	if in.Resolved != "" {
		return in.Resolved
	}
	return in.Path
}

// busy says who has a target that the kernel would not let Hold have:
// mounts, holders, swap and the processes that have it open.
func (t *procTable) busy(in Info) Refusal {
	var causes []string
	fix := ""
	setFix := func(f string) {
		if fix == "" {
			fix = f
		}
	}
	if in.Block {
		d := disk{sys: t.sys, name: in.Name}
		parts := d.partitions()
		devs := d.devices(devnum{in.Major, in.Minor}, parts)
		seen := map[string]bool{}
		for _, ns := range t.allMounts() {
			where, points := ns.mounts.at(devs)
			for i, w := range where {
				if seen[w] {
					continue
				}
				seen[w] = true
				if ns.own {
					causes = append(causes, "mounted: "+w)
					setFix("unmount it (umount " + shellQuote(points[i]) + ") or choose another device")
					continue
				}
				causes = append(causes, fmt.Sprintf("mounted: %s in the mount namespace of %s", w, t.who(ns.pid)))
				setFix(fmt.Sprintf("unmount it in that namespace (nsenter -t %d -m umount %s) or choose another device", ns.pid, shellQuote(points[i])))
			}
		}
		if holders := d.holders(parts); len(holders) > 0 {
			causes = append(causes, "held by "+strings.Join(holders, ", "))
			setFix("stop what holds it (dmsetup remove, mdadm --stop, vgchange -an) or choose another device")
		}
		if swaps, err := t.sys.swaps(); err == nil {
			if on := swaps.on(in, devs); len(on) > 0 {
				causes = append(causes, "active swap: "+strings.Join(on, ", "))
				setFix("turn the swap off (swapoff " + shellQuote(on[0]) + ") or choose another device")
			}
		}
	}
	kind := "device"
	if !in.Block {
		kind = "file"
	}
	if key, ok := t.targetKey(in); ok {
		self := false
		for _, o := range t.openers(key) {
			causes = append(causes, "open by "+t.who(o.pid))
			if o.pid == t.self {
				self = true
				continue
			}
			setFix(t.stopFix(o.pid, kind))
		}
		if self {
			setFix("give each target once, and hold the targets once per run")
		}
	}
	name := targetPath(in)
	if len(causes) == 0 {
		causes = append(causes, "nothing this host shows has it (a process in another PID namespace, or a kernel user)")
		if in.Block {
			setFix("find what has it (fuser -vm " + shellQuote(name) + ", ls /sys/class/block/" + in.Name + "/holders) or choose another device")
		} else {
			setFix("find what has it locked (fuser -v " + shellQuote(name) + ", or its inode in /proc/locks) or choose another file")
		}
	}
	what := "is in use: "
	if !in.Block {
		what = "is locked by another holder: "
	}
	return Refusal{Path: in.Path, Reason: what + strings.Join(causes, ", "), Fix: fix}
}

// writers refuses a held target that another process has open for
// writing: drivequal must be the only writer.
func (t *procTable) writers(in Info) (Refusal, bool) {
	key, ok := t.targetKey(in)
	if !ok {
		return Refusal{}, false
	}
	var writers []string
	fix := ""
	for _, o := range t.openers(key) {
		if o.pid == t.self || !t.openForWrite(o.pid, o.fd) {
			continue
		}
		writers = append(writers, t.who(o.pid))
		if fix == "" {
			kind := "device"
			if !in.Block {
				kind = "file"
			}
			fix = t.stopFix(o.pid, kind)
		}
	}
	if len(writers) == 0 {
		return Refusal{}, false
	}
	return Refusal{Path: in.Path, Reason: "is open for writing by " + strings.Join(writers, ", "), Fix: fix}, true
}
