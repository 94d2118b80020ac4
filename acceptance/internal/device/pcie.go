package device

import (
	"fmt"
	"path/filepath"
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
}

// String is "16.0 GT/s x4 (of 32.0 GT/s x4)".
func (l Link) String() string {
	return fmt.Sprintf("%s x%d (of %s x%d)", gts(l.Speed), l.Width, gts(l.MaxSpeed), l.MaxWidth)
}

func gts(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " GT/s" }

// Degraded says how l falls short, or "" when it does not: below the
// speed or width the spec expects when it states one (want > 0), else
// below the device's own maximum.
func (l Link) Degraded(wantSpeed float64, wantWidth int) string {
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

// Link reads the PCIe link of NVMe controller ctrl ("nvme0") from
// /sys/class/nvme/<ctrl>/device: current_link_speed, current_link_width,
// max_link_speed and max_link_width. ok is false for a controller that is
// not on PCIe (a fabrics controller) or reports no link.
func (s System) Link(ctrl string) (l Link, ok bool, err error) {
	if ctrl == "" {
		return Link{}, false, nil
	}
	dev, err := filepath.EvalSymlinks(s.p("/sys/class/nvme/" + ctrl + "/device"))
	if err != nil {
		return Link{}, false, nil
	}
	if !exists(filepath.Join(dev, "current_link_speed")) {
		return Link{}, false, nil
	}
	l.PCI = filepath.Base(dev)
	for _, f := range []struct {
		name  string
		speed *float64
		width *int
	}{
		{"current_link_speed", &l.Speed, nil}, {"max_link_speed", &l.MaxSpeed, nil},
		{"current_link_width", nil, &l.Width}, {"max_link_width", nil, &l.MaxWidth},
	} {
		v, err := readString(filepath.Join(dev, f.name))
		if err != nil {
			return Link{}, false, fmt.Errorf("%s: PCIe link of %s: %w", ctrl, l.PCI, err)
		}
		if f.speed != nil {
			// "16.0 GT/s PCIe"; older kernels "8 GT/s", or "Unknown".
			num, _, _ := strings.Cut(v, " ")
			x, perr := strconv.ParseFloat(num, 64)
			if perr != nil {
				return Link{}, false, nil
			}
			*f.speed = x
			continue
		}
		x, perr := strconv.Atoi(v)
		if perr != nil {
			return Link{}, false, nil
		}
		*f.width = x
	}
	return l, true, nil
}
