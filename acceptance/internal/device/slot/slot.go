// Package slot finds the PCIe slot whose power controller cuts an NVMe
// drive's power (/sys/bus/pci/slots/NAME, with a power file), and what
// else that slot holds: cutting a slot cuts every function in it, so a
// slot that holds anything not given to the run is refused.
package slot

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Slot is a PCIe slot with a power controller.
type Slot struct {
	// Name is the slot's directory name under /sys/bus/pci/slots.
	Name string
	// Address is its bus and device ("0000:17:00"), every function of
	// which is in the slot.
	Address string
	// Functions are the PCI functions in the slot and below it (behind a
	// switch in the slot), sorted.
	Functions []string
	// Namespaces are the block devices of the NVMe controllers in it
	// ("nvme0n1"), sorted.
	Namespaces []string
	// Power is the slot's power file.
	Power string
}

var pciAddress = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

// Of finds the slot of NVMe controller ctrl under sysfs: the slot whose
// address is the bus and device of the controller's PCI function, or of
// a port above it (a switch in the slot), the closest first. A slot
// without a power file controls no power and is passed over. ok is false
// when no slot with power holds it.
func Of(sysfs, ctrl string) (s Slot, ok bool, err error) {
	dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "class", "nvme", ctrl, "device"))
	if err != nil {
		return Slot{}, false, fmt.Errorf("%s: no PCI function in sysfs: %w", ctrl, err)
	}
	slots, err := readSlots(sysfs)
	if err != nil {
		return Slot{}, false, err
	}
	for dir := dev; pciAddress.MatchString(filepath.Base(dir)); dir = filepath.Dir(dir) {
		fn := filepath.Base(dir)
		busDev := fn[:strings.LastIndexByte(fn, '.')]
		if s, found := slots[busDev]; found {
			return s, true, s.fill(sysfs)
		}
	}
	return Slot{}, false, nil
}

// readSlots are the slots with a power file, by address.
func readSlots(sysfs string) (map[string]Slot, error) {
	dir := filepath.Join(sysfs, "bus", "pci", "slots")
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]Slot{}
	for _, e := range entries {
		addr, err := os.ReadFile(filepath.Join(dir, e.Name(), "address"))
		if err != nil {
			continue
		}
		power := filepath.Join(dir, e.Name(), "power")
		if _, err := os.Stat(power); err != nil {
			continue
		}
		a := strings.TrimSpace(string(addr))
		out[a] = Slot{Name: e.Name(), Address: a, Power: power}
	}
	return out, nil
}

// fill lists the functions and namespaces in s.
func (s *Slot) fill(sysfs string) error {
	devs, err := os.ReadDir(filepath.Join(sysfs, "bus", "pci", "devices"))
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range devs {
		if !strings.HasPrefix(d.Name(), s.Address+".") {
			continue
		}
		root, err := filepath.EvalSymlinks(filepath.Join(sysfs, "bus", "pci", "devices", d.Name()))
		if err != nil {
			return err
		}
		err = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil || !e.IsDir() {
				return nil
			}
			name := e.Name()
			switch {
			case pciAddress.MatchString(name):
				if !seen[name] {
					seen[name] = true
					s.Functions = append(s.Functions, name)
				}
			case namespace.MatchString(name) && filepath.Base(filepath.Dir(filepath.Dir(p))) == "nvme":
				s.Namespaces = append(s.Namespaces, name)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	sort.Strings(s.Functions)
	sort.Strings(s.Namespaces)
	return nil
}

var namespace = regexp.MustCompile(`^nvme[0-9]+n[0-9]+$`)

// Others are what s holds beyond the namespaces given (kernel names,
// "nvme0n1") and the PCI functions from their controllers (and the
// controllers ctrls, "nvme0") up to the slot: another namespace, another
// controller, a switch's other port. A native multipath head's block
// device hangs under its subsystem, not a controller, so its drive's
// controllers are given by name.
func (s Slot) Others(sysfs string, given []string, ctrls ...string) []string {
	mine := map[string]bool{}
	var devs []string
	for _, ns := range given {
		mine[ns] = true
		devs = append(devs, filepath.Join(sysfs, "class", "block", ns, "device", "device"))
	}
	for _, c := range ctrls {
		devs = append(devs, filepath.Join(sysfs, "class", "nvme", c, "device"))
	}
	for _, link := range devs {
		dev, err := filepath.EvalSymlinks(link)
		if err != nil {
			continue
		}
		for dir := dev; pciAddress.MatchString(filepath.Base(dir)); dir = filepath.Dir(dir) {
			mine[filepath.Base(dir)] = true
		}
	}
	var out []string
	for _, ns := range s.Namespaces {
		if !mine[ns] {
			out = append(out, "namespace "+ns)
		}
	}
	for _, fn := range s.Functions {
		if !mine[fn] {
			out = append(out, "PCI function "+fn)
		}
	}
	return out
}
