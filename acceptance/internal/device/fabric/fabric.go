// Package fabric judges whether the network, rather than the drive,
// bounded an NVMe over Fabrics drive's figure.
//
// It reads what carries a fabric drive's I/O on the host's side: its
// transport and target address, the network interface towards the
// target, that interface's speed, and how much it carried during a cell;
// Judge takes the same care as the PCIe-bound rule (package pcie). Read
// and Counters read sysfs and /proc; Judge reads nothing.
package fabric

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drivequal/drivequal/acceptance/internal/device/pcie"
	"github.com/drivequal/drivequal/specs"
)

// Path is how one fabric drive's I/O leaves the host during a cell.
type Path struct {
	Drive     string `json:"drive"`     // the drive's path
	Transport string `json:"transport"` // "tcp", "rdma", "fc", "loop"
	Address   string `json:"address"`   // sysfs address: "traddr=127.0.0.1,trsvcid=4420"
	// Interface is the network interface towards the target ("eth0",
	// "lo"); "" when not known (not TCP or RDMA over IP, or no route).
	Interface string `json:"interface,omitempty"`
	// SpeedMbps is the interface's speed in Mb/s (sysfs speed); 0 when it
	// reports none (loopback, most virtual interfaces).
	SpeedMbps int64 `json:"speed_mbps,omitempty"`
	// Carried is the bytes a second the interface moved in its busier
	// direction during the cell (its rx and tx counters); 0 when not read.
	Carried float64 `json:"carried_bps,omitempty"`
}

// Capacity is what the interface carries a second at its speed, in
// bytes; 0 when its speed is not known.
func (p Path) Capacity() float64 { return float64(p.SpeedMbps) * 1e6 / 8 }

// via says how the drive is reached, for a message: "/dev/nvme5n1: not
// PCIe-attached (tcp): NVMe over tcp to traddr=127.0.0.1,trsvcid=4420
// through lo (speed not reported), which carried 1.2 GB/s".
func (p Path) via() string {
	s := fmt.Sprintf("%s: not PCIe-attached (%s): NVMe over %s to %s", p.Drive, p.Transport, p.Transport, p.Address)
	switch {
	case p.Interface == "":
		s += " (the interface towards the target is not known)"
	case p.SpeedMbps > 0:
		s += fmt.Sprintf(" through %s, %d Mb/s (%.2f GB/s)", p.Interface, p.SpeedMbps, p.Capacity()/1e9)
	default:
		s += fmt.Sprintf(" through %s (speed not reported)", p.Interface)
	}
	if p.Carried > 0 {
		s += fmt.Sprintf(", which carried %.2f GB/s during the cell", p.Carried/1e9)
	}
	return s
}

// near is how close to its capacity a transport must carry for the
// network, not the drive, to bound a figure: the PCIe rule's saturation.
const near = 0.90

// Judge says what a cell's fabric drives' transports say of its figure:
// note, for every fabric drive, how it is reached (the cell's message
// says so, whatever the verdict); bound, when a drive's figure (measured,
// by drive path, in w's metric) or what its interface carried came within
// 10 % of the interface's speed: the network, not the drive, bounds the
// figure. A drive whose interface's speed is not known is never bound,
// and the note says the network's share is unknown.
func Judge(paths []Path, w specs.Workload, measured map[string]float64) (note, bound string) {
	var notes, bounds []string
	for _, p := range paths {
		notes = append(notes, p.via())
		moved := pcie.DataRate(measured[p.Drive], w)
		c := p.Capacity()
		if c <= 0 {
			continue
		}
		if moved >= near*c || p.Carried >= near*c {
			bounds = append(bounds, fmt.Sprintf("%s: %.2f GB/s moved, %.2f GB/s carried by %s, within %.0f %% of its %.2f GB/s",
				p.Drive, moved/1e9, p.Carried/1e9, p.Interface, (1-near)*100, c/1e9))
		}
	}
	if len(notes) > 0 && len(bounds) == 0 {
		unknown := false
		for _, p := range paths {
			unknown = unknown || p.Capacity() <= 0
		}
		if unknown {
			notes = append(notes, "the network's share of this figure is not known: a figure short of spec may be the transport's, not the drive's")
		}
	}
	return strings.Join(notes, "; "), strings.Join(bounds, "; ")
}

// Read describes the fabric path of a drive reached over transport to
// address (the controller's sysfs transport and address), under sys
// ("/sys") and proc ("/proc"), with the interface's counters as they are
// now (see Counters). It returns ok false for a PCIe drive or one that is
// not NVMe.
func Read(sys, proc, drive, transport, address string) (p Path, ok bool) {
	if transport == "" || transport == "pcie" {
		return Path{}, false
	}
	p = Path{Drive: drive, Transport: transport, Address: address}
	if transport != "tcp" && transport != "rdma" {
		return p, true
	}
	ip := net.ParseIP(field(address, "traddr"))
	if ip == nil {
		return p, true
	}
	p.Interface = routeTo(sys, proc, ip)
	if p.Interface != "" {
		if v, err := os.ReadFile(filepath.Join(sys, "class", "net", p.Interface, "speed")); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err == nil && n > 0 {
				p.SpeedMbps = n
			}
		}
	}
	return p, true
}

// Counters reads an interface's received and sent bytes (sysfs
// statistics); ok is false when they cannot be read.
func Counters(sys, iface string) (rx, tx uint64, ok bool) {
	read := func(name string) (uint64, bool) {
		b, err := os.ReadFile(filepath.Join(sys, "class", "net", iface, "statistics", name))
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	}
	rx, ok1 := read("rx_bytes")
	tx, ok2 := read("tx_bytes")
	return rx, tx, ok1 && ok2
}

// field is key's value in a sysfs address ("traddr=1.2.3.4,trsvcid=4420").
func field(address, key string) string {
	for _, kv := range strings.Split(address, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k == key {
			return v
		}
	}
	return ""
}

// routeTo is the interface the host sends to ip through: loopback for a
// loopback address or one of the host's own (the target runs here), else
// the longest-prefix IPv4 route of proc/net/route; "" when not known.
func routeTo(sys, proc string, ip net.IP) string {
	if ip.IsLoopback() {
		return loopback(sys)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return loopback(sys)
			}
		}
	}
	v4 := ip.To4()
	if v4 == nil {
		return ""
	}
	f, err := os.Open(filepath.Join(proc, "net", "route"))
	if err != nil {
		return ""
	}
	defer f.Close()
	best, bestLen := "", -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[0] == "Iface" {
			continue
		}
		dst, err1 := hex.DecodeString(fs[1])
		mask, err2 := hex.DecodeString(fs[7])
		if err1 != nil || err2 != nil || len(dst) != 4 || len(mask) != 4 {
			continue
		}
		// /proc/net/route prints addresses in the host's byte order.
		d, m := binary.LittleEndian.Uint32(dst), binary.LittleEndian.Uint32(mask)
		a := binary.BigEndian.Uint32(v4)
		if a&m != d&m {
			continue
		}
		if l := bitsSet(m); l > bestLen {
			best, bestLen = fs[0], l
		}
	}
	return best
}

func loopback(sys string) string {
	if _, err := os.Stat(filepath.Join(sys, "class", "net", "lo")); err == nil {
		return "lo"
	}
	return ""
}

func bitsSet(m uint32) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}
