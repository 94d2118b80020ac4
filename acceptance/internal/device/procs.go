package device

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// procTable is what /proc of the inspected system shows about who has a
// file open: each process's open files and, through the processes, every
// mount namespace.
type procTable struct {
	sys   System
	self  int // this process's pid (as /proc/self says); -1 unknown
	procs []proc
}

type proc struct {
	pid int
	fds []procFD
}

type procFD struct {
	fd  int
	key string // see fileKey
}

// scanProcs reads /proc/PID/fd of every process it may read.
func (s System) scanProcs() *procTable {
	t := &procTable{sys: s}
	t.self = t.selfPID()
	for _, pid := range pids(s.p("/proc")) {
		dir := s.p(fmt.Sprintf("/proc/%d/fd", pid))
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		p := proc{pid: pid}
		for _, e := range ents {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if key, ok := t.fdKey(filepath.Join(dir, e.Name())); ok {
				p.fds = append(p.fds, procFD{fd: fd, key: key})
			}
		}
		t.procs = append(t.procs, p)
	}
	return t
}

// pids lists the processes in proc, a /proc directory of this machine, in
// increasing order.
func pids(proc string) []int {
	ents, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// selfPID is this process's pid: /proc/self in a fake tree.
func (t *procTable) selfPID() int {
	if t.sys.Root == "" {
		return os.Getpid()
	}
	link, err := os.Readlink(t.sys.p("/proc/self"))
	if err != nil {
		return -1
	}
	pid, err := strconv.Atoi(filepath.Base(link))
	if err != nil {
		return -1
	}
	return pid
}

// fdKey names the file a /proc/PID/fd/N link points to: "dev:MAJ:MIN" for a
// block device (whatever its name in that process's mount namespace),
// "inode:DEV:INO" for anything else. Sockets, pipes and anonymous inodes
// are skipped. In a fake tree the link's text is a path of the inspected
// system.
func (t *procTable) fdKey(link string) (string, bool) {
	target, err := os.Readlink(link)
	if err != nil || !strings.HasPrefix(target, "/") {
		return "", false
	}
	if t.sys.Root == "" {
		fi, err := os.Stat(link) // follows the kernel's link to the open file itself
		if err != nil {
			return "", false
		}
		return fileKey(fi)
	}
	target = strings.TrimSuffix(target, " (deleted)")
	if d, ok := t.sys.devOf(target); ok {
		return "dev:" + d.String(), true
	}
	fi, err := os.Stat(t.sys.p(target))
	if err != nil {
		return "", false
	}
	return fileKey(fi)
}

func fileKey(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	if mode := fi.Mode(); mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0 {
		return "dev:" + devnum{unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))}.String(), true
	}
	return fmt.Sprintf("inode:%d:%d", st.Dev, st.Ino), true
}

// targetKey is fdKey's name for a target.
func (t *procTable) targetKey(in Info) (string, bool) {
	if in.Block {
		return "dev:" + devnum{in.Major, in.Minor}.String(), true
	}
	fi, err := os.Stat(t.sys.p(targetPath(in)))
	if err != nil {
		return "", false
	}
	return fileKey(fi)
}

// opener is one process with a target open.
type opener struct {
	pid, fd int
}

// openers lists the processes that have the target open, by pid; a
// process with it open more than once is listed once, with its first
// descriptor.
func (t *procTable) openers(key string) []opener {
	var out []opener
	for _, p := range t.procs {
		for _, f := range p.fds {
			if f.key == key {
				out = append(out, opener{pid: p.pid, fd: f.fd})
				break
			}
		}
	}
	return out
}

// who describes a process: "this process (pid N, device.test)", "another
// drivequal run (pid N, acceptance.test)" for any Go test binary, or
// "pid N (dd)".
func (t *procTable) who(pid int) string {
	name := t.procName(pid)
	switch {
	case pid == t.self:
		return fmt.Sprintf("this process (pid %d, %s)", pid, name)
	case strings.HasSuffix(name, ".test"):
		return fmt.Sprintf("another drivequal run (pid %d, %s)", pid, name)
	}
	return fmt.Sprintf("pid %d (%s)", pid, name)
}

// stopFix is the fix for a target another process pid has: stop it, or
// (for another drivequal run) let it end; kind is "device" or "file".
func (t *procTable) stopFix(pid int, kind string) string {
	if strings.HasPrefix(t.who(pid), "another drivequal run") {
		return fmt.Sprintf("wait for that run to end, or stop it (kill %d)", pid)
	}
	return fmt.Sprintf("stop it (kill %d) or choose another %s", pid, kind)
}

// procName is a process's command: the base name of argv[0] when it is a Go
// test binary (comm is cut at 15 bytes), else comm.
func (t *procTable) procName(pid int) string {
	if b, err := os.ReadFile(t.sys.p(fmt.Sprintf("/proc/%d/cmdline", pid))); err == nil {
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 != "" && strings.HasSuffix(argv0, ".test") {
			return filepath.Base(argv0)
		}
	}
	if comm, err := readString(t.sys.p(fmt.Sprintf("/proc/%d/comm", pid))); err == nil && comm != "" {
		return comm
	}
	return "unknown command"
}

// openForWrite reports whether descriptor fd of pid was opened for writing,
// from the octal "flags:" line of /proc/PID/fdinfo/FD.
func (t *procTable) openForWrite(pid, fd int) bool {
	b, err := os.ReadFile(t.sys.p(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd)))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return err == nil && flags&unix.O_ACCMODE != unix.O_RDONLY
		}
	}
	return false
}

// nsMounts is the mount table of one mount namespace.
type nsMounts struct {
	pid    int  // the first process seen in it
	own    bool // this process's namespace
	mounts mountTable
}

// allMounts reads the mount table of every mount namespace it can see: its
// own (/proc/self/mountinfo) first, then one per namespace found through
// /proc/PID/ns/mnt. A process whose namespace cannot be read has its table
// read anyway.
func (t *procTable) allMounts() []nsMounts {
	var out []nsMounts
	seen := map[string]bool{}
	if ns, err := os.Readlink(t.sys.p("/proc/self/ns/mnt")); err == nil {
		seen[ns] = true
	}
	if ms, err := t.sys.mounts("self"); err == nil {
		out = append(out, nsMounts{pid: t.self, own: true, mounts: ms})
	}
	for _, pid := range pids(t.sys.p("/proc")) {
		ns, err := os.Readlink(t.sys.p(fmt.Sprintf("/proc/%d/ns/mnt", pid)))
		if err == nil {
			if seen[ns] {
				continue
			}
			seen[ns] = true
		} else if pid == t.self {
			continue
		}
		ms, err := t.sys.mounts(strconv.Itoa(pid))
		if err != nil {
			continue
		}
		out = append(out, nsMounts{pid: pid, mounts: ms})
	}
	return out
}
