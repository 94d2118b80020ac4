package fabric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drivequal/drivequal/specs"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A tree as Linux 6.1 shows an initiator's interfaces: eth0 at 25 Gb/s
// with the route to 10.0.0.0/24, lo with no speed.
func tree(t *testing.T) (sys, proc string) {
	root := t.TempDir()
	sys, proc = filepath.Join(root, "sys"), filepath.Join(root, "proc")
	write(t, filepath.Join(sys, "class/net/eth0/speed"), "25000\n")
	write(t, filepath.Join(sys, "class/net/eth0/statistics/rx_bytes"), "1000\n")
	write(t, filepath.Join(sys, "class/net/eth0/statistics/tx_bytes"), "2000\n")
	write(t, filepath.Join(sys, "class/net/lo/statistics/rx_bytes"), "5\n")
	write(t, filepath.Join(sys, "class/net/lo/statistics/tx_bytes"), "5\n")
	// lo's speed reads EINVAL on Linux: no file here.
	write(t, filepath.Join(proc, "net/route"), "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"+
		"eth1\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
		"eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	return sys, proc
}

func TestRead(t *testing.T) {
	sys, proc := tree(t)
	if _, ok := Read(sys, proc, "/dev/nvme0n1", "pcie", "0000:00:07.0"); ok {
		t.Error("a PCIe drive read as a fabric")
	}
	p, ok := Read(sys, proc, "/dev/nvme5n1", "tcp", "traddr=10.0.0.2,trsvcid=4420,src_addr=10.0.0.1")
	if !ok || p.Interface != "eth0" || p.SpeedMbps != 25000 || p.Capacity() != 25000e6/8 {
		t.Errorf("10.0.0.2: %+v, want eth0 at 25000 Mb/s (the /24 route, not the default)", p)
	}
	if p, _ := Read(sys, proc, "/dev/nvme5n1", "tcp", "traddr=192.168.7.9,trsvcid=4420"); p.Interface != "eth1" {
		t.Errorf("192.168.7.9: interface %q, want the default route's eth1", p.Interface)
	}
	if p, _ := Read(sys, proc, "/dev/nvme5n1", "tcp", "traddr=127.0.0.1,trsvcid=4420"); p.Interface != "lo" || p.SpeedMbps != 0 {
		t.Errorf("127.0.0.1: %+v, want lo with no speed", p)
	}
	if rx, tx, ok := Counters(sys, "eth0"); !ok || rx != 1000 || tx != 2000 {
		t.Errorf("Counters(eth0) = %d, %d, %v", rx, tx, ok)
	}
}

func TestJudge(t *testing.T) {
	w := specs.Workload{Name: "128KB Sequential Read", RW: "read", BS: 128 << 10, Metric: specs.MBps}
	eth := Path{Drive: "/dev/nvme5n1", Transport: "tcp", Address: "traddr=10.0.0.2,trsvcid=4420", Interface: "eth0", SpeedMbps: 25000}
	// 25 Gb/s carries 3.125 GB/s: a drive moving 3,000 MB/s is within 10 %.
	eth.Carried = 3.05e9
	note, bound := Judge([]Path{eth}, w, map[string]float64{"/dev/nvme5n1": 3000})
	if !strings.Contains(bound, "/dev/nvme5n1: 3.00 GB/s moved, 3.05 GB/s carried by eth0, within 10 % of its 3.12 GB/s") {
		t.Errorf("bound = %q", bound)
	}
	if !strings.Contains(note, "/dev/nvme5n1: not PCIe-attached (tcp): NVMe over tcp to traddr=10.0.0.2,trsvcid=4420 through eth0, 25000 Mb/s (3.12 GB/s), which carried 3.05 GB/s during the cell") {
		t.Errorf("note = %q", note)
	}
	// Half the interface: the drive's own figure.
	eth.Carried = 1.5e9
	if _, bound := Judge([]Path{eth}, w, map[string]float64{"/dev/nvme5n1": 1500}); bound != "" {
		t.Errorf("at half the interface's speed: bound %q, want none", bound)
	}
	// Loopback: never bound, and the note says the share is not known.
	lo := Path{Drive: "/dev/nvme5n1", Transport: "tcp", Address: "traddr=127.0.0.1,trsvcid=4420", Interface: "lo", Carried: 2e9}
	note, bound = Judge([]Path{lo}, w, map[string]float64{"/dev/nvme5n1": 2000})
	if bound != "" || !strings.Contains(note, "through lo (speed not reported), which carried 2.00 GB/s") || !strings.Contains(note, "the network's share of this figure is not known") {
		t.Errorf("loopback: note %q, bound %q", note, bound)
	}
}
