package qemu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultArgs: a namespace with blkdebug rules is the blkdebug driver
// over its image, the raw format on top; a namespace's UUID is fixed when
// given; a namespace's IOPS is QEMU's throttle on its drive; the QMP
// socket is served without waiting for a client.
func TestFaultArgs(t *testing.T) {
	m := Machine{QMP: "/w/qmp.sock",
		Controllers: []Controller{{ID: "a", Serial: "S1"}, {ID: "b", Serial: "S2"}},
		Namespaces: []Namespace{
			{Controller: "a", NSID: 1, Image: "/img/a.raw", Blkdebug: "/w/a.rules", UUID: "6c1c2a2e-0d3b-4d7e-9a51-00000000000a"},
			{Controller: "b", NSID: 1, Image: "/img/b.raw", IOPS: 500},
		}}
	args, err := m.Args(Kernel{Image: "/boot/vmlinuz-x"}, "/w/initrd", "/w", "tcg")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{
		"-qmp unix:/w/qmp.sock,server=on,wait=off",
		"-drive file=blkdebug:/w/a.rules:/img/a.raw,if=none,id=ns0,format=raw,discard=unmap -device",
		"-device nvme-ns,drive=ns0,bus=a,nsid=1,shared=on,uuid=6c1c2a2e-0d3b-4d7e-9a51-00000000000a",
		"-drive file=/img/b.raw,if=none,id=ns1,format=raw,discard=unmap,throttling.iops-total=500 -device nvme-ns,drive=ns1,bus=b,nsid=1,shared=on -",
	} {
		if !strings.Contains(line+" -", want) {
			t.Errorf("Args lacks %q:\n%s", want, line)
		}
	}
	bad := m
	bad.Namespaces = []Namespace{{Controller: "a", NSID: 1, Image: "/img/a.raw", Blkdebug: "/w/a:b.rules"}}
	if _, err := bad.Args(Kernel{}, "/w/initrd", "/w", "tcg"); err == nil {
		t.Error("Args accepted blkdebug rules whose path holds a colon, which blkdebug's filename syntax splits on")
	}
	bad = m
	bad.QMP = "/w/q,mp"
	if _, err := bad.Args(Kernel{}, "/w/initrd", "/w", "tcg"); err == nil {
		t.Error("Args accepted a QMP socket path with a comma")
	}

	s, err := m.Swapped("b", "a")
	if err != nil {
		t.Fatal(err)
	}
	if s.Controllers[0].ID != "b" || s.Controllers[1].ID != "a" || m.Controllers[0].ID != "a" {
		t.Errorf("Swapped: %v (from %v), want b before a and the original untouched", s.Controllers, m.Controllers)
	}
	args, _ = s.Args(Kernel{}, "/w/initrd", "/w", "tcg")
	if line := strings.Join(args, " "); strings.Index(line, "nvme,id=b,") > strings.Index(line, "nvme,id=a,") {
		t.Errorf("swapped machine's controller b does not come first on the bus:\n%s", line)
	}
	if _, err := m.Swapped("a", "nope"); err == nil {
		t.Error("Swapped accepted a controller the machine lacks")
	}
}

func TestWriteBlkdebug(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.conf")
	if err := WriteBlkdebug(p, []MediaError{{Sector: 40960}, {Sector: 8, Errno: 61}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := "[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"5\"\nsector = \"40960\"\nonce = \"off\"\n\n" +
		"[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"61\"\nsector = \"8\"\nonce = \"off\"\n\n"
	if string(b) != want {
		t.Errorf("rules:\n%s\nwant:\n%s", b, want)
	}
	if err := WriteBlkdebug(p, []MediaError{{Sector: 8, UntilFlush: true}}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	want = "[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"5\"\nsector = \"8\"\nonce = \"off\"\nstate = \"1\"\n\n" +
		"[set-state]\nevent = \"flush_to_disk\"\nstate = \"1\"\nnew_state = \"2\"\n\n" +
		"[inject-error]\nevent = \"read_aio\"\niotype = \"read\"\nerrno = \"5\"\nsector = \"1125899906842624\"\nonce = \"off\"\nstate = \"2\"\n\n"
	if string(b) != want {
		t.Errorf("rules until a flush:\n%s\nwant:\n%s", b, want)
	}
	if err := WriteBlkdebug(p, nil); err == nil {
		t.Error("WriteBlkdebug accepted no rule")
	}
}
