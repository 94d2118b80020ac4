package device

import "testing"

// A busy target's refusal says who has it (testdata/busy.tree describes
// each case), and what to do about it.
type busyTest struct {
	path string
	want string // the whole Error()
}

var busyTests = []busyTest{
	{"/dev/loop5", "/dev/loop5: is in use: open by this process (pid 100, device.test), " +
		"open by another drivequal run (pid 200, acceptance.test); wait for that run to end, or stop it (kill 200)"},
	{"/dev/loop6", "/dev/loop6: is in use: open by this process (pid 100, device.test), open by pid 300 (dd); " +
		"stop it (kill 300) or choose another device"},
	{"/dev/loop7", "/dev/loop7: is in use: mounted: loop7 at /data in the mount namespace of pid 400 (containerd-shim); " +
		"unmount it in that namespace (nsenter -t 400 -m umount /data) or choose another device"},
	// Mounted here and, through propagation, in pid 400's namespace: one
	// mount, named once, with the fix for this namespace.
	{"/dev/loop8", "/dev/loop8: is in use: mounted: loop8 at /mnt/scratch; " +
		"unmount it (umount /mnt/scratch) or choose another device"},
	{"/dev/loop9", "/dev/loop9: is in use: held by dm-2 (vg-scratch); " +
		"stop what holds it (dmsetup remove, mdadm --stop, vgchange -an) or choose another device"},
	{"/dev/loop10", "/dev/loop10: is in use: active swap: /dev/loop10; " +
		"turn the swap off (swapoff /dev/loop10) or choose another device"},
	{"/dev/loop11", "/dev/loop11: is in use: nothing this host shows has it (a process in another PID namespace, or a kernel user); " +
		"find what has it (fuser -vm /dev/loop11, ls /sys/class/block/loop11/holders) or choose another device"},
	{"/var/tmp/locked.img", "/var/tmp/locked.img: is locked by another holder: open by pid 500 (fio); " +
		"stop it (kill 500) or choose another file"},
}

func TestBusyRefusal(t *testing.T) {
	sys := buildTree(t, "busy.tree")
	procs := sys.scanProcs()
	if procs.self != 100 {
		t.Fatalf("scanProcs().self = %d, want 100 (proc/self in busy.tree)", procs.self)
	}
	for _, tt := range busyTests {
		in, err := sys.Inspect(tt.path)
		if err != nil {
			t.Fatalf("Inspect(%q): %v", tt.path, err)
		}
		if got := procs.busy(in).Error(); got != tt.want {
			t.Errorf("busy(%s) =\n\t%s\nwant\n\t%s", tt.path, got, tt.want)
		}
	}
}

// Once held, a target another process has open for writing is refused;
// readers, and this process's own descriptors, are not.
func TestWriterRefusal(t *testing.T) {
	sys := buildTree(t, "busy.tree")
	procs := sys.scanProcs()
	want := map[string]string{
		"/dev/loop5":          "", // pid 200 reads; pid 100 (this process) writes
		"/dev/loop6":          "/dev/loop6: is open for writing by pid 300 (dd); stop it (kill 300) or choose another device",
		"/dev/loop11":         "",
		"/var/tmp/locked.img": "/var/tmp/locked.img: is open for writing by pid 500 (fio); stop it (kill 500) or choose another file",
	}
	for path, w := range want {
		in, err := sys.Inspect(path)
		if err != nil {
			t.Fatalf("Inspect(%q): %v", path, err)
		}
		r, ok := procs.writers(in)
		got := ""
		if ok {
			got = r.Error()
		}
		if got != w {
			t.Errorf("writers(%s) = %q, want %q", path, got, w)
		}
	}
}
