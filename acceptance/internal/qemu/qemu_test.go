package qemu

import (
	"slices"
	"strings"
	"testing"
)

const modulesDep = `kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko kernel/block/t10-pi.ko kernel/lib/crc64-rocksoft.ko
kernel/drivers/nvme/host/nvme-core.ko: kernel/block/t10-pi.ko kernel/lib/crc64-rocksoft.ko
kernel/block/t10-pi.ko: kernel/lib/crc64-rocksoft.ko
kernel/lib/crc64-rocksoft.ko:
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko
kernel/net/9p/9pnet.ko:
`

func TestLoadOrder(t *testing.T) {
	deps, err := parseModulesDep(strings.NewReader(modulesDep))
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadOrder(deps, nil, []string{"nvme", "9p", "nvme_core"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kernel/lib/crc64-rocksoft.ko", "kernel/block/t10-pi.ko", "kernel/drivers/nvme/host/nvme-core.ko",
		"kernel/drivers/nvme/host/nvme.ko", "kernel/net/9p/9pnet.ko", "kernel/fs/9p/9p.ko"}
	if !slices.Equal(got, want) {
		t.Errorf("loadOrder = %q, want %q", got, want)
	}
	if _, err := loadOrder(deps, nil, []string{"virtio_pci"}); err == nil || !strings.Contains(err.Error(), "virtio_pci") {
		t.Errorf("loadOrder(virtio_pci) error = %v, want one naming the module", err)
	}
}

func TestArgs(t *testing.T) {
	m := Machine{
		Cmdline:     []string{"nvme_core.multipath=N"},
		Subsystems:  []Subsystem{{ID: "ss", NQN: "sub"}},
		Controllers: []Controller{{ID: "a", Serial: "S1", Subsys: "ss"}, {ID: "w", Serial: "S2", CriticalWarning: 4}},
		Namespaces: []Namespace{
			{Controller: "a", NSID: 2, Image: "/img/a2.raw", Private: true},
			{Controller: "w", NSID: 1, Image: "/img/w1.raw", Zoned: true},
		},
	}
	args, err := m.Args(Kernel{Image: "/boot/vmlinuz-x"}, "/w/initrd", "/w", "tcg")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{
		"-accel tcg -m 1024 -smp 2",
		"-nodefaults -nographic",
		"-append console=ttyS0 panic=-1 quiet no_timer_check drivequal.work=/w nvme_core.multipath=N",
		"-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on",
		"-virtfs local,path=/w,mount_tag=work,security_model=none",
		"-device nvme-subsys,id=ss,nqn=sub",
		"-device nvme,id=a,serial=S1,subsys=ss",
		"-device nvme,id=w,serial=S2,smart_critical_warning=4",
		"-drive file=/img/a2.raw,if=none,id=ns0,format=raw,discard=unmap -device nvme-ns,drive=ns0,bus=a,nsid=2,shared=off",
		"-device nvme-ns,drive=ns1,bus=w,nsid=1,shared=on,zoned=on,zoned.zone_size=8388608",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("Args lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "-cpu host") {
		t.Errorf("Args under TCG asks for -cpu host: %s", line)
	}

	single := m
	single.SingleThreadTCG = true
	for accel, want := range map[string]string{"tcg": "-accel tcg,thread=single -m", "kvm": "-accel kvm -m"} {
		args, err := single.Args(Kernel{Image: "/boot/vmlinuz-x"}, "/w/initrd", "/w", accel)
		if err != nil {
			t.Fatal(err)
		}
		if line := strings.Join(args, " "); !strings.Contains(line, want) {
			t.Errorf("SingleThreadTCG under %s: Args lacks %q:\n%s", accel, want, line)
		}
	}

	bad := m
	bad.Namespaces = []Namespace{{Controller: "nope", NSID: 1, Image: "/img/x.raw"}}
	if _, err := bad.Args(Kernel{}, "/w/initrd", "/w", "tcg"); err == nil {
		t.Error("Args accepted a namespace on a controller that does not exist")
	}
	if _, err := m.Args(Kernel{}, "/w/initrd", "/w,x", "tcg"); err == nil {
		t.Error("Args accepted a work directory with a comma, which QEMU would split")
	}
}

func TestCPIO(t *testing.T) {
	var b strings.Builder
	w := cpioWriter{w: &b}
	w.file("init", 0o755, []byte("#!/bin/sh\n"))
	w.trailer()
	out := b.String()
	if !strings.HasPrefix(out, "070701") || len(out)%4 != 0 || !strings.Contains(out, "init\x00") || !strings.Contains(out, "TRAILER!!!") {
		t.Errorf("cpio archive malformed: %q", out)
	}
	// The file's mode and size, in the header's hex fields.
	if got := out[14:22]; got != "000081ED" {
		t.Errorf("mode field = %s, want 000081ED (regular, 0755)", got)
	}
	if got := out[54:62]; got != "0000000A" {
		t.Errorf("size field = %s, want 0000000A", got)
	}
}

func TestNeedsLinux(t *testing.T) {
	err := needsLinux("darwin")
	if err == nil || !strings.Contains(err.Error(), "booting a QEMU guest needs Linux, not darwin") {
		t.Errorf("needsLinux(darwin) = %v, want it to say booting a guest needs Linux", err)
	}
}
