// Package pcie reads and judges the PCIe links from an NVMe controller up
// to its root port.
//
// Read walks sysfs (/sys/class/nvme/<ctrl>/device and the PCI functions
// above it) into a Path, one Hop a link, each as both of its ends report
// it; it only reads. The link rules (DegradedLinks, SharedLinks, Bound,
// ScalingBound) judge the paths of a cell's drives against the link the
// spec states and the figures measured, and read nothing.
package pcie

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Link is the PCIe link of an NVMe controller's PCI function, as sysfs
// shows it: the speed and width it trained to and the most the device
// and its slot support.
type Link struct {
	// PCI is the function's address ("0000:17:00.0").
	PCI string
	// Speed and MaxSpeed are in GT/s per lane (sysfs prints "16.0 GT/s
	// PCIe"); Width and MaxWidth in lanes.
	Speed, MaxSpeed float64
	Width, MaxWidth int
	// Unknown, when set, says which figure sysfs does not know
	// (`current_link_speed of 0000:17:00.0 reads "Unknown"`, as some
	// platforms and virtual machines show it): the link is then not
	// judged, and says so.
	Unknown string
}

// String is "16.0 GT/s x4 (of 32.0 GT/s x4)"; "Unknown (current_link_speed
// of 0000:17:00.0 reads "Unknown")" for a link sysfs does not know.
func (l Link) String() string {
	if l.Unknown != "" {
		return "Unknown (" + l.Unknown + ")"
	}
	return fmt.Sprintf("%s x%d (of %s x%d)", gts(l.Speed), l.Width, gts(l.MaxSpeed), l.MaxWidth)
}

func gts(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " GT/s" }

// Degraded says how l falls short, or "" when it does not (or is not
// known): below the speed or width the spec expects when it states one
// (want > 0), else below the device's own maximum.
func (l Link) Degraded(wantSpeed float64, wantWidth int) string {
	if l.Unknown != "" {
		return ""
	}
	if wantSpeed <= 0 {
		wantSpeed = l.MaxSpeed
	}
	if wantWidth <= 0 {
		wantWidth = l.MaxWidth
	}
	if l.Speed >= wantSpeed && l.Width >= wantWidth {
		return ""
	}
	return fmt.Sprintf("PCIe link %s x%d of %s x%d", gts(l.Speed), l.Width, gts(wantSpeed), wantWidth)
}

// Bandwidth is what width lanes at speed GT/s carry, in bytes per second,
// after line coding: 8b/10b up to 5 GT/s (Gen1, Gen2), 128b/130b up to 32
// GT/s (Gen3 to Gen5), and the 242/256 of FLIT mode from 64 GT/s (Gen6).
func Bandwidth(speed float64, width int) float64 {
	coding := 128.0 / 130
	switch {
	case speed <= 5:
		coding = 0.8
	case speed >= 64:
		coding = 242.0 / 256
	}
	return speed * 1e9 * coding / 8 * float64(width)
}

// Bandwidth is what the link carries as it trained, in bytes per second;
// 0 when it is not known.
func (l Link) Bandwidth() float64 {
	if l.Unknown != "" {
		return 0
	}
	return Bandwidth(l.Speed, l.Width)
}

// Hop is one PCIe link on the way from an NVMe controller to its root
// port. Both ends of a link report it in sysfs; Hop holds what they say
// together: the lower current speed and width of the two, and as the
// most the link supports the endpoint's own maximum (for the endpoint's
// link) or the lower maximum of the two ends (above it).
type Hop struct {
	// Link's PCI is the function below the link: the endpoint, or a
	// switch's upstream port.
	Link
	// Role names that function: "endpoint" or "switch port".
	Role string
	// Above is the function above the link (a switch's downstream port,
	// or the root port); "" when sysfs shows none with a link. AboveRole
	// is "switch downstream port" or "root port".
	Above, AboveRole string
}

// Where names the hop in a message: "0000:05:00.0" for the endpoint's
// link, "switch port 0000:01:00.0" above it.
func (h Hop) Where() string {
	if h.Role == "endpoint" {
		return h.PCI
	}
	return h.Role + " " + h.PCI
}

// Path is the PCIe links from an NVMe controller up to its root port, the
// endpoint's own link first.
type Path []Hop

// Functions lists every PCI function the path passes through, the
// endpoint first: a drive is below a port when the port is in its list.
func (p Path) Functions() []string {
	var out []string
	for _, h := range p {
		out = append(out, h.PCI)
		if h.Above != "" {
			out = append(out, h.Above)
		}
	}
	return out
}

// Narrowest is the hop that carries the least as it trained (see
// Link.Bandwidth), the one nearest the endpoint among equals; ok is false
// when no hop's link is known.
func (p Path) Narrowest() (h Hop, ok bool) {
	for _, x := range p {
		if x.Unknown != "" {
			continue
		}
		if !ok || x.Bandwidth() < h.Bandwidth() {
			h, ok = x, true
		}
	}
	return h, ok
}

// Unknown names the hops whose link sysfs does not know, "" for none:
// "current_link_speed of 0000:00:01.1 reads "Unknown" (root port)".
func (p Path) Unknown() string {
	var out []string
	for _, h := range p {
		if h.Unknown != "" {
			out = append(out, h.Unknown+" ("+h.Role+")")
		}
	}
	return strings.Join(out, "; ")
}

// String is the endpoint's link (Link.String), followed by each link
// above it that trained below its maximum, carries less than the
// endpoint's, or is not known: "16.0 GT/s x4 (of 16.0 GT/s x4); switch
// port 0000:01:00.0: 8.0 GT/s x8 (of 16.0 GT/s x16)".
func (p Path) String() string {
	if len(p) == 0 {
		return ""
	}
	s := p[0].Link.String()
	for _, h := range p[1:] {
		if h.Unknown != "" || h.Degraded(0, 0) != "" || (p[0].Unknown == "" && h.Bandwidth() < p[0].Bandwidth()) {
			s += "; " + h.Where() + ": " + h.Link.String()
		}
	}
	return s
}

// pciAddress is a PCI function's directory name in sysfs.
var pciAddress = regexp.MustCompile(`^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// Read reads every PCIe link from NVMe controller ctrl up to its root
// port out of sysfs, the directory /sys is mounted on ("/sys" on the
// running system), walking the controller's device path (/sys/devices/pci0000:00/
// 0000:00:01.1/0000:01:00.0/0000:02:04.0/0000:05:00.0: the root port, a
// switch's upstream and downstream ports, the endpoint). Each PCIe
// function there that shows a link (current_link_speed) is one end of
// one: the endpoint and the port above it share the first, a switch's
// upstream port and the port above the switch the next. ok is false when
// the controller's own function shows no link: a controller that is not
// on PCIe (a fabrics controller), or that reports no link.
func Read(sysfs, ctrl string) (p Path, ok bool, err error) {
	if ctrl == "" {
		return nil, false, nil
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "class", "nvme", ctrl, "device"))
	if err != nil {
		return nil, false, nil
	}
	var ends []Link
	for dir := dev; pciAddress.MatchString(filepath.Base(dir)); dir = filepath.Dir(dir) {
		if !hasLink(dir) {
			if len(ends) == 0 {
				return nil, false, nil
			}
			continue
		}
		l, _, err := readLink(dir)
		switch {
		case err != nil && len(ends) == 0:
			return nil, false, fmt.Errorf("%s: %w", ctrl, err)
		case err != nil:
			// A port above the drive that cannot be read leaves that
			// link unknown; the drive's own link is still judged.
			l = Link{PCI: filepath.Base(dir), Unknown: err.Error()}
		}
		ends = append(ends, l)
	}
	if len(ends) == 0 {
		// The controller's device is no PCI function at all: a fabrics
		// controller's is nvme-fabrics' "ctl".
		return nil, false, nil
	}
	for i := 0; i < len(ends); i += 2 {
		h := Hop{Link: ends[i], Role: "switch port"}
		if i == 0 {
			h.Role = "endpoint"
		}
		if i+1 < len(ends) {
			up := ends[i+1]
			h.Above, h.AboveRole = up.PCI, "switch downstream port"
			if i+2 >= len(ends) {
				h.AboveRole = "root port"
			}
			h.Link = join(ends[i], up, i == 0)
		}
		p = append(p, h)
	}
	return p, true, nil
}

// join is one link as both its ends read it: the lower of their figures,
// the lower end's maximum alone when own says so; Unknown only when
// neither end knows.
func join(low, up Link, own bool) Link {
	switch {
	case up.Unknown != "":
		return low
	case low.Unknown != "":
		up.PCI = low.PCI
		if own && low.MaxSpeed > 0 {
			up.MaxSpeed, up.MaxWidth = low.MaxSpeed, low.MaxWidth
		}
		return up
	}
	l := low
	l.Speed, l.Width = min(low.Speed, up.Speed), min(low.Width, up.Width)
	if !own {
		l.MaxSpeed, l.MaxWidth = min(low.MaxSpeed, up.MaxSpeed), min(low.MaxWidth, up.MaxWidth)
	}
	return l
}

// readLink reads the link files of the PCI function in dir; ok is false
// when it has none.
func readLink(dir string) (l Link, ok bool, err error) {
	if !hasLink(dir) {
		return Link{}, false, nil
	}
	l.PCI = filepath.Base(dir)
	for _, f := range []struct {
		name  string
		speed *float64
		width *int
	}{
		{"current_link_speed", &l.Speed, nil}, {"max_link_speed", &l.MaxSpeed, nil},
		{"current_link_width", nil, &l.Width}, {"max_link_width", nil, &l.MaxWidth},
	} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		v := strings.TrimSpace(string(b))
		if err != nil {
			if os.IsNotExist(err) && l.Unknown == "" {
				l.Unknown = fmt.Sprintf("%s of %s is missing", f.name, l.PCI)
				continue
			}
			return Link{}, false, fmt.Errorf("PCIe link of %s: %w", l.PCI, err)
		}
		unknown := false
		if f.speed != nil {
			// "16.0 GT/s PCIe"; older kernels "8 GT/s", or "Unknown".
			num, _, _ := strings.Cut(v, " ")
			x, perr := strconv.ParseFloat(num, 64)
			unknown = perr != nil || x <= 0
			*f.speed = x
		} else {
			x, perr := strconv.Atoi(v)
			unknown = perr != nil || x <= 0
			*f.width = x
		}
		if unknown && l.Unknown == "" {
			l.Unknown = fmt.Sprintf("%s of %s reads %q", f.name, l.PCI, v)
		}
	}
	if l.Unknown != "" {
		l.Speed, l.Width = 0, 0
	}
	return l, true, nil
}

// Describe is the hop's link in a message, with below the number of the
// run's drives under it: "PCIe link 8.0 GT/s x8 at switch port
// 0000:01:00.0 (upstream of 6 drives) of 16.0 GT/s x16".
func (h Hop) Describe(below int) string {
	drives := "drives"
	if below == 1 {
		drives = "drive"
	}
	return fmt.Sprintf("PCIe link %s x%d at %s (upstream of %d %s) of %s x%d",
		gts(h.Speed), h.Width, h.Where(), below, drives, gts(h.MaxSpeed), h.MaxWidth)
}

// hasLink reports whether the PCI function in dir shows a link.
func hasLink(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "current_link_speed"))
	return err == nil
}
